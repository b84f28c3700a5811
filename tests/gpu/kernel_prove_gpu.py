#!/usr/bin/env python3
"""kernel_prove_gpu.py BITPROOF SOURCE_DIR WORKDIR: the pairs `ab --prove` proves on the CPU (issue 48,
tests/cli/kernel_prove.py), run on the GPU beside the proof: `--backend all` runs each pair's cases on
the PTX executor and on the GPU (which must agree bit for bit) and proves the pair from its PTX.
A "proven" the GPU's cases contradict would be a bug in the proof (or in the executor's semantics,
which the proof shares): the verdict must not be "contradicted", and a proven pair's GPU cases must be
equal. Pairs: examples/fused-aux-gemv small.json (proven) and small-64-threads.json (refuted),
examples/turbomind-mxfp4-gemv prove.json (proven through lemmas on 113..128) and prove-129.json
(refuted). Opaque approximate instructions (tests/cli/data/kernel_prove/approx.ptx): the CPU cannot run
their cases, the GPU can: ex2.approx twice is proven and its 16 GPU cases equal; ex2 against lg2.approx is not
proven by the graph and the GPU's cases refute it. Exit 77 (skipped) where there is no GPU."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import bptest  # noqa: E402
from bptest import check, load  # noqa: E402

if not os.path.exists("/dev/nvidiactl"):
    print("skipped: no CUDA device")
    sys.exit(77)

bp, root, work, env, run = bptest.setup(own_cache=False)
for example, name, verdict in (("fused-aux-gemv", "small", "proven"), ("fused-aux-gemv", "small-64-threads", "refuted"),
                               ("turbomind-mxfp4-gemv", "prove", "proven"),
                               ("turbomind-mxfp4-gemv", "prove-129", "refuted")):
    report = os.path.join(work, f"{name}.json")
    r = run("ab", os.path.join(root, "examples", example, name + ".json"), "--prove", "--backend", "all", "--cases",
            "16", "--report", report)
    rep = load(report) if os.path.exists(report) else {"result": {}, "backends": []}
    t = rep["result"].get("trace_proof") or {}
    gpu = [b for b in rep["backends"] if b["name"] != "cpu"]
    check(f"{name}: the GPU ran and agrees with the executor on every case",
          len(gpu) == 1 and gpu[0].get("disagreements") == 0, r.stdout + r.stderr)
    check(f"{name}: the proof's verdict is {verdict} (exit 0: the spec's expectation met)",
          r.returncode == 0 and t.get("verdict") == verdict, r.stdout + r.stderr)
    if verdict == "proven":
        check(f"{name}: proven, and 16 GPU cases are equal", rep["result"].get("differing_cases") == 0, r.stdout)

# Triton's PTX (examples/triton-gemv): the executor's stmatrix and the rest against the GPU on the same cases.
for name, verdict in (("small", "proven"), ("small-bk128", "refuted")):
    report = os.path.join(work, f"triton-{name}.json")
    r = run("ab", os.path.join(root, "examples", "triton-gemv", name + ".json"), "--prove", "--backend", "all",
            "--report", report)
    rep = load(report) if os.path.exists(report) else {"result": {}, "backends": []}
    t = rep["result"].get("trace_proof") or {}
    gpu = [b for b in rep["backends"] if b["name"] != "cpu"]
    check(f"triton {name}: the GPU ran and agrees with the executor on every case (stmatrix included)",
          len(gpu) == 1 and gpu[0].get("disagreements") == 0, r.stdout + r.stderr)
    check(f"triton {name}: verdict {verdict} (exit 0)", r.returncode == 0 and t.get("verdict") == verdict,
          r.stdout + r.stderr)

# Opaque approx nodes: the proof goes through them; the cases run on the GPU alone (--backend cuda).
shutil.copy(os.path.join(root, "tests", "cli", "data", "kernel_prove", "approx.ptx"), work)
for kernels, verdict in ((["exp2_a", "exp2_b"], "proven"), (["exp2_a", "log2_a"], "refuted")):
    name = "-".join(kernels)
    spec = os.path.join(work, name + ".json")
    with open(spec, "w", encoding="utf-8") as f:
        json.dump({"bitproof_ab": 1, "name": name, "cases": 4,
                   "inputs": [{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 64],
                               "values": {"uniform": [-1, 1]}}],
                   "kernels": {"ptx": ["approx.ptx"]},
                   "outputs": [{"name": "y", "dtype": "f16", "shape": [1, 64]}],
                   "arms": [{"name": k, "stages": [{"kernel": k, "grid": [1], "block": [64],
                                                    "args": [{"tensor": "x"}, {"output": "y"}, {"u32": 64}]}]}
                            for k in kernels],
                   "expect": "equal" if verdict == "proven" else "differ"}, f)
    report = os.path.join(work, name + "-report.json")
    r = run("ab", spec, "--prove", "--backend", "cuda", "--cases", "16", "--report", report)
    rep = load(report) if os.path.exists(report) else {"result": {}}
    t = rep["result"].get("trace_proof") or {}
    check(f"{name} (approx): verdict {verdict}, the GPU's 16 cases "
          f"{'equal' if verdict == 'proven' else 'differ'} (exit 0: the expectation met)",
          r.returncode == 0 and t.get("verdict") == verdict
          and (rep["result"].get("differing_cases") == 0) == (verdict == "proven"), r.stdout + r.stderr)

sys.exit(1 if bptest.failures else 0)
