#!/usr/bin/env python3
"""user_recipes.py BITPROOF SOURCE_DIR WORKDIR: the user-recipe CPU path as a
kernel team meets it (src/user, examples/).

- Every example proves with exit 0 and its result is the committed report's.
- `report verify` of each committed example report reproduces it; with one
  constant of the team's kernel header changed it does not (a changed kernel
  changes the report), and the recorded source digest names the change.
- The cache: a first run compiles, a second is served from the cache without
  the compiler (environment.user_recipes.cached), --no-cache compiles again, a
  changed header compiles again; two runs at once on an empty cache agree.
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bptest import check, failures, setup  # noqa: E402
from bptest import load as result  # noqa: E402

bp, root, work, env, run = setup(own_cache=True)


for name in ("marlin-fp4", "int4-magic", "fp8-scale-fold"):
    example = os.path.join(work, name)
    shutil.copytree(os.path.join(root, "examples", name), example)
    done = run("prove", "proof.json", "--backend", "cpu", "--report", "now.json", cwd=example)
    check(f"{name}: proves (exit 0)", done.returncode == 0, done.stdout + done.stderr)
    if done.returncode == 0:
        same = result(os.path.join(example, "now.json"))["result"] == result(os.path.join(example, "report.json"))["result"]
        check(f"{name}: the result is the committed report's", same)
    verified = run("report", "verify", os.path.join(example, "report.json"))
    check(f"{name}: report verify reproduces the committed report", verified.returncode == 0,
          verified.stdout + verified.stderr)

# A changed kernel changes the report: the Marlin example's bias 2^14 -> 2^13 in the team's header.
example = os.path.join(work, "marlin-fp4")
header = os.path.join(example, "dequant.cuh")
with open(header, encoding="utf-8") as f:
    text = f.read()
assert "0x7400" in text
with open(header, "w", encoding="utf-8") as f:
    f.write(text.replace("0x7400", "0x7000"))
verified = run("report", "verify", os.path.join(example, "report.json"))
check("a changed kernel header: NOT VERIFIED (exit 1)",
      verified.returncode == 1 and "NOT VERIFIED" in verified.stdout, verified.stdout + verified.stderr)
changed = run("prove", "proof.json", "--backend", "cpu", "--report", "changed.json", cwd=example)
check("a changed kernel header: the proof is refuted (exit 1)", changed.returncode == 1, changed.stdout)
if os.path.exists(os.path.join(example, "changed.json")):
    before = {s["path"]: s["sha256"] for s in result(os.path.join(example, "report.json"))["result"]["user_sources"]}
    after = {s["path"]: s["sha256"] for s in result(os.path.join(example, "changed.json"))["result"]["user_sources"]}
    check("the report's user_sources name the changed file, and only it",
          [p for p in before if before[p] != after.get(p)] == ["dequant.cuh"], f"{before} {after}")
with open(header, "w", encoding="utf-8") as f:
    f.write(text)


def cached(*extra):
    done = run("prove", "proof.json", "--backend", "cpu", "--report", "c.json", *extra, cwd=example)
    if done.returncode != 0:
        return None
    return result(os.path.join(example, "c.json"))["environment"]["user_recipes"]["cached"]


shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
check("an empty cache: the first run compiles", cached() is False)
check("the second run is served from the cache", cached() is True)
check("--no-cache compiles again", cached("--no-cache") is False)
with open(header, "a", encoding="utf-8") as f:
    f.write("// an edit\n")
check("an edited header compiles again", cached() is False)
check("and is cached after that", cached() is True)

shutil.rmtree(env["XDG_CACHE_HOME"], ignore_errors=True)
runs = [subprocess.Popen([bp, "prove", "proof.json", "--backend", "cpu", "--quiet"], cwd=example, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
codes = [p.wait(timeout=600) for p in runs]
check("three runs at once on an empty cache all pass", codes == [0, 0, 0], str(codes))

print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
