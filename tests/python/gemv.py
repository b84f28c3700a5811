# FP16 GEMVs in NumPy for the A/B tests: y[n] = fp16(sum over k, in order k = 0, 1, ..., of
# x[k]*w[n,k]), the products and the running sum in binary32 (a product of two FP16 values is
# exact in binary32; each add rounds once, in this fixed order), one rounding to FP16 at the end.
import numpy as np


def gemv_rowwise(inputs, outputs):
    """The reference: K steps of a binary32 accumulator over every row at once."""
    x = inputs["x"].astype(np.float32)[0]
    w = inputs["w"].astype(np.float32)
    acc = np.zeros(w.shape[0], dtype=np.float32)
    for k in range(w.shape[1]):
        acc = acc + x[k] * w[:, k]
    outputs["y"][0, :] = acc.astype(np.float16)


def gemv_blocked(inputs, outputs):
    """The same sum in the same order, written another way: blocks of 16 columns, one row at a time."""
    x = inputs["x"].astype(np.float32)[0]
    w = inputs["w"].astype(np.float32)
    for n in range(w.shape[0]):
        acc = np.float32(0)
        for k0 in range(0, w.shape[1], 16):
            for k in range(k0, min(k0 + 16, w.shape[1])):
                acc = np.float32(acc + np.float32(x[k] * w[n, k]))
        outputs["y"][0, n] = np.float16(acc)


def gemv_broken(inputs, outputs):
    """Wrong on purpose: every 7th row keeps its running sum in FP16 (a rounding at every step)."""
    gemv_rowwise(inputs, outputs)
    x = inputs["x"][0]
    w = inputs["w"]
    for n in range(0, w.shape[0], 7):
        acc = np.float16(0)
        for k in range(w.shape[1]):
            acc = np.float16(acc + np.float16(np.float32(x[k]) * np.float32(w[n, k])))
        outputs["y"][0, n] = acc


INPUTS = [
    {"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 64], "values": {"uniform": [-1, 1]}},
    {"name": "w", "role": "weight", "dtype": "f16", "shape": [32, 64], "values": {"uniform": [-1, 1]}},
]
OUTPUTS = [("y", (1, 32))]
