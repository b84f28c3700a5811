#!/usr/bin/env python3
"""Writes the PTX of a Triton GEMV in two forms, run on a GPU machine with Triton (issue 48).

  separate: gemv(w, x, y, N, K): one launch per weight, y = W x, FP16 in, FP32 accumulation
            over BLOCK_K columns at a time (tl.sum of the products per row), FP16 out.
  fused:    gemv_fused(w, x, y0, y1, y2, N0, N1, N2, K): one launch over the three weights' rows
            joined into one buffer, each row stored to its own output. Each row is computed by
            the same code at the same position in its block when N0 and N1 are multiples of
            BLOCK_N, so the bits should equal the separate launches'.
  separate_bk128: the separate form with BLOCK_K = 128: another partition of K (negative control).

Usage: python3 make_ptx.py OUTDIR   (writes OUTDIR/*.ptx, OUTDIR/launches.json and the A/B specs
small.json (gemv x3 against gemv_fused, expect equal) and small-bk128.json (gemv_bk128 x3 against
gemv_fused, expect differ) at the small size, and checks the
forms bitwise on the GPU at the small and the full size, printing the counts). The PTX committed in
examples/triton-gemv/ was made by this script; bitproof proves or refutes the pairs from it on the
CPU (docs/ptx-proof.md).
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

BLOCK_N = 16
NUM_WARPS = 4


@triton.jit
def _row_block(w_ptr, x_ptr, rows, row_ok, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + rows[:, None] * K + cols[None, :], mask=row_ok[:, None], other=0.0)
        x = tl.load(x_ptr + cols)
        acc += tl.sum(w.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    return acc


@triton.jit
def gemv(w_ptr, x_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = rows < N
    acc = _row_block(w_ptr, x_ptr, rows, ok, K, BLOCK_N, BLOCK_K)
    tl.store(y_ptr + rows, acc.to(tl.float16), mask=ok)


@triton.jit
def gemv_fused(w_ptr, x_ptr, y0_ptr, y1_ptr, y2_ptr, N0, N1, N2, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    ok = rows < N0 + N1 + N2
    acc = _row_block(w_ptr, x_ptr, rows, ok, K, BLOCK_N, BLOCK_K).to(tl.float16)
    tl.store(y0_ptr + rows, acc, mask=rows < N0)
    tl.store(y1_ptr + (rows - N0), acc, mask=(rows >= N0) & (rows < N0 + N1))
    tl.store(y2_ptr + (rows - N0 - N1), acc, mask=(rows >= N0 + N1) & ok)


def compiled_info(compiled, name, grid, params):
    md = compiled.metadata
    return {"kernel": compiled.name if hasattr(compiled, "name") else name, "num_warps": md.num_warps,
            "block": [md.num_warps * 32, 1, 1], "shared_bytes": md.shared, "grid_example": grid, "params": params}


def run_pair(ns, k, block_k_sep, seed):
    torch.manual_seed(seed)
    ws = [torch.randn(n, k, device="cuda", dtype=torch.float16) * 0.05 for n in ns]
    x = torch.randn(k, device="cuda", dtype=torch.float16)
    ys = [torch.empty(n, device="cuda", dtype=torch.float16) for n in ns]
    seps = []
    for w, y, n in zip(ws, ys, ns):
        seps.append(gemv[(triton.cdiv(n, BLOCK_N),)](w, x, y, n, k, BLOCK_N=BLOCK_N, BLOCK_K=block_k_sep,
                                                       num_warps=NUM_WARPS))
    wj = torch.cat(ws).contiguous()
    yf = [torch.empty(n, device="cuda", dtype=torch.float16) for n in ns]
    fused = gemv_fused[(triton.cdiv(sum(ns), BLOCK_N),)](wj, x, *yf, *ns, k, BLOCK_N=BLOCK_N, BLOCK_K=256,
                                                         num_warps=NUM_WARPS)
    torch.cuda.synchronize()
    differ = sum(int((a.view(torch.int16) != b.view(torch.int16)).sum()) for a, b in zip(ys, yf))
    return seps[0], fused, differ


def write_specs(out, launches, ns=(32, 16, 16), k=512):
    """The A/B specs of the small size over the saved PTX: three launches of `label` against one fused one."""
    names = ("a", "b", "c")
    scratch = [{"u64": 0}, {"u64": 0}]  # Triton's trailing global and profile scratch pointers (unused here)

    def stage(label, grid, args):  # label: launches' key (the PTX's entry is launches[label]["kernel"])
        st = {"kernel": launches[label]["kernel"], "grid": [grid], "block": launches[label]["block"][:1], "args": args}
        if launches[label]["shared_bytes"]:
            st["shared_bytes"] = launches[label]["shared_bytes"]
        return st

    for label, spec_name, expect in (("gemv", "small", "equal"), ("gemv_bk128", "small-bk128", "differ")):
        sep = [stage(label, -(-n // BLOCK_N), [{"tensor": f"w.{m}"}, {"tensor": "x"}, {"output": f"y.{m}"},
                                              {"u32": n}, {"u32": k}] + scratch) for n, m in zip(ns, names)]
        fused = stage("gemv_fused", -(-sum(ns) // BLOCK_N),
                      [{"joined": [f"w.{m}" for m in names]}, {"tensor": "x"}]
                      + [{"output": f"y.{m}"} for m in names] + [{"u32": n} for n in ns] + [{"u32": k}] + scratch)
        spec = {"bitproof_ab": 1, "name": f"triton-gemv-{spec_name}",
                "title": f"Triton GEMV: three {label} launches against gemv_fused (N = {'+'.join(map(str, ns))}, K = {k})",
                "seed": 7, "cases": 4 if expect == "equal" else 256,  # case 56 of seed 7 differs (bk128)
                "inputs": [{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, k],
                            "values": {"uniform": [-1, 1]}}]
                + [{"name": f"w.{m}", "role": "weight", "dtype": "f16", "shape": [n, k],
                    "values": {"uniform": [-0.0625, 0.0625]}} for n, m in zip(ns, names)],
                "kernels": {"ptx": [f"{label}.ptx", "gemv_fused.ptx"]},
                "outputs": [{"name": f"y.{m}", "dtype": "f16", "shape": [1, n]} for n, m in zip(ns, names)],
                "arms": [{"name": "separate", "stages": sep}, {"name": "fused", "stages": [fused]}],
                "expect": expect}
        with open(os.path.join(out, f"{spec_name}.json"), "w") as f:
            json.dump(spec, f, indent=1)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name())
    launches = {}
    for label, bk in (("gemv", 256), ("gemv_bk128", 128)):
        for size, ns, k in (("small", (32, 16, 16), 512), ("full", (2048, 512, 64), 4096)):
            sep, fused, differ = run_pair(ns, k, bk, 7)
            print(f"{label} vs gemv_fused ({size}: N = {'+'.join(map(str, ns))}, K = {k}): "
                  f"{differ} of {sum(ns)} outputs differ")
        with open(os.path.join(out, f"{label}.ptx"), "w") as f:
            f.write(sep.asm["ptx"])
        launches[label] = compiled_info(sep, "gemv", "cdiv(N, 16)", ["w", "x", "y", "N", "K", "scratch", "scratch"])
    with open(os.path.join(out, "gemv_fused.ptx"), "w") as f:
        f.write(fused.asm["ptx"])
    launches["gemv_fused"] = compiled_info(fused, "gemv_fused", "cdiv(N0+N1+N2, 16)",
                                           ["w", "x", "y0", "y1", "y2", "N0", "N1", "N2", "K", "scratch", "scratch"])
    launches["made_by"] = {"triton": triton.__version__, "torch": torch.__version__,
                           "gpu": torch.cuda.get_device_name(), "block_n": BLOCK_N, "num_warps": NUM_WARPS}
    with open(os.path.join(out, "launches.json"), "w") as f:
        json.dump(launches, f, indent=1)
    write_specs(out, launches)
    for name in sorted(os.listdir(out)):
        print(name, os.path.getsize(os.path.join(out, name)))


if __name__ == "__main__":
    main()
