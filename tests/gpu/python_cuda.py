#!/usr/bin/env python3
"""python_cuda.py BITPROOF SOURCE_DIR WORKDIR: `import bitproof` on the GPU (issue 49), torch and Triton.

Run with the build tree's module on PYTHONPATH (build/python), in the interpreter the module was built
for (torch, Triton, NumPy):
  PYTHONPATH=build/python python3 tests/gpu/python_cuda.py build/bitproof . "$OUT/python_cuda"
Every check prints one "ok"/"FAIL" line; WORKDIR/python_cuda.log holds the whole output, WORKDIR/figures.json
the measured figures (for bench/RESULTS.md). Exit 0 when every check passed, 1 when one failed, 77 (skipped)
without a GPU or torch. Bounded: each CLI run under a guard, every GPU wait under bitproof's --user-timeout,
and the whole script under an alarm (SIGALRM, 540 s) that ends it with what it had.

Checks:
- torch arms: a GEMV written as torch.matmul and as a torch.mv on the same tensors: ab(device="cuda") with
  graphs on and off (the same digests), and the engine's inputs equal to the CPU module's (digest of an arm
  that copies x into y);
- poison: an arm that writes nothing (graph on and off) is ArmError, exit 1; a Triton launch one block short
  is ArmError naming the first element it left;
- the issue's Triton GEMV (N = 2624, K = 4096, BLOCK_K = 1024) against torch.matmul: expected NOT equal;
  how many of 2624 outputs differ in case 0 and the first difference decoded are printed;
- ptx(): the Triton GEMV's PTX and launch as a kernel arm; `bitproof ab --backend cuda` on it runs, and its
  digest equals the Python layer's digest of the same Triton kernel on the same declarations;
- time(): an A/A pair ("same") and a pair doing twice the work ("slower"), each with a claim, reports that
  `bitproof report verify` and `report render` read;
- the figure: the Python layer on 64 cases of the fused GEMV pair (three torch.matmul against one fused
  Triton launch, the declarations of examples/fused-aux-gemv/fused.json) against `bitproof ab --backend cuda`
  on that spec (its NVRTC kernels), wall seconds each.
"""
import json
import os
import signal
import subprocess
import sys
import time as clock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import bptest  # noqa: E402
from bptest import check, load  # noqa: E402

if not os.path.exists("/dev/nvidiactl"):
    print("skipped: no CUDA device")
    sys.exit(77)
try:
    import numpy as np
    import torch
    import triton
    import triton.language as tl
except ImportError as e:
    print(f"skipped: {e} (run in the interpreter with torch, Triton and NumPy)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: torch sees no CUDA device")
    sys.exit(77)
import bitproof  # noqa: E402

bp, root, work, env, run = bptest.setup(own_cache=False)
log = open(os.path.join(work, "python_cuda.log"), "w", encoding="utf-8")
figures = {}


class Tee:
    def __init__(self, *streams):
        self.streams = streams

    def write(self, s):
        for st in self.streams:
            st.write(s)
            st.flush()

    def flush(self):
        for st in self.streams:
            st.flush()


sys.stdout = Tee(sys.__stdout__, log)


def give_up(signum, frame):
    print("FAIL the whole script ran past its 540 s alarm: ended here")
    with open(os.path.join(work, "figures.json"), "w", encoding="utf-8") as f:
        json.dump(figures, f, indent=1)
    os._exit(1)


signal.signal(signal.SIGALRM, give_up)
signal.alarm(540)


def attempt(what, fn):
    """fn() or None, a raised exception printed as a FAIL (the script goes on)."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - every failure is a FAIL line, never a hang or a crash
        check(what, False, f"{type(e).__name__}: {e}")
        return None


def expect_error(what, kind, exit_code, fn, pattern=""):
    try:
        fn()
    except kind as e:
        check(what, e.exit_code == exit_code and pattern in str(e), f"exit {e.exit_code}: {e}")
        print(f"  {e}")
        return
    except Exception as e:  # noqa: BLE001
        check(what, False, f"{type(e).__name__}: {e}")
        return
    check(what, False, "no error raised")


print(f"torch {torch.__version__}, Triton {triton.__version__}, NumPy {np.__version__}, "
      f"{torch.cuda.get_device_name(0)}; bitproof {bitproof.version}")

# ---- the kernels ----

N, K, BLOCK_K = 2624, 4096, 1024


@triton.jit
def gemv_rows(x_ptr, w_ptr, y_ptr, row0, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = row0 + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + cols).to(tl.float32)
        w = tl.load(w_ptr + rows[:, None] * K + cols[None, :], mask=rows[:, None] < N, other=0.0).to(tl.float32)
        acc += tl.sum(w * x[None, :], axis=1)
    tl.store(y_ptr + rows, acc.to(tl.float16), mask=rows < N)


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    gemv_rows(x_ptr, w_ptr, y_ptr, tl.program_id(0) * BLOCK_N, N, K, BLOCK_N, BLOCK_K)


@triton.jit
def fused_kernel(x_ptr, wq, wkv, wg, yq, ykv, yg, K, NQ: tl.constexpr, NKV: tl.constexpr, NG: tl.constexpr,
                 BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    if pid < NQ // BLOCK_N:
        gemv_rows(x_ptr, wq, yq, pid * BLOCK_N, NQ, K, BLOCK_N, BLOCK_K)
    elif pid < (NQ + NKV) // BLOCK_N:
        gemv_rows(x_ptr, wkv, ykv, (pid - NQ // BLOCK_N) * BLOCK_N, NKV, K, BLOCK_N, BLOCK_K)
    else:
        gemv_rows(x_ptr, wg, yg, (pid - (NQ + NKV) // BLOCK_N) * BLOCK_N, NG, K, BLOCK_N, BLOCK_K)


BLOCK_N = 16
launched = {}


def triton_gemv(inputs, outputs):
    x, w, y = inputs["x"], inputs["w"], outputs["y"]
    n, k = w.shape
    launched["gemv"] = gemv_kernel[(triton.cdiv(n, BLOCK_N),)](x, w, y, n, k, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)


def triton_gemv_short(inputs, outputs):  # one block of rows short: y's last 16 elements never written
    x, w, y = inputs["x"], inputs["w"], outputs["y"]
    n, k = w.shape
    gemv_kernel[(triton.cdiv(n, BLOCK_N) - 1,)](x, w, y, n, k, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)


def torch_matmul(inputs, outputs):
    torch.matmul(inputs["x"], inputs["w"].t(), out=outputs["y"])


def torch_mv(inputs, outputs):
    outputs["y"][0].copy_(torch.mv(inputs["w"], inputs["x"][0]))


def torch_matmul_twice(inputs, outputs):  # twice the work, the same result
    torch.matmul(inputs["x"], inputs["w"].t(), out=outputs["y"])
    torch.matmul(inputs["x"], inputs["w"].t(), out=outputs["y"])


def nothing(inputs, outputs):  # launches work, but writes none of it into the outputs
    scratch = inputs["x"] * 2  # noqa: F841


GEMV_INPUTS = [
    {"name": "x", "role": "activation", "dtype": "f16", "shape": [1, K], "values": {"uniform": [-1, 1]}},
    {"name": "w", "role": "weight", "dtype": "f16", "shape": [N, K], "values": {"uniform": [-0.0625, 0.0625]}},
]
GEMV_OUTPUTS = [("y", (1, N))]


def gemv_ab(a, b, **kw):
    kw.setdefault("cases", 8)
    kw.setdefault("seed", 7)
    return bitproof.ab(a, b, inputs=GEMV_INPUTS, outputs=GEMV_OUTPUTS, device="cuda", **kw)


# ---- torch arms, graphs on and off ----

on = attempt("torch arms, graph on", lambda: gemv_ab(torch_matmul, torch_matmul, graph=True))
off = attempt("torch arms, graph off", lambda: gemv_ab(torch_matmul, torch_matmul, graph=False))
if on is not None and off is not None:
    print(f"  {on}")
    check("torch.matmul A/A, 8 cases, graph on: bitwise equal", on.equal and on.cases == 8, str(on))
    check("... graph off: equal, and the same digest as with the graph",
          off.equal and off.outputs[0]["sha256"] == on.outputs[0]["sha256"], f"{off.outputs} vs {on.outputs}")
    check("... the result says the device", "name" in getattr(on, "device", {}), str(getattr(on, "device", None)))
mv = attempt("torch.mv against torch.matmul", lambda: gemv_ab(torch_mv, torch_matmul))
if mv is not None:
    print(f"  torch.mv vs torch.matmul: {mv}")


def copy_x(inputs, outputs):
    outputs["y"].copy_(inputs["x"])


def copy_x_np(inputs, outputs):
    outputs["y"][...] = inputs["x"]


small = [GEMV_INPUTS[0]]
gpu_copy = attempt("inputs on the GPU", lambda: bitproof.ab(copy_x, copy_x, inputs=small, outputs=[("y", (1, K))],
                                                             cases=4, seed=7, device="cuda"))
cpu_copy = bitproof.ab(copy_x_np, copy_x_np, inputs=small, outputs=[("y", (1, K))], cases=4, seed=7)
if gpu_copy is not None:
    check("the engine's inputs on the GPU are the CPU module's (digest of y = x over 4 cases)",
          gpu_copy.outputs[0]["sha256"] == cpu_copy.outputs[0]["sha256"], f"{gpu_copy.outputs} vs {cpu_copy.outputs}")

# ---- poison ----

for graph in (True, False):
    expect_error(f"an arm that writes nothing, graph {'on' if graph else 'off'}: ArmError, exit 1",
                 bitproof.ArmError, 1, lambda: gemv_ab(torch_matmul, nothing, graph=graph, cases=2),
                 "still holds the poison")
expect_error("a Triton launch one block short: ArmError naming y[0][2608], exit 1", bitproof.ArmError, 1,
             lambda: gemv_ab(triton_gemv, triton_gemv_short, cases=2), 'output "y"[0][2608]')


def raises(inputs, outputs):
    raise RuntimeError("a kernel that refuses")


expect_error("an arm that raises during the graph's capture: ArmError, exit 2", bitproof.ArmError, 2,
             lambda: gemv_ab(torch_matmul, raises, cases=2), "RuntimeError")

# ---- the issue's Triton GEMV against torch.matmul ----

for graph in (True, False):
    tri = attempt(f"Triton GEMV vs torch.matmul, graph {graph}", lambda: gemv_ab(triton_gemv, torch_matmul,
                                                                                 graph=graph, cases=1))
    if tri is not None:
        per_case = tri.outputs[0]["differing_elements"]
        print(f"  graph {'on' if graph else 'off'}: Triton GEMV (N = {N}, K = {K}, BLOCK_K = {BLOCK_K}) vs "
              f"torch.matmul, case 0: {per_case} of {N} outputs differ")
        for d in tri.first_differences[:3]:
            print(f"    {d}")
        check(f"Triton GEMV vs torch.matmul (graph {'on' if graph else 'off'}): NOT bitwise equal, the first "
              "difference decoded", not tri.equal and tri.first_differences
              and "[" in tri.first_differences[0].a_value, str(tri))
        figures[f"triton_vs_matmul_case0_differing_graph_{'on' if graph else 'off'}"] = per_case
tri64 = attempt("Triton GEMV vs torch.matmul, 64 cases", lambda: gemv_ab(triton_gemv, torch_matmul, cases=64))
if tri64 is not None:
    print(f"  64 cases: {tri64}")
    figures["triton_vs_matmul_64_cases"] = {"differing_cases": tri64.differing_cases,
                                            "differing_elements": tri64.differing_elements}
tri_self = attempt("Triton GEMV A/A", lambda: gemv_ab(triton_gemv, triton_gemv, cases=8))
if tri_self is not None:
    check("Triton GEMV A/A, graph on: equal", tri_self.equal, str(tri_self))

# ---- ptx(): the Triton kernel as a kernel arm ----

def compiled_gemv():
    """The CompiledKernel of the GEMV: what kernel[grid](...) returned, else kernel.warmup(...)."""
    k = launched.get("gemv")
    if hasattr(k, "asm"):
        return k
    x = torch.zeros((1, K), dtype=torch.float16, device="cuda")
    w = torch.zeros((N, K), dtype=torch.float16, device="cuda")
    y = torch.empty((1, N), dtype=torch.float16, device="cuda")
    return gemv_kernel.warmup(x, w, y, N, K, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, grid=(triton.cdiv(N, BLOCK_N),))


compiled = attempt("the Triton GEMV's CompiledKernel", compiled_gemv)
if compiled is not None:
    args = [{"tensor": "x"}, {"tensor": "w"}, {"output": "y"}, {"u32": N}, {"u32": K}]
    stage = attempt("ptx() on the compiled Triton GEMV",
                    lambda: bitproof.ptx(compiled, grid=(triton.cdiv(N, BLOCK_N),), args=args,
                                         path=os.path.join(work, "gemv.ptx")))
    if stage is not None:
        print(f"  {stage}; the PTX executor: {stage.executor}")
        spec = {"bitproof_ab": 1, "name": "triton-gemv", "seed": 7, "cases": 8,
                "inputs": GEMV_INPUTS, "kernels": stage.fragment["kernels"],
                "outputs": [{"name": "y", "dtype": "f16", "shape": [1, N]}],
                "arms": [{"name": "triton", "stages": [stage.fragment["stage"]]},
                         {"name": "triton-again", "stages": [stage.fragment["stage"]]}],
                "expect": "equal"}
        spec_path = os.path.join(work, "triton-gemv.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f, indent=1)
        r, _ = bptest.bounded([bp, "ab", spec_path, "--backend", "cuda", "--report", os.path.join(work, "tg.json"),
                               "--user-timeout", "30"], work, env, guard=180)
        print(f"$ bitproof ab triton-gemv.json --backend cuda: exit {r.returncode if r else 'killed'}\n"
              f"{r.stdout + r.stderr if r else ''}")
        check("the ptx() stage runs as a kernel arm on the GPU: exit 0", r is not None and r.returncode == 0)
        if r is not None and r.returncode == 0 and tri_self is not None:
            cli = load(os.path.join(work, "tg.json"))["result"]["outputs"][0]
            check("... its digest over 8 cases is the Python layer's for the same Triton kernel and declarations",
                  cli["digest"]["triton"] == tri_self.outputs[0]["sha256"][0], f"{cli} vs {tri_self.outputs[0]}")
        r, _ = bptest.bounded([bp, "ab", spec_path, "--backend", "all", "--cases", "1", "--user-timeout", "30"], work,
                              env, guard=300)
        print(f"$ bitproof ab triton-gemv.json --backend all --cases 1 (the PTX executor too): "
              f"exit {r.returncode if r else 'killed'}\n{(r.stdout + r.stderr)[-1500:] if r else ''}")
        figures["triton_ptx_backend_all_exit"] = r.returncode if r else "killed"

# ---- time() ----

t_same = attempt("time A/A", lambda: bitproof.time(
    torch_matmul, torch_matmul, inputs=GEMV_INPUTS, outputs=GEMV_OUTPUTS, claim="same within 3%", timeout=10,
    same_within=3.0,
    report=os.path.join(work, "time-same.json"), markdown=os.path.join(work, "time-same.md"), user_timeout=30))
if t_same is not None:
    print("\n".join("  " + line for line in t_same.lines))
    check("time: A/A torch.matmul: verdict \"same\" (within 3 %)", t_same.verdict == "same", t_same.sentence)
    check("... the claim \"same within 3%\" passes", t_same.passes, str(t_same.claim))
    figures["time_same"] = {"verdict": t_same.verdict, "ratio": t_same.ratio, "interval": t_same.interval}
t_twice = attempt("time twice the work", lambda: bitproof.time(
    torch_matmul, torch_matmul_twice, inputs=GEMV_INPUTS, outputs=GEMV_OUTPUTS, claim="b slower by 30%",
    timeout=10, report=os.path.join(work, "time-twice.json"), user_timeout=30))
if t_twice is not None:
    print("\n".join("  " + line for line in t_twice.lines))
    check("time: twice the work: verdict \"slower\"", t_twice.verdict == "slower", t_twice.sentence)
    check("... the claim \"b slower by 30%\" passes", t_twice.passes, str(t_twice.claim))
    figures["time_twice"] = {"verdict": t_twice.verdict, "ratio": t_twice.ratio, "interval": t_twice.interval}
    t_tri = attempt("time Triton against torch", lambda: bitproof.time(
        triton_gemv, torch_matmul, inputs=GEMV_INPUTS, outputs=GEMV_OUTPUTS, timeout=5, graph=False,
        user_timeout=30))
    if t_tri is not None:
        print(f"  Triton GEMV (A) against torch.matmul (B), eager launches: {t_tri.sentence}")
for name in ("time-same.json", "time-twice.json"):
    path = os.path.join(work, name)
    if not os.path.exists(path):
        continue
    r = run("report", "verify", path)
    check(f"bitproof report verify {name}: exit 0 (statistics re-derived)", r.returncode == 0, r.stdout + r.stderr)
    r = run("report", "render", path, "--markdown", path + ".md")
    check(f"bitproof report render {name} --markdown: exit 0", r.returncode == 0 and os.path.exists(path + ".md"),
          r.stdout + r.stderr)
expect_error("time(device=\"cpu\"): BadInput", bitproof.BadInput, 2,
             lambda: bitproof.time(torch_matmul, torch_matmul, inputs=GEMV_INPUTS, outputs=GEMV_OUTPUTS,
                                   device="cpu"), "nothing it can time")

# ---- the figure: the fused GEMV pair, 64 cases ----
# The declarations of examples/fused-aux-gemv/fused.json (x [1, 4096]; w.q_a, w.kv_a, w.gate; seed 7). The
# same Triton kernels run twice: as Python callables through bitproof.ab (graphs), and through ptx() as the
# kernel arms of an A/B spec run by `bitproof ab --backend cuda` (graphs): the same work, the same inputs,
# so the digests must agree and the wall times compare the Python layer with the command.

fused_spec = os.path.join(root, "examples", "fused-aux-gemv", "fused.json")
decl = load(fused_spec)
ROWS = {o["name"]: o["shape"][1] for o in decl["outputs"]}
PAIRS = (("w.q_a", "y.q_a"), ("w.kv_a", "y.kv_a"), ("w.gate", "y.gate"))
FUSED_OUTPUTS = [(o["name"], tuple(o["shape"])) for o in decl["outputs"]]


def three_matmuls(inputs, outputs):
    for w, y in PAIRS:
        torch.matmul(inputs["x"], inputs[w].t(), out=outputs[y])


def separate_triton(inputs, outputs):
    for w, y in PAIRS:
        n = inputs[w].shape[0]
        launched["separate"] = gemv_kernel[(n // BLOCK_N,)](inputs["x"], inputs[w], outputs[y], n, 4096,
                                                            BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)


def fused_triton(inputs, outputs):
    nq, nkv, ng = ROWS["y.q_a"], ROWS["y.kv_a"], ROWS["y.gate"]
    launched["fused"] = fused_kernel[((nq + nkv + ng) // BLOCK_N,)](
        inputs["x"], inputs["w.q_a"], inputs["w.kv_a"], inputs["w.gate"], outputs["y.q_a"], outputs["y.kv_a"],
        outputs["y.gate"], 4096, NQ=nq, NKV=nkv, NG=ng, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)


def fused_ab(a, b, cases=64):
    return bitproof.ab(a, b, inputs=decl["inputs"], outputs=FUSED_OUTPUTS, cases=cases, seed=decl["seed"],
                       device="cuda")


def figure():
    print(f"  three Triton launches vs one fused Triton launch, 64 cases: {triton_pair}")
    stages = []
    for w, y in PAIRS:
        n = ROWS[y]
        stages.append(bitproof.ptx(launched["separate"], grid=(n // BLOCK_N,), path=os.path.join(work, "gemv.ptx"),
                                   stage=os.path.join(work, f"gemv-{y}.stage.json"),
                                   args=[{"tensor": "x"}, {"tensor": w}, {"output": y}, {"u32": n}, {"u32": 4096}]))
    fused = bitproof.ptx(launched["fused"], grid=(sum(ROWS.values()) // BLOCK_N,),
                         path=os.path.join(work, "fused.ptx"),
                         args=[{"tensor": "x"}, {"tensor": "w.q_a"}, {"tensor": "w.kv_a"}, {"tensor": "w.gate"},
                               {"output": "y.q_a"}, {"output": "y.kv_a"}, {"output": "y.gate"}, {"u32": 4096}])
    spec = dict(decl, name="fused-aux-gemv-triton", cases=64, kernels={"ptx": ["gemv.ptx", "fused.ptx"]},
                arms=[{"name": "separate", "stages": [st.fragment["stage"] for st in stages]},
                      {"name": "fused", "stages": [fused.fragment["stage"]]}])
    spec.pop("title", None)
    spec_path = os.path.join(work, "fused-triton.json")
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump(spec, f, indent=1)
    walls = []
    for _ in range(3):
        start = clock.perf_counter()
        last = fused_ab(separate_triton, fused_triton)
        walls.append(clock.perf_counter() - start)
    cli = []
    for i in range(3):
        r, seconds = bptest.bounded([bp, "ab", spec_path, "--backend", "cuda", "--user-timeout", "30", "--report",
                                     os.path.join(work, "fused-triton.report.json")], work, env, guard=180)
        if r is None or r.returncode not in (0, 1):
            check("bitproof ab fused-triton.json --backend cuda (64 cases)", False,
                  (r.stdout + r.stderr) if r else "killed")
            break
        if i == 0:
            print(f"$ bitproof ab fused-triton.json --backend cuda: exit {r.returncode}\n{r.stdout}{r.stderr}")
        cli.append(seconds)
    if len(cli) == 3:
        rep = load(os.path.join(work, "fused-triton.report.json"))["result"]["outputs"]
        same = all(o["digest"]["separate"] == p["sha256"][0] and o["digest"]["fused"] == p["sha256"][1]
                   for o, p in zip(rep, last.outputs))
        check("the fused pair: the command's digests (Triton PTX as kernel arms) equal the Python layer's", same,
              f"{rep} vs {last.outputs}")
        py_s, cli_s = min(walls), min(cli)
        figures["fused_pair_64_cases"] = {
            "python_ab_seconds_best_of_3": py_s, "python_runs": walls,
            "cli_ab_cuda_seconds_best_of_3": cli_s, "cli_runs": cli,
            "python_over_cli": py_s / cli_s,
            "note": "the same Triton kernels (three GEMV launches vs one fused launch), the declarations of "
                    "examples/fused-aux-gemv/fused.json, 64 cases, graphs: python = bitproof.ab in-process "
                    "(module loaded, Triton compiled); cli = bitproof ab --backend cuda on the spec ptx() wrote, "
                    "a whole process each run (start, weights, PTX JIT)"}
        print(f"  figure: Python layer {py_s:.3f} s, the command {cli_s:.3f} s (whole process) for 64 cases of "
              f"the fused pair: ratio {py_s / cli_s:.3f}")
        # The same with 1 case: what 63 more cases cost each way (start, weights and JIT cancel out).
        py1, cli1 = [], []
        for _ in range(3):
            start = clock.perf_counter()
            fused_ab(separate_triton, fused_triton, cases=1)
            py1.append(clock.perf_counter() - start)
            r1, sec1 = bptest.bounded([bp, "ab", spec_path, "--backend", "cuda", "--cases", "1", "--user-timeout",
                                       "30"], work, env, guard=180)
            if r1 is None or r1.returncode not in (0, 1):
                return
            cli1.append(sec1)
        py_case, cli_case = (py_s - min(py1)) / 63, (cli_s - min(cli1)) / 63
        figures["fused_pair_per_case"] = {
            "python_1_case_seconds_best_of_3": min(py1), "cli_1_case_seconds_best_of_3": min(cli1),
            "python_seconds_per_added_case": py_case, "cli_seconds_per_added_case": cli_case,
            "python_over_cli_per_case": py_case / cli_case if cli_case > 0 else None}
        print(f"  figure: each case past the first, Python {py_case * 1e3:.3f} ms, the command {cli_case * 1e3:.3f} ms")


issue_pair = attempt("the issue's pair: three torch.matmul against one fused Triton launch",
                     lambda: fused_ab(three_matmuls, fused_triton))
if issue_pair is not None:
    print(f"  three torch.matmul vs one fused Triton launch, 64 cases: {issue_pair}")
    figures["three_matmul_vs_fused_triton_64_cases"] = {"equal": issue_pair.equal,
                                                        "differing_elements": issue_pair.differing_elements}
triton_pair = attempt("separate Triton GEMVs against the fused Triton GEMV (warm-up)",
                      lambda: fused_ab(separate_triton, fused_triton))
if triton_pair is not None and hasattr(launched.get("separate"), "asm") and hasattr(launched.get("fused"), "asm"):
    attempt("the figure: the fused pair both ways", figure)
    r, seconds = bptest.bounded([bp, "ab", fused_spec, "--backend", "cuda", "--user-timeout", "30"], work, env,
                                guard=180)
    if r is not None:
        figures["cli_fused_json_nvrtc_seconds"] = seconds
        print(f"  for scale: bitproof ab examples/fused-aux-gemv/fused.json --backend cuda (NVRTC kernels, 64 "
              f"cases): {seconds:.3f} s, exit {r.returncode}")
elif triton_pair is not None:
    check("the figure: Triton's launches returned their CompiledKernels (for ptx())", False,
          f"{type(launched.get('separate')).__name__}, {type(launched.get('fused')).__name__}")

with open(os.path.join(work, "figures.json"), "w", encoding="utf-8") as f:
    json.dump(figures, f, indent=1)
signal.alarm(0)
print(f"\n{len(bptest.failures)} failed" if bptest.failures else "\nall passed")
log.close()
sys.stdout = sys.__stdout__
sys.exit(1 if bptest.failures else 0)
