"""bitproof's pytest plugin: a `bitproof` fixture, reports collected per test, a summary line.

Loaded by its entry point (pytest11) where bitproof is installed, or with `-p bitproof.pytest_plugin`
(the build tree: PYTHONPATH=build/python). In a test:

    def test_gemv(bitproof):
        bitproof.assert_equal(mine(x), reference(x))          # AssertionError: the first difference, decoded
        r = bitproof.ab(fused, separate, inputs=[...], outputs=[("y", (1, 64))])
        assert r.equal, str(r)
        assert bitproof.prove("proofs/my-fold.json")

`--bitproof-reports DIR` writes, per test, DIR/<test>/: every prove() report (NAME.json), every
time() report (A-vs-B.time.json: what `bitproof report render|verify` read), and every ab() and
assert_equal() result (NAME.ab.json, NAME.compare.json: the records the objects hold).
At the end of the run one line sums the checks: how many were equal (or held) and how many not.
"""

import json
import os
import re

import pytest

import bitproof as _bp


class _Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.tests = set()
        self.reports = None  # the --bitproof-reports directory, or None


_tally = _Tally()


def _slug(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")[:120] or "test"


class Checker:
    """The `bitproof` fixture: bitproof's functions, counted and (with --bitproof-reports) recorded."""

    def __init__(self, nodeid):
        self._nodeid = nodeid
        self._names = {}

    def _dir(self):
        if _tally.reports is None:
            return None
        d = os.path.join(_tally.reports, _slug(self._nodeid))
        os.makedirs(d, exist_ok=True)
        return d

    def _file(self, stem, suffix):
        n = self._names.get(stem, 0)
        self._names[stem] = n + 1
        d = self._dir()
        return None if d is None else os.path.join(d, f"{_slug(stem)}{'' if n == 0 else f'-{n}'}{suffix}")

    def _count(self, ok):
        _tally.tests.add(self._nodeid)
        if ok:
            _tally.passed += 1
        else:
            _tally.failed += 1

    def _record(self, stem, suffix, record):
        path = self._file(stem, suffix)
        if path is not None:
            with open(path, "w") as f:
                json.dump(record, f, indent=2)
                f.write("\n")

    def prove(self, spec, **kwargs):
        if "report" not in kwargs:
            stem = os.path.splitext(os.path.basename(os.fspath(spec)))[0]
            kwargs["report"] = self._file(stem, ".json")
        result = _bp.prove(spec, **kwargs)
        self._count(result.passes)
        return result

    def ab(self, a, b, **kwargs):
        result = _bp.ab(a, b, **kwargs)
        self._count(result.equal)
        self._record(kwargs.get("name") or f"{result.names[0]}-vs-{result.names[1]}", ".ab.json", result.record)
        return result

    def time(self, a, b, **kwargs):
        if "report" not in kwargs:
            stem = kwargs.get("name") or f"{getattr(a, '__name__', 'a')}-vs-{getattr(b, '__name__', 'b')}"
            kwargs["report"] = self._file(stem, ".time.json")
        result = _bp.time(a, b, **kwargs)
        self._count(result.passes)
        return result

    def compare(self, a, b, names=("a", "b"), keep=3):
        result = _bp.compare(a, b, names, keep)
        self._count(result.equal)
        self._record(f"{names[0]}-vs-{names[1]}", ".compare.json", result.record)
        return result

    def assert_equal(self, a, b, names=("a", "b"), keep=3):
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        result = self.compare(a, b, names, keep)
        if not result.equal:
            raise AssertionError(str(result))
        return result

    verify = staticmethod(_bp.verify)


def pytest_addoption(parser):
    group = parser.getgroup("bitproof")
    group.addoption("--bitproof-reports", metavar="DIR", default=None,
                    help="write each test's bitproof reports and results under DIR/<test>/")


def pytest_configure(config):
    reports = config.getoption("--bitproof-reports")
    _tally.__init__()
    if reports:
        _tally.reports = os.path.abspath(reports)
        os.makedirs(_tally.reports, exist_ok=True)


@pytest.fixture
def bitproof(request):
    """bitproof's checks (assert_equal, compare, ab, time, prove, verify), counted for the summary line."""
    return Checker(request.node.nodeid)


def pytest_terminal_summary(terminalreporter):
    if not _tally.tests:
        return
    line = (f"bitproof: {_tally.passed + _tally.failed} checks in {len(_tally.tests)} tests: "
            f"{_tally.passed} equal or held, {_tally.failed} not")
    if _tally.reports is not None:
        line += f"; reports in {_tally.reports}"
    terminalreporter.write_line(line, red=_tally.failed > 0, green=_tally.failed == 0)
