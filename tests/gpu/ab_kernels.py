#!/usr/bin/env python3
"""ab_kernels.py BITPROOF SOURCE_DIR WORKDIR: the user's own kernels as A/B arms on the GPU (issue 47).

Each kernel arm loads the spec's PTX into its own modules, gets its own buffers and stream, and its
stages are captured into its own CUDA Graph; every output is poisoned (0xFF bytes) before each replay.
Checks, on tests/gpu/kernels/ (small fused auxiliary GEMVs, NVRTC from gemv.cu) and on the examples
where they are present:
- three launches against one fused launch over the joined weight: equal on --backend cuda, and on
  --backend all (the PTX executor on the CPU first: the GPU's bits must equal the executor's);
- graph on and graph off (--graph off: launches enqueued every case) give the same digests;
- the variant with FP16 partial sums differs (expect "differ"), its first difference printed with the case seed,
  the element index and both values decoded;
- a kernel that never writes one output: the two-fill check (0xFF, then 0x00) names it (exit 2);
- a kernel writing just past an output (no fault): the buffer guards name it (exit 2);
- a kernel reading far outside its buffers: exit 2, one line naming the arm, the stage and the kernel,
  no crash; a kernel that never returns: exit 2 at --user-timeout, the process ended;
- `bitproof time` on the same A/B spec: a verdict from both kernel arms' graph replays.
Exit 77 (skipped) where there is no GPU."""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import bptest  # noqa: E402
from bptest import check, load  # noqa: E402

if not os.path.exists("/dev/nvidiactl"):
    print("skipped: no CUDA device")
    sys.exit(77)

bp, root, work, env, run = bptest.setup(own_cache=False)
kernels = os.path.join(root, "tests", "gpu", "kernels")


def spec(name):
    return os.path.join(kernels, name + ".json")


def out(name):
    return os.path.join(work, name)


def ab(name, *args):
    r = run("ab", spec(name) if not os.path.isabs(name) else name, *args)
    print(f"$ bitproof ab {os.path.basename(name)} {' '.join(args)}  (exit {r.returncode})\n{r.stdout}{r.stderr}")
    return r


# The equal pair: GPU alone, graph on and off, then the executor and the GPU together.
r = ab("kab-equal", "--backend", "cuda", "--report", out("equal-cuda.json"))
check("kernel arms, fused vs separate, 16 cases on the GPU: exit 0", r.returncode == 0, r.stdout + r.stderr)
cuda_rep = load(out("equal-cuda.json")) if r.returncode == 0 else {}
if cuda_rep:
    gpu = cuda_rep["backends"][0]
    mods = gpu["info"].get("kernel_modules", [])
    check("... the report names the device and each module's PTX SHA-256",
          "device" in gpu["info"] and len(mods) == 1 and mods[0]["file"] == "gemv.cu"
          and re.fullmatch(r"[0-9a-f]{64}", mods[0]["ptx_sha256"]) is not None, str(gpu["info"])[:600])
r = ab("kab-equal", "--backend", "cuda", "--graph", "off", "--report", out("equal-nograph.json"))
check("--graph off: exit 0", r.returncode == 0, r.stdout + r.stderr)
if cuda_rep and r.returncode == 0:
    check("... graph on and off: the same digests of every output",
          load(out("equal-nograph.json"))["result"]["outputs"] == cuda_rep["result"]["outputs"])
r = ab("kab-equal", "--backend", "all", "--cases", "4", "--report", out("equal-all.json"))
check("--backend all (PTX executor, then the GPU): exit 0, both named",
      r.returncode == 0 and re.search(r", cuda sm_\d+\)", r.stdout) is not None, r.stdout + r.stderr)
if r.returncode == 0:
    rep = load(out("equal-all.json"))
    check("... the GPU's bits equal the executor's on every element", rep["backends"][1]["disagreements"] == 0)

# The differing variant: another summation order.
r = ab("kab-differ", "--backend", "cuda")
check("FP16 partial sums: the arms differ, as the spec expects (exit 0)", r.returncode == 0, r.stdout + r.stderr)
check("... first difference printed with case, seed, element index and decoded values",
      re.search(r"case \d+ \(seed 0x[0-9A-F]{16}\) y\.\w+\[\d+\]\[\d+\]: separate 0x[0-9A-F]{4} \[.+\] \S+ vs "
                r"fused 0x[0-9A-F]{4} \[.+\] \S+", r.stdout) is not None, r.stdout)
r = ab("kab-differ", "--backend", "all", "--cases", "2")
check("... and on --backend all: the executor and the GPU agree on both arms' bits (exit 0)",
      r.returncode == 0 and "BACKENDS DISAGREE" not in r.stdout, r.stdout + r.stderr)

# A kernel that leaves an output unwritten: the two-fill check names it (as on the executor).
r = ab("kab-unwritten", "--backend", "cuda", "--cases", "2")
check("a fused kernel that never writes y.gate: exit 2, the element named (0xFFFF under 0xFF, 0x0000 under 0x00)",
      r.returncode == 2 and 'arm "fused" never writes y.gate[' in r.stderr and "0xFFFF under 0xFF poison" in r.stderr,
      r.stdout + r.stderr)

# Faults and hangs: exit 2, one line, no crash.
done, seconds = bptest.bounded([bp, "ab", spec("kab-oob"), "--backend", "cuda"], work, env)
said = (done.stdout + done.stderr) if done else "(still running after 120 s: killed)"
print(said)
check("a kernel reading 2 TiB past its input: exit 2 (no crash), one line naming arm, stage and kernel",
      done is not None and done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
      and "arms[1].stages[0] (arm out-of-bounds, kernel gemv_oob)" in done.stderr
      and "CUDA_ERROR_ILLEGAL_ADDRESS" in done.stderr, said)
r = ab("kab-overrun", "--backend", "cuda", "--cases", "2")
check("a kernel writing 3 elements past each output (no fault, values right): exit 2 naming the buffer and the offset",
      r.returncode == 2 and 'a kernel wrote outside buffer "y.q_a" (512 bytes)' in r.stderr
      and "byte 4 past its end" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stdout + r.stderr)
r = ab("kab-overrun", "--backend", "cpu", "--cases", "1")
check("... the executor names the thread and PTX line of the same store (exit 2)",
      r.returncode == 2 and "past the end of buffer" in r.stderr, r.stdout + r.stderr)
done, seconds = bptest.bounded([bp, "ab", spec("kab-spin"), "--backend", "cuda", "--user-timeout", "3"], work, env)
said = (done.stdout + done.stderr) if done else "(still running after 120 s: killed)"
print(said)
check("a kernel that never returns: exit 2 within --user-timeout, the process ended, one line naming it",
      done is not None and done.returncode == 2 and seconds < 60
      and "arms[1].stages[0] (arm spin, kernel spin): did not return on the GPU within the 3 s limit" in done.stderr,
      f"{seconds:.1f} s: {said}")

# BITPROOF_AB_FAULT=skip-last-stage: the fused arm's one launch left out of its graph.
env["BITPROOF_AB_FAULT"] = "skip-last-stage"
r = ab("kab-equal", "--backend", "cuda", "--cases", "2")
check("a launch left out of the fused arm's graph: its outputs keep the fill, exit 2 naming the element",
      r.returncode == 2 and 'arm "fused" never writes' in r.stderr, r.stdout + r.stderr)
del env["BITPROOF_AB_FAULT"]

# bitproof time on the same A/B spec: both kernel arms replayed as graphs.
r = run("time", spec("kab-equal"), "--min-time", "0.5", "--timeout", "4", "--report", out("time.json"))
print(f"$ bitproof time kab-equal  (exit {r.returncode})\n{r.stdout}{r.stderr}")
check("time on an A/B spec with kernel arms: a verdict (exit 0)", r.returncode == 0, r.stdout + r.stderr)
if r.returncode == 0:
    trep = load(out("time.json"))
    run_ = trep["result"]["run"]
    check("... samples of both arms", len(run_["samples"]) >= 8, str(run_)[:300])
    mods = trep["environment"]["device"].get("kernel_modules", [])
    check("... the report names the module and its PTX SHA-256",
          len(mods) == 1 and mods[0]["file"] == "gemv.cu" and len(mods[0]["ptx_sha256"]) == 64, str(mods)[:300])

# The examples (issue 47), where present: the fused-GEMV pair at full size, and its differing variant.
# Copied (the runs write nothing beside the specs), the TurboMind example's synthetic checkpoints made
# as its README says (they are not committed).
examples = os.path.join(work, "examples")
shutil.copytree(os.path.join(root, "examples"), examples)
for name, scales in (("ckpt-114-126", "114:126"), ("ckpt-114-129", "114:129")):
    r = run("synth-checkpoint", os.path.join(examples, "turbomind-mxfp4-gemv", name), "--layers", "1", "--experts",
            "1", "--rows", "512", "--cols", "4096", "--scale-range", scales)
    check(f"synth-checkpoint {name} for the TurboMind example", r.returncode == 0, r.stdout + r.stderr)
found = []
for dirpath, _, files in os.walk(examples):
    for f in sorted(files):
        if f.endswith(".json") and "bitproof_ab" in open(os.path.join(dirpath, f), encoding="utf-8").read(200) \
                and '"kernels"' in open(os.path.join(dirpath, f), encoding="utf-8").read():
            found.append(os.path.join(dirpath, f))
for path in found:
    expect_differ = '"differ"' in open(path, encoding="utf-8").read()
    start = time.monotonic()
    r = ab(path, "--backend", "cuda", "--report", out("example.json"))
    wall = time.monotonic() - start
    if r.returncode == 0:  # the target: the fused-GEMV pair, 64 cases, under 1 s after compilation
        cases_s = load(out("example.json"))["environment"].get("timing", {}).get("cases_seconds", float("nan"))
        print(f"  {os.path.basename(path)} on the GPU: {wall:.3f} s wall (process, NVRTC included); cases {cases_s:.3f} s")
    check(f"example {os.path.relpath(path, examples)} on the GPU: exit 0 ({'differ' if expect_differ else 'equal'} as "
          "it expects)", r.returncode == 0, r.stdout + r.stderr)
    r = ab(path, "--backend", "all", "--cases", "2")
    check(f"... and --backend all, 2 cases: the GPU's bits equal the executor's (exit 0)",
          r.returncode == 0 and "BACKENDS DISAGREE" not in r.stdout, r.stdout + r.stderr)
    if not expect_differ:
        r = run("time", path, "--min-time", "0.5", "--timeout", "4")
        print(f"$ bitproof time {os.path.basename(path)}  (exit {r.returncode})\n{r.stdout}{r.stderr}")
        check(f"... time on it: a verdict (exit 0)", r.returncode == 0, r.stdout + r.stderr)
print(f"examples with kernel arms run: {len(found)}")

print(f"{len(bptest.failures)} failure(s)" if bptest.failures else "all ab kernel GPU checks passed")
sys.exit(1 if bptest.failures else 0)
