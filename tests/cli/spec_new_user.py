#!/usr/bin/env python3
"""spec_new_user.py BITPROOF SOURCE_DIR WORKDIR: `spec new --user FILE:FUNCTION` and
`--table FILE` (issue 50) as a kernel team starts a spec from its own code.

- --user over examples/marlin-fp4's adapters: the spec names the file (relative to --out's
  directory) and the function; spec check refuses it, one line naming a placeholder, until
  every "<fill in: ...>" is replaced; filled in, spec check passes and prove holds (16/16).
- --user with --recipes: the formats come from the catalogue recipe, an equal claim needs no
  intent: nothing to fill in, spec check passes at once.
- --table over examples/torch-fp8-table/out.npy: the dtype and the word count are read
  (expected_cases), the rest left to fill in.
- Refused (exit 2, one line): a function the file does not define, one of 4 parameters,
  FILE without :FUNCTION, a .npy with a broken header.
"""
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bptest import check, failures, setup  # noqa: E402

bp, root, work, env, run = setup(own_cache=True)
example = os.path.join(work, "marlin-fp4")
shutil.copytree(os.path.join(root, "examples", "marlin-fp4"), example)
os.makedirs(os.path.join(example, "specs"))
spec = os.path.join(example, "specs", "new.json")

done = run("spec", "new", "--user", "bitproof_adapters.cuh:bp_marlin_fp4", "--out", "specs/new.json", cwd=example)
check("spec new --user FILE:FUNCTION --out: exit 0", done.returncode == 0, done.stdout + done.stderr)
text = open(spec).read() if done.returncode == 0 else ""
check("the file is named relative to the spec's directory, the function and its 1 code read",
      '"files": ["../bitproof_adapters.cuh"]' in text and '"function": "bp_marlin_fp4"' in text
      and "bp_marlin_fp4 in ../bitproof_adapters.cuh: 1 code in" in text, text)
holes = re.findall(r'"<fill in: [^"]*>"', "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//")))
check(f"what the file does not say is left to fill in ({len(holes)} placeholders)", len(holes) >= 4, text)

done = run("spec", "check", spec)
check("spec check of the unfilled spec: exit 2, one line naming a placeholder and how many are left",
      done.returncode == 2 and "is a placeholder of bitproof spec new: fill it in" in done.stderr
      and f"({len(holes)} placeholders left)" in done.stderr and done.stderr.count("\n") == 1, done.stderr)


def filled(hole):
    for key, value in (("input 0", "e2m1"), ("output", "fp16"), ("value, product", "value"),
                       ("second recipe", "marlin.e2m1_fp16.flop")):
        if key in hole:
            return f'"{value}"'
    return hole


with open(spec, "w") as f:
    f.write(re.sub(r'"<fill in: [^"]*>"', lambda m: filled(m.group(0)), text))
done = run("spec", "check", spec)
check("filled in: spec check passes (the function compiled)", done.returncode == 0, done.stdout + done.stderr)
done = run("prove", spec, "--backend", "cpu")
check("filled in: prove holds on every E2M1 code", done.returncode == 0 and "16/16 bit patterns equal" in done.stdout,
      done.stdout + done.stderr)

done = run("spec", "new", "--user", "bitproof_adapters.cuh:bp_marlin_fp4", "--recipes", "marlin.e2m1_fp16.flop",
           "--out", "with-recipe.json", cwd=example)
text = open(os.path.join(example, "with-recipe.json")).read() if done.returncode == 0 else ""
check("--user with --recipes: the catalogue recipe's formats, no placeholder, no intent",
      done.returncode == 0 and "<fill in" not in text and '"intent"' not in text
      and '"inputs": ["e2m1"], "output": "fp16"' in text, done.stderr + text)
done = run("spec", "check", "with-recipe.json", cwd=example)
check("... and spec check passes at once", done.returncode == 0, done.stdout + done.stderr)

table = os.path.join(root, "examples", "torch-fp8-table", "out.npy")
done = run("spec", "new", "--claim", "correctly_rounded", "--table", table)
check("--table out.npy (float16): its dtype and word count read, the output fp16, the table named",
      done.returncode == 0 and "dtype <f2, 16384 words" in done.stdout and '"expected_cases": 16384' in done.stdout
      and f'"table": "{table}"' in done.stdout and '"output": "fp16"' in done.stdout, done.stdout + done.stderr)
words = os.path.join(work, "words.npy")
with open(words, "wb") as f:  # a table of uint16 words: which 16-bit format is left to fill in
    header = "{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(8))
done = run("spec", "new", "--table", words, "--claim", "exact")
check("--table of uint16 words: the output left to fill in, its width said",
      done.returncode == 0 and "stored in 2 bytes" in done.stdout and '"expected_cases": 4' in done.stdout,
      done.stdout + done.stderr)

bad = os.path.join(work, "bad.npy")
with open(bad, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00\x10\x00{'descr': 'x'}\n")
for args, words in (
        (["--user", "bitproof_adapters.cuh:bp_nothing"], "bitproof_adapters.cuh defines no function bp_nothing"),
        (["--user", "bitproof_adapters.cuh"], "expected FILE:FUNCTION"),
        (["--user", "missing.cuh:bp_x"], "missing.cuh: cannot read"),
        (["--table", bad], "bad.npy: --table: "),
):
    done = run("spec", "new", *args, cwd=example)
    check(f"spec new {' '.join(args)}: exit 2, one line: {words}",
          done.returncode == 2 and words in done.stderr and done.stderr.count("\n") == 1, done.stderr)
with open(os.path.join(example, "four.cuh"), "w") as f:
    f.write("__device__ uint32_t bp_four(uint32_t a, uint32_t b, uint32_t c, uint32_t d) { return a; }\n")
done = run("spec", "new", "--user", "four.cuh:bp_four", cwd=example)
check("a function of 4 parameters: exit 2", done.returncode == 2 and "takes 4 parameters" in done.stderr, done.stderr)
with open(os.path.join(example, "two.cuh"), "w") as f:
    f.write("// bp_two(x) is called below\n__host__ __device__ uint32_t\nbp_two (uint32_t a,\n uint32_t b) noexcept {\n"
            "  return a ^ b;\n}\n")
done = run("spec", "new", "--user", "two.cuh:bp_two", cwd=example)
check("a definition over lines with noexcept: 2 codes in, two inputs to fill in",
      done.returncode == 0 and "bp_two in two.cuh: 2 codes in" in done.stdout
      and done.stdout.count("input 1's format") == 2, done.stdout + done.stderr)
with open(os.path.join(example, "long.cuh"), "w") as f:  # no ')' after the name: no definition, and no crash
    f.write("uint32_t bp_long(" + "uint32_t a " * 200000)
done = run("spec", "new", "--user", "long.cuh:bp_long", cwd=example)
check("2 MB of parameters without ')': refused (exit 2), not a crash", done.returncode == 2
      and "long.cuh defines no function bp_long" in done.stderr, done.stderr[-300:])
sys.exit(1 if failures else 0)
