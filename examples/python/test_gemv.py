# A pytest file a kernel repository can copy (docs/python.md): bitproof's fixture checks a fused
# FP16 GEMV against the reference it replaces, bit for bit, on 32 changing activations.
# Run: PYTHONPATH=build/python python3 -m pytest -p bitproof.pytest_plugin examples/python
# (where bitproof is installed, the plugin loads itself: python3 -m pytest examples/python).
import numpy as np

INPUTS = [
    {"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 256], "values": {"uniform": [-1, 1]}},
    {"name": "w", "role": "weight", "dtype": "f16", "shape": [64, 256], "values": {"uniform": [-0.5, 0.5]}},
]


def reference(inputs, outputs):
    """y = fp16(sum over k in order of x[k]*w[:, k]), binary32 products and running sum."""
    x = inputs["x"].astype(np.float32)[0]
    w = inputs["w"].astype(np.float32)
    acc = np.zeros(w.shape[0], dtype=np.float32)
    for k in range(w.shape[1]):
        acc = acc + x[k] * w[:, k]
    outputs["y"][0, :] = acc.astype(np.float16)


def fused(inputs, outputs):
    """The kernel under test: the same order, in chunks of 64 columns (replace with your kernel's launch)."""
    x = inputs["x"].astype(np.float32)[0]
    w = inputs["w"].astype(np.float32)
    acc = np.zeros(w.shape[0], dtype=np.float32)
    for k0 in range(0, w.shape[1], 64):
        for k in range(k0, k0 + 64):
            acc = acc + x[k] * w[:, k]
    np.copyto(outputs["y"][0], acc.astype(np.float16))


def test_fused_gemv_is_bitwise_the_reference(bitproof):
    r = bitproof.ab(fused, reference, inputs=INPUTS, outputs=[("y", (1, 64))], cases=32, seed=7)
    assert r.equal, str(r)


def test_one_output_against_numpy(bitproof):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, 256).astype(np.float16)[None, :]
    w = rng.uniform(-0.5, 0.5, (64, 256)).astype(np.float16)
    a = np.zeros((1, 64), dtype=np.float16)
    b = np.zeros((1, 64), dtype=np.float16)
    fused({"x": x, "w": w}, {"y": a})
    reference({"x": x, "w": w}, {"y": b})
    bitproof.assert_equal(a, b, names=("fused", "reference"))
