# The GPU half of `import bitproof` (issue 49) where there is no GPU: argument errors of ab(device="cuda")
# and time(), ptx() on a stand-in for Triton's compiled kernel, and the engine's device runner (the one
# device="cuda" uses: tensors by DLPack, poison, input checks) driven with NumPy arrays (DLPack kDLCPU).
# tests/gpu/python_cuda.py runs the same on the GPU with torch and Triton.
import json
import subprocess

import numpy as np
import pytest

import bitproof
from bitproof import _bitproof
from gemv import INPUTS, OUTPUTS, gemv_blocked, gemv_broken, gemv_rowwise


def cuda_torch():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


no_gpu = pytest.mark.skipif(cuda_torch(), reason="torch with a CUDA device is here: tests/gpu/python_cuda.py")


# ---- ab(device=...) and time(): the refusals before any GPU work ----

@no_gpu
def test_ab_on_cuda_without_a_gpu_is_backend_missing():
    with pytest.raises(bitproof.BackendMissing, match='device: "cuda"') as e:
        bitproof.ab(gemv_rowwise, gemv_rowwise, inputs=INPUTS, outputs=OUTPUTS, cases=2, device="cuda")
    assert e.value.exit_code == 3


def test_ab_checks_declarations_before_it_needs_a_gpu():
    bad = [dict(INPUTS[0], dtype="f32"), INPUTS[1]]
    with pytest.raises(bitproof.BadInput, match=r"inputs\[0\]\.dtype") as e:
        bitproof.ab(gemv_rowwise, gemv_rowwise, inputs=bad, outputs=OUTPUTS, cases=2, device="cuda")
    assert e.value.exit_code == 2


def test_ab_device_and_graph_arguments():
    with pytest.raises(bitproof.BadInput, match='device: "tpu"'):
        bitproof.ab(gemv_rowwise, gemv_rowwise, inputs=INPUTS, outputs=OUTPUTS, device="tpu")
    with pytest.raises(bitproof.BadInput, match="graph") as e:
        bitproof.ab(gemv_rowwise, gemv_rowwise, inputs=INPUTS, outputs=OUTPUTS, device="cpu", graph=True)
    assert e.value.exit_code == 2


def test_time_refuses_the_cpu_with_a_clear_message():
    with pytest.raises(bitproof.BadInput, match="nothing it can time") as e:
        bitproof.time(gemv_rowwise, gemv_rowwise, inputs=INPUTS, outputs=OUTPUTS, device="cpu")
    assert e.value.exit_code == 2


@no_gpu
def test_time_without_a_gpu_is_backend_missing():
    with pytest.raises(bitproof.BackendMissing) as e:
        bitproof.time(gemv_rowwise, gemv_blocked, inputs=INPUTS, outputs=OUTPUTS, claim="b faster by 5%")
    assert e.value.exit_code == 3


def test_time_checks_its_claim_and_options_first():
    with pytest.raises(bitproof.BadInput, match="claim: .*no arm \"c\""):
        bitproof.time(gemv_rowwise, gemv_blocked, inputs=INPUTS, outputs=OUTPUTS, claim="c faster by 5%")
    with pytest.raises(bitproof.BadInput, match="claim"):
        bitproof.time(gemv_rowwise, gemv_blocked, inputs=INPUTS, outputs=OUTPUTS, claim="b faster by lots")
    with pytest.raises(bitproof.BadInput, match="arm b"):
        bitproof.time(gemv_rowwise, None, inputs=INPUTS, outputs=OUTPUTS)
    with pytest.raises(bitproof.BadInput, match=r"outputs\[0\]"):
        bitproof.time(gemv_rowwise, gemv_blocked, inputs=INPUTS, outputs=[("y", (0, 4))])


# ---- ptx(): a stand-in for Triton's CompiledKernel ----

class Compiled:
    """What Triton 3.6's kernel[grid](...) returns, as far as ptx() reads it."""

    class Metadata:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    def __init__(self, text, **meta):
        self.asm = {"ptx": text, "cubin": b"\x7fELF"}
        defaults = dict(name="copy_kernel", num_warps=4, shared=0, global_scratch_size=0, profile_scratch_size=0)
        defaults.update(meta)
        self.metadata = Compiled.Metadata(**defaults)


@pytest.fixture
def copy_ptx(source):
    return (source / "tests/python/data/triton_copy.ptx").read_text()


COPY_ARGS = [{"tensor": "x"}, {"output": "y"}, {"u32": 256}]


def test_ptx_writes_the_kernel_and_its_stage(copy_ptx, tmp_path):
    s = bitproof.ptx(Compiled(copy_ptx, shared=1024), grid=(2,), args=COPY_ARGS, path=tmp_path / "copy.ptx")
    assert (tmp_path / "copy.ptx").read_text() == copy_ptx
    written = json.loads((tmp_path / "copy.stage.json").read_text())
    assert written == s.fragment
    assert s.fragment["kernels"] == {"ptx": ["copy.ptx"]}
    st = s.fragment["stage"]
    assert st["kernel"] == "copy_kernel" and st["grid"] == [2] and st["block"] == [128] and st["shared_bytes"] == 1024
    assert st["args"] == COPY_ARGS + [{"u64": 0}, {"u64": 0}]  # Triton's two scratch pointers, null
    assert s.parameters == 5 and s.executor == "reads it"


def test_ptx_refusals_name_the_field(copy_ptx, tmp_path):
    path = tmp_path / "k.ptx"
    cases = [
        (Compiled(copy_ptx), COPY_ARGS[:2], r"args: 2 given \+ 2 trailing .*has 5 parameters \(copy_kernel_param_0"),
        (Compiled(copy_ptx), [{"u32": 1}] + COPY_ARGS[1:], r"args\[0\]: takes 4 bytes; the PTX parameter copy_kernel_param_0 has 8"),
        (Compiled(copy_ptx, global_scratch_size=128), COPY_ARGS, "scratch memory"),
        (Compiled(copy_ptx, shared=65536), COPY_ARGS, "shared: 65536 bytes"),
        (Compiled(copy_ptx, num_warps=64), COPY_ARGS, "num_warps"),
        (Compiled(copy_ptx, name="other"), COPY_ARGS, 'kernel: "other": no .entry'),
        (Compiled("not ptx"), COPY_ARGS, "no PTX"),
        (Compiled(copy_ptx), [{"tensor": "x"}, {"outptu": "y"}, {"u32": 256}], r"args\[1\]\.outptu: unknown key"),
        (object(), COPY_ARGS, 'asm\\["ptx"\\]'),
    ]
    for kernel, args, message in cases:
        with pytest.raises(bitproof.BadInput, match=message) as e:
            bitproof.ptx(kernel, grid=2, args=args, path=path)
        assert e.value.exit_code == 2
        assert not path.exists()  # nothing written
    hostile = [  # parameter lists a scanner might misread: refused, never a crash or a wrong size
        (copy_ptx.replace(")\n{", "\n{", 1), "does not end|is not read"),
        (copy_ptx.replace(".param .u32 copy_kernel_param_2", ".param .align 4 .b8 copy_kernel_param_2[4]"),
         "is not read"),
        (copy_ptx.replace(".param .u32 copy_kernel_param_2", ".param copy_kernel_param_2"), "is not read"),
        (copy_ptx.replace(".entry copy_kernel(", ".entry copy_kernel_v2("), "no .entry"),
    ]
    for text, message in hostile:
        with pytest.raises(bitproof.BadInput, match=message):
            bitproof.ptx(Compiled(text), grid=2, args=COPY_ARGS, path=path)
        assert not path.exists()
    with pytest.raises(bitproof.BadInput, match=r"grid\[1\]"):
        bitproof.ptx(Compiled(copy_ptx), grid=(1, 70000), args=COPY_ARGS, path=path)


def test_the_stage_runs_as_a_kernel_arm(copy_ptx, tmp_path, command):
    """The fragment in an A/B spec: block 128 × grid 2 against block 64 × grid 4 copy the same 256
    words (equal, exit 0); a grid of 1 block leaves half of y unwritten (exit 2, named)."""
    a = bitproof.ptx(Compiled(copy_ptx, num_warps=4), grid=2, args=COPY_ARGS, path=tmp_path / "copy.ptx")
    b = bitproof.ptx(Compiled(copy_ptx, num_warps=2), grid=4, args=COPY_ARGS, path=tmp_path / "copy.ptx",
                     stage=tmp_path / "copy64.stage.json")
    short = bitproof.ptx(Compiled(copy_ptx, num_warps=2), grid=1, args=COPY_ARGS, path=tmp_path / "copy.ptx",
                         stage=tmp_path / "short.stage.json")

    def spec(arm_b):
        return {"bitproof_ab": 1, "name": "triton-copy", "seed": 3, "cases": 2,
                "inputs": [{"name": "x", "role": "activation", "dtype": "f16", "shape": [1, 256],
                            "values": {"uniform": [-1, 1]}}],
                "kernels": a.fragment["kernels"],
                "outputs": [{"name": "y", "dtype": "f16", "shape": [1, 256]}],
                "arms": [{"name": "wide", "stages": [a.fragment["stage"]]},
                         {"name": "narrow", "stages": [arm_b.fragment["stage"]]}],
                "expect": "equal"}

    (tmp_path / "ab.json").write_text(json.dumps(spec(b)))
    r = subprocess.run([command, "ab", str(tmp_path / "ab.json"), "--backend", "cpu"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (tmp_path / "short.json").write_text(json.dumps(spec(short)))
    r = subprocess.run([command, "ab", str(tmp_path / "short.json"), "--backend", "cpu"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and "y" in r.stderr, r.stdout + r.stderr


# ---- the device runner (device="cuda"'s engine half) with NumPy tensors through DLPack ----

class NumpyArm:
    """An adapter as python/bitproof's _DeviceArm is, over NumPy arrays (DLPack kDLCPU)."""

    def __init__(self, fn, layout, prepare=None):
        self.fn = fn
        self.tensors = {k: np.zeros((r, c), dtype=d) for k, d, r, c, _ in layout}
        self.inputs = {k: self.tensors[k] for k, _, _, _, out in layout if not out}
        self.outputs = {k: self.tensors[k] for k, _, _, _, out in layout if out}
        self._prepare = prepare
        self.calls = 0

    def prepare(self):
        if self._prepare:
            self._prepare(self)

    def call(self):
        self.calls += 1
        self.fn(dict(self.inputs), dict(self.outputs))


def declarations(cases=4, seed=1):
    return json.dumps({"name": "dlpack", "seed": seed, "cases": cases, "checkpoint": "", "inputs": INPUTS,
                       "outputs": [{"name": "y", "shape": [1, 32]}]})


def device_ab(a, b, cases=4, keep=8, prepare=None):
    text = declarations(cases)
    layout = _bitproof.layout(text)
    arms = [("a", NumpyArm(a, layout, prepare)), ("b", NumpyArm(b, layout))]
    record, device = _bitproof.device_ab(arms, text, keep)
    return json.loads(record), arms


def test_the_device_runner_gives_the_cpu_paths_bits():
    record, _ = device_ab(gemv_rowwise, gemv_blocked)
    assert record["equal"] and record["cases"] == 4
    cpu = bitproof.ab(gemv_rowwise, gemv_blocked, inputs=INPUTS, outputs=OUTPUTS, cases=4, seed=1)
    assert record["outputs"][0]["sha256"] == cpu.outputs[0]["sha256"]  # the same inputs, written through DLPack


def test_the_device_runner_decodes_differences():
    record, _ = device_ab(gemv_rowwise, gemv_broken)
    assert not record["equal"] and record["first_differences"][0]["index"][1] % 7 == 0


def test_the_device_runner_poisons_every_call():
    with pytest.raises(_bitproof.Failure, match="still holds the poison") as e:
        device_ab(gemv_rowwise, lambda i, o: None)
    assert e.value.args[1] == 1
    # an arm whose prepare() (the graph capture's warm-up) wrote y, and whose call() writes nothing
    with pytest.raises(_bitproof.Failure, match='arm a .*still holds the poison'):
        device_ab(lambda i, o: None, gemv_rowwise, prepare=lambda arm: gemv_rowwise(arm.inputs, arm.outputs))

    def half(inputs, outputs):  # writes y[0, :16] only: the rest holds whatever fill was there
        full = {"y": np.empty_like(outputs["y"])}
        gemv_rowwise(inputs, full)
        outputs["y"][0, :16] = full["y"][0, :16]

    with pytest.raises(_bitproof.Failure, match=r'output "y"\[0\]\[16\]'):
        device_ab(half, gemv_rowwise)


def test_the_device_runner_refuses_changed_inputs():
    def bump_x(inputs, outputs):
        gemv_rowwise(inputs, outputs)
        inputs["x"][0, 0] += 1

    with pytest.raises(_bitproof.Failure, match='arm b .*changed the input "x"'):
        device_ab(gemv_rowwise, bump_x)

    def bump_w(inputs, outputs):
        gemv_rowwise(inputs, outputs)
        inputs["w"][3, 3] += 1

    with pytest.raises(_bitproof.Failure, match='arm a .*changed the weight "w"'):
        device_ab(bump_w, gemv_rowwise)


def test_the_device_runner_checks_the_tensors():
    text = declarations()
    layout = _bitproof.layout(text)
    assert layout == [("x", "float16", 1, 64, False), ("w", "float16", 32, 64, False), ("y", "float16", 1, 32, True)]
    good = NumpyArm(gemv_rowwise, layout)
    for key, wrong, message in [("y", np.zeros((1, 32), np.float32), "dtype"),
                                ("w", np.zeros((32, 63), np.float16), r"shape \(32, 63\)"),
                                ("x", np.zeros((64, 1), np.float16)[::2], "shape|contiguous"),
                                ("x", "not a tensor", "__dlpack__")]:
        bad = NumpyArm(gemv_rowwise, layout)
        bad.tensors[key] = wrong
        with pytest.raises(_bitproof.Failure, match=rf'arm b \("b"\): tensors\["{key}"\]: .*({message})'):
            _bitproof.device_ab([("a", good), ("b", bad)], text, 8)
    missing = NumpyArm(gemv_rowwise, layout)
    del missing.tensors["w"]
    with pytest.raises(_bitproof.Failure, match='no tensor "w"'):
        _bitproof.device_ab([("a", good), ("b", missing)], text, 8)


def test_the_mxfp4_layout_and_inputs():
    decl = json.dumps({"name": "m", "seed": 1, "cases": 1, "checkpoint": "",
                       "inputs": [{"name": "w", "role": "weight", "dtype": "mxfp4", "shape": [4, 64],
                                   "scales": {"range": [118, 122]}}],
                       "outputs": [{"name": "y", "shape": [1, 4]}]})
    assert _bitproof.layout(decl) == [("w", "uint8", 4, 32, False), ("w.scale", "uint8", 4, 2, False),
                                      ("y", "float16", 1, 4, True)]
    host = _bitproof.inputs(decl, 0)
    assert host["w"].shape == (4, 32) and host["w.scale"].dtype == np.uint8
    assert 118 <= host["w.scale"].min() and host["w.scale"].max() <= 122


# ---- ab(device="cuda")'s package half with a stand-in for torch (NumPy tensors, graphs as recorded work) ----

class FakeTorch:
    """The few torch names python/bitproof uses for device="cuda": tensors are NumPy arrays (DLPack kDLCPU),
    a CUDA Graph records the work launched through launch() while it captures and replays it."""
    float16, uint8 = np.float16, np.uint8
    capturing = None

    def __init__(self):
        self.cuda = self

    @staticmethod
    def empty(shape, dtype, device):
        assert device == "cuda:0"
        return np.empty(shape, dtype)

    def launch(self, work):  # what a kernel launch is to a graph: recorded while capturing, else run
        if self.capturing is not None:
            self.capturing.work.append(work)
        else:
            work()

    # torch.cuda
    def is_available(self):
        return True

    class Stream:
        cuda_stream = 0

        def wait_stream(self, other):
            pass

    def current_stream(self):
        return FakeTorch.Stream()

    def stream(self, s):
        import contextlib
        return contextlib.nullcontext()

    def synchronize(self):
        pass

    class CUDAGraph:
        def __init__(self):
            self.work = []

        def replay(self):
            for w in self.work:
                w()

    def graph(self, g):
        import contextlib
        fake = self

        @contextlib.contextmanager
        def capture():
            fake.capturing = g
            try:
                yield
            finally:
                fake.capturing = None
        return capture()


@pytest.fixture
def fake_torch(monkeypatch):
    fake = FakeTorch()
    monkeypatch.setattr(bitproof, "_torch", lambda what: fake)
    return fake


def launched(fake, fn, calls):
    def arm(inputs, outputs):
        calls.append(1)
        fake.launch(lambda: fn(inputs, outputs))
    arm.__name__ = fn.__name__
    return arm


def cuda_ab(a, b, **kw):
    return bitproof.ab(a, b, inputs=INPUTS, outputs=OUTPUTS, cases=6, seed=1, device="cuda", **kw)


def test_cuda_arms_are_captured_once_and_replayed_every_case(fake_torch):
    calls_a, calls_b = [], []
    r = cuda_ab(launched(fake_torch, gemv_rowwise, calls_a), launched(fake_torch, gemv_blocked, calls_b))
    assert r.equal and r.cases == 6 and r.graph
    assert len(calls_a) == 2 and len(calls_b) == 2  # the warm-up and the capture; the cases replay the graph
    cpu = bitproof.ab(gemv_rowwise, gemv_blocked, inputs=INPUTS, outputs=OUTPUTS, cases=6, seed=1)
    assert r.outputs[0]["sha256"] == cpu.outputs[0]["sha256"]
    calls_a.clear()
    r = cuda_ab(launched(fake_torch, gemv_rowwise, calls_a), launched(fake_torch, gemv_broken, []), graph=False)
    assert not r.equal and not r.graph and len(calls_a) == 6  # called for every case
    assert r.first_differences[0].index[1] % 7 == 0


def test_cuda_arms_the_poison_catches(fake_torch):
    with pytest.raises(bitproof.ArmError, match="still holds the poison") as e:
        cuda_ab(launched(fake_torch, gemv_rowwise, []), lambda i, o: None)
    assert e.value.exit_code == 1
    # work done on the host while capturing (not a launch): the warm-up wrote y, the graph holds nothing
    with pytest.raises(bitproof.ArmError, match='arm b .*still holds the poison'):
        cuda_ab(launched(fake_torch, gemv_rowwise, []), gemv_rowwise)
    assert cuda_ab(gemv_rowwise, gemv_rowwise, graph=False).equal  # eager: the same callables are fine


def test_cuda_arm_raising_in_its_capture(fake_torch):
    def refuses(inputs, outputs):
        raise RuntimeError("no graph for me")

    with pytest.raises(bitproof.ArmError, match=r'arm b \("refuses"\), prepare \(graph capture\): the callable '
                                                r'raised RuntimeError: no graph for me') as e:
        cuda_ab(launched(fake_torch, gemv_rowwise, []), refuses)
    assert e.value.exit_code == 2 and isinstance(e.value.__cause__, RuntimeError)


def test_time_reaches_the_timing_backend(fake_torch):
    if cuda_torch():
        pytest.skip("a GPU is here")
    with pytest.raises(bitproof.BackendMissing) as e:  # no CUDA timing backend or device here
        bitproof.time(launched(fake_torch, gemv_rowwise, []), gemv_rowwise, inputs=INPUTS, outputs=OUTPUTS,
                      claim="same within 2%")
    assert e.value.exit_code == 3
