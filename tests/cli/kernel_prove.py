#!/usr/bin/env python3
"""kernel_prove.py BITPROOF SOURCE_DIR WORKDIR: `bitproof ab --prove` on kernel arms (issue 48).

Both arms' PTX traced by the executor's symbolic policy into one node table; each output element's
node compared (docs/ptx-proof.md). At CPU-test sizes:
(a) examples/fused-aux-gemv small.json: three launches against the fused launch, PROVEN for every
    input (exit 0), cross-checked by the concrete cases of the same run and of a run over every
    finite FP16 code (a proof the samples contradict is a bug: asserted);
(b) small-64-threads.json: K split otherwise: the graphs differ, the first FMA only one arm computes
    is named with its PTX line (and its source line from nvcc -lineinfo's .loc), the concrete cases
    differ: "refuted"; with "expect": "equal" the gate fails (exit 1);
(c) examples/turbomind-mxfp4-gemv prove.json: ordinary vs folded dequant PROVEN on scales 113..128
    through a lemma over (code byte, scale byte); prove-129.json: the lemma tables differ, the
    counterexample decoded (scale byte 129, both results);
(d) y = x against y = x * 1.0: they differ only on NaN payloads, which no uniform case shows; the
    output depends on one f16 leaf, so both are evaluated on all 65,536 values: refuted by exhaustion
    (0x7C01); x[i] + x[i^1] with and without the * 1.0: equal bits, but two leaves (2^32 values):
    not proven, not refuted (exit 1, verdict "not_proven");
(e) not provable by tracing: a data-dependent loop and a data-dependent index, exit 2 naming the
    PTX line;
(g) opaque approximate instructions (approx.ptx): ex2.approx twice on the same operands proven, with
    the opaque nodes counted and the CPU cases skipped (they need the GPU); ex2 against lg2 not
    proven; without --prove the CPU A/B stops at the approx (exit 2, its PTX line).
(h) if-conversion (branchy.ptx, hand-written): relu by a data-dependent hammock and by an if/else
    diamond, each proven equal to relu by selp; the hammock writing -0 instead refuted (a negative
    x, both results); a branch around a store refused (exit 2, its line).
(i) Triton (examples/triton-gemv: the PTX Triton 3.6 emitted on an H100, make_ptx.py): three `gemv` launches
    against one `gemv_fused` PROVEN for every input; with BLOCK_K = 128 in the separate form (another
    partition of K) the graphs differ and case 56 of the 256 refutes it.
(j) tensor-core mma (mma.cu/mma.ptx, one warp, m16n8k16 f16 -> f32): the fragments loaded through shared
    memory, through ldmatrix.x4/.x2 and through ldmatrix.x2.trans proven equal to the direct loads for every input (one opaque node per lane and D register
    over all 32 lanes' operands); the k halves exchanged, two chained m16n8k8 and shifted rows not
    proven, each naming the operand lists with the mma's PTX line; without --prove the CPU A/B stops
    at the mma (exit 2, its line).
Reports: schema-valid, `report verify` re-derives a proven one."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bptest  # noqa: E402
from bptest import check, load  # noqa: E402

bp, root, work, env, run = bptest.setup(own_cache=True)
fused = os.path.join(work, "fused")
mxfp4 = os.path.join(work, "mxfp4")
small = os.path.join(work, "small")
shutil.copytree(os.path.join(root, "examples", "fused-aux-gemv"), fused)
shutil.copytree(os.path.join(root, "examples", "turbomind-mxfp4-gemv"), mxfp4)
shutil.copytree(os.path.join(root, "tests", "cli", "data", "kernel_prove"), small)


def write(path, spec):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(spec, f)
    return path


def variant(path, name, **changes):
    s = load(path)
    s.update(changes)
    return write(os.path.join(os.path.dirname(path), name + ".json"), s)


def schema_ok(report):
    r = subprocess.run([sys.executable, os.path.join(root, "tests", "cli", "validate_schema.py"),
                        os.path.join(root, "reports", "schema.json"), report], capture_output=True, text=True)
    return r.returncode == 0, r.stdout + r.stderr


def trace_of(report):
    return load(report)["result"]["trace_proof"] if os.path.exists(report) else {}


def not_contradicted(what, t, out):
    """A proof the concrete cases contradict is a bug in bitproof."""
    check(f"{what}: the concrete cases do not contradict the proof", t.get("verdict") != "contradicted"
          and "CONTRADICTED" not in out, out)


# ---- (a) the fused aux GEMV pair: proven ----
report = os.path.join(work, "small.json")
r = run("ab", os.path.join(fused, "small.json"), "--prove", "--report", report, "--markdown",
        os.path.join(work, "small.md"))
t = trace_of(report)
check("(a) small: proven (exit 0)", r.returncode == 0, r.stdout + r.stderr)
check("(a) the console says fused≡separate on every input, elements, nodes and lemmas",
      re.search(r"fused≡separate on every input: 56 elements, [0-9.]+( M)? nodes, 0 lemmas", r.stdout) is not None,
      r.stdout)
check("(a) the report: method ptx, verdict proven, identical, a node count",
      t.get("method") == "ptx" and t.get("verdict") == "proven" and t.get("identical") is True
      and t.get("nodes", 0) > 1000 and t.get("elements") == 56, json.dumps(t)[:800])
check("(a) the same run's concrete cases are equal (the cross-check)",
      "3/3 changing-input cases bitwise equal" in r.stdout, r.stdout)
not_contradicted("(a)", t, r.stdout)
ok, detail = schema_ok(report)
check("(a) the proven report matches reports/schema.json", ok, detail)
v = run("report", "verify", report, "--spec-dir", fused)
check("(a) report verify re-derives the proof", v.returncode == 0 and "verified" in v.stdout, v.stdout + v.stderr)
md = open(os.path.join(work, "small.md"), encoding="utf-8").read() if os.path.exists(os.path.join(work, "small.md")) else ""
check("(a) the Markdown says PASS and every input", "**PASS**" in md and "on every input" in md, md[:600])
# Cross-check on other values: every finite FP16 code in x and the weights, 16 cases.
finite = load(os.path.join(fused, "small.json"))
for i in finite["inputs"]:
    i["values"] = "finite"
finite["cases"] = 16
r = run("ab", write(os.path.join(fused, "finite.json"), finite), "--prove")
check("(a) proven again, and 16 cases over every finite FP16 code agree with it",
      r.returncode == 0 and "16/16 changing-input cases bitwise equal" in r.stdout and "on every input" in r.stdout,
      r.stdout + r.stderr)

# ---- (b) another K partition: refuted, the first FMA named ----
report = os.path.join(work, "k64.json")
r = run("ab", os.path.join(fused, "small-64-threads.json"), "--prove", "--report", report)
t = trace_of(report)
check("(b) 64 threads: the negative control passes with the proof (exit 0)", r.returncode == 0, r.stdout + r.stderr)
check("(b) the verdict is refuted: the graphs differ and a case differs",
      t.get("verdict") == "refuted" and t.get("identical") is False and "refuted:" in r.stdout, r.stdout)
d = t.get("difference") or {}
check("(b) the first operation only one arm computes is an FMA, in both arms",
      "fma.rn.f32" in d.get("operation_a", "") and "fma.rn.f32" in d.get("operation_b", ""), json.dumps(d)[:800])
check("(b) the console names it with its PTX line",
      re.search(r"first operation only separate computes: .*fma\.rn\.f32.*\[gemv\.cu \(PTX\):\d+\]", r.stdout)
      is not None, r.stdout)
check("(b) the reduction position names the x elements each arm adds",
      re.search(r"reduction position: separate adds .*x\[0\]\[\d+\].*; fused adds .*x\[0\]\[\d+\]", r.stdout)
      is not None, r.stdout)
ok, detail = schema_ok(report)
check("(b) the refuted report matches reports/schema.json", ok, detail)
v = run("report", "verify", report, "--spec-dir", fused)
check("(b) report verify re-derives the refutation (the same difference, byte for byte)",
      v.returncode == 0 and "verified" in v.stdout, v.stdout + v.stderr)
rd = run("report", "render", report, "--markdown", os.path.join(work, "k64.md"))
md = open(os.path.join(work, "k64.md"), encoding="utf-8").read() if os.path.exists(os.path.join(work, "k64.md")) else ""
check("(b) report render: the Markdown names the first FMA of each arm and the verdict",
      rd.returncode == 0 and "first operation only separate computes" in md and "refuted" in md, md[:800])
r = run("ab", variant(os.path.join(fused, "small-64-threads.json"), "k64-equal", expect="equal"), "--prove")
check("(b) expecting equal, the refutation fails the gate (exit 1)", r.returncode == 1 and "refuted" in r.stdout,
      r.stdout + r.stderr)
r = run("ab", os.path.join(fused, "small-64-threads-lineinfo.json"), "--prove")
check("(b) from nvcc -lineinfo PTX: the source line of the FMA (gemv.cu:17, row_dot's fmaf)",
      re.search(r"fma\.rn\.f32.*\[gemv-lineinfo\.ptx:\d+ \(gemv\.cu:17\)\]", r.stdout) is not None,
      r.stdout + r.stderr)

# ---- (c) MXFP4 ordinary vs folded: proven through a lemma on 113..128, refuted with 129 ----
report = os.path.join(work, "mx.json")
r = run("ab", os.path.join(mxfp4, "prove.json"), "--prove", "--report", report)
t = trace_of(report)
check("(c) ordinary≡folded proven on scales 113..128 (exit 0)", r.returncode == 0, r.stdout + r.stderr)
lemmas = t.get("lemmas", [])
check("(c) through a lemma over a code byte and a scale byte, scales 113..128",
      any("w (codes)" in l["leaves"] and "w (scales)" in l["leaves"] and "113..128" in l["domains"] and l["uses"] > 0
          for l in lemmas), json.dumps(lemmas)[:800])
check("(c) the console lists the lemma", re.search(r"on every input: 8 elements, .* [1-9]\d* lemmas? \(.*113\.\.128",
                                                   r.stdout) is not None, r.stdout)
check("(c) the same run's concrete cases agree", "4/4 changing-input cases bitwise equal" in r.stdout, r.stdout)
not_contradicted("(c)", t, r.stdout)
ok, detail = schema_ok(report)
check("(c) the lemma report matches reports/schema.json", ok, detail)
report = os.path.join(work, "mx129.json")
r = run("ab", os.path.join(mxfp4, "prove-129.json"), "--prove", "--report", report)
t = trace_of(report)
d = t.get("difference") or {}
cx = d.get("counterexample") or {}
check("(c) 129 admitted: refuted, as the negative control expects (exit 0)",
      r.returncode == 0 and t.get("verdict") == "refuted", r.stdout + r.stderr)
check("(c) the lemma counterexample: a code byte and the scale byte 129, decoded",
      any(l["kind"] == "ue8m0" and l["bits"] == 129 for l in cx.get("leaves", []))
      and any(l["kind"] == "e2m1x2" for l in cx.get("leaves", [])), json.dumps(d)[:1000])
check("(c) both arms' results there, decoded, and different",
      cx.get("a", {}).get("bits") not in (None, cx.get("b", {}).get("bits")), json.dumps(cx)[:600])
check("(c) the console prints the counterexample", "lemma counterexample:" in r.stdout and "0x81" in r.stdout,
      r.stdout)
r = run("ab", variant(os.path.join(mxfp4, "prove-129.json"), "mx129-equal", expect="equal"), "--prove")
check("(c) 129 expecting equal fails the gate (exit 1)", r.returncode == 1, r.stdout + r.stderr)
# From a checkpoint: the scale leaves' domain is the bytes the checkpoint's tensor holds (114..126).
r = run("synth-checkpoint", os.path.join(mxfp4, "ck"), "--layers", "1", "--experts", "1", "--rows", "8", "--cols",
        "256", "--scale-range", "114:126")
check("(c) synth-checkpoint 8 x 256, scales 114..126", r.returncode == 0, r.stdout + r.stderr)
s = load(os.path.join(mxfp4, "prove.json"))
s["inputs"][1] = {"name": "w", "role": "weight", "dtype": "mxfp4", "shape": [8, 256], "tensor": "layers.0.ffn.experts.0.w1"}
s["checkpoint"] = "ck/"
report = os.path.join(work, "mxck.json")
r = run("ab", write(os.path.join(mxfp4, "ck.json"), s), "--prove", "--report", report)
t = trace_of(report)
check("(c) from the checkpoint: proven over the scale bytes its tensor holds (114..126)",
      r.returncode == 0 and t.get("verdict") == "proven"
      and any(l["domains"] == ["all 256", "114..126"] for l in t.get("lemmas", [])), r.stdout + r.stderr)


# ---- (d) not proven, not refuted ----
def pair(name, kernels, expect="equal", cases=4, ptx="kernels.ptx"):
    arms = [{"name": k if kernels[0] != kernels[1] else f"{k}-{i}",
             "stages": [{"kernel": k, "grid": [1], "block": [64],
                         "args": [{"tensor": "x"}, {"output": "y"}, {"u32": 64}]}]} for i, k in enumerate(kernels)]
    return write(os.path.join(small, name + ".json"), {
        "bitproof_ab": 1, "name": name, "cases": cases,
        "inputs": [{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 64], "values": {"uniform": [-1, 1]}}],
        "kernels": {"ptx": [ptx]}, "outputs": [{"name": "y", "dtype": "f16", "shape": [1, 64]}],
        "arms": arms, "expect": expect})


report = os.path.join(work, "one.json")
r = run("ab", pair("times-one", ["copy", "times_one"]), "--prove", "--report", report)
t = trace_of(report)
d = t.get("difference") or {}
cx = d.get("counterexample") or {}
check("(d) y = x against y = x * 1.0: no case differs, yet refuted by exhaustion of x (exit 1)",
      r.returncode == 1 and t.get("verdict") == "refuted" and t.get("refuted_by_exhaustion") is True
      and "4/4 changing-input cases bitwise equal" in r.stdout, r.stdout + r.stderr)
check("(d) the counterexample: a NaN payload x, copy keeps it, x * 1.0 returns the canonical 0x7FFF",
      [l["bits"] for l in cx.get("leaves", [])] == [0x7C01] and cx.get("a", {}).get("bits") == "0x7C01"
      and cx.get("b", {}).get("bits") == "0x7FFF" and "refuted by exhaustion" in r.stdout, json.dumps(d)[:800])
m = re.fullmatch(r"kernels\.ptx:(\d+)", d.get("line_b", ""))
ptx_lines = open(os.path.join(small, "kernels.ptx"), encoding="utf-8").read().split("\n")
check("(d) the operation only times_one computes is the multiply by 1.0 (a lemma over x), its PTX line a mul.f16",
      m is not None and "mul" in ptx_lines[int(m.group(1)) - 1] and "mul.rn.f16(#0, 0x3c00)" in json.dumps(t["lemmas"]),
      json.dumps(t)[:800])
r = run("ab", pair("times-one-differ", ["copy", "times_one"], expect="differ"), "--prove")
check("(d) as a negative control (expect differ) the exhaustion's refutation passes it though no case differs",
      r.returncode == 0 and "negative control: the arms differ" in r.stdout, r.stdout + r.stderr)
report = os.path.join(work, "pair.json")
r = run("ab", pair("pair-sum", ["pair_sum", "pair_sum_times_one"]), "--prove", "--report", report)
t = trace_of(report)
check("(d) x[i] + x[i^1] against x[i] * 1.0 + x[i^1]: not proven (exit 1; equal bits, two f16 leaves: 2^32 "
      "values, not evaluated)", r.returncode == 1 and t.get("verdict") == "not_proven"
      and t.get("refuted_by_exhaustion") is False, r.stdout + r.stderr)
check("(d) the console says not proven and that no case refutes it",
      "not proven:" in r.stdout and "not refuted either" in r.stdout, r.stdout)
ok, detail = schema_ok(report)
check("(d) the not-proven report matches reports/schema.json", ok, detail)
r = run("ab", pair("copy-copy", ["copy", "copy"]), "--prove")
check("(d) control: the same kernel twice is proven (exit 0)", r.returncode == 0 and "on every input" in r.stdout,
      r.stdout + r.stderr)

# ---- (f) table lookups at a data-dependent address ----
r = run("ab", pair("narrow-lookup", ["narrow_lookup", "narrow_lookup"]), "--prove")
check("(f) a lookup indexed by one f16 leaf (the lemma enumerates its address): proven (exit 0)",
      r.returncode == 0 and "on every input" in r.stdout, r.stdout + r.stderr)
report = os.path.join(work, "lookup.json")
r = run("ab", pair("wide-lookup", ["wide_lookup", "wide_lookup"]), "--prove", "--report", report)
t = trace_of(report)
check("(f) the same kernel twice, its lookup indexed by two f16 leaves (no lemma encloses it): not proven (exit 1), "
      "the lookup named", r.returncode == 1 and t.get("verdict") == "not_proven"
      and "reads a table at an address no lemma enumerates" in r.stdout and "lookup: load#" in r.stdout
      and "depends on x[0][0], x[0][1] (2 leaves)" in r.stdout and t.get("difference", {}).get("lookup") is True,
      r.stdout + r.stderr)
ok, detail = schema_ok(report)
check("(f) the lookup's not-proven report matches reports/schema.json", ok, detail)
r = run("ab", pair("past-lookup", ["past_lookup", "past_lookup"]), "--prove")
check("(f) a lookup past its 64-entry table for some x: the cases' executor stops it, exit 2 naming it",
      r.returncode == 2 and "past the end of kLookup (128 bytes)" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
      r.stdout + r.stderr)

# ---- (g) opaque approximate instructions (approx.ptx, hand-written: ex2/lg2.approx.ftz.f32) ----
def approx_pair(name, kernels):
    return write(os.path.join(small, name + ".json"), {
        "bitproof_ab": 1, "name": name, "cases": 4,
        "inputs": [{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 64], "values": {"uniform": [-1, 1]}}],
        "kernels": {"ptx": ["approx.ptx"]}, "outputs": [{"name": "y", "dtype": "f16", "shape": [1, 64]}],
        "arms": [{"name": k, "stages": [{"kernel": k, "grid": [1], "block": [64],
                                         "args": [{"tensor": "x"}, {"output": "y"}, {"u32": 64}]}]} for k in kernels],
        "expect": "equal"})


report = os.path.join(work, "approx.json")
r = run("ab", approx_pair("exp2-exp2", ["exp2_a", "exp2_b"]), "--prove", "--report", report)
t = trace_of(report)
check("(g) ex2.approx twice on the same operand nodes: proven (exit 0) through opaque nodes, said so",
      r.returncode == 0 and t.get("verdict") == "proven"
      and re.search(r"exp2_b≡exp2_a on every input: 64 elements, .* 64 opaque nodes assumed deterministic "
                    r"\(ex2\.approx\.ftz\.f32\)", r.stdout) is not None
      and t.get("approx") == {"nodes": 64, "instructions": ["ex2.approx.ftz.f32"]}, r.stdout + r.stderr)
check("(g) no case ran on the CPU: the report and the console say the concrete A/B needs the GPU",
      "runs on the GPU only" in t.get("cases_gpu_only", "") and "needs the GPU" in r.stdout
      and re.search(r"approx\.ptx:\d+", t.get("cases_gpu_only", "")) is not None, r.stdout + r.stderr)
ok, detail = schema_ok(report)
check("(g) the opaque report matches reports/schema.json", ok, detail)
v = run("report", "verify", report, "--spec-dir", small)
check("(g) report verify re-derives the opaque proof", v.returncode == 0 and "verified" in v.stdout, v.stdout + v.stderr)
report = os.path.join(work, "approx-lg2.json")
r = run("ab", approx_pair("exp2-log2", ["exp2_a", "log2_a"]), "--prove", "--report", report)
t = trace_of(report)
check("(g) ex2.approx against lg2.approx: not proven (exit 1), not refuted, the concrete A/B needs the GPU",
      r.returncode == 1 and t.get("verdict") == "not_proven" and "not proven:" in r.stdout
      and "needs the GPU" in r.stdout and "lg2.approx.ftz.f32" in json.dumps(t.get("difference", {})),
      r.stdout + r.stderr)
ok, detail = schema_ok(report)
check("(g) the opaque not-proven report matches reports/schema.json", ok, detail)
r = run("ab", approx_pair("exp2-cases", ["exp2_a", "exp2_b"]))
err = r.stderr.strip()
check("(g) without --prove the CPU A/B stops at the approx: exit 2, one line naming its PTX line",
      r.returncode == 2 and "ex2.approx.ftz.f32: approximate, runs on the GPU only" in err
      and re.search(r"approx\.ptx:\d+", err) is not None and len(err.splitlines()) == 1, r.stdout + r.stderr)

# ---- (e) not provable by tracing ----
for kernel, what in (("data_loop", "a loop whose trip count is x's bits"), ("data_index", "an index from x's bits")):
    r = run("ab", pair(kernel, [kernel, kernel]), "--prove")
    err = r.stderr.strip()
    check(f"(e) {what}: exit 2, one line naming the PTX line, nothing proven",
          r.returncode == 2 and "not provable by tracing" in err and re.search(r"kernels\.ptx:\d+", err) is not None
          and len(err.splitlines()) == 1, r.stdout + r.stderr)
    r = run("ab", pair(kernel + "-cases", [kernel, kernel]))
    check(f"(e) {what}: without --prove the cases still run (exit 0)", r.returncode == 0, r.stdout + r.stderr)

# ---- (h) if-conversion: data-dependent short forward branches ----
for kernel, shape in (("relu_branch", "a hammock"), ("relu_diamond", "an if/else diamond")):
    report = os.path.join(work, f"{kernel}.json")
    r = run("ab", pair(kernel, [kernel, "relu_selp"], ptx="branchy.ptx"), "--prove", "--report", report)
    t = trace_of(report)
    check(f"(h) relu by {shape} against relu by selp: proven (exit 0)",
          r.returncode == 0 and t.get("verdict") == "proven" and "on every input" in r.stdout, r.stdout + r.stderr)
report = os.path.join(work, "relu_neg0.json")
r = run("ab", pair("relu-neg0", ["relu_branch_neg0", "relu_selp"], ptx="branchy.ptx"), "--prove", "--report", report)
t = trace_of(report)
cx = (t.get("difference") or {}).get("counterexample") or {}
leaves = [l.get("bits") for l in cx.get("leaves", [])]
check("(h) negative control: the hammock writing -0 is refuted, the counterexample a negative x (-0 against +0)",
      r.returncode == 1 and t.get("verdict") == "refuted" and len(leaves) == 1 and isinstance(leaves[0], int)
      and leaves[0] & 0x8000 != 0 and cx.get("a", {}).get("bits") == "0x8000" and cx.get("b", {}).get("bits") == "0x0000",
      r.stdout + r.stderr + json.dumps(t.get("difference"))[:800])
r = run("ab", pair("relu-store", ["relu_store_in_branch", "relu_selp"], ptx="branchy.ptx"), "--prove")
err = r.stderr.strip()
m = re.search(r"branchy\.ptx:(\d+):", err)
branchy_lines = open(os.path.join(small, "branchy.ptx"), encoding="utf-8").read().split("\n")
check("(h) a branch on x around a store: exit 2, one line naming the branch's PTX line, not if-converted",
      r.returncode == 2 and "not provable by tracing" in err and "skips st at line" in err and m is not None
      and "bra" in branchy_lines[int(m.group(1)) - 1] and len(err.splitlines()) == 1, r.stdout + r.stderr)

# ---- (i) Triton's PTX (stmatrix, braced single registers, .loc into the Python file) ----
tri = os.path.join(work, "triton")
shutil.copytree(os.path.join(root, "examples", "triton-gemv"), tri)
report = os.path.join(work, "triton.json")
r = run("ab", os.path.join(tri, "small.json"), "--prove", "--report", report)
t = trace_of(report)
check("(i) Triton: three gemv launches against gemv_fused proven for every input (exit 0)",
      r.returncode == 0 and t.get("verdict") == "proven" and "fused≡separate on every input: 64 elements" in r.stdout,
      r.stdout + r.stderr)
report = os.path.join(work, "triton-bk128.json")
r = run("ab", os.path.join(tri, "small-bk128.json"), "--prove", "--report", report)
t = trace_of(report)
check("(i) Triton, BLOCK_K = 128 in the separate form: refuted (a differing case), the first FMA/add named with "
      "its Triton source line", r.returncode == 0 and t.get("verdict") == "refuted"
      and "gemv_bk128.ptx:" in r.stdout and "(standard.py:" in r.stdout, r.stdout + r.stderr)

# ---- (j) tensor-core mma: opaque warp nodes (mma.cu, mma.ptx) ----
def mma_pair(name, kernels):
    return write(os.path.join(small, name + ".json"), {
        "bitproof_ab": 1, "name": name, "cases": 4,
        "inputs": [{"name": "a", "role": "activation", "dtype": "f16", "shape": [16, 16], "values": {"uniform": [-1, 1]}},
                   {"name": "b", "role": "weight", "dtype": "f16", "shape": [8, 16], "values": {"uniform": [-1, 1]}}],
        "kernels": {"ptx": ["mma.ptx"]}, "outputs": [{"name": "y", "dtype": "f16", "shape": [16, 8]}],
        "arms": [{"name": k, "stages": [{"kernel": k, "grid": [1], "block": [32],
                                         "args": [{"tensor": "a"}, {"tensor": "b"}, {"output": "y"}]}]} for k in kernels],
        "expect": "equal"})


MMA16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
with open(os.path.join(small, "mma.ptx"), encoding="utf-8") as f:  # mma_direct's mma: the file's first
    MMA_AT = "mma.ptx:%d" % next(i + 1 for i, line in enumerate(f) if "mma.sync" in line)
report = os.path.join(work, "mma.json")
r = run("ab", mma_pair("mma-shared", ["mma_direct", "mma_shared"]), "--prove", "--report", report)
t = trace_of(report)
check("(j) mma: the fragments through shared memory proven equal to the direct loads (exit 0), 128 opaque nodes",
      r.returncode == 0 and t.get("verdict") == "proven"
      and f"mma_shared≡mma_direct on every input: 128 elements" in r.stdout
      and f"128 opaque nodes assumed deterministic ({MMA16})" in r.stdout
      and t.get("approx") == {"nodes": 128, "instructions": [MMA16]}
      and MMA_AT in t.get("cases_gpu_only", "") and "needs the GPU" in r.stdout, r.stdout + r.stderr)
ok, detail = schema_ok(report)
check("(j) the mma report matches reports/schema.json", ok, detail)
v = run("report", "verify", report, "--spec-dir", small)
check("(j) report verify re-derives the mma proof", v.returncode == 0 and "verified" in v.stdout, v.stdout + v.stderr)
md = os.path.join(work, "mma.md")
m = run("report", "render", report, "--markdown", md)
text = open(md, encoding="utf-8").read() if os.path.exists(md) else ""
check("(j) the Markdown of a proof whose cases need the GPU says no case ran (no digests of nothing)",
      m.returncode == 0 and "| `y` | 16×8 | no case ran | no case ran | — |" in text
      and "e3b0c44298fc1c14" not in text, m.stdout + m.stderr + text)
xml = os.path.join(work, "mma.xml")
j = run("report", "render", report, "--junit", xml)
junit = open(xml, encoding="utf-8").read() if os.path.exists(xml) else ""
check("(j) its JUnit holds the trace proof and no per-output case (none ran)",
      j.returncode == 0 and 'name="trace proof"' in junit and 'name="cases: y"' not in junit, j.stdout + j.stderr + junit)
for kernel in ("mma_ldmatrix", "mma_ldmatrix_trans"):
    r = run("ab", mma_pair(kernel, ["mma_direct", kernel]), "--prove")
    check(f"(j) mma: the fragments through {kernel[4:].replace('_', '.')} proven equal to the direct loads (exit 0)",
          r.returncode == 0 and f"{kernel}≡mma_direct on every input: 128 elements" in r.stdout, r.stdout + r.stderr)
for kernel, what in (("mma_k_swapped", "the k halves exchanged (the same sum in another order)"),
                     ("mma_two_k8", "two chained m16n8k8"), ("mma_shifted", "A's rows shifted")):
    report = os.path.join(work, kernel + ".json")
    r = run("ab", mma_pair(kernel, ["mma_direct", kernel]), "--prove", "--report", report)
    t = trace_of(report)
    check(f"(j) mma, {what}: not proven (exit 1), not refuted, the operand lists named with the mma's line",
          r.returncode == 1 and t.get("verdict") == "not_proven" and "not refuted either" in r.stdout
          and "first operation only mma_direct computes: operands(" in r.stdout and f"[{MMA_AT}]" in r.stdout
          and "needs the GPU" in r.stdout, r.stdout + r.stderr)
r = run("ab", mma_pair("mma-cases", ["mma_direct", "mma_shared"]))
err = r.stderr.strip()
check("(j) without --prove the CPU A/B stops at the mma: exit 2, one line naming its PTX line",
      r.returncode == 2 and f"{MMA_AT}: block (0,0,0) thread (0,0,0): {MMA16}: tensor-core accumulation, runs on "
      "the GPU only" in err and len(err.splitlines()) == 1, r.stdout + r.stderr)

if bptest.failures:
    print(f"{len(bptest.failures)} check(s) failed")
    sys.exit(1)
print("all checks passed")
