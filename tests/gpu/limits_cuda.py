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
Without a CUDA device: exit 77 (ctest: skipped).
"""
import json
import os
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


# ---- user recipes under prove --backend cuda ----
limits = os.path.join(work, "user")
os.makedirs(limits)


def limit_spec(stem, function):
    spec = {"bitproof_spec": 1, "name": stem, "inputs": [{"name": "element", "format": "e2m1", "codes": "all"}],
            "output": "fp16", "sources": {"files": [f"{stem}.cuh"]},
            "user_recipes": [{"name": f"t.e2m1_fp16.{stem}", "function": function, "inputs": ["e2m1"],
                              "output": "fp16", "intent": "value"}],
            "claims": [{"claim": "exact", "recipes": [f"t.e2m1_fp16.{stem}"]}]}
    with open(os.path.join(limits, f"{stem}.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f)
    return os.path.join(limits, f"{stem}.json")


def bounded_user(*args):
    """bitproof in the limits directory under bptest's 120 s guard."""
    return bptest.bounded([bp, *args], limits, env)


# The loop is the device's alone: the CPU worker (host header, no __CUDA_ARCH__) returns.
# It reads a volatile *global* that nothing writes: a loop on a volatile local was deleted by
# NVRTC on an H100 (C++ lets a compiler assume a loop without side effects ends; 2026-12-07),
# and the function returned at once, so this check passed nothing.
with open(os.path.join(limits, "spin.cuh"), "w", encoding="utf-8") as f:
    f.write("#include <cstdint>\n#ifdef __CUDA_ARCH__\n__device__ volatile std::uint32_t bp_never_set = 0;\n#endif\n"
            "__device__ std::uint32_t bp_spin(std::uint32_t code) {\n#ifdef __CUDA_ARCH__\n"
            "  while (bp_never_set == 0) {\n  }\n#endif\n  return code;\n}\n")
spin = limit_spec("spin", "bp_spin")
done, seconds = bounded_user("prove", spin, "--backend", "cuda", "--user-timeout", "5", "--report", "spin-r.json")
said = (done.stdout + done.stderr) if done else "(still running after 120 s: killed)"
check("a device function that never returns: exit 2 within the limit, the process ends", done is not None
      and done.returncode == 2 and seconds < 60, f"{seconds:.1f} s: {said}")
check("... one line naming the recipe, the GPU and the limit", done is not None
      and len(done.stderr.strip().splitlines()) == 1 and "user_recipes[0] t.e2m1_fp16.spin (bp_spin): did not return "
      "on the GPU (--backend cuda) within the 5 s limit" in done.stderr, said)
check("... and no report written, nor its temporary", not os.path.exists(os.path.join(limits, "spin-r.json"))
      and not [n for n in os.listdir(limits) if n.startswith(".bitproof-out-")], str(os.listdir(limits)))
cpu, _ = bounded_user("prove", spin, "--backend", "cpu", "--user-timeout", "30")
check("... the same spec on the CPU runs to a verdict (the control: exit 0 or 1, no limit said)",
      cpu is not None and cpu.returncode in (0, 1) and "did not return" not in cpu.stderr,
      (cpu.stdout + cpu.stderr) if cpu else "killed")

# NVRTC alone opens block.h (the host preprocessor that lists the sources does not): a FIFO, it blocks for ever.
with open(os.path.join(limits, "fifo.cuh"), "w", encoding="utf-8") as f:
    f.write("#include <cstdint>\n#ifdef __CUDACC_RTC__\n#include \"block.h\"\n#endif\n"
            "__device__ std::uint32_t bp_fifo(std::uint32_t code) { return code; }\n")
os.mkfifo(os.path.join(limits, "block.h"))
fifo = limit_spec("fifo", "bp_fifo")
done, seconds = bounded_user("prove", fifo, "--backend", "cuda", "--compile-timeout", "3", "--no-cache")
said = (done.stdout + done.stderr) if done else "(still running after 120 s: killed)"
check("an NVRTC compile that never ends: exit 2 at --compile-timeout, one line naming the sources and the limit",
      done is not None and done.returncode == 2 and seconds < 60 and len(done.stderr.strip().splitlines()) == 1
      and "fifo.json: sources: NVRTC compiling fifo.cuh took longer than the 3 s limit" in done.stderr,
      f"{seconds:.1f} s: {said}")
os.remove(os.path.join(limits, "block.h"))
with open(os.path.join(limits, "block.h"), "w", encoding="utf-8") as f:
    f.write("// a regular file: the control\n")
done, _ = bounded_user("prove", fifo, "--backend", "cuda", "--compile-timeout", "120", "--no-cache")
check("... with a regular file there it compiles and runs to a verdict (exit 0 or 1)",
      done is not None and done.returncode in (0, 1), (done.stdout + done.stderr) if done else "killed")


# ---- kernels under bitproof time ----
limits = os.path.join(work, "time")
os.makedirs(limits)
with open(spec("k-loop-same"), encoding="utf-8") as f:
    base = json.load(f)


def kernel_spec(stem, source, kernel):
    with open(os.path.join(limits, f"{stem}.cu"), "w", encoding="utf-8") as f:
        f.write(source)
    s = dict(base, name=stem)
    s["arms"] = [dict(a, file=f"{stem}.cu", kernel=kernel, grid=[1], block=[1], args=[{"buffer": "y"}])
                 for a in base["arms"]]
    with open(os.path.join(limits, f"{stem}.json"), "w", encoding="utf-8") as f:
        json.dump(s, f)
    return os.path.join(limits, f"{stem}.json")


def bounded(*args):
    """bitproof in the limits directory under bptest's 120 s guard."""
    return bptest.bounded([bp, *args], limits, env)


# A volatile global nothing writes (a volatile local's loop is deleted: see the user recipe above).
spin = kernel_spec("spin", '__device__ volatile unsigned bp_never_set = 0;\n'
                   'extern "C" __global__ void k_spin(unsigned* y) {\n'
                   "  while (bp_never_set == 0) {\n  }\n  y[0] = 1;\n}\n", "k_spin")
done, seconds = bounded("time", spin, "--user-timeout", "3", "--timeout", "2")
said = (done.stdout + done.stderr) if done else "(still running after 120 s: killed)"
check("a timed kernel that never returns: exit 2 within the limit, the process ends, one line naming it",
      done is not None and done.returncode == 2 and seconds < 60
      and "arms[0] (first): kernel k_spin of spin.cu: did not return on the GPU within the 3 s limit" in done.stderr,
      f"{seconds:.1f} s: {said}")
fifo = kernel_spec("fifo", '#include "block.h"\nextern "C" __global__ void k_fifo(unsigned* y) { y[0] = 1; }\n', "k_fifo")
os.mkfifo(os.path.join(limits, "block.h"))
done, seconds = bounded("time", fifo, "--compile-timeout", "3", "--timeout", "2")
said = (done.stdout + done.stderr) if done else "(still running after 120 s: killed)"
check("a kernel file whose NVRTC compile never ends: exit 2 at --compile-timeout, one line naming the file and limit",
      done is not None and done.returncode == 2 and seconds < 60
      and "arms[0].file: NVRTC compiling" in done.stderr and "took longer than the 3 s limit" in done.stderr,
      f"{seconds:.1f} s: {said}")
os.remove(os.path.join(limits, "block.h"))
with open(os.path.join(limits, "block.h"), "w", encoding="utf-8") as f:
    f.write("// a regular file: the control\n")
done, _ = bounded("time", fifo, "--compile-timeout", "120", "--timeout", "2", "--min-time", "0.5")
check("... with a regular file there it compiles and times (exit 0 or 1: a verdict, no error)",
      done is not None and done.returncode in (0, 1) and "error" not in done.stderr,
      (done.stdout + done.stderr) if done else "killed")
print(f"{len(bptest.failures)} failure(s)" if bptest.failures else "all wall-clock limit GPU checks passed")
sys.exit(1 if bptest.failures else 0)
