"""bitproof from Python: the engine of the `bitproof` command (C++, module _bitproof) on
NumPy arrays and Python callables. docs/python.md has the guide.

    prove(spec, backend="cpu", report=None)  every claim of a proof spec, as `bitproof prove`
    verify(report)                           re-derive a report's result, as `bitproof report verify`
    ab(a, b, inputs=..., outputs=...)         two callables compared bit for bit on changing inputs
                                             (NumPy on the cpu; torch/Triton on the GPU: device="cuda")
    time(a, b, inputs=..., outputs=...)       the timing gate on two GPU callables, as `bitproof time`
    ptx(kernel, grid=..., args=..., path=...) a compiled Triton kernel as a kernel arm's stage
    compare(a, b) / assert_equal(a, b)        two arrays compared bit for bit

Errors are exceptions carrying the one line and the exit code the command gives:
BadInput (2), BackendMissing (3), ArmError (an arm raised: 2; wrote nothing: 1), all Error.
Nothing here prints; results print themselves (str()).
"""

import json as _json
import os as _os

from . import _bitproof

__all__ = ["Error", "BadInput", "BackendMissing", "ArmError", "prove", "verify", "table", "spec_cases", "ab", "time",
           "ptx", "compare", "assert_equal", "ProveResult", "Claim", "Verification", "AbResult", "Difference",
           "TimeResult", "PtxStage", "Comparison", "version"]

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
    """An A/B or timed arm failed: it raised (exit 2, the exception is __cause__), changed an
    input (2), or left an output as bitproof poisoned it (wrote nothing: exit 1)."""


def _error(failure):
    message, code = failure.args
    if message.startswith(("bitproof.ab: arm ", "bitproof.time: arm ")):
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


def _declarations(what, a, b, inputs, outputs, cases, seed, checkpoint, name):
    for arm, fn in (("a", a), ("b", b)):
        if not callable(fn):
            raise BadInput(f"{what}: arm {arm}: expected a callable fn(inputs, outputs), got {type(fn).__name__}", 2)
    declared = {"name": name or "python-ab", "seed": seed, "cases": cases,
                "checkpoint": _os.fspath(checkpoint) if checkpoint else "",
                "inputs": list(inputs), "outputs": _outputs_of(outputs)}
    try:
        return declared, _json.dumps(declared)
    except (TypeError, ValueError) as e:
        raise BadInput(f"{what}: the declarations are not JSON values: {e}", 2) from None


def _guarded(fn, raised):
    """fn, recording what it raises (the ArmError's __cause__)."""
    def call(ins, outs):
        try:
            fn(ins, outs)
        except BaseException as e:
            raised.append(e)
            raise
    call.__name__ = getattr(fn, "__name__", "callable")
    return call


def _name(fn, default):
    return getattr(fn, "__name__", default)


# ---- the GPU: torch tensors, CUDA Graphs ----

def _torch(what):
    """torch with a CUDA device, or BackendMissing (exit 3)."""
    try:
        import torch
    except ImportError:
        raise BackendMissing(f"{what}: device: \"cuda\": needs PyTorch (import torch failed here): the arms' tensors "
                             "are torch CUDA tensors", 3) from None
    if not torch.cuda.is_available():
        raise BackendMissing(f"{what}: device: \"cuda\": no CUDA device (torch.cuda.is_available() is False)", 3)
    return torch


class _DeviceArm:
    """One arm on the GPU (cuda:0): its own tensors, one per key of the layout the engine gives
    (bitproof writes the inputs and the poison through DLPack and reads the outputs back), and
    with graph=True its own CUDA Graph, captured once in prepare() and replayed by call()."""

    def __init__(self, torch, fn, layout, graph):
        self.torch, self.fn, self.graph = torch, fn, graph
        dtypes = {"float16": torch.float16, "uint8": torch.uint8}
        self.tensors = {key: torch.empty((rows, cols), dtype=dtypes[dtype], device="cuda:0")
                        for key, dtype, rows, cols, _ in layout}
        self.inputs = {key: self.tensors[key] for key, _, _, _, out in layout if not out}
        self.outputs = {key: self.tensors[key] for key, _, _, _, out in layout if out}
        self._graph = None

    def _run(self):
        self.fn(dict(self.inputs), dict(self.outputs))  # fresh dicts: a rebinding arm changes none of ours

    def prepare(self):
        if not self.graph:
            return
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self._run()  # warm-up before the capture: Triton compiles, torch's allocator fills its pool
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # captured on torch's side stream, into the graph's own memory pool
            self._run()
        self._graph = graph

    def call(self):
        if self._graph is not None:
            self._graph.replay()
        else:
            self._run()


def ab(a, b, inputs, outputs, cases=64, seed=1, checkpoint=None, keep=8, device="cpu", graph=None, name=None):
    """Runs the callables `a` and `b` on `cases` changing-input cases and compares every output
    bit for bit in C++. Each is called fn(inputs, outputs): dicts of arrays by name; it writes
    its results into the outputs' arrays (float16, bitproof's, poisoned with 0xFFFF before every
    call) and returns nothing. Inputs are declared as in A/B specs (dicts: name, role
    "activation" | "weight", dtype "f16" | "mxfp4", shape, values | scales | tensor); the same
    seed gives the same bits as `bitproof ab`. An mxfp4 input reaches the arm as `name` (packed
    E2M1 codes, uint8) and `name.scale` (UE8M0 bytes).
    `device`: "cpu" (NumPy arrays) or "cuda" (torch CUDA tensors on cuda:0, each arm its own;
    `graph` (default True there) captures each arm once in its own CUDA Graph and replays it
    for every case). Returns an AbResult; raises BadInput, ArmError, BackendMissing."""
    if device not in ("cpu", "cuda"):
        raise BadInput(f"bitproof.ab: device: \"{device}\": expected \"cpu\" (NumPy) or \"cuda\" (torch)", 2)
    if graph is None:
        graph = device == "cuda"
    if graph and device != "cuda":
        raise BadInput("bitproof.ab: graph: CUDA Graph capture needs a GPU arm (device=\"cuda\")", 2)
    _, text = _declarations("bitproof.ab", a, b, inputs, outputs, cases, seed, checkpoint, name)
    names = (_name(a, "a"), _name(b, "b"))
    raised = []
    if device == "cpu":
        try:
            record = _bitproof.ab(_guarded(a, raised), _guarded(b, raised), text, keep, True)
        except _bitproof.Failure as f:
            raise _error(f) from (raised[0] if raised else None)
        return AbResult(_json.loads(record), names)
    try:
        layout = _bitproof.layout(text)  # the declarations checked before anything needs a GPU
    except _bitproof.Failure as f:
        raise _error(f) from None
    torch = _torch("bitproof.ab")
    arms = [(names[i], _DeviceArm(torch, _guarded(fn, raised), layout, bool(graph))) for i, fn in enumerate((a, b))]
    try:
        record, device_json = _bitproof.device_ab(arms, text, keep)
    except _bitproof.Failure as f:
        raise _error(f) from (raised[0] if raised else None)
    result = AbResult(_json.loads(record), names)
    result.device = _json.loads(device_json)
    result.graph = bool(graph)
    return result


# ---- the timing gate ----

class TimeResult:
    """What time() measured, as `bitproof time` reports it: `passes` (the claim's judgement, or
    True without a claim), `verdict` ("same", "faster", "slower", "order-dependent",
    "ambiguous": B against A), `sentence`, `ratio` (median B / median A) and `interval` (its 95 %
    bootstrap interval), `claim` (text, passes, why) or None, `report` (the time report as a
    dict: what `bitproof report render|verify` read), `report_path`, `lines` (the summary)."""

    def __init__(self, passes, report, lines, report_path):
        self.passes = passes
        self.report = report
        self.report_path = report_path
        self.lines = list(lines)
        run = report["result"]["run"]
        self.verdict = run["verdict"]
        self.sentence = run["sentence"]
        self.ratio = run["statistics"]["ratio"]
        self.interval = tuple(run["statistics"]["interval"])
        self.claim = report["result"]["claim"]

    def __bool__(self):
        return self.passes

    def __str__(self):
        return "\n".join(self.lines)


def time(a, b, inputs, outputs, claim=None, graph=True, device="cuda", calibrate=False, report=None, markdown=None,
         cache="cold", order="abba", min_samples=50, max_samples=2000, noise=0.5, min_time=1.0, timeout=20.0,
         same_within=1.0, seed=1, checkpoint=None, name=None, user_timeout=60.0):
    """The timing gate (docs/timing.md) on two GPU callables fn(inputs, outputs), declared as for
    ab(): each arm gets its own inputs (the weights and case 0's activations, made by the
    engine), its own stream and, with graph=True, its own CUDA Graph; each is warmed on its own
    until its times settle; samples run in counterbalanced blocks (A B B A, B A A B), one replay
    each, timed with CUDA events behind a blocking kernel, the L2 flushed before each
    (cache="cold"), the SM clock checked after it (throttled samples are marked and left out).
    Statistics, verdict and `claim` ("b faster by 5%", "a slower by 10%", "same within 2%"; arms
    by letter or function name) are `bitproof time`'s code. Writes the `time` report (and its
    Markdown) where asked. Returns a TimeResult (bool: the claim passes); raises BadInput
    (device="cpu": there is no GPU work to time), BackendMissing (no torch or no GPU), ArmError."""
    if device != "cuda":
        raise BadInput(f"bitproof.time: device: \"{device}\": the timing gate times GPU work with CUDA events "
                       "(device=\"cuda\"); on the cpu there is nothing it can time", 2)
    declared, text = _declarations("bitproof.time", a, b, inputs, outputs, 1, seed, checkpoint, name)
    names = [_name(a, "a"), _name(b, "b")]
    options = {"cache": cache, "order": order, "min_samples": min_samples, "max_samples": max_samples,
               "noise": noise, "min_time": min_time, "timeout": timeout, "same_within": same_within, "seed": seed,
               "calibrate": bool(calibrate), "user_timeout": user_timeout, "claim": claim,
               "spec": {"name": name or f"{names[0]}-vs-{names[1]}",
                        "python": {"arms": names, "graph": bool(graph), "inputs": declared["inputs"],
                                   "outputs": declared["outputs"], "seed": seed,
                                   "checkpoint": declared["checkpoint"]}}}
    try:
        layout = _bitproof.layout(text)
        if claim is not None:
            if not isinstance(claim, str):
                raise BadInput(f"bitproof.time: claim: expected a string, got {type(claim).__name__}", 2)
            _bitproof.check_claim(claim, names)
        options_text = _json.dumps(options)
    except _bitproof.Failure as f:
        raise _error(f) from None
    except (TypeError, ValueError) as e:
        raise BadInput(f"bitproof.time: the options are not JSON values: {e}", 2) from None
    torch = _torch("bitproof.time")
    try:
        host = _bitproof.inputs(text, 0)
    except _bitproof.Failure as f:
        raise _error(f) from None
    raised, made = [], []

    def new_arm(i):
        arm = _DeviceArm(torch, _guarded((a, b)[i], raised), layout, bool(graph))
        stream = torch.cuda.Stream()
        made.append((arm, stream))  # alive until the run ends

        def prepare():  # the arm's own copies of the inputs, then its graph
            with torch.cuda.stream(stream):
                for key, tensor in arm.inputs.items():
                    tensor.copy_(torch.from_numpy(host[key]))
                arm.prepare()
            torch.cuda.synchronize()

        def enqueue():
            with torch.cuda.stream(stream):
                arm.call()
        return stream.cuda_stream, prepare, enqueue

    try:
        passes, record = _bitproof.time(new_arm, names, options_text, _path(report, "report"),
                                        _path(markdown, "markdown"))
    except _bitproof.Failure as f:
        raise _error(f) from (raised[0] if raised else None)
    return TimeResult(passes, _json.loads(record), _bitproof.time_lines(record), report)


# ---- Triton kernels as kernel arms ----

class PtxStage:
    """What ptx() wrote: `ptx_path`, `stage_path`, `fragment` (the dict in the stage file:
    "kernels" for the A/B spec's kernels and "stage" for an arm's stages), `parameters` (the PTX
    entry's count), `executor` ("reads it", or why bitproof's PTX executor, the CPU backend of
    kernel arms, cannot run it yet: then only --backend cuda runs the arm)."""

    def __init__(self, record, ptx_path, stage_path):
        self.fragment = record["fragment"]
        self.parameters = record["parameters"]
        self.executor = record["executor"]
        self.ptx_path, self.stage_path = ptx_path, stage_path

    def __str__(self):
        s = self.fragment["stage"]
        return (f"{self.ptx_path}: kernel {s['kernel']}, grid {s['grid']}, block {s['block']}, "
                f"{s['shared_bytes']} bytes shared; stage in {self.stage_path}")


def _meta(metadata, key, default=None):
    if isinstance(metadata, dict):
        return metadata.get(key, default)
    return getattr(metadata, key, default)


def ptx(kernel, grid, args, path, stage=None, trailing=2):
    """Writes the PTX of a compiled Triton kernel (what `kernel[grid](...)` returns, or
    `kernel.warmup(...)`; any object with asm["ptx"] and metadata name, num_warps, shared) to
    `path`, and beside it (`stage`, default PATH without .ptx + ".stage.json") the kernel-arm
    stage that launches it as Triton does: grid, block = num_warps × 32, the dynamic shared
    memory, `args` (kernel-arm arguments, one per PTX parameter Triton kept: {"tensor": n},
    {"output": n}, {"joined": [...]}, {"u32": v}, ...), then the `trailing` pointer parameters
    Triton 3.6 appends (global and profile scratch) as null, refused where the kernel needs
    scratch memory. Returns a PtxStage; raises BadInput naming the field."""
    asm = getattr(kernel, "asm", None)
    text = asm.get("ptx") if hasattr(asm, "get") else None
    if text is None:
        raise BadInput(f"bitproof.ptx: kernel: expected a compiled Triton kernel with asm[\"ptx\"] (kernel[grid](...) "
                       f"returns one), got {type(kernel).__name__}", 2)
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    metadata = getattr(kernel, "metadata", None)
    launch = {"kernel": _meta(metadata, "name"), "num_warps": _meta(metadata, "num_warps"),
              "shared": _meta(metadata, "shared", 0),
              "scratch_bytes": [_meta(metadata, "global_scratch_size", 0), _meta(metadata, "profile_scratch_size", 0)],
              "trailing": trailing, "args": list(args),
              "grid": [grid] if isinstance(grid, int) else list(grid)}
    for key in ("kernel", "num_warps"):
        if launch[key] is None:
            raise BadInput(f"bitproof.ptx: kernel.metadata: no \"{'name' if key == 'kernel' else key}\"", 2)
    ptx_path = _path(path, "path")
    stage_path = _path(stage, "stage") if stage is not None else _os.path.splitext(ptx_path)[0] + ".stage.json"
    launch["ptx_file"] = _os.path.relpath(_os.path.abspath(ptx_path), _os.path.dirname(_os.path.abspath(stage_path)))
    try:
        record = _bitproof.ptx_stage(text, _json.dumps(launch), ptx_path, stage_path)
    except _bitproof.Failure as f:
        raise _error(f) from None
    except (TypeError, ValueError) as e:
        raise BadInput(f"bitproof.ptx: the launch is not JSON values: {e}", 2) from None
    return PtxStage(_json.loads(record), ptx_path, stage_path)
