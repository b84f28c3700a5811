#!/usr/bin/env python3
"""kernel_arms.py BITPROOF SOURCE_DIR WORKDIR: kernel arms (issue 47) on the CPU's PTX executor.

examples/fused-aux-gemv at CPU-test size (N = 32 + 16 + 8, K = 256, 3 cases): the user's CUDA
kernels compiled by NVRTC to PTX and run by the executor. Three launches and one fused launch
over the joined buffer agree on every element; 64 threads a block in the separate launches
differ (the negative control), and each spec's "expect" is checked both ways: the same runs
with the expectation turned around must fail the gate (exit 1). The report records the kernel
modules (options, files read with SHA-256, PTX SHA-256), is schema-valid (cli.report_schema)
and `report verify` re-runs it. Bad input: one line, exit 2. examples/turbomind-mxfp4-gemv: an
MXFP4 weight's codes and scales as two arguments; ordinary and folded dequant agree on scales
114..126 and differ with a 129 byte."""
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
example = os.path.join(work, "example")
shutil.copytree(os.path.join(root, "examples", "fused-aux-gemv"), example)


def spec(name):
    return os.path.join(example, name + ".json")


def turned(name):
    """The spec with its expectation turned around, beside the kernel source."""
    s = load(spec(name))
    s["expect"] = "differ" if s["expect"] == "equal" else "equal"
    path = os.path.join(example, name + "-turned.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(s, f)
    return path


report = os.path.join(work, "small.json")
r = run("ab", spec("small"), "--report", report, "--markdown", os.path.join(work, "small.md"))
check("small: three launches and the fused launch agree (exit 0)", r.returncode == 0, r.stdout + r.stderr)
check("small: every case and element equal", re.search(r"3/3 changing-input cases bitwise equal", r.stdout) is not None, r.stdout)
rep = load(report) if os.path.exists(report) else {"result": {}}
mods = rep["result"].get("kernel_modules", [])
check("the report records one module: gemv.cu, its NVRTC options and files read",
      len(mods) == 1 and mods[0]["file"] == "gemv.cu" and "--gpu-architecture=compute_90" in mods[0]["options"]
      and "--fmad=true" in mods[0]["options"] and mods[0]["read_files"][0]["path"] == "gemv.cu"
      and re.fullmatch(r"[0-9a-f]{64}", mods[0]["ptx_sha256"]) is not None, json.dumps(mods)[:600])
check("the contractible lines are reported (row_dot's final plain add)",
      any(c["kernel"] in ("gemv_sep", "gemv_fused") and c["lines"] for c in mods[0]["contractible"]) if mods else False,
      json.dumps(mods)[:600])
check("the console names the contractible lines", "ptxas may contract them into FMA" in r.stdout, r.stdout)
schema = subprocess.run([sys.executable, os.path.join(root, "tests", "cli", "validate_schema.py"),
                         os.path.join(root, "reports", "schema.json"), report], capture_output=True, text=True)
check("the report matches reports/schema.json", schema.returncode == 0, schema.stdout + schema.stderr)
v = run("report", "verify", report, "--spec-dir", example)
check("report verify re-runs the kernel arms and reproduces the result", v.returncode == 0 and "verified" in v.stdout,
      v.stdout + v.stderr)

r = run("ab", spec("small-64-threads"))
check("64 threads a block differ: the negative control passes (exit 0)", r.returncode == 0, r.stdout + r.stderr)
check("the negative control says so", "negative control: the arms differ, as the spec expects" in r.stdout, r.stdout)
check("the first difference is printed", "first:" in r.stdout, r.stdout)

r = run("ab", turned("small"))
check("small expecting \"differ\" fails the gate (exit 1)", r.returncode == 1, r.stdout + r.stderr)
r = run("ab", turned("small-64-threads"))
check("64 threads expecting \"equal\" fails the gate (exit 1)", r.returncode == 1, r.stdout + r.stderr)


# A launch one block short leaves y.gate's last element unwritten: the poison (0xFF bytes before every
# case, then 0x00 where an output holds 0xFFFF or a NaN) shows it, and the run names it (exit 2),
# never a stale or zero value that could match.
short = load(spec("small"))
short["arms"][1]["stages"][0]["grid"] = [55]
with open(os.path.join(example, "short.json"), "w", encoding="utf-8") as f:
    json.dump(short, f)
r = run("ab", os.path.join(example, "short.json"))
check("a fused launch one block short: exit 2 naming the unwritten element", r.returncode == 2
      and 'arm "fused" never writes y.gate[0][7]' in r.stderr, r.stdout + r.stderr)


def bad(what, edit, answer, code=2):
    s = load(spec("small"))
    edit(s)
    path = os.path.join(example, "bad.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(s, f)
    r = run("ab", path)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(f"{what}: exit {code}, one line", r.returncode == code and len(lines) == 1, r.stdout + r.stderr)
    check(f"{what}: says {answer!r}", re.search(answer, r.stderr) is not None, r.stderr)


def k_too_long(s):
    s["arms"][0]["stages"][0]["args"][3] = {"u32": 512}  # x has 256 columns: the launch reads past its end


bad("a kernel no module has", lambda s: s["arms"][0]["stages"][0].update(kernel="gemv_none"),
    r"bad\.json: arms\[0\]\.stages\[0\]\.kernel: no kernel \"gemv_none\" in gemv\.cu")
bad("one argument too few", lambda s: s["arms"][0]["stages"][0]["args"].pop(),
    r"bad\.json: arms\[0\]\.stages\[0\]\.args: 3 arguments, but kernel gemv_sep takes 4 parameters")
bad("a u64 where the kernel takes a u32", lambda s: s["arms"][0]["stages"][0]["args"].__setitem__(3, {"u64": 256}),
    r"bad\.json: arms\[0\]\.stages\[0\]\.args\[3\]: a u64 \(8 bytes\), but kernel gemv_sep's parameter 3 .* is a 4-byte")
bad("a buffer too small for the launch's reads", k_too_long,
    r"bad\.json: arms\[0\]\.stages\[0\] \(gemv_sep, arm \"separate\"\): .*gemv\.cu:\d+: block \(\d+,0,0\) thread "
    r"\(\d+,0,0\): ld\.global.* past the end of buffer")
bad("a source that does not compile", lambda s: s["kernels"].update(files=["missing.cu"]),
    r"bad\.json: kernels\.files\[0\]: ")
if not os.path.exists("/dev/nvidiactl"):
    r = run("ab", spec("small"), "--backend", "all", "--quiet")
    check("--backend all without a GPU: exit 3 (the GPU-against-executor check did not happen), not a pass",
          r.returncode == 3, r.stdout + r.stderr)
r = run("ab", spec("small"), "--prove")
check("--prove on kernel arms proves them (issue 48; cli.kernel_prove has the rest)",
      r.returncode == 0 and "fused≡separate on every input" in r.stdout, r.stdout + r.stderr)

# examples/turbomind-mxfp4-gemv: an MXFP4 weight passed as its two parts (codes, scales) from a
# synthetic checkpoint; the ordinary and the folded dequant agree on scales 114..126 and differ
# where a scale byte is 129 (2 cases each here; the example's README runs all 8).
tm = os.path.join(work, "turbomind")
shutil.copytree(os.path.join(root, "examples", "turbomind-mxfp4-gemv"), tm)
for name, scales in (("ckpt-114-126", "114:126"), ("ckpt-114-129", "114:129")):
    r = run("synth-checkpoint", os.path.join(tm, name), "--layers", "1", "--experts", "1", "--rows", "512", "--cols",
            "4096", "--scale-range", scales)
    check(f"synth-checkpoint {name}", r.returncode == 0, r.stdout + r.stderr)
r = run("ab", os.path.join(tm, "ab.json"), "--backend", "cpu", "--cases", "2")
check("turbomind MXFP4 GEMV, scales 114..126: ordinary and folded agree (exit 0)", r.returncode == 0
      and "2/2 changing-input cases bitwise equal" in r.stdout, r.stdout + r.stderr)
r = run("ab", os.path.join(tm, "ab-129.json"), "--backend", "cpu", "--cases", "2")
check("... with a 129 scale byte they differ, as ab-129.json expects (exit 0)", r.returncode == 0
      and "negative control: the arms differ, as the spec expects" in r.stdout
      and re.search(r"ordinary 0x[0-9A-F]{4} .* vs folded 0x7FFF", r.stdout) is not None, r.stdout + r.stderr)
s = load(os.path.join(tm, "ab.json"))
s["checkpoint"] = "ckpt-114-129/"
with open(os.path.join(tm, "ab-on-129.json"), "w", encoding="utf-8") as f:
    json.dump(s, f)
r = run("ab", os.path.join(tm, "ab-on-129.json"), "--backend", "cpu", "--cases", "2")
check("... and expecting \"equal\" on the 129 checkpoint fails the gate (exit 1)", r.returncode == 1, r.stdout + r.stderr)

# Outputs the arms do not write, or compute from the buffer's earlier contents, and inputs a
# kernel writes: each an error naming it (exit 2), never a comparison of the poison (two arms
# that both leave y[32..63] would otherwise agree on 0xFFFF: a false PASS found in review).
pz = os.path.join(work, "poison")
os.makedirs(pz)
with open(os.path.join(pz, "k.cu"), "w", encoding="utf-8") as f:
    f.write("""#include <cuda_fp16.h>
extern "C" __global__ void half_copy(const __half* x, __half* y, unsigned n) {
  if (threadIdx.x < n / 2) y[threadIdx.x] = x[threadIdx.x];
}
extern "C" __global__ void full_copy(const __half* x, __half* y, unsigned n) {
  if (threadIdx.x < n) y[threadIdx.x] = x[threadIdx.x];
}
extern "C" __global__ void bump(__half* w, __half* y, unsigned n) {
  if (threadIdx.x < n) { y[threadIdx.x] = w[threadIdx.x]; w[threadIdx.x] = __hadd(w[threadIdx.x], __float2half(1.0f)); }
}
extern "C" __global__ void scaled_copy(const __half* x, __half* y, float s) {
  y[threadIdx.x] = __float2half(__half2float(x[threadIdx.x]) * s);
}
extern "C" __global__ void accumulate(const __half* x, __half* y, unsigned n) {
  if (threadIdx.x < n) y[threadIdx.x] = threadIdx.x == 3 ? __hadd(y[threadIdx.x], x[threadIdx.x]) : x[threadIdx.x];
}
""")


def poison_spec(name, kernel_a, kernel_b, weight=False):
    inputs = [{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 64], "values": {"uniform": [-1, 1]}}]
    if weight:
        inputs.append({"name": "w", "role": "weight", "dtype": "f16", "shape": [1, 64], "values": {"uniform": [-1, 1]}})

    def arm(arm_name, kernel):
        source = "w" if kernel == "bump" else "x"
        return {"name": arm_name, "stages": [{"kernel": kernel, "grid": [1], "block": [64],
                                              "args": [{"tensor": source}, {"output": "y"}, {"u32": 64}]}]}
    s = {"bitproof_ab": 1, "name": name, "seed": 3, "cases": 2, "inputs": inputs, "kernels": {"files": ["k.cu"]},
         "outputs": [{"name": "y", "dtype": "f16", "shape": [1, 64]}], "arms": [arm("a", kernel_a), arm("b", kernel_b)],
         "expect": "equal"}
    with open(os.path.join(pz, name + ".json"), "w", encoding="utf-8") as f:
        json.dump(s, f)
    return os.path.join(pz, name + ".json")


r = run("ab", poison_spec("full", "full_copy", "full_copy"), "--backend", "cpu", "--quiet")
check("two arms writing every element: equal (exit 0; the control of the next three)", r.returncode == 0,
      r.stdout + r.stderr)
r = run("ab", poison_spec("half", "half_copy", "half_copy"), "--backend", "cpu", "--quiet")
check("both arms leave y[0][32..63] unwritten: exit 2 naming the first, not 'equal' on the poison",
      r.returncode == 2 and 'arm "a" never writes y[0][32] (and 31 more element(s))' in r.stderr, r.stdout + r.stderr)
r = run("ab", poison_spec("acc", "accumulate", "accumulate"), "--backend", "cpu", "--quiet")
check("both arms add into y[0][3] (the poison's NaN in both): exit 2, computed from the buffer's contents",
      r.returncode == 2 and "computes y[0][3] from the output buffer's contents before the launch" in r.stderr,
      r.stdout + r.stderr)
r = run("ab", poison_spec("bump", "full_copy", "bump", weight=True), "--backend", "cpu", "--quiet")
check("a kernel that writes into its weight: exit 2 naming it", r.returncode == 2
      and 'arm "b" writes into its input w' in r.stderr, r.stdout + r.stderr)

# A scalar's type against the parameter's: a float parameter takes an f32, nothing else does.
for arg, want in (({"f32": 1.0}, 0), ({"u32": 1065353216}, 2)):
    path = poison_spec("scalar", "scaled_copy", "scaled_copy")
    s = load(path)
    for a in s["arms"]:
        a["stages"][0]["args"][2] = arg
    with open(path, "w", encoding="utf-8") as f:
        json.dump(s, f)
    r = run("ab", path, "--backend", "cpu", "--quiet")
    check(f"scaled_copy(x, y, float s) given {arg}: exit {want}", r.returncode == want
          and (want == 0 or "is a 4-byte float (.f32) parameter" in r.stderr), r.stdout + r.stderr)

# A header the kernel includes only under __CUDA_ARCH__ (NVRTC compiles device code alone, so it
# reads it) is an input: an output flag naming it is refused and it is left as it was (the
# review found the header scan without __CUDA_ARCH__ and the header written over).
os.makedirs(os.path.join(pz, "inc"))
with open(os.path.join(pz, "inc", "arch.cuh"), "w", encoding="utf-8") as f:
    f.write("#pragma once\n#define ARCH_SCALE 2\n")
with open(os.path.join(pz, "arch.cu"), "w", encoding="utf-8") as f:
    f.write('#if defined(__CUDA_ARCH__)\n#include "inc/arch.cuh"\n#endif\n#include <cuda_fp16.h>\n'
            'extern "C" __global__ void full_copy(const __half* x, __half* y, unsigned n) {\n'
            '  if (threadIdx.x < n) y[threadIdx.x] = x[threadIdx.x];\n}\n')
s = load(poison_spec("arch", "full_copy", "full_copy"))
s["kernels"]["files"] = ["arch.cu"]
with open(os.path.join(pz, "arch.json"), "w", encoding="utf-8") as f:
    json.dump(s, f)
r = run("ab", os.path.join(pz, "arch.json"), "--backend", "cpu", "--quiet", "--markdown", os.path.join(pz, "inc", "arch.cuh"))
with open(os.path.join(pz, "inc", "arch.cuh"), encoding="utf-8") as f:
    intact = "ARCH_SCALE" in f.read()
check("--markdown over a header read only under __CUDA_ARCH__: exit 2, the header intact", r.returncode == 2
      and "is an input of this command" in r.stderr and intact, r.stdout + r.stderr)
r = run("ab", os.path.join(pz, "arch.json"), "--backend", "cpu", "--quiet", "--markdown", os.path.join(pz, "r.md"))
check("... the Markdown beside it (the control): exit 0", r.returncode == 0 and os.path.exists(os.path.join(pz, "r.md")),
      r.stdout + r.stderr)

# A bf16 output's differences are decoded as bf16 (sign | 8 exponent bits | 7 mantissa bits).
s = load(path)
s["name"], s["outputs"][0]["dtype"] = "bf", "bf16"
s["arms"][0]["stages"][0]["args"][2], s["arms"][1]["stages"][0]["args"][2] = {"f32": 1.0}, {"f32": 2.0}
with open(os.path.join(pz, "bf.json"), "w", encoding="utf-8") as f:
    json.dump(s, f)
r = run("ab", os.path.join(pz, "bf.json"), "--backend", "cpu")
check("a bf16 output's first difference is decoded as bf16", r.returncode == 1
      and re.search(r"y\[0\]\[0\]: a 0x[0-9A-F]{4} \[[01]\|[01]{8}\|[01]{7}\]", r.stdout) is not None, r.stdout + r.stderr)

print(f"{len(bptest.failures)} failure(s)" if bptest.failures else "all kernel-arm checks passed")
sys.exit(1 if bptest.failures else 0)
