#!/usr/bin/env python3
"""reference.py CASES.npy OUT.npy BROKEN.u16: what harness.py computes, in plain
Python (no numpy, no torch), for machines without them -- this is the path that
wrote the committed out.npy and out-broken.u16 (README.md).

It reads the cases `bitproof spec cases proof.json --out CASES.npy` wrote
(shape (N, 2) <u2: column 0 the E4M3 code, column 1 the FP16 scale's bits) and
computes, per case, what PyTorch on a CUDA GPU computes for
    q.view(torch.float8_e4m3fn).to(torch.float16) * scale.view(torch.float16):
the E4M3 value (exact in FP16) times the scale, exact in FP32 (PyTorch's opmath
for half), rounded once to FP16 (round to nearest even, subnormals kept,
overflow to Inf); NaN codes (S.1111.111) give the GPU's canonical NaN 0x7FFF
(__float2half of any NaN). Checked: torch 2.11 on an H200 (and the Triton
variant) writes this file byte for byte. PyTorch on the CPU writes other NaN
bits (0x7F80, 0xFF80): the claims accept any NaN there, the file's SHA-256
does not.

OUT.npy is written as np.save writes a float16 array (descr '<f2'), byte for
byte, so `cmp` compares it with the harness's. BROKEN.u16 is the same words,
raw little-endian, with one bit flipped in the case where element = 0x38 (1.0)
and scale = 0x3C00 (1.0): the table with one wrong word that the spec's third
claim must refute.

    python3 reference.py CASES.npy OUT.npy BROKEN.u16
    python3 reference.py --check CASES.npy OTHER.npy    # list where another table differs
"""
import ast
import struct
import sys
from fractions import Fraction

NAN = 0x7FFF


def read_npy(path):
    """A (N, k) unsigned little-endian .npy array as a list of rows (only what spec cases writes)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY" or data[6] not in (1, 2, 3) or data[7] != 0:
        sys.exit(f"{path}: not a .npy file of version 1.0, 2.0 or 3.0")
    n = 2 if data[6] == 1 else 4
    length = int.from_bytes(data[8:8 + n], "little")
    header = ast.literal_eval(data[8 + n:8 + n + length].decode("ascii"))
    descr, shape = header["descr"], header["shape"]
    if header["fortran_order"] or descr[1] not in "uif" or descr[0] == ">":
        sys.exit(f"{path}: expected a C-order little-endian array, got {header}")
    width = int(descr[2:])
    body = data[8 + n + length:]
    count = 1
    for d in shape:
        count *= d
    if len(body) != count * width:
        sys.exit(f"{path}: {len(body)} data bytes, shape {shape} of {descr} needs {count * width}")
    words = [int.from_bytes(body[i * width:(i + 1) * width], "little") for i in range(count)]
    if len(shape) == 1:
        return words
    k = shape[1]
    return [words[i * k:(i + 1) * k] for i in range(shape[0])]


def npy_header(descr, shape):
    """The header np.save writes (format version 1.0, padded to 64 bytes)."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = (64 - (10 + len(text) + 1) % 64) % 64
    text += " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("ascii")


def e4m3(code):
    """(negative, value) of an E4M3 (FN) code; value None for NaN."""
    negative, exponent, mantissa = code >> 7, (code >> 3) & 0xF, code & 7
    if exponent == 15 and mantissa == 7:
        return negative, None
    if exponent == 0:
        return negative, Fraction(mantissa, 8) * Fraction(1, 2 ** 6)
    return negative, (1 + Fraction(mantissa, 8)) * Fraction(2) ** (exponent - 7)


def fp16(bits):
    """(negative, value) of FP16 bits; value None for NaN, 'inf' for infinity."""
    negative, exponent, mantissa = bits >> 15, (bits >> 10) & 0x1F, bits & 0x3FF
    if exponent == 31:
        return negative, None if mantissa else "inf"
    if exponent == 0:
        return negative, Fraction(mantissa, 1024) * Fraction(1, 2 ** 14)
    return negative, (1 + Fraction(mantissa, 1024)) * Fraction(2) ** (exponent - 15)


def round_half_even(x):
    floor = x.numerator // x.denominator
    rest = x - floor
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor % 2 == 1):
        return floor + 1
    return floor


def to_fp16(negative, magnitude):
    """FP16 bits of +-magnitude (a non-negative Fraction), rounded to nearest even once."""
    sign = 0x8000 if negative else 0
    if magnitude >= 65520:  # 65504 + half an ulp, a tie that goes to the even 2^16: Inf
        return sign | 0x7C00
    if magnitude == 0:
        return sign
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, -14)  # below 2^-14: subnormals, quantum 2^-24
    n = round_half_even(magnitude / Fraction(2) ** (exponent - 10))
    if n == 2048:
        exponent, n = exponent + 1, 1024
    if n < 1024:  # subnormal (exponent -14)
        return sign | n
    return sign | ((exponent + 15) << 10) | (n - 1024)


def dequant(element, scale_bits):
    """What q.to(torch.float16) * scale gives on a CUDA GPU (see the module's text)."""
    neg_q, q = e4m3(element)
    neg_s, s = fp16(scale_bits)
    if q is None or s is None or (s == "inf" and q == 0):
        return NAN
    if s == "inf":
        return ((neg_q ^ neg_s) << 15) | 0x7C00
    return to_fp16(bool(neg_q ^ neg_s), q * s)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--check":
        cases, other = read_npy(sys.argv[2]), read_npy(sys.argv[3])
        mine = [dequant(e, s) for e, s in cases]
        differ = [(n, cases[n], mine[n], other[n]) for n in range(len(mine)) if mine[n] != other[n]]
        nan = lambda b: (b & 0x7C00) == 0x7C00 and (b & 0x3FF) != 0
        for n, (e, s), a, b in differ[:20]:
            print(f"case {n}: element 0x{e:02X} scale 0x{s:04X}: reference 0x{a:04X}, other 0x{b:04X}"
                  + (" (both NaN)" if nan(a) and nan(b) else ""))
        only_nan = all(nan(a) and nan(b) for _, _, a, b in differ)
        print(f"{len(differ)} of {len(mine)} words differ" + (" (NaN payloads only)" if differ and only_nan else ""))
        sys.exit(1 if differ else 0)
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cases = read_npy(sys.argv[1])
    out = [dequant(e, s) for e, s in cases]
    with open(sys.argv[2], "wb") as f:
        f.write(npy_header("<f2", (len(out),)) + b"".join(struct.pack("<H", w) for w in out))
    broken = list(out)
    wrong = next(n for n, (e, s) in enumerate(cases) if e == 0x38 and s == 0x3C00)
    broken[wrong] ^= 1
    with open(sys.argv[3], "wb") as f:
        f.write(b"".join(struct.pack("<H", w) for w in broken))
    print(f"wrote {sys.argv[2]} ({len(out)} words) and {sys.argv[3]} (case {wrong} changed: "
          f"0x{out[wrong]:04X} -> 0x{broken[wrong]:04X})")


main()
