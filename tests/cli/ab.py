#!/usr/bin/env python3
"""ab.py BITPROOF SOURCE_DIR WORKDIR: `bitproof ab` as a user meets it (issue 14).

The committed A/B specs (proofs/ab) on the CPU with few cases (the GPU test runs
all 64): the fused auxiliary GEMVs hold, on cases and on every input; each
negative control is refuted both by a concrete case and by the trace proof,
which names where the graphs part; a control whose spec says "equal" fails the
gate. A checkpoint's tensors by name, with and without an audit stating the
scale interval. Reports: schema-valid, verified by re-running, rendered. Bad
input: one line, exit 2; no GPU for --backend cuda: exit 3."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bptest  # noqa: E402
from bptest import check, load  # noqa: E402

bp, root, work, env, run = bptest.setup(own_cache=False)
ab_dir = os.path.join(root, "proofs", "ab")


def spec(name):
    return os.path.join(ab_dir, name + ".json")


def out(name):
    return os.path.join(work, name)


def write_json(path, data):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    return path


# ---- the fused auxiliary GEMVs: equal on cases and on every input ----
r = run("ab", spec("dsv4-fused-aux-gemv"), "--cases", "2", "--prove", "--report", out("gemv.json"),
        "--markdown", out("gemv.md"), "--junit", out("gemv.xml"))
check("fused aux GEMV: exit 0", r.returncode == 0, r.stdout + r.stderr)
check("fused aux GEMV: the cases line",
      re.search(r"^fused≡separate: 2/2 changing-input cases bitwise equal, 2624 output elements each \(cpu\)$",
                r.stdout, re.M) is not None, r.stdout)
check("fused aux GEMV: the trace proof line",
      "trace proof: fused ≡ separate on every input: 2624 elements, identical graphs" in r.stdout, r.stdout)
report = load(out("gemv.json"))
check("report: kind ab, result passes", report["kind"] == "ab" and report["result"]["passes"] is True)
check("report: a digest per output and arm",
      all(len(o["digest"]["separate"]) == 64 and o["digest"]["separate"] == o["digest"]["fused"]
          for o in report["result"]["outputs"]))
md = open(out("gemv.md"), encoding="utf-8").read()
check("markdown: PASS and the digest table", "**PASS**" in md and "| `y.q_a` | 1×2048 |" in md, md)
xml = open(out("gemv.xml"), encoding="utf-8").read()
check("junit: one case per output and the trace proof, none failed",
      'tests="4" failures="0"' in xml, xml[:300])
v = run("report", "verify", out("gemv.json"), "--spec-dir", ab_dir)
check("report verify re-runs it", v.returncode == 0 and "verified" in v.stdout, v.stdout + v.stderr)

# ---- negative controls: refuted by a concrete case and by the trace, the place named ----
controls = {
    "dsv4-fused-aux-gemv-block512": ("4", r"first own operation of arm A: reduction step k = 512; of arm B: reduction step k = 512"),
    "dsv4-fused-aux-gemv-reverse": ("4", r"fused-reverse: add\("),
    "dsv4-mxfp4-fold-scale129": ("1", r"covers these recipes on scale bytes 113\.\.128, but e\.w1\.scales holds byte 129"),
    "dsv4-mxfp4-splitk": ("1", r"the graphs differ at gate\[0\]\[0\], first own operation of arm A: reduction step k = 1024"),
}
for name, (cases, where) in controls.items():
    r = run("ab", spec(name), "--cases", cases, "--prove", "--report", out(name + ".json"))
    check(f"{name}: refuted as the spec expects (exit 0)", r.returncode == 0, r.stdout + r.stderr)
    check(f"{name}: a concrete differing case", re.search(r"changing-input cases differ", r.stdout) is not None,
          r.stdout)
    check(f"{name}: the trace proof names the place", re.search(where, r.stdout) is not None, r.stdout)
    check(f"{name}: negative control line", "the arms differ, as the spec expects" in r.stdout, r.stdout)

# The gate can fail: the block-K control with its expectation turned to "equal" exits 1.
wrong = load(spec("dsv4-fused-aux-gemv-block512"))
wrong["expect"] = "equal"
r = run("ab", write_json(out("wrong.json"), wrong), "--cases", "2", "--prove")
check("a refuted A/B spec that expects equal: exit 1", r.returncode == 1, r.stdout + r.stderr)

# ---- the MoE chain W13 -> SwiGLU -> W2: the fold relies on its element proof ----
r = run("ab", spec("dsv4-mxfp4-fold-moe"), "--cases", "1", "--prove", "--report", out("moe.json"))
check("MoE chain: exit 0", r.returncode == 0, r.stdout + r.stderr)
check("MoE chain: on every input with scales in the synthetic interval",
      "trace proof: folded ≡ ordinary on every input with scales e.w1 ∈ 114..126" in r.stdout, r.stdout)
check("MoE chain: relies on the element proof",
      re.search(r"relies on element proof dsv4-mxfp4-fp16-fold claim 0 on scales 113\.\.128: 256/256", r.stdout)
      is not None, r.stdout)
moe = load(out("moe.json"))
check("MoE chain: intermediates compared in the trace",
      moe["result"]["trace_proof"]["compared"] == ["act", "gate", "out", "up"] or
      sorted(moe["result"]["trace_proof"]["compared"]) == ["act", "gate", "out", "up"],
      moe["result"]["trace_proof"]["compared"])

# An element proof swept on an interval where it fails (113..129: Inf at 129) justifies nothing.
unproven = load(spec("dsv4-mxfp4-fold-moe"))
unproven["element_proofs"][0]["spec"] = os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json")
unproven["element_proofs"][0]["scales"] = [113, 129]
r = run("ab", write_json(out("unproven.json"), unproven), "--cases", "1", "--prove")
check("an element proof that does not hold: the trace proof refuses the substitution (exit 1)",
      r.returncode == 1 and "does not hold on scale bytes 113..129: it justifies nothing" in r.stdout,
      r.stdout + r.stderr)

# ---- a checkpoint's tensors by name; an audit states the scale interval ----
def checkpoint(name, scale_range):
    r = run("synth-checkpoint", out(name), "--layers", "1", "--experts", "1", "--rows", "64", "--cols", "64",
            "--scale-range", scale_range, "--seed", "5")
    check(f"synth-checkpoint {name}", r.returncode == 0, r.stdout + r.stderr)
    return out(name)


def ckpt_spec(path, ckpt, k=64, w1_tensor="layers.0.ffn.experts.0.w1"):
    t = "layers.0.ffn.experts.0."
    stages = lambda dequant: [
        {"op": "mxfp4_gemm", "a": "x", "weights": ["w1", "w3"], "outputs": ["gate", "up"], "dequant": dequant},
        {"op": "swiglu", "gate": "gate", "up": "up", "outputs": ["act"]},
        {"op": "mxfp4_gemm", "a": "act", "weights": ["w2"], "outputs": ["out"], "dequant": dequant}]
    return write_json(path, {
        "bitproof_ab": 1, "name": "ckpt", "cases": 3, "checkpoint": ckpt,
        "inputs": [{"name": "x", "role": "activation", "dtype": "f16", "shape": [2, k]},
                   {"name": "w1", "role": "weight", "dtype": "mxfp4", "shape": [64, k], "tensor": w1_tensor},
                   {"name": "w3", "role": "weight", "dtype": "mxfp4", "shape": [64, k], "tensor": t + "w3"},
                   {"name": "w2", "role": "weight", "dtype": "mxfp4", "shape": [64, 64], "tensor": t + "w2"}],
        "arms": [{"name": "ordinary", "stages": stages("turbomind.mxfp4_fp16.ordinary")},
                 {"name": "folded", "stages": stages("turbomind.mxfp4_fp16.folded")}],
        "outputs": ["gate", "up", "act", "out"],
        "element_proofs": [{"spec": os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json"), "claim": 0,
                            "scales": [113, 128]}]})


good = checkpoint("ck", "114:126")
r = run("ab", ckpt_spec(out("ck.json"), good), "--prove")
check("checkpoint tensors: exit 0, the checkpoint's own scale bytes", r.returncode == 0 and
      "w1 ∈ 114..126" in r.stdout, r.stdout + r.stderr)
a = run("audit", good, "--report", out("ck-audit.json"))
check("audit of the checkpoint", a.returncode == 0, a.stdout + a.stderr)
r = run("ab", ckpt_spec(out("ck.json"), good), "--prove", "--audit", out("ck-audit.json"), "--report",
        out("ck-report.json"))
check("--audit: the trace proof quantifies over the audit's intervals", r.returncode == 0 and
      "relies on element proof" in r.stdout, r.stdout + r.stderr)
rep = load(out("ck-report.json"))
check("report: checkpoint tensors with their SHA-256",
      len(rep["result"]["checkpoint_tensors"]) == 6 and all(len(t["sha256"]) == 64 for t in rep["result"]["checkpoint_tensors"]))
check("report: the audit named as the scale origin",
      all("audit" in s["origin"] for s in rep["result"]["trace_proof"]["scales"]), rep["result"]["trace_proof"]["scales"])
bad = checkpoint("ck129", "113:129")
r = run("ab", ckpt_spec(out("ck129.json"), bad), "--prove")
check("a checkpoint with scale byte 129: the trace proof refutes the fold (exit 1)",
      r.returncode == 1 and "holds byte 129 (checkpoint tensor layers.0.ffn.experts.0.w1.scale)" in r.stdout,
      r.stdout + r.stderr)
a = run("audit", bad, "--report", out("ck129-audit.json"))
r = run("ab", ckpt_spec(out("ck-other.json"), good), "--prove", "--audit", out("ck129-audit.json"))
check("--audit of another checkpoint that holds fewer bytes: accepted (its interval contains these bytes)",
      r.returncode == 1 and "holds byte 129 (audit " in r.stdout, r.stdout + r.stderr)
r = run("ab", ckpt_spec(out("ck129-wrong.json"), bad), "--prove", "--audit", out("ck-audit.json"))
check("--audit that is not of this checkpoint (its interval misses bytes the tensor holds): exit 2",
      r.returncode == 2 and "the audit is not of this checkpoint" in r.stderr, r.stdout + r.stderr)
r = run("ab", ckpt_spec(out("ck.json"), good), "--prove", "--audit", os.path.join(work, "nope.json"))
check("--audit: a missing file, exit 2", r.returncode == 2, r.stderr)

# ---- bad input: one line naming the file and the field, exit 2 ----
def bad(what, args, pattern, code=2):
    r = run(*args)
    one_line = r.stderr.strip().count("\n") == 0
    check(f"bad input: {what} (exit {code})",
          r.returncode == code and re.search(pattern, r.stderr) is not None and (code != 2 or one_line),
          f"exit {r.returncode}: {r.stdout}{r.stderr}")


bad("unknown tensor name", ["ab", ckpt_spec(out("t1.json"), good, w1_tensor="layers.0.ffn.experts.9.w1")],
    r"t1\.json: inputs\[1\]\.tensor: the checkpoint .* has no tensor \"layers\.0\.ffn\.experts\.9\.w1\.weight\"")
bad("shape that does not match the tensor", ["ab", ckpt_spec(out("t2.json"), good, k=128)],
    r"t2\.json: inputs\[1\]\.tensor: checkpoint tensor \"layers\.0\.ffn\.experts\.0\.w1\.weight\" is I8 \[64, 32\], "
    r"the spec needs I8 \[64, 64\]")
gemv = load(spec("dsv4-fused-aux-gemv"))
bad("--cases 0", ["ab", spec("dsv4-fused-aux-gemv"), "--cases", "0"], r"--cases")
bad("cases 0 in the spec", ["ab", write_json(out("t3.json"), {**gemv, "cases": 0})], r"t3\.json: cases: must be at least 1")
moe_spec = load(spec("dsv4-mxfp4-fold-moe"))
moe_spec["inputs"][1]["scales"]["range"] = [113, 255]
bad("scale interval outside ue8m0's finite codes", ["ab", write_json(out("t4.json"), moe_spec)],
    r"t4\.json: inputs\[1\]\.scales\.range\[1\]: scale byte 255 is outside ue8m0's finite codes")
g2 = json.loads(json.dumps(gemv))
g2["arms"][1]["stages"][0]["op"] = "fp16_gemm"
bad("unknown operator", ["ab", write_json(out("t5.json"), g2)], r"t5\.json: arms\[1\]\.stages\[0\]\.op: unknown operator")
g3 = json.loads(json.dumps(gemv))
g3["arms"][1]["stages"][0]["block_k"] = 1000
bad("block-K that does not divide K", ["ab", write_json(out("t6.json"), g3)],
    r"t6\.json: arms\[1\]\.stages\[0\]\.block_k: 1000 does not divide K = 4096")
g4 = json.loads(json.dumps(gemv))
g4["arms"][1]["stages"][0]["x"] = "nothing"
bad("a stage reading an unknown tensor", ["ab", write_json(out("t7.json"), g4)],
    r"t7\.json: arms\[1\]\.stages\[0\]\.x: \"nothing\" is neither an input nor an output of an earlier stage")
m2 = load(spec("dsv4-mxfp4-fold-moe"))
m2["arms"][1]["stages"][0]["dequant"] = "fp16.hmul"
bad("a dequant that is not e2m1 x ue8m0 -> fp16", ["ab", write_json(out("t8.json"), m2)],
    r"t8\.json: arms\[1\]\.stages\[0\]\.dequant: recipe \"fp16\.hmul\" is not an e2m1 × ue8m0 → fp16 dequant")
ep = load(spec("dsv4-mxfp4-fold-moe"))
ep["element_proofs"][0]["spec"] = os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json")
ep["element_proofs"][0]["claim"] = 5
bad("an element proof's claim the proof spec does not have", ["ab", write_json(out("t10.json"), ep), "--prove"],
    r"t10\.json: element_proofs\[0\]\.claim: .*dsv4-mxfp4-fp16-fold\.json has 2 claim\(s\)")
ep["element_proofs"][0]["claim"] = 1
bad("an element proof's claim that is not an equal claim", ["ab", write_json(out("t11.json"), ep), "--prove"],
    r"t11\.json: element_proofs\[0\]\.claim: claim 1 of .* is not an equal claim")
ep["element_proofs"][0]["spec"] = os.path.join(root, "proofs", "fp16-hmul-vs-fp32-round.json")
ep["element_proofs"][0]["claim"] = 0
bad("an element proof over other formats", ["ab", write_json(out("t12.json"), ep), "--prove"],
    r"t12\.json: element_proofs\[0\]: the proof spec .* has no ue8m0 input")
bad("not JSON", ["ab", write_json(out("t9.json"), [1, 2])], r"t9\.json: \(top level\): expected a JSON object")
bad("--audit without --prove", ["ab", spec("dsv4-fused-aux-gemv"), "--audit", out("ck-audit.json")], r"add --prove")
if not os.path.exists("/dev/nvidiactl"):
    bad("--backend cuda without a GPU", ["ab", spec("dsv4-fused-aux-gemv"), "--backend", "cuda", "--cases", "1"],
        r"no CUDA device|no NVIDIA driver|built without the CUDA backend|cannot start", code=3)

bptest.finish() if hasattr(bptest, "finish") else None
print(f"{len(bptest.failures)} failure(s)" if bptest.failures else "all ab checks passed")
sys.exit(1 if bptest.failures else 0)
