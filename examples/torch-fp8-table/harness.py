#!/usr/bin/env python3
"""harness.py: run the team's PyTorch dequant on exactly the cases of a spec and
write the bits it produced, in case order, as an output table for bitproof.

    bitproof spec cases proof.json --out cases.npy
    python3 harness.py cases.npy out.npy [--device cuda|cpu] [--triton]
    bitproof prove proof.json --report report.json

cases.npy is (N, 2) uint16: column 0 the E4M3 code, column 1 the FP16 scale's
bits (case n in row n, first input fastest). out.npy is float16, shape (N,):
np.save keeps every bit, NaN payloads included. Needs torch (2.1 or later, for
torch.float8_e4m3fn) and numpy; --triton needs triton and a CUDA GPU.
"""
import argparse

import numpy as np
import torch


def dequant(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The team's kernel: FP8 E4M3 weights to FP16, times the FP16 scale."""
    return q.to(torch.float16) * scale


def dequant_triton(q_bytes: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The same in Triton (not run where this example was written: no GPU there)."""
    import triton
    import triton.language as tl

    @triton.jit
    def kernel(q_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        q = tl.load(q_ptr + offs, mask=mask).to(tl.float8e4nv, bitcast=True)
        s = tl.load(s_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, q.to(tl.float16) * s, mask=mask)

    out = torch.empty_like(scale)
    n = out.numel()
    kernel[(triton.cdiv(n, 1024),)](q_bytes, scale, out, n, BLOCK=1024)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cases")
    p.add_argument("out")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--triton", action="store_true")
    a = p.parse_args()
    cases = np.load(a.cases)
    assert cases.ndim == 2 and cases.shape[1] == 2 and cases.dtype == np.uint16, (cases.shape, cases.dtype)
    q_bytes = torch.from_numpy(cases[:, 0].astype(np.uint8)).to(a.device)
    scale = torch.from_numpy(np.ascontiguousarray(cases[:, 1]).view(np.float16)).to(a.device)
    if a.triton:
        out = dequant_triton(q_bytes, scale)
    else:
        out = dequant(q_bytes.view(torch.float8_e4m3fn), scale)
    np.save(a.out, out.cpu().numpy())
    print(f"wrote {a.out}: {out.numel()} float16 words from {a.device}{' (triton)' if a.triton else ''}, "
          f"torch {torch.__version__}")


if __name__ == "__main__":
    main()
