#!/usr/bin/env python3
"""output_tables.py BITPROOF SOURCE_DIR WORKDIR: output tables (src/user/table.hpp)
as a kernel team meets them, with examples/torch-fp8-table.

- `spec cases` writes every case in case order: checked against an independent
  reading of the spec here (first input fastest; the opposite order must
  differ, so the check can fail), raw = the npy's data, --head decodes.
- reference.py run on those cases writes the committed tables byte for byte,
  and the committed table agrees with Python's own float16 rounding
  (struct 'e') on every finite case.
- The example proves (exit 0) and its result is the committed report's;
  report verify reproduces it; one wrong word (any case) or a NaN payload
  changed in out.npy: NOT VERIFIED (exit 1) and the proof refuted or the
  digest changed; the table in the opposite case order is refuted.
- Shards of a four-chunk table spec merge to the unsharded result byte for
  byte; a table changed between the shards and the merge is refused.
"""
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bptest import check, failures, load, setup  # noqa: E402

bp, root, work, env, run = setup(own_cache=False)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def npy_words(data):
    """The data of a version 1.0 little-endian .npy file as 16-bit words, and its header's end."""
    start = 10 + int.from_bytes(data[8:10], "little")
    return [int.from_bytes(data[i:i + 2], "little") for i in range(start, len(data), 2)], start


def case_order(spec, first_fastest=True):
    """Every case's codes as this test reads the spec: the product of the inputs' code sets."""
    sets = []
    for inp in spec["inputs"]:
        codes = inp["codes"]
        bits = {"e4m3": 8, "fp16": 16, "e2m1": 4}[inp["format"]]
        if codes == "all":
            sets.append(list(range(2 ** bits)))
        elif "range" in codes:
            sets.append(list(range(codes["range"][0], codes["range"][1] + 1)))
        else:
            sets.append(codes["list"])
    order = sets if first_fastest else sets[::-1]
    rows = [[]]
    for s in order:  # the first set listed varies fastest
        rows = [r + [c] for c in s for r in rows]
    return rows if first_fastest else [r[::-1] for r in rows]


def bitproof_cases(spec_dir, spec_name="proof.json", out="cases.npy"):
    done = run("spec", "cases", spec_name, "--out", out, cwd=spec_dir)
    check(f"spec cases {spec_name}: exit 0", done.returncode == 0, done.stdout + done.stderr)
    return done


example = os.path.join(work, "torch-fp8-table")
shutil.copytree(os.path.join(root, "examples", "torch-fp8-table"), example)
spec = load(os.path.join(example, "proof.json"))

# ---- spec cases ----
done = bitproof_cases(example)
check("spec cases says what it wrote", "16384 cases x 2 inputs (element e4m3, scale fp16), uint16 npy shape (16384, 2)"
      in done.stdout, done.stdout)
one = run("spec", "cases", os.path.join(root, "proofs", "fnuz-e4m3-bf16-nan-guard.json"), "--out",
          os.path.join(work, "one-input.npy"))
check("one input: \"256 cases x 1 input (element e4m3fnuz)\"", "256 cases x 1 input (element e4m3fnuz)" in one.stdout,
      one.stdout + one.stderr)
data = read(os.path.join(example, "cases.npy"))
words, start = npy_words(data)
header = data[10:start].decode()
check("cases.npy: <u2, C order, shape (16384, 2)",
      header.startswith("{'descr': '<u2', 'fortran_order': False, 'shape': (16384, 2), }") and start % 64 == 0, header)
rows = [words[2 * n:2 * n + 2] for n in range(len(words) // 2)]
expected = case_order(spec)
check("cases.npy: row n holds case n's codes, first input fastest", rows == expected,
      f"first rows {rows[:3]} vs {expected[:3]}")
check("negative control: the other order (last input fastest) differs", case_order(spec, False) != expected)
raw = run("spec", "cases", "proof.json", "--out", "cases.raw", "--format", "raw", cwd=example)
check("--format raw: the npy's data, no header",
      raw.returncode == 0 and read(os.path.join(example, "cases.raw")) == data[start:], raw.stdout + raw.stderr)
head = run("spec", "cases", "proof.json", "--head", "3", cwd=example)
check("--head 3: three decoded cases", head.returncode == 0 and len(head.stdout.splitlines()) == 4
      and "0x01 [0|0000|001] 0.001953125" in head.stdout.splitlines()[2], head.stdout)

# ---- the committed tables: reference.py's, byte for byte; Python's float16 agrees ----
committed = {name: read(os.path.join(example, name)) for name in ("out.npy", "out-broken.u16")}
ref = subprocess.run([sys.executable, "reference.py", "cases.npy", "ref.npy", "ref-broken.u16"], cwd=example,
                     capture_output=True, text=True, timeout=600)
check("reference.py runs", ref.returncode == 0, ref.stdout + ref.stderr)
check("reference.py writes the committed out.npy byte for byte",
      read(os.path.join(example, "ref.npy")) == committed["out.npy"])
check("reference.py writes the committed out-broken.u16 byte for byte",
      read(os.path.join(example, "ref-broken.u16")) == committed["out-broken.u16"])
out, _ = npy_words(committed["out.npy"])


def e4m3_value(c):
    e, m = (c >> 3) & 15, c & 7
    v = (m / 8) * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    return -v if c & 0x80 else v


def struct_half(element, scale):
    """Python's own float16 rounding (struct 'e', round to nearest even) of the exact product; None: NaN or overflow."""
    if (element & 0x7F) == 0x7F:
        return None
    product = e4m3_value(element) * struct.unpack("<e", struct.pack("<H", scale))[0]  # exact in a double
    try:
        return struct.unpack("<H", struct.pack("<e", product))[0]
    except OverflowError:
        return None


agree = [n for n, (e, s) in enumerate(expected) if struct_half(e, s) is not None and struct_half(e, s) != out[n]]
finite = sum(1 for e, s in expected if struct_half(e, s) is not None)
check(f"the committed table agrees with struct 'e' on all {finite} finite cases", not agree and finite > 15000,
      f"differs at {agree[:5]}")
check("negative control: the broken table does not", any(
    struct_half(e, s) is not None and struct_half(e, s) != w
    for (e, s), w in zip(expected, struct.unpack(f"<{len(out)}H", committed["out-broken.u16"]))))

# ---- the proof and its report ----
done = run("prove", "proof.json", "--backend", "cpu", "--report", "now.json", "--markdown", "now.md", cwd=example)
check("the example proves (exit 0)", done.returncode == 0, done.stdout + done.stderr)
check("the broken table is refuted as expected", "torch-broken≡torch: refuted as expected (1 of 16384: value)"
      in done.stdout, done.stdout)
if done.returncode == 0:
    now, committed_report = load(os.path.join(example, "now.json")), load(os.path.join(example, "report.json"))
    check("the result is the committed report's", now["result"] == committed_report["result"])
    tables = now["result"].get("user_tables", [])
    check("result.user_tables: both files with their SHA-256", [t["path"] for t in tables] == ["out.npy", "out-broken.u16"]
          and tables[0]["layout"] == "npy <f2 (16384,)" and tables[1]["layout"] == "raw u16", json.dumps(tables))
    check("no result.user_sources (no source was built)", "user_sources" not in now["result"])
    with open(os.path.join(example, "now.md"), encoding="utf-8") as f:
        check("the Markdown lists the tables", "Output tables read (SHA-256):" in f.read())
verified = run("report", "verify", "report.json", cwd=example)
check("report verify reproduces the committed report (exit 0)", verified.returncode == 0, verified.stdout + verified.stderr)


def with_table(words_now, action):
    """Runs `action` with out.npy holding `words_now`, then puts the committed table back."""
    _, start = npy_words(committed["out.npy"])
    write(os.path.join(example, "out.npy"), committed["out.npy"][:start] + struct.pack(f"<{len(words_now)}H", *words_now))
    try:
        return action()
    finally:
        write(os.path.join(example, "out.npy"), committed["out.npy"])


for n in (0, 5000, 16383):
    wrong = list(out)
    wrong[n] ^= 0x0001 if (out[n] & 0x7C00) != 0x7C00 else 0x0200
    v = with_table(wrong, lambda: run("report", "verify", "report.json", cwd=example))
    check(f"one wrong word (case {n}): report verify NOT VERIFIED (exit 1)",
          v.returncode == 1 and "NOT VERIFIED" in v.stdout, v.stdout + v.stderr)
    p = with_table(wrong, lambda: run("prove", "proof.json", "--backend", "cpu", cwd=example))
    check(f"one wrong word (case {n}): the proof is refuted (exit 1)", p.returncode == 1, p.stdout)
nan_case = len(out) - 1  # element 0xFF x the last scale: a NaN no kept counterexample shows
payload = list(out)
payload[nan_case] = 0x7E00  # still a NaN: the claims cannot see it, the digests can
broken_words = list(struct.unpack(f"<{len(out)}H", committed["out-broken.u16"]))
broken_words[nan_case] = 0x7E00  # in both tables, so no claim's count changes either


def with_broken_payload(action):
    write(os.path.join(example, "out-broken.u16"), struct.pack(f"<{len(out)}H", *broken_words))
    try:
        return action()
    finally:
        write(os.path.join(example, "out-broken.u16"), committed["out-broken.u16"])


v = with_table(payload, lambda: with_broken_payload(lambda: run("report", "verify", "report.json", cwd=example)))
check("a NaN payload changed: NOT VERIFIED (exit 1)", v.returncode == 1 and "NOT VERIFIED" in v.stdout,
      v.stdout + v.stderr)
p = with_table(payload, lambda: with_broken_payload(
    lambda: run("prove", "proof.json", "--backend", "cpu", "--report", "nan.json", cwd=example)))
if p.returncode == 0:
    a, b = load(os.path.join(example, "report.json"))["result"], load(os.path.join(example, "nan.json"))["result"]
    check("a NaN payload changed: every claim as before, the tables' SHA-256 not",
          a["claims"] == b["claims"] and a["user_tables"][0]["sha256"] != b["user_tables"][0]["sha256"])
else:
    check("a NaN payload changed: the proof still passes", False, p.stdout + p.stderr)
swapped = [out[(n % 64) * 256 + n // 64] for n in range(len(out))]  # case n as if the last input ran fastest
p = with_table(swapped, lambda: run("prove", "proof.json", "--backend", "cpu", cwd=example))
check("the table in the other case order is refuted (exit 1)", p.returncode == 1 and "REFUTED" in p.stdout, p.stdout)

# ---- shards: a four-chunk table spec, sharded 1, 3 and 5 ways (some shards empty) ----
wide_dir = os.path.join(work, "wide")
os.makedirs(wide_dir)
for name in ("reference.py",):
    shutil.copy(os.path.join(example, name), wide_dir)
wide = dict(spec, name="table-wide")
wide["inputs"] = [spec["inputs"][0], {"name": "scale", "format": "fp16", "codes": {"range": [14848, 15871]}}]
wide["claims"] = [{"claim": "correctly_rounded", "recipes": ["team.e4m3_fp16.torch"]},
                  {"claim": "equal", "recipes": ["team.e4m3_fp16.torch_broken", "team.e4m3_fp16.torch"]}]
with open(os.path.join(wide_dir, "wide.json"), "w", encoding="utf-8") as f:
    json.dump(wide, f)
bitproof_cases(wide_dir, "wide.json", "cases.npy")
subprocess.run([sys.executable, "reference.py", "cases.npy", "out.npy", "out-broken.u16"], cwd=wide_dir, check=True,
               capture_output=True)
whole = run("prove", "wide.json", "--backend", "cpu", "--report", "whole.json", cwd=wide_dir)
check("the wide table spec: 262144 cases, the broken word refuted (exit 1)",
      whole.returncode == 1 and "262144/262144" in whole.stdout and "(1 fail: all value)" in whole.stdout, whole.stdout)
for n in (1, 3, 5):
    names = []
    for i in range(1, n + 1):
        s = run("prove", "wide.json", "--backend", "cpu", "--shard", f"{i}/{n}", "--report", f"s{n}-{i}.json",
                "--quiet", cwd=wide_dir)
        check(f"shard {i}/{n}", s.returncode == 0, s.stdout + s.stderr)
        names.append(f"s{n}-{i}.json")
    m = run("report", "merge", *names, "-o", f"m{n}.json", cwd=wide_dir)
    same = m.returncode == 1 and load(os.path.join(wide_dir, f"m{n}.json"))["result"] == load(
        os.path.join(wide_dir, "whole.json"))["result"]
    check(f"{n} shards merge to the unsharded result byte for byte", same, m.stdout + m.stderr)
table = read(os.path.join(wide_dir, "out.npy"))
changed = bytearray(table)
changed[-1] ^= 0x01
write(os.path.join(wide_dir, "out.npy"), bytes(changed))
m = run("report", "merge", "s3-1.json", "s3-2.json", "s3-3.json", "-o", "m.json", cwd=wide_dir)
check("a table changed after the shards: merge refuses (exit 2, result.user_tables)",
      m.returncode == 2 and "result.user_tables: the shard read other output tables" in m.stderr, m.stdout + m.stderr)
write(os.path.join(wide_dir, "out.npy"), table)
m = run("report", "merge", "s3-1.json", "s3-2.json", "s3-3.json", "-o", "m.json", cwd=wide_dir)
check("negative control: the table put back, merge runs (exit 1: the broken word)", m.returncode == 1, m.stdout + m.stderr)

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
