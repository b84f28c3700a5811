# bitproof.prove and bitproof.verify: the command's results, files and errors from Python.
import json
import subprocess

import pytest

import bitproof

FOLD = "proofs/dsv4-mxfp4-fp16-fold.json"


def test_prove_holds_with_the_commands_counts(source, tmp_path):
    r = bitproof.prove(source / FOLD, backend="cpu", report=tmp_path / "r.json")
    assert r.passes and r.exit_code == 0
    assert [(c.holding, c.cases, c.verdict) for c in r.claims] == [(208, 208, "holds"), (208, 208, "holds")]
    assert "208/208 bit patterns equal" in r.claims[0].summary
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["kind"] == "proof" and written["result"] == r.report["result"]


def test_report_result_is_the_commands(source, command, tmp_path):
    bitproof.prove(source / FOLD, report=tmp_path / "py.json")
    subprocess.run([command, "prove", str(source / FOLD), "--backend", "cpu", "--report", str(tmp_path / "cli.json")],
                   check=True, capture_output=True)
    py = json.loads((tmp_path / "py.json").read_text())
    cli = json.loads((tmp_path / "cli.json").read_text())
    assert py["result"] == cli["result"]
    # and the command reads what Python wrote
    out = subprocess.run([command, "report", "verify", str(tmp_path / "py.json")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def refuted_spec(source, tmp_path):
    spec = json.loads((source / FOLD).read_text())
    spec["inputs"][1]["codes"] = {"range": [100, 160]}  # past the fold's edges
    for claim in spec["claims"]:
        claim.pop("expected_cases", None)
    path = tmp_path / "edges.json"
    path.write_text(json.dumps(spec))
    return path


def test_refuted_claims_carry_decoded_counterexamples(source, tmp_path):
    r = bitproof.prove(refuted_spec(source, tmp_path), keep=4)
    assert not r.passes and r.exit_code == 1
    c = r.claims[0]
    assert (c.holding, c.cases, c.verdict) == (282, 976, "refuted")
    assert len(c.counterexamples) == 4
    first = json.dumps(c.counterexamples[0])
    assert "0x0100" in first and "1.52587890625e-05" in first  # folded's bits and value, decoded


def test_verify_passes_and_catches_a_changed_result(source, tmp_path):
    report = tmp_path / "r.json"
    bitproof.prove(source / FOLD, report=report)
    v = bitproof.verify(report)
    assert v.passes and "verified" in v.headline
    data = json.loads(report.read_text())
    data["result"]["claims"][0]["holding"] = 207
    data["result"]["claims"][0]["failing"] = 1
    report.write_text(json.dumps(data))
    try:
        v = bitproof.verify(report)
    except bitproof.BadInput:
        return  # the report's own checks refuse it
    assert not v.passes


def test_errors_are_exceptions_with_the_exit_code(source, tmp_path):
    with pytest.raises(bitproof.BadInput) as e:
        bitproof.prove(tmp_path / "missing.json")
    assert e.value.exit_code == 2 and "missing.json" in e.value.message and "\n" not in e.value.message
    bad = tmp_path / "bad.json"
    bad.write_text('{"bitproof_spec": 1, "name": "x", "inputs": 3}')
    with pytest.raises(bitproof.BadInput, match="bad.json"):
        bitproof.prove(bad)
    with pytest.raises(bitproof.BadInput, match="backend"):
        bitproof.prove(source / FOLD, backend="tpu")
    # an output may never be an input: the spec is not overwritten
    before = (source / FOLD).read_bytes()
    with pytest.raises(bitproof.BadInput):
        bitproof.prove(source / FOLD, report=source / FOLD)
    assert (source / FOLD).read_bytes() == before
    with pytest.raises(bitproof.BadInput):
        bitproof.verify(tmp_path / "missing-report.json")


def test_cuda_is_backend_missing_or_agrees(source):
    try:
        r = bitproof.prove(source / FOLD, backend="cuda")
    except bitproof.BackendMissing as e:
        assert e.exit_code == 3
        return
    assert r.passes  # a GPU is here: the same claims hold
