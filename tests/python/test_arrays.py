# bitproof.compare / assert_equal: bit for bit, decoded differences, bad arrays refused by name.
import numpy as np
import pytest

import bitproof


def test_equal_and_differing():
    a = np.arange(12, dtype=np.float16).reshape(3, 4)
    assert bitproof.assert_equal(a, a.copy()).equal
    b = a.copy()
    b[2, 1] = np.float16(1.0)
    with pytest.raises(AssertionError) as e:
        bitproof.assert_equal(a, b, names=("mine", "ref"))
    text = str(e.value)
    assert "1 of 12 float16 elements differ" in text
    assert "[2, 1]: mine 0x4880 [0|10010|0010000000] 9, ref 0x3C00 [0|01111|0000000000] 1" in text


def test_signed_zero_and_nan_payloads_differ():
    z = np.array([0.0], dtype=np.float32)
    assert not bitproof.compare(z, -z).equal
    n1 = np.array([0x7E00], dtype=np.uint16).view(np.float16)
    n2 = np.array([0x7E01], dtype=np.uint16).view(np.float16)
    assert not bitproof.compare(n1, n2).equal
    assert bitproof.compare(n1, n1.copy()).equal


def test_bad_arrays_are_named():
    a = np.zeros((2, 2), dtype=np.float16)
    with pytest.raises(bitproof.BadInput, match="^b: dtype"):
        bitproof.compare(a, np.zeros((2, 2), dtype=np.int16))
    with pytest.raises(bitproof.BadInput, match="^y: shape"):
        bitproof.compare(a, np.zeros((4,), dtype=np.float16), names=("x", "y"))
    with pytest.raises(bitproof.BadInput, match="^a: not C-contiguous"):
        bitproof.compare(np.zeros((4, 4), dtype=np.float16)[:, ::2], a)
    with pytest.raises(bitproof.BadInput, match="^b: dtype"):
        bitproof.compare(a, a.astype(np.float32))
    with pytest.raises(bitproof.BadInput, match="^a: expected an array"):
        bitproof.compare([1.0, 2.0], a)
