# bitproof.ab against `bitproof ab`: NumPy GEMVs that model the CPU arm's fp16_gemv (per block of
# block_k columns a binary32 FMA chain from +0, k ascending; the blocks' partials added forward or
# in reverse; one rounding to FP16) are given the same declarations and seed as an A/B spec of two
# fp16_gemv arms (one chain over K = 4096 against blocks of 512 added in reverse). The per-arm
# SHA-256 over every case's output, the differing counts and the first difference must be the
# command's: the same input bits from the seed, the same arithmetic, the same comparison. (A product of two FP16
# values is exact in binary32, so the FMA is one binary32 add of the product.)
import json
import subprocess

import numpy as np

import bitproof

K, N, CASES = 4096, 128, 16
INPUTS = [
    {"name": "x", "role": "activation", "dtype": "f16", "shape": [1, K], "values": {"uniform": [-1, 1]}},
    {"name": "w", "role": "weight", "dtype": "f16", "shape": [N, K], "values": {"uniform": [-1, 1]}},
]


def gemv(block, order):
    def arm(inputs, outputs):
        x = inputs["x"].astype(np.float32)[0]
        w = inputs["w"].astype(np.float32)
        partials = []
        for b in range(K // block):
            acc = np.zeros(N, dtype=np.float32)
            for k in range(b * block, (b + 1) * block):
                acc = acc + x[k] * w[:, k]
            partials.append(acc)
        if order == "reverse":
            partials.reverse()
        total = partials[0]
        for p in partials[1:]:
            total = total + p
        outputs["y"][0, :] = total.astype(np.float16)

    arm.__name__ = f"block{block}-{order}"
    return arm


def test_same_bits_and_digests_as_the_command(command, tmp_path):
    stage = {"op": "fp16_gemv", "x": "x", "weights": ["w"], "outputs": ["y"]}
    spec = {"bitproof_ab": 1, "name": "python-parity", "seed": 11, "cases": CASES, "inputs": INPUTS,
            "arms": [{"name": "one-chain", "stages": [dict(stage, block_k=K)]},
                     {"name": "block512-reverse", "stages": [dict(stage, block_k=512, order="reverse")]}],
            "outputs": ["y"]}
    (tmp_path / "ab.json").write_text(json.dumps(spec))
    out = subprocess.run([command, "ab", str(tmp_path / "ab.json"), "--backend", "cpu", "--cpu-arith", "soft",
                          "--report", str(tmp_path / "r.json")], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr  # 1: the arms differ (expected here)
    cli = json.loads((tmp_path / "r.json").read_text())["result"]
    py = bitproof.ab(gemv(K, "forward"), gemv(512, "reverse"), inputs=INPUTS, outputs=[("y", (1, N))], cases=CASES, seed=11)
    assert [py.outputs[0]["sha256"][0], py.outputs[0]["sha256"][1]] == [cli["outputs"][0]["digest"]["one-chain"],
                                                                       cli["outputs"][0]["digest"]["block512-reverse"]]
    assert (py.differing_cases, py.differing_elements) == (cli["differing_cases"], cli["differing_elements"])
    assert py.differing_elements > 0  # the two orders differ somewhere: the comparison is exercised
    d = py.first_differences[0]
    first = cli["first_differences"][0]
    assert (d.case, list(d.index)) == (first["case"], first["index"])
