# bitproof.ab with NumPy callables: equal and broken FP16 GEMVs, the poison, every error.
import numpy as np
import pytest

import bitproof
from bitproof import _bitproof
from gemv import INPUTS, OUTPUTS, gemv_blocked, gemv_broken, gemv_rowwise


def run(a, b, **kw):
    kw.setdefault("cases", 8)
    return bitproof.ab(a, b, inputs=INPUTS, outputs=OUTPUTS, **kw)


def test_one_order_written_two_ways_is_equal():
    r = run(gemv_rowwise, gemv_blocked)
    assert r.equal and r.cases == 8 and r.differing_elements == 0
    assert r.outputs[0]["sha256"][0] == r.outputs[0]["sha256"][1]
    assert "bitwise equal on 8/8 cases" in str(r)


def test_the_broken_gemv_is_caught_with_decoded_differences():
    r = run(gemv_rowwise, gemv_broken, keep=5)
    assert not r.equal
    assert 0 < r.differing_elements <= 5 * 8  # only every 7th row (5 of 32) can differ
    d = r.first_differences[0]
    assert d.output == "y" and d.index[0] == 0 and d.index[1] % 7 == 0
    assert d.a_bits != d.b_bits and d.case_seed.startswith("0x")
    assert float(d.a_value.split()[-1]) != float(d.b_value.split()[-1])  # decoded: "0x.... [s|e|m] value"
    assert d.a_value.lower().startswith(d.a_bits) and d.b_value.lower().startswith(d.b_bits)


def test_seed_fixes_the_inputs():
    seen = []

    def record(inputs, outputs):
        seen.append(inputs["x"].copy())
        gemv_rowwise(inputs, outputs)

    run(record, gemv_rowwise, cases=2, seed=5)
    run(record, gemv_rowwise, cases=2, seed=5)
    run(record, gemv_rowwise, cases=2, seed=6)
    assert seen[0].tobytes() == seen[2].tobytes() and seen[1].tobytes() == seen[3].tobytes()
    assert seen[0].tobytes() != seen[1].tobytes()  # a new activation every case
    assert seen[0].tobytes() != seen[4].tobytes()
    assert seen[0].dtype == np.float16 and seen[0].shape == (1, 64)


def test_each_arm_gets_its_own_inputs_and_changing_them_is_refused():
    def scribble(inputs, outputs):
        inputs["w"][0, 0] = 0
        gemv_rowwise(inputs, outputs)

    with pytest.raises(bitproof.ArmError, match="arm b .*changed an input"):
        run(gemv_rowwise, scribble)


def test_a_callable_that_writes_nothing_is_caught_by_the_poison():
    def lazy(inputs, outputs):
        pass

    with pytest.raises(bitproof.ArmError) as e:
        run(gemv_rowwise, lazy)
    assert e.value.exit_code == 1 and 'output "y" still holds the poison' in e.value.message


def test_two_arms_that_leave_the_same_elements_unwritten_are_caught():
    # Both write only the first half: without the second poison they would agree on 0xFFFF there.
    def leaves(inputs, outputs):
        full = {"y": np.empty_like(outputs["y"])}
        gemv_rowwise(inputs, full)
        outputs["y"][0, :16] = full["y"][0, :16]

    with pytest.raises(bitproof.ArmError) as e:
        run(leaves, leaves)
    assert e.value.exit_code == 1 and 'output "y"[0][16] (and 15 more element(s)) was never written' in e.value.message


def test_an_arm_that_accumulates_into_its_output_is_caught():
    def accumulates(inputs, outputs):
        full = {"y": np.empty_like(outputs["y"])}
        gemv_rowwise(inputs, full)
        y5 = outputs["y"][0, 5] + full["y"][0, 5]  # reads what was there before the call
        outputs["y"][...] = full["y"]
        outputs["y"][0, 5] = y5

    with pytest.raises(bitproof.ArmError) as e:
        run(accumulates, accumulates)
    assert "was computed from the output's contents before the call" in e.value.message


def test_rebinding_an_output_writes_nothing():
    def rebinds(inputs, outputs):
        outputs["y"] = np.zeros((1, 32), dtype=np.float16)

    with pytest.raises(bitproof.ArmError, match="poison"):
        run(gemv_rowwise, rebinds)


def test_negative_control_without_the_poison_two_lazy_arms_look_equal():
    # What the poison buys: with it off (the engine's switch, not offered by bitproof.ab), two arms
    # that write nothing compare equal. The test above fails the same way when the poison is removed.
    import json

    def lazy(inputs, outputs):
        pass

    spec = json.dumps({"seed": 1, "cases": 2, "inputs": INPUTS, "outputs": [{"name": "y", "shape": [1, 32]}]})
    assert json.loads(_bitproof.ab(lazy, lazy, spec, 8, False))["equal"]
    with pytest.raises(_bitproof.Failure):
        _bitproof.ab(lazy, lazy, spec, 8, True)


def test_a_callable_that_raises():
    def boom(inputs, outputs):
        raise ValueError("kernel exploded")

    with pytest.raises(bitproof.ArmError) as e:
        run(boom, gemv_rowwise)
    assert e.value.exit_code == 2
    assert "arm a (\"boom\"), case 0" in e.value.message and "ValueError: kernel exploded" in e.value.message
    assert isinstance(e.value.__cause__, ValueError)


def test_mxfp4_weights_reach_the_arm_as_codes_and_scales():
    got = {}

    def look(inputs, outputs):
        got.update({k: (v.dtype, v.shape) for k, v in inputs.items()})
        got["scales"] = set(np.unique(inputs["q.scale"]))
        outputs["y"][...] = 0

    inputs = INPUTS + [{"name": "q", "role": "weight", "dtype": "mxfp4", "shape": [4, 64], "scales": {"range": [120, 122]}}]
    bitproof.ab(look, look, inputs=inputs, outputs=OUTPUTS, cases=1)
    assert got["q"] == (np.uint8, (4, 32)) and got["q.scale"] == (np.uint8, (4, 2))
    assert got["scales"] <= {120, 121, 122}


@pytest.mark.parametrize("inputs, field", [
    ([{"name": "x", "role": "activation", "dtype": "f32", "shape": [1, 4]}], r"inputs\[0\]\.dtype"),
    ([{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 0]}], r"inputs\[0\]\.shape\[1\]"),
    ([{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 4], "colour": 1}], r"inputs\[0\]\.colour"),
    ([{"name": "q", "role": "weight", "dtype": "mxfp4", "shape": [1, 30], "scales": {"range": [1, 2]}}],
     r"inputs\[0\]\.shape"),
    ([{"name": "q", "role": "weight", "dtype": "mxfp4", "shape": [1, 32]}], r"inputs\[0\]\.scales"),
    ([{"name": "w", "role": "weight", "dtype": "f16", "shape": [1, 4], "tensor": "w"}], r"inputs\[0\]\.tensor"),
    ([INPUTS[0], INPUTS[0]], r"inputs\[1\]\.name"),
])
def test_bad_declarations_name_the_field(inputs, field):
    with pytest.raises(bitproof.BadInput, match=field) as e:
        bitproof.ab(gemv_rowwise, gemv_rowwise, inputs=inputs, outputs=OUTPUTS, cases=1)
    assert e.value.exit_code == 2


def test_bad_calls():
    with pytest.raises(bitproof.BadInput, match="arm b"):
        run(gemv_rowwise, 3)
    with pytest.raises(bitproof.BadInput, match="outputs"):
        bitproof.ab(gemv_rowwise, gemv_rowwise, inputs=INPUTS, outputs=["y"], cases=1)
    with pytest.raises(bitproof.BadInput, match=r"outputs\[0\]\.name"):
        bitproof.ab(gemv_rowwise, gemv_rowwise, inputs=INPUTS, outputs=[("x", (1, 4))], cases=1)
    with pytest.raises(bitproof.BadInput, match="graph"):
        run(gemv_rowwise, gemv_rowwise, graph=True)
