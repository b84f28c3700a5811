# The pytest plugin on a small test file, in a pytest of its own (a subprocess): one test passes,
# one fails; the failure text, the summary line and the reports collected per test are checked.
import os
import pathlib
import subprocess
import sys

SAMPLE = '''
import numpy as np

def test_same(bitproof):
    a = np.linspace(-1, 1, 16, dtype=np.float16)
    bitproof.assert_equal(a, a.copy(), names=("kernel", "reference"))

def test_off_by_one_ulp(bitproof):
    a = np.linspace(-1, 1, 16, dtype=np.float16)
    b = a.copy()
    b.view(np.uint16)[5] += 1
    bitproof.assert_equal(b, a, names=("kernel", "reference"))
'''


def test_plugin_summary_failure_text_and_reports(tmp_path):
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    reports = tmp_path / "reports"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "bitproof.pytest_plugin", "-p", "no:cacheprovider",
                          "--bitproof-reports", str(reports), "test_sample.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "1 failed, 1 passed" in text
    assert "AssertionError: kernel and reference: 1 of 16 float16 elements differ" in text
    assert "[5]: kernel 0x" in text and ", reference 0x" in text
    assert f"bitproof: 2 checks in 2 tests: 1 equal or held, 1 not; reports in {reports}" in text
    written = sorted(p.relative_to(reports).as_posix() for p in reports.rglob("*.json"))
    assert written == ["test_sample.py_test_off_by_one_ulp/kernel-vs-reference.compare.json",
                       "test_sample.py_test_same/kernel-vs-reference.compare.json"], written
