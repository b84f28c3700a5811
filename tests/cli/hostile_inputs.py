#!/usr/bin/env python3
"""hostile_inputs.py DOC BITPROOF WORKDIR: runs every row of the tables in
docs/hostile-inputs.md and fails unless each gets what the table says.

A row is `| input | `command` | exit | `answer` |`: the command runs with bash
in a fresh copy of the fixtures (below), with $BP the bitproof binary and T the
report tamperer (tests/render/tamper.py IN OUT EDIT...); `exit` is the exit code
demanded; `answer` must appear in what the command printed (stdout and stderr),
literally. For exit 2 the error must be one line. After every row, no fixture
may have changed: bitproof never writes over an input.

Fixtures (made once with $BP): spec.json (the DeepSeek V4 fold spec),
wide.json (2^20 cases, refuted), w1.json w2.json w3.json (its shards 1..3 of
3), r.json (the fold's proof report), rr.json (a refuted one, refuted-spec.json's), d.json (its domain report), ck/ (a
synthetic checkpoint, one 0xFF scale byte in layer 0), audit.json (its audit),
fp32.json (an FP32-input spec), ab-spec.json and ab.json (an A/B negative control,
split-K 4 against 2, and its report: one case, proved), tab/ (small.json: a spec whose one user recipe
is the output table s.npy, E2M1 codes 0..7 to FP16, '<f2' as np.save writes it), pwn/ (pwn.json: a
spec whose user recipe returns the right bits and runs `id > PWNED.txt`; its proof report p.json and
shards s1.json s2.json, made with user code allowed; ab.json: an A/B spec whose element proof is
pwn.json; k.json: a timing spec of user kernels), usr/ (plain.json and plain.cuh from
tests/cli/data/user: a user recipe compiled from source), abu/ (ab.json: the MoE A/B spec whose
element proof p.json is a claim over a user recipe), uc/ (user code: tests/cli/data/user-code,
a spec in uc/ex/ whose adapters include ../kernels/dequant.h), kab/ (examples/fused-aux-gemv: kernel arms). A row may test for files it expects
or forbids (`[ ! -e PWNED.txt ] && exit $r`). Every command runs with its own empty
$XDG_CACHE_HOME (the row's cache/, beside its directory)."""
import hashlib
import json
import os
import struct
import re
import shutil
import subprocess
import sys

doc, bp, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
fixtures = os.path.join(work, "fixtures")


def sh(command, cwd):
    cache = cwd.rstrip("/") + "-cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, BP=bp, NO_COLOR="1", BITPROOF_PROGRESS="never", XDG_CACHE_HOME=cache,
               PATH=os.path.join(work, "bin") + ":" + os.environ["PATH"])
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def npy(descr, words, fmt):
    """A version 1.0 .npy file of one dimension, as np.save writes it."""
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(words))
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + b"".join(struct.pack(fmt, w) for w in words)


def make_table_fixture():
    os.makedirs(f"{fixtures}/tab")
    spec = ('{"bitproof_spec": 1, "name": "table-small", "inputs": [{"name": "element", "format": "e2m1", '
            '"codes": {"range": [0, 7]}}], "output": "fp16", "user_recipes": [{"name": "t.e2m1_fp16.table", '
            '"table": "s.npy", "inputs": ["e2m1"], "output": "fp16", "intent": "value"}], '
            '"claims": [{"claim": "exact", "recipes": ["t.e2m1_fp16.table"]}]}\n')
    with open(f"{fixtures}/tab/small.json", "w", encoding="utf-8") as f:
        f.write(spec)
    halves = [struct.unpack("<H", struct.pack("<e", v))[0] for v in (0, 0.5, 1, 1.5, 2, 3, 4, 6)]
    with open(f"{fixtures}/tab/s.npy", "wb") as f:
        f.write(npy("<f2", halves, "<H"))


PWN_ADAPTER = """// Right bits, and a command run with the prover's rights (docs/hostile-inputs.md).
#include <cstdlib>
__device__ uint32_t bp_pwn(uint32_t code) {
  static const int ran = std::system("id > PWNED.txt");
  (void)ran;
  const uint32_t magnitude[8] = {0x0000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200, 0x4400, 0x4600};
  return ((code & 8u) << 12) | magnitude[code & 7u];
}
"""


def write_element_proof_dir(d, stem, header, spec):
    """d/: STEM.cuh holding `header`, the spec STEM.json over it, and ab.json: the MoE A/B spec
    (proofs/ab/dsv4-mxfp4-fold-moe.json) whose element proof is STEM.json."""
    os.makedirs(d)
    with open(f"{d}/{stem}.cuh", "w", encoding="utf-8") as f:
        f.write(header)
    with open(f"{d}/{stem}.json", "w", encoding="utf-8") as f:
        json.dump(spec, f)
    with open(f"{root}/proofs/ab/dsv4-mxfp4-fold-moe.json", encoding="utf-8") as f:
        ab = json.load(f)
    ab["element_proofs"] = [dict(ab["element_proofs"][0], spec=f"{stem}.json")]
    with open(f"{d}/ab.json", "w", encoding="utf-8") as f:
        json.dump(ab, f)


def make_pwn_fixture():
    """pwn/: user code that runs a command; its reports are made here, with user code allowed."""
    d = f"{fixtures}/pwn"
    spec = {"bitproof_spec": 1, "name": "pwn", "inputs": [{"name": "element", "format": "e2m1", "codes": "all"}],
            "output": "fp16", "sources": {"files": ["pwn.cuh"]},
            "user_recipes": [{"name": "pwn.e2m1_fp16.id", "function": "bp_pwn", "inputs": ["e2m1"],
                              "output": "fp16", "intent": "value"}],
            "claims": [{"claim": "exact", "recipes": ["pwn.e2m1_fp16.id"]}]}
    write_element_proof_dir(d, "pwn", PWN_ADAPTER, spec)
    shutil.copy(f"{root}/proofs/time/k-loop-twice.json", f"{d}/k.json")
    shutil.copy(f"{root}/proofs/time/k_loop.cu", f"{d}/k_loop.cu")
    for step in ["$BP prove pwn/pwn.json --backend cpu --report pwn/p.json --quiet",
                 "$BP prove pwn/pwn.json --backend cpu --shard 1/2 --report pwn/s1.json --quiet",
                 "$BP prove pwn/pwn.json --backend cpu --shard 2/2 --report pwn/s2.json --quiet"]:
        done = sh(f"XDG_CACHE_HOME={work}/pwn-cache " + step, fixtures)
        if done.returncode != 0:
            sys.exit(f"fixture step failed ({done.returncode}): {step}\n{done.stdout}{done.stderr}")
    if not os.path.exists(f"{fixtures}/PWNED.txt"):
        sys.exit("fixture pwn/: proving pwn.json did not run its command (the rows' negative control would fail)")
    os.remove(f"{fixtures}/PWNED.txt")


ABU_ADAPTER = """// A user recipe for an element proof: the E2M1 code's bits, whatever the scale (refuted).
__device__ uint32_t bp_abu(uint32_t code, uint32_t scale) { (void)scale; return code; }
"""


def make_ab_user_fixture():
    """abu/: an A/B spec whose element proof (p.json) is a claim over a user recipe."""
    spec = {"bitproof_spec": 1, "name": "abu", "output": "fp16", "sources": {"files": ["p.cuh"]},
            "inputs": [{"name": "element", "format": "e2m1", "codes": "all"},
                       {"name": "scale", "format": "ue8m0", "codes": {"range": [114, 126]}}],
            "user_recipes": [{"name": "abu.mxfp4_fp16.x", "function": "bp_abu", "inputs": ["e2m1", "ue8m0"],
                              "output": "fp16", "intent": "product"}],
            "claims": [{"claim": "equal", "recipes": ["abu.mxfp4_fp16.x", "turbomind.mxfp4_fp16.ordinary"]}]}
    write_element_proof_dir(f"{fixtures}/abu", "p", ABU_ADAPTER, spec)


def make_user_fixture():
    """usr/: a user-recipe spec (one E2M1 input, 16 cases) and the header of its function."""
    shutil.copytree(f"{root}/tests/cli/data/user", f"{fixtures}/usr",
                    ignore=lambda d, names: [n for n in names if not n.startswith("plain.")])


def make_fixtures():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "bin"))
    os.makedirs(fixtures)
    tamper = os.path.join(work, "bin", "T")
    with open(tamper, "w", encoding="utf-8") as f:
        f.write(f'#!/bin/sh\nexec python3 {root}/tests/render/tamper.py "$@"\n')
    os.chmod(tamper, 0o755)
    shutil.copy(f"{root}/proofs/dsv4-mxfp4-fp16-fold.json", f"{fixtures}/spec.json")
    shutil.copy(f"{root}/tests/cli/data/shardable.json", f"{fixtures}/wide.json")
    shutil.copy(f"{root}/proofs/fp16-float2half-subnormal-edge.json", f"{fixtures}/fp32.json")
    shutil.copy(f"{root}/tests/cli/data/refuted.json", f"{fixtures}/refuted-spec.json")
    shutil.copy(f"{root}/proofs/ab/dsv4-mxfp4-splitk.json", f"{fixtures}/ab-spec.json")
    steps = [
        "$BP ab ab-spec.json --cases 1 --prove --report ab.json --quiet",
        "$BP prove wide.json --shard 1/3 --report w1.json --quiet",
        "$BP prove wide.json --shard 2/3 --report w2.json --quiet",
        "$BP prove wide.json --shard 3/3 --report w3.json --quiet",
        "$BP prove spec.json --backend cpu --report r.json --quiet",
        "$BP prove refuted-spec.json --backend cpu --report rr.json --quiet",
        "$BP domain spec.json --report d.json > /dev/null",
        "$BP synth-checkpoint ck --layers 2 --experts 2 --rows 4 --cols 32 --nan-bytes 1 --seed 7 > /dev/null",
        "$BP audit ck --report audit.json > /dev/null",
    ]
    make_table_fixture()
    make_pwn_fixture()
    make_user_fixture()
    make_ab_user_fixture()
    shutil.copytree(f"{root}/tests/cli/data/user-code", f"{fixtures}/uc")
    shutil.copytree(f"{root}/examples/fused-aux-gemv", f"{fixtures}/kab")
    for step in steps:
        done = sh(step, fixtures)
        if done.returncode not in (0, 1):
            sys.exit(f"fixture step failed ({done.returncode}): {step}\n{done.stdout}{done.stderr}")


def digest_of(path):
    """The SHA-256 of a fixture file, or None where it is gone or no longer a plain file."""
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def digests(directory):
    out = {}
    for base, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(base, name)
            out[os.path.relpath(path, directory)] = digest_of(path)
    return out


def rows(path):
    cell = re.compile(r"^\|(.*)\|\s*$")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = cell.match(line)
            if not m:
                continue
            cols = [c.strip() for c in re.split(r"(?<!\\)\|", m.group(1))]
            if len(cols) != 4 or not cols[1].startswith("`"):
                continue
            command = cols[1].strip("`").replace("\\|", "|")
            answer = cols[3].strip("`").replace("\\|", "|")
            yield cols[0], command, int(cols[2]), answer


def built_with_asan():
    """Whether $BP is an AddressSanitizer build: its shadow memory cannot live under `ulimit -v`."""
    with open(shutil.which(bp) or bp, "rb") as f:
        return b"AddressSanitizer" in f.read()


def main():
    make_fixtures()
    before = digests(fixtures)
    failures = 0
    count = 0
    asan = built_with_asan()
    for n, (what, command, want_rc, answer) in enumerate(rows(doc), 1):
        if asan and "ulimit -v" in command:
            print(f"skip row {n}: under AddressSanitizer `ulimit -v` leaves no room for its shadow memory "
                  f"(the Release run answers it): {what}")
            continue
        count += 1
        cwd = os.path.join(work, f"row-{n}")
        shutil.copytree(fixtures, cwd)
        done = sh(command, cwd)
        printed = done.stdout + done.stderr
        problems = []
        if done.returncode != want_rc:
            problems.append(f"exit {done.returncode}, the table says {want_rc}")
        if answer not in printed:
            problems.append(f"the output lacks: {answer}")
        if want_rc == 2 and len(done.stderr.strip().splitlines()) != 1:
            problems.append("the error is not one line")
        changed = [p for p, h in before.items() if digest_of(os.path.join(cwd, p)) != h]
        if changed:
            problems.append(f"inputs changed or removed: {', '.join(changed)}")
        if problems:
            failures += 1
            print(f"FAIL row {n} ({what}): {command}\n  " + "\n  ".join(problems) + f"\n  output: {printed[:600]}")
        else:
            print(f"ok   row {n}: exit {done.returncode}: {what}")
        shutil.rmtree(cwd)
        shutil.rmtree(cwd + "-cache", ignore_errors=True)
    print(f"{count - failures}/{count} hostile inputs answered as docs/hostile-inputs.md says")
    if count == 0 or failures:
        sys.exit(1)


main()
