#!/usr/bin/env python3
"""limits_cuda.py BITPROOF SOURCE_DIR WORKDIR: wall-clock limits on the GPU (issue 45, item 8).

- A user recipe's device function that never returns (--user-timeout 5) and a timed kernel
  that never returns (--user-timeout 3) each end the process with one line naming the recipe
  or kernel, the GPU and the limit, exit 2, no report nor temporary left, well under the 120 s
  this script allows them. The control: the same recipe on the CPU (the loop is the device's
  alone) runs to a verdict.
- An NVRTC compile that never ends (it includes a FIFO) under `prove --backend cuda` and under
  `time` ends at --compile-timeout 3 with one line; the control: a regular file there compiles.
The spinning code reads a volatile global nothing writes: a loop on a volatile local was deleted
by NVRTC (measured on an H100, 2026-12-07), which made the first version of these checks fail.
The compile checks run first and the spinning kernels last: a kernel that never returns may keep
the GPU busy after its process is gone (not yet known: the first run with a real spin saw the
next process stall too), and a check must not fail for what an earlier one left behind. After
the spins, the GPU's state and whether a catalogue proof still runs are printed (not checked).
Since that run an abandoned process starts a reaper (user::start_exit_reaper) that kills it if
its exit has not ended 2 s later: exit 2 here says the exit status survives that kill.
Without a CUDA device: exit 77 (ctest: skipped).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import bptest  # noqa: E402
from bptest import check  # noqa: E402

if not os.path.exists("/dev/nvidiactl"):
    print("skipped: no CUDA device")
    sys.exit(77)

bp, root, work, env, run = bptest.setup(own_cache=True)
specs = os.path.join(root, "proofs", "time")


def spec(name):
    return os.path.join(specs, name + ".json")


user_dir = os.path.join(work, "user")
time_dir = os.path.join(work, "time")
os.makedirs(user_dir)
os.makedirs(time_dir)


def in_dir(directory, *args):
    """bitproof in `directory` under bptest's 120 s guard."""
    return bptest.bounded([bp, *args], directory, env)


def said(done):
    return (done.stdout + done.stderr) if done else "(still running after 120 s: killed)"


def user_spec(stem, function, source):
    with open(os.path.join(user_dir, f"{stem}.cuh"), "w", encoding="utf-8") as f:
        f.write(source)
    spec = {"bitproof_spec": 1, "name": stem, "inputs": [{"name": "element", "format": "e2m1", "codes": "all"}],
            "output": "fp16", "sources": {"files": [f"{stem}.cuh"]},
            "user_recipes": [{"name": f"t.e2m1_fp16.{stem}", "function": function, "inputs": ["e2m1"],
                              "output": "fp16", "intent": "value"}],
            "claims": [{"claim": "exact", "recipes": [f"t.e2m1_fp16.{stem}"]}]}
    with open(os.path.join(user_dir, f"{stem}.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f)
    return os.path.join(user_dir, f"{stem}.json")


with open(spec("k-loop-same"), encoding="utf-8") as f:
    base = json.load(f)


def kernel_spec(stem, source, kernel):
    with open(os.path.join(time_dir, f"{stem}.cu"), "w", encoding="utf-8") as f:
        f.write(source)
    s = dict(base, name=stem)
    s["arms"] = [dict(a, file=f"{stem}.cu", kernel=kernel, grid=[1], block=[1], args=[{"buffer": "y"}])
                 for a in base["arms"]]
    with open(os.path.join(time_dir, f"{stem}.json"), "w", encoding="utf-8") as f:
        json.dump(s, f)
    return os.path.join(time_dir, f"{stem}.json")


def fifo_then_file(directory):
    """block.h a FIFO (NVRTC blocks opening it), then, for the control, a regular file."""
    os.mkfifo(os.path.join(directory, "block.h"))
    yield
    os.remove(os.path.join(directory, "block.h"))
    with open(os.path.join(directory, "block.h"), "w", encoding="utf-8") as f:
        f.write("// a regular file: the control\n")
    yield


# ---- NVRTC compiles that never end (NVRTC alone opens block.h: the host preprocessor that lists
# the sources does not) ----
fifo = user_spec("fifo", "bp_fifo", "#include <cstdint>\n#ifdef __CUDACC_RTC__\n#include \"block.h\"\n#endif\n"
                 "__device__ std::uint32_t bp_fifo(std::uint32_t code) { return code; }\n")
steps = fifo_then_file(user_dir)
next(steps)
done, seconds = in_dir(user_dir, "prove", fifo, "--backend", "cuda", "--compile-timeout", "3", "--no-cache")
check("prove: an NVRTC compile that never ends: exit 2 at --compile-timeout, one line naming the sources and the limit",
      done is not None and done.returncode == 2 and seconds < 60 and len(done.stderr.strip().splitlines()) == 1
      and "fifo.json: sources: NVRTC compiling fifo.cuh took longer than the 3 s limit" in done.stderr,
      f"{seconds:.1f} s: {said(done)}")
next(steps)
done, _ = in_dir(user_dir, "prove", fifo, "--backend", "cuda", "--compile-timeout", "120", "--no-cache")
check("... with a regular file there it compiles and runs to a verdict (exit 0 or 1)",
      done is not None and done.returncode in (0, 1), said(done))

kfifo = kernel_spec("fifo", '#include "block.h"\nextern "C" __global__ void k_fifo(unsigned* y) { y[0] = 1; }\n',
                    "k_fifo")
steps = fifo_then_file(time_dir)
next(steps)
done, seconds = in_dir(time_dir, "time", kfifo, "--compile-timeout", "3", "--timeout", "2")
check("time: a kernel file whose NVRTC compile never ends: exit 2 at --compile-timeout, one line naming file and limit",
      done is not None and done.returncode == 2 and seconds < 60
      and "arms[0].file: NVRTC compiling" in done.stderr and "took longer than the 3 s limit" in done.stderr,
      f"{seconds:.1f} s: {said(done)}")
next(steps)
done, _ = in_dir(time_dir, "time", kfifo, "--compile-timeout", "120", "--timeout", "2", "--min-time", "0.5")
check("... with a regular file there it compiles and times (exit 0 or 1: a verdict, no error)",
      done is not None and done.returncode in (0, 1) and "error" not in done.stderr, said(done))

# ---- code that never returns on the GPU ----
# The loop is the device's alone: the CPU worker (host header, no __CUDA_ARCH__) returns.
# It reads a volatile *global* that nothing writes: a loop on a volatile local was deleted by
# NVRTC on an H100 (C++ lets a compiler assume a loop without side effects ends; 2026-12-07),
# and the function returned at once, so this check passed nothing.
spin = user_spec("spin", "bp_spin", "#include <cstdint>\n#ifdef __CUDA_ARCH__\n"
                 "__device__ volatile std::uint32_t bp_never_set = 0;\n#endif\n"
                 "__device__ std::uint32_t bp_spin(std::uint32_t code) {\n#ifdef __CUDA_ARCH__\n"
                 "  while (bp_never_set == 0) {\n  }\n#endif\n  return code;\n}\n")
cpu, _ = in_dir(user_dir, "prove", spin, "--backend", "cpu", "--user-timeout", "30")
check("the spinning recipe on the CPU runs to a verdict (the control: exit 0 or 1, no limit said)",
      cpu is not None and cpu.returncode in (0, 1) and "did not return" not in cpu.stderr, said(cpu))
done, seconds = in_dir(user_dir, "prove", spin, "--backend", "cuda", "--user-timeout", "5", "--report", "spin-r.json")
check("prove: a device function that never returns: exit 2 within the limit, the process ends", done is not None
      and done.returncode == 2 and seconds < 60, f"{seconds:.1f} s: {said(done)}")
check("... one line naming the recipe, the GPU and the limit", done is not None
      and len(done.stderr.strip().splitlines()) == 1 and "user_recipes[0] t.e2m1_fp16.spin (bp_spin): did not return "
      "on the GPU (--backend cuda) within the 5 s limit" in done.stderr, said(done))
check("... and no report written, nor its temporary", not os.path.exists(os.path.join(user_dir, "spin-r.json"))
      and not [n for n in os.listdir(user_dir) if n.startswith(".bitproof-out-")], str(os.listdir(user_dir)))

kspin = kernel_spec("spin", '__device__ volatile unsigned bp_never_set = 0;\n'
                    'extern "C" __global__ void k_spin(unsigned* y) {\n'
                    "  while (bp_never_set == 0) {\n  }\n  y[0] = 1;\n}\n", "k_spin")
done, seconds = in_dir(time_dir, "time", kspin, "--user-timeout", "3", "--timeout", "2")
check("time: a timed kernel that never returns: exit 2 within the limit, the process ends, one line naming it",
      done is not None and done.returncode == 2 and seconds < 60
      and "arms[0] (first): kernel k_spin of spin.cu: did not return on the GPU within the 3 s limit" in done.stderr,
      f"{seconds:.1f} s: {said(done)}")

# What the spins left behind (printed, not checked: what the driver does with a kernel whose
# process is gone is the driver's).
if shutil.which("nvidia-smi"):
    smi = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,memory.used", "--format=csv,noheader"],
                         capture_output=True, text=True, check=False)
    print(f"     after the spins: GPU {smi.stdout.strip()}")
after, seconds = bptest.bounded([bp, "prove", os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json"), "--backend",
                                 "cuda", "--quiet"], work, env, guard=60)
print(f"     a catalogue proof on the GPU after them: "
      f"{'exit ' + str(after.returncode) if after else 'still running after 60 s'} ({seconds:.1f} s)")
print(f"{len(bptest.failures)} failure(s)" if bptest.failures else "all wall-clock limit GPU checks passed")
sys.exit(1 if bptest.failures else 0)
