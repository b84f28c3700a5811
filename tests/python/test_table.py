# bitproof.table: an E2M1 decode in NumPy proven through the output-table path, and its errors.
import pathlib

import numpy as np
import pytest

import bitproof

SPEC = pathlib.Path(__file__).with_name("e2m1_table.json")
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)


def decode(codes):
    c = codes["element"].astype(np.int64)
    value = E2M1[c & 7] * np.where(c & 8, -1, 1)
    return value.astype(np.float16)


def test_spec_cases_are_every_code_in_case_order():
    codes = bitproof.spec_cases(SPEC)
    assert list(codes) == ["element"] and codes["element"].dtype == np.uint8
    assert codes["element"].tolist() == list(range(16))


def test_a_numpy_decode_is_proven(tmp_path):
    report = tmp_path / "r.json"
    r = bitproof.table(SPEC, decode, report=report)
    assert r.passes, str(r)
    assert [(c.holding, c.cases) for c in r.claims] == [(16, 16), (16, 16)]
    assert (tmp_path / "r.json.team.e2m1_fp16.numpy.npy").exists()
    assert bitproof.verify(report, spec_dir=SPEC.parent).passes


def test_a_wrong_decode_is_refuted():
    def wrong(codes):
        out = decode(codes)
        out[8] = np.float16(0.0)  # -0 written as +0: a lost sign
        return out

    r = bitproof.table(SPEC, wrong)
    assert not r.passes
    equal = r.claims[1]
    assert (equal.holding, equal.cases) == (15, 16) and equal.by_kind == {"sign": 1}


def test_table_errors_name_the_recipe(tmp_path):
    with pytest.raises(bitproof.BadInput, match=r"team.e2m1_fp16.numpy: shape \(8,\)"):
        bitproof.table(SPEC, lambda codes: decode(codes)[:8])
    with pytest.raises(bitproof.BadInput, match="team.e2m1_fp16.numpy: expected a NumPy array"):
        bitproof.table(SPEC, lambda codes: [0] * 16)
    with pytest.raises(bitproof.BadInput, match="numpy.npy"):  # a float that is not the output's format
        bitproof.table(SPEC, lambda codes: decode(codes).astype(np.float64))
    with pytest.raises(bitproof.BadInput, match="no recipe of this spec reads an output table"):
        bitproof.table(pathlib.Path(__file__).parents[2] / "proofs/dsv4-mxfp4-fp16-fold.json", decode)
