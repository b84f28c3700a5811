"""bitproof from Python: the engine of the `bitproof` command (C++, module _bitproof) on
NumPy arrays and Python callables. docs/python.md has the guide.

    prove(spec, backend="cpu", report=None)  every claim of a proof spec, as `bitproof prove`
    verify(report)                           re-derive a report's result, as `bitproof report verify`
    ab(a, b, inputs=..., outputs=...)         two callables compared bit for bit on changing inputs
    compare(a, b) / assert_equal(a, b)        two arrays compared bit for bit

Errors are exceptions carrying the one line and the exit code the command gives:
BadInput (2), BackendMissing (3), ArmError (an arm raised: 2; wrote nothing: 1), all Error.
Nothing here prints; results print themselves (str()).
"""

import json as _json
import os as _os

from . import _bitproof

__all__ = ["Error", "BadInput", "BackendMissing", "ArmError", "prove", "verify", "table", "spec_cases", "ab", "compare",
           "assert_equal", "ProveResult", "Claim", "Verification", "AbResult", "Difference",
           "Comparison", "version"]

version = _bitproof.version


class Error(Exception):
    """A bitproof error: `message` is the line the command prints, `exit_code` its exit status."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class BadInput(Error):
    """Bad input (a spec, a report, an array, a declaration): exit code 2."""


class BackendMissing(Error):
    """The backend asked for is not here (no CUDA device, a module built without it): exit code 3."""


class ArmError(Error):
    """An A/B arm failed: it raised (exit 2, the exception is __cause__), changed an input (2),
    or left an output as bitproof poisoned it (wrote nothing: exit 1)."""


def _error(failure):
    message, code = failure.args
    if message.startswith("bitproof.ab: arm "):
        return ArmError(message, code)
    return {2: BadInput, 3: BackendMissing}.get(code, Error)(message, code)


def _path(value, what):
    if value is None:
        return ""
    value = _os.fspath(value)
    if not value:
        raise BadInput(f"{what}: an empty path", 2)
    return value


# ---- prove / verify ----

class Claim:
    """One claim's result: `summary` (the line `bitproof prove` prints), `holds`, `verdict`,
    `cases`, `holding`, `failing`, `by_kind`, and `counterexamples` (dicts: inputs, each
    recipe's bits and decoded value, the oracle's, as the report records them)."""

    def __init__(self, record):
        self.record = record
        for key in ("claim", "recipes", "summary", "holds", "verdict", "cases", "holding", "failing", "by_kind",
                    "counterexamples"):
            setattr(self, key, record.get(key))

    def __repr__(self):
        return f"<bitproof.Claim {self.summary!r}>"


class ProveResult:
    """What prove() found: `passes` (exit code 0), `exit_code`, `claims`, `report` (the report's
    JSON as a dict: what `--report` writes), `report_path` (None unless asked for)."""

    def __init__(self, exit_code, report, report_path):
        self.exit_code = exit_code
        self.passes = exit_code == 0
        self.report = report
        self.report_path = report_path
        self.claims = [Claim(c) for c in report["result"]["claims"]]

    def __bool__(self):
        return self.passes

    def __str__(self):
        return "\n".join(c.summary for c in self.claims)

    def __repr__(self):
        return f"<bitproof.ProveResult {'passes' if self.passes else 'fails'}: {len(self.claims)} claims>"


def prove(spec, backend="cpu", report=None, markdown=None, junit=None, keep=8, threads=0):
    """Proves every claim of the proof spec `spec` (a path) over its whole domain, as `bitproof
    prove SPEC --backend BACKEND` does; writes the report (and Markdown, JUnit) where asked, the
    same files the command writes. Returns a ProveResult; raises BadInput, BackendMissing."""
    try:
        code, text = _bitproof.prove(_path(spec, "spec"), backend, _path(report, "report"),
                                     _path(markdown, "markdown"), _path(junit, "junit"), keep, threads)
    except _bitproof.Failure as f:
        raise _error(f) from None
    return ProveResult(code, _json.loads(text), report)


class Verification:
    """What verify() found: `passes`, `headline` and `notes`, as `bitproof report verify` prints them."""

    def __init__(self, passes, headline, notes):
        self.passes, self.headline, self.notes = passes, headline, list(notes)

    def __bool__(self):
        return self.passes

    def __str__(self):
        return "\n".join([self.headline] + ["  " + n for n in self.notes])


def verify(report, spec_dir=None):
    """Re-derives a report's result (the recorded spec run again here) and compares, as
    `bitproof report verify REPORT` does. Returns a Verification; raises BadInput."""
    try:
        return Verification(*_bitproof.verify(_path(report, "report"), _path(spec_dir, "spec_dir")))
    except _bitproof.Failure as f:
        raise _error(f) from None


# ---- output tables ----

def spec_cases(spec):
    """Every case of a proof spec's domain, as `bitproof spec cases`: a dict of NumPy arrays of
    input codes by input name (uint8/16/32, the format's storage width), case n at index n."""
    import numpy as np
    try:
        columns, raw, _ = _bitproof.spec_cases(_path(spec, "spec"))
    except _bitproof.Failure as f:
        raise _error(f) from None
    cases = len(raw) // max(1, sum(width for _, _, width in columns))
    codes, at = {}, 0
    for name, _, width in columns:
        codes[name] = np.frombuffer(raw, dtype=f"<u{width}", count=cases, offset=at).copy()
        at += cases * width
    return codes


def table(spec, fn, backend="cpu", report=None, keep=8, threads=0):
    """Runs fn on every case of the proof spec `spec` and proves its claims with fn's outputs as
    the output tables of its table recipes (user recipes with "table": docs/user-recipes.md).
    fn(codes) gets spec_cases(spec) and returns the output bits of every case: one array of
    shape (cases,) (uint of the output's width, or float16 for an fp16 output: its bits), or a
    dict {recipe name: array} where several recipes read tables. The tables are written beside
    the report (REPORT.RECIPE.npy; the report names them relative to the spec's directory, so
    verify(report, spec_dir=<the spec's directory>) finds them) or to a temporary directory.
    Returns a ProveResult; raises BadInput (a wrong shape or dtype names the recipe)."""
    import tempfile
    import numpy as np
    try:
        columns, raw, recipes = _bitproof.spec_cases(_path(spec, "spec"))
    except _bitproof.Failure as f:
        raise _error(f) from None
    if not recipes:
        raise BadInput(f"{spec}: recipes: no recipe of this spec reads an output table (\"table\")", 2)
    codes = spec_cases(spec)
    cases = len(next(iter(codes.values())))
    out = fn(codes)
    if not isinstance(out, dict):
        if len(recipes) != 1:
            raise BadInput(f"{spec}: fn returned one array; the spec's table recipes are {recipes}: return a dict", 2)
        out = {recipes[0]: out}
    with tempfile.TemporaryDirectory() as scratch:
        base = (_os.fspath(report) + ".") if report else _os.path.join(scratch, "")
        tables = {}
        for name, array in out.items():
            if not isinstance(array, np.ndarray):
                raise BadInput(f"{name}: expected a NumPy array of {cases} output words, got {type(array).__name__}", 2)
            if array.shape != (cases,):
                raise BadInput(f"{name}: shape {array.shape}: the spec has {cases} cases: expected ({cases},)", 2)
            path = _os.path.abspath(f"{base}{name}.npy")
            np.save(path, np.ascontiguousarray(array))
            # as a spec names a table: relative to the spec's directory (the report records it so)
            tables[name] = _os.path.relpath(path, _os.path.dirname(_os.path.abspath(_os.fspath(spec))))
        try:
            code, text = _bitproof.prove_tables(_path(spec, "spec"), tables, backend, _path(report, "report"), keep,
                                                threads)
        except _bitproof.Failure as f:
            raise _error(f) from None
    return ProveResult(code, _json.loads(text), report)


# ---- arrays ----

class Comparison:
    """Two arrays compared bit for bit: `equal`, `elements`, `differing`, `first` (dicts: index,
    a and b with bits and decoded values)."""

    def __init__(self, record, names):
        self.record = record
        self.names = names
        self.elements = record["elements"]
        self.differing = record["differing"]
        self.equal = self.differing == 0
        self.first = record["first"]

    def __bool__(self):
        return self.equal

    def __str__(self):
        a, b = self.names
        if self.equal:
            return f"{a} and {b}: {self.elements}/{self.elements} {self.record['dtype']} elements bitwise equal"
        lines = [f"{a} and {b}: {self.differing} of {self.elements} {self.record['dtype']} elements differ"]
        for d in self.first:
            where = ", ".join(str(i) for i in d["index"])
            lines.append(f"  [{where}]: {a} {d['a']['decoded']}, {b} {d['b']['decoded']}")
        if self.differing > len(self.first):
            lines.append(f"  and {self.differing - len(self.first)} more")
        return "\n".join(lines)


def compare(a, b, names=("a", "b"), keep=3):
    """Compares two float16 or float32 arrays (C order, one shape) bit for bit: +0 and -0 differ,
    NaN payloads are compared. Returns a Comparison; raises BadInput naming the array."""
    try:
        return Comparison(_json.loads(_bitproof.compare(a, b, names[0], names[1], keep)), tuple(names))
    except _bitproof.Failure as f:
        raise _error(f) from None


def assert_equal(a, b, names=("a", "b"), keep=3):
    """compare(a, b), raising AssertionError with the first differences decoded unless equal."""
    __tracebackhide__ = True  # pytest shows the caller's line
    result = compare(a, b, names, keep)
    if not result.equal:
        raise AssertionError(str(result))
    return result


# ---- A/B of callables ----

class Difference:
    """One output element where the arms differ: `output`, `case`, `case_seed` (the activations'
    seed), `index` (row, col), `a_bits`, `b_bits` ("0x3c00") and `a_value`, `b_value` (the engine's
    decoding: "0x3C00 [0|01111|0000000000] 1")."""

    def __init__(self, d):
        self.output, self.case, self.case_seed = d["output"], d["case"], d["case_seed"]
        self.index = tuple(d["index"])
        self.a_bits, self.a_value = d["a"]["bits"], d["a"]["decoded"]
        self.b_bits, self.b_value = d["b"]["bits"], d["b"]["decoded"]

    def __str__(self):
        return (f"{self.output}[{self.index[0]}, {self.index[1]}] case {self.case} (seed {self.case_seed}): "
                f"a {self.a_value}, b {self.b_value}")


class AbResult:
    """What ab() found: `equal`, `cases`, `differing_cases`, `differing_elements`, `outputs`
    (per output: shape, each arm's SHA-256 over every case, counts) and `first_differences`."""

    def __init__(self, record, names):
        self.record = record
        self.names = names
        self.equal = record["equal"]
        self.cases = record["cases"]
        self.differing_cases = record["differing_cases"]
        self.differing_elements = record["differing_elements"]
        self.outputs = record["outputs"]
        self.first_differences = [Difference(d) for d in record["first_differences"]]

    def __bool__(self):
        return self.equal

    def __str__(self):
        a, b = self.names
        if self.equal:
            head = f"{a} vs {b}: bitwise equal on {self.cases}/{self.cases} cases"
        else:
            head = (f"{a} vs {b}: differ on {self.differing_cases} of {self.cases} cases "
                    f"({self.differing_elements} elements)")
        return "\n".join([head] + ["  " + str(d) for d in self.first_differences[:3]])


def _outputs_of(outputs):
    out = []
    for o in outputs:
        if isinstance(o, dict):
            out.append(o)
        elif isinstance(o, (tuple, list)) and len(o) == 2:
            out.append({"name": o[0], "shape": list(o[1])})
        else:
            raise BadInput(f"bitproof.ab: outputs: expected (name, shape) or {{name, shape}}, got {o!r}", 2)
    return out


def ab(a, b, inputs, outputs, cases=64, seed=1, checkpoint=None, keep=8, device="cpu", graph=False, name=None):
    """Runs the callables `a` and `b` on `cases` changing-input cases and compares every output
    bit for bit in C++. Each is called fn(inputs, outputs): dicts of NumPy arrays by name; it
    writes its results into the outputs' arrays (float16, bitproof's, poisoned with 0xFFFF
    before every call) and returns nothing. Inputs are declared as in A/B specs (dicts: name,
    role "activation" | "weight", dtype "f16" | "mxfp4", shape, values | scales | tensor); the
    same seed gives the same bits as `bitproof ab`. An mxfp4 input reaches the arm as `name`
    (packed E2M1 codes, uint8) and `name.scale` (UE8M0 bytes). `device`: "cpu" (NumPy);
    the GPU (torch, Triton, CUDA Graphs) is not in this module yet: BackendMissing.
    Returns an AbResult; raises BadInput, ArmError, BackendMissing."""
    if device != "cpu":
        raise BackendMissing(f"bitproof.ab: device: \"{device}\": this module runs arms on the cpu (NumPy) only", 3)
    if graph:
        raise BadInput("bitproof.ab: graph: CUDA Graph capture needs a GPU arm (device=\"cuda\")", 2)
    for arm, fn in (("a", a), ("b", b)):
        if not callable(fn):
            raise BadInput(f"bitproof.ab: arm {arm}: expected a callable fn(inputs, outputs), got {type(fn).__name__}",
                           2)
    declared = {"name": name or "python-ab", "seed": seed, "cases": cases,
                "checkpoint": _os.fspath(checkpoint) if checkpoint else "",
                "inputs": list(inputs), "outputs": _outputs_of(outputs)}
    try:
        text = _json.dumps(declared)
    except (TypeError, ValueError) as e:
        raise BadInput(f"bitproof.ab: the declarations are not JSON values: {e}", 2) from None
    raised = []

    def guard(fn):
        def call(ins, outs):
            try:
                fn(ins, outs)
            except BaseException as e:
                raised.append(e)
                raise
        call.__name__ = getattr(fn, "__name__", "callable")
        return call

    try:
        record = _bitproof.ab(guard(a), guard(b), text, keep, True)
    except _bitproof.Failure as f:
        raise _error(f) from (raised[0] if raised else None)
    return AbResult(_json.loads(record), (getattr(a, "__name__", "a"), getattr(b, "__name__", "b")))
