#!/usr/bin/env python3
"""user_cuda.py BITPROOF SOURCE_DIR WORKDIR: user recipes on the GPU (NVRTC +
nvJitLink, src/backend/cuda_user.cpp) against their CPU build (host header).

- Every example proves with --backend all: exit 0, "(cpu, cuda sm_XY)" on every
  claim line, the broken variant refuted as expected on both, the result the
  committed report's; the GPU's bits equal the CPU worker's on every case.
- The image cache: a second run links nothing (info.user_recipes.cached).
- Negative controls: a recipe whose device build differs from its host build
  on one case fails (exit 1) naming that case; x*x - x*x contracted into an
  FMA by NVRTC (x*c + 1, --fmad=true, nvcc's default) differs from the CPU and fails,
  the same source with "fmad": false agrees.
- Inline PTX: --backend cpu refuses it (exit 2); --backend all runs it on the
  GPU alone, says so, and the report's cuda entry says the CPU witness is missing.
- A compile error on the GPU path: exit 2, the spec's path and NVRTC's first error.
- Wall-clock limits (issue 45, item 8): tests/gpu/limits_cuda.py.
Without a CUDA device: exit 77 (ctest: skipped).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import bptest  # noqa: E402
from bptest import check, failures, load, setup  # noqa: E402

bp, root, work, env, run = setup(own_cache=True)


def cuda_info(report):
    return next(b["info"] for b in report["backends"] if b["name"] == "cuda")


probe = run("prove", os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json"), "--backend", "cuda", "--quiet")
if probe.returncode == 3:
    print("skipped: no CUDA device (" + probe.stderr.strip() + ")")
    sys.exit(77)

for name in ("marlin-fp4", "int4-magic", "fp8-scale-fold"):
    example = os.path.join(work, name)
    shutil.copytree(os.path.join(root, "examples", name), example)
    done = run("prove", "proof.json", "--backend", "all", "--report", "all.json", cwd=example)
    out = done.stdout
    check(f"{name}: --backend all proves (exit 0)", done.returncode == 0, out + done.stderr)
    if done.returncode != 0:
        continue
    lines = [l for l in out.splitlines()
             if ("≡" in l or " exact:" in l or "refuted as expected" in l) and "soft model" not in l]
    check(f"{name}: every claim line on both backends", lines and all("(cpu, cuda sm_" in l for l in lines), out)
    check(f"{name}: the broken variant refuted as expected on both", any("refuted as expected" in l for l in lines), out)
    report = load(os.path.join(example, "all.json"))
    committed = load(os.path.join(example, "report.json"))["result"]
    differing = [k for k in set(committed) | set(report["result"]) if committed.get(k) != report["result"].get(k)]
    check(f"{name}: the result is the committed report's", not differing,
          "; ".join(f"{k}: {json.dumps(report['result'].get(k))[:400]} vs committed {json.dumps(committed.get(k))[:400]}"
                    for k in differing))
    info = cuda_info(report)
    user = info["user_recipes"]
    check(f"{name}: GPU bits compared with the CPU worker's on every case",
          user["cpu_witness"].startswith("the CPU worker's bits") and report["agreement"]["holds"], json.dumps(user))
    check(f"{name}: compiled by NVRTC, linked by nvJitLink, not cached at first", "nvrtc" in user["compiled_with"]
          and user["cached"] is False, json.dumps(user))
    again = run("prove", "proof.json", "--backend", "cuda", "--report", "again.json", cwd=example)
    cached = again.returncode == 0 and cuda_info(load(os.path.join(example, "again.json")))["user_recipes"]["cached"]
    check(f"{name}: a second run links nothing (cached)", cached, again.stdout + again.stderr)
    print(f"     {name}: first build {user['seconds']:.2f} s; {user['architecture']}")

specs = os.path.join(root, "tests", "gpu", "specs", "user")
differ = run("prove", os.path.join(specs, "differ.json"), "--backend", "all", "--report", os.path.join(work, "d.json"))
check("device build differing on one case: --backend all fails (exit 1)", differ.returncode == 1,
      differ.stdout + differ.stderr)
check("... and names the case and both bits", "case 5:" in differ.stdout and "cpu (host header)" in differ.stdout,
      differ.stdout)

contract = run("prove", os.path.join(specs, "residual-contract.json"), "--backend", "all")
check("x*c + 1 with NVRTC --fmad=true: contracted into an FMA, the GPU differs from the CPU (exit 1)",
      contract.returncode == 1 and "contractible cuda sm_" in contract.stdout, contract.stdout + contract.stderr)
no_contract = run("prove", os.path.join(specs, "residual-nocontract.json"), "--backend", "all")
check("... with \"fmad\": false both agree (exit 0, 65536/65536 on cpu and cuda)",
      no_contract.returncode == 0 and "65536/65536" in no_contract.stdout and "(cpu, cuda sm_" in no_contract.stdout,
      no_contract.stdout + no_contract.stderr)

lop3 = os.path.join(specs, "lop3.json")
cpu_only = run("prove", lop3, "--backend", "cpu")
check("inline PTX: --backend cpu refuses it (exit 2, names the asm)", cpu_only.returncode == 2
      and "inline PTX (asm)" in cpu_only.stderr, cpu_only.stdout + cpu_only.stderr)
gpu = run("prove", lop3, "--backend", "all", "--report", os.path.join(work, "lop3.json"))
check("inline PTX: --backend all runs it on the GPU alone (exit 0, 16/16)", gpu.returncode == 0
      and "no CPU witness" in gpu.stdout and "16/16 bit patterns equal (cuda sm_" in gpu.stdout, gpu.stdout + gpu.stderr)
if gpu.returncode == 0:
    witness = cuda_info(load(os.path.join(work, "lop3.json")))["user_recipes"]["cpu_witness"]
    check("... and the report says the CPU witness is missing", witness.startswith("missing: "), witness)

nofunction = run("prove", os.path.join(root, "tests", "cli", "data", "user", "nofunction.json"), "--backend", "cuda")
check("a function the sources lack: exit 2, one line with the spec's path and NVRTC's first error",
      nofunction.returncode == 2 and "nofunction.json: user_recipes: NVRTC:" in nofunction.stderr
      and "bp_nothing" in nofunction.stderr and len(nofunction.stderr.strip().splitlines()) == 1,
      nofunction.stdout + nofunction.stderr)

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all user-recipe GPU checks passed")
