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
proven by the graph and the GPU's cases refute it. Tensor-core mma (tests/cli/data/kernel_prove/mma.cu):
the fragments through shared memory are proven and the GPU's 16 cases are equal; shifted rows of A are
refuted by the GPU; the k halves exchanged and two chained m16n8k8 are not proven by the graph, and what
the GPU's cases say of them is printed (the hardware's accumulation order decides); the fragments
through ldmatrix and ldmatrix.trans are proven and their GPU cases equal. ldmatrix's four forms
(tests/ptx/data/ldmatrix.ptx) on the GPU and the executor: equal on every case (--backend all).
Exit 77 (skipped) where there is no GPU."""
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

# Opaque mma nodes: one warp, m16n8k16 f16 -> f32; the cases run on the GPU alone (--backend cuda).
shutil.copy(os.path.join(root, "tests", "cli", "data", "kernel_prove", "mma.ptx"), work)
for kernel, verdicts in (("mma_shared", ("proven",)), ("mma_ldmatrix", ("proven",)),
                         ("mma_ldmatrix_trans", ("proven",)), ("mma_shifted", ("refuted",)),
                         ("mma_k_swapped", ("not_proven", "refuted")), ("mma_two_k8", ("not_proven", "refuted"))):
    spec = os.path.join(work, kernel + ".json")
    with open(spec, "w", encoding="utf-8") as f:
        json.dump({"bitproof_ab": 1, "name": kernel, "cases": 4,
                   "inputs": [{"name": "a", "role": "activation", "dtype": "f16", "shape": [16, 16],
                               "values": {"uniform": [-1, 1]}},
                              {"name": "b", "role": "weight", "dtype": "f16", "shape": [8, 16],
                               "values": {"uniform": [-1, 1]}}],
                   "kernels": {"ptx": ["mma.ptx"]},
                   "outputs": [{"name": "y", "dtype": "f16", "shape": [16, 8]}],
                   "arms": [{"name": k, "stages": [{"kernel": k, "grid": [1], "block": [32],
                                                    "args": [{"tensor": "a"}, {"tensor": "b"}, {"output": "y"}]}]}
                            for k in ("mma_direct", kernel)],
                   "expect": "equal"}, f)
    report = os.path.join(work, kernel + "-report.json")
    r = run("ab", spec, "--prove", "--backend", "cuda", "--cases", "16", "--report", report)
    rep = load(report) if os.path.exists(report) else {"result": {}}
    t = rep["result"].get("trace_proof") or {}
    differing = rep["result"].get("differing_cases")
    print(f"  {kernel}: verdict {t.get('verdict')}, {differing} of 16 GPU cases differ, exit {r.returncode}")
    check(f"{kernel} (mma): verdict in {verdicts}; a proven pair's GPU cases equal, a refuted pair's differ",
          t.get("verdict") in verdicts and r.returncode in (0, 1) and differing is not None
          and (differing == 0) == (t.get("verdict") != "refuted"), r.stdout + r.stderr)

# ldmatrix's layouts (tests/ptx/data/ldmatrix.ptx): the GPU's bits against the executor's on every case.
shutil.copy(os.path.join(root, "tests", "ptx", "data", "ldmatrix.ptx"), work)
for kernel in ("ldm_x4", "ldm_x4_trans", "ldm_x1", "ldm_x2_trans"):
    spec = os.path.join(work, kernel + ".json")
    with open(spec, "w", encoding="utf-8") as f:
        json.dump({"bitproof_ab": 1, "name": kernel, "cases": 8,
                   "inputs": [{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 256],
                               "values": {"uniform": [-1, 1]}}],
                   "kernels": {"ptx": ["ldmatrix.ptx"]},
                   "outputs": [{"name": "y", "dtype": "f16", "shape": [1, 256]}],
                   "arms": [{"name": arm, "stages": [{"kernel": kernel, "grid": [1], "block": [32],
                                                      "args": [{"tensor": "x"}, {"output": "y"}]}]}
                            for arm in ("a", "b")],
                   "expect": "equal"}, f)
    report = os.path.join(work, kernel + "-report.json")
    r = run("ab", spec, "--backend", "all", "--report", report)
    rep = load(report) if os.path.exists(report) else {"backends": []}
    gpu = [b for b in rep.get("backends", []) if b["name"] != "cpu"]
    check(f"{kernel}: the GPU agrees with the executor's ldmatrix on every case (exit 0)",
          r.returncode == 0 and len(gpu) == 1 and gpu[0].get("disagreements") == 0, r.stdout + r.stderr)

sys.exit(1 if bptest.failures else 0)
