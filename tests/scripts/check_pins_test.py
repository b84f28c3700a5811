#!/usr/bin/python3
"""Tests scripts/check-pins.py on a tiny git repository made here (no network: runs in CI).

  tests/scripts/check_pins_test.py SCRIPT [BITPROOF]

Every way a pin can be wrong must fail the run with a line naming it: a line range past the
end of the file, a range that misses the named struct, a struct that is not in the file, a
path that is not at the revision. A pin whose repository or revision is not at hand is
UNCHECKED (a failure unless --allow-unchecked), and --record keeps an earlier read for it.
With BITPROOF, the catalogue's own pins (`bitproof recipes --json`) go through the script
against an empty repository directory: every code pin UNCHECKED, none lost.
"""
import json
import os
import subprocess
import sys
import tempfile

SOURCE = """// a header
#pragma once

struct Scale {
  int apply(int x) const { return x * 2; }
};

inline int twice(int x) { return Scale{}.apply(x); }

int unrelated(int x) {
  return x + 1;
}
"""  # 12 lines: Scale at 4-6, twice at 8, unrelated at 10-12
PYTHON = """def outer(a,
          b):
    return a + b


def other():
    return 0
"""  # outer at 1-3, other at 6-7


def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args],
                   cwd=cwd, check=True, capture_output=True)


def make_repos(root):
    """DIR/acme+kernels/repo (bare, the fetched-snapshot layout) and DIR/fork (a clone): one commit each."""
    work = os.path.join(root, "work")
    os.makedirs(os.path.join(work, "include"))
    with open(os.path.join(work, "include", "scale.h"), "w") as f:
        f.write(SOURCE)
    with open(os.path.join(work, "include", "ops.py"), "w") as f:
        f.write(PYTHON)
    git("init", "-q", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, check=True, capture_output=True, text=True).stdout.strip()
    repos = os.path.join(root, "repos")
    os.makedirs(os.path.join(repos, "acme+kernels"))
    git("clone", "-q", "--bare", work, os.path.join(repos, "acme+kernels", "repo"), cwd=root)
    git("clone", "-q", work, os.path.join(repos, "fork"), cwd=root)
    cuda = os.path.join(root, "cuda")
    os.makedirs(os.path.join(cuda, "dist-info", "nvidia_cuda_runtime-13.0.96.dist-info"))
    os.makedirs(os.path.join(cuda, "include"))
    with open(os.path.join(cuda, "include", "scale.h"), "w") as f:
        f.write(SOURCE)
    return repos, cuda, rev


def pin(repo, rev, lines, symbol, path="include/scale.h"):
    return {"kind": "code", "repo": repo, "path": path, "revision": rev, "symbol": symbol, "lines": lines,
            "models": "-"}


def run(script, root, pins, *extra):
    doc = os.path.join(root, "pins.json")
    with open(doc, "w") as f:
        json.dump({"recipes": [{"name": f"r{i}", "pins": [p]} for i, p in enumerate(pins)]}, f)
    r = subprocess.run([sys.executable, script, "--repos", os.path.join(root, "repos"), "--pins", doc, *extra],
                       capture_output=True, text=True)
    return r.returncode, r.stdout


FAILURES = []


def expect(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


def main(script):
    with tempfile.TemporaryDirectory() as root:
        repos, cuda, rev = make_repos(root)
        other = "0" * 40
        good = [pin("acme/kernels", rev, "4-6", "Scale"), pin("acme/kernels", rev, "4-6, 8", "Scale::apply(int), twice"),
                pin("NVIDIA CUDA Toolkit", "13.0.96", "8", "twice"), pin("acme/kernels", rev, "5", "Scale"),
                pin("acme/kernels", rev, "3", "outer", "include/ops.py"),
                pin("acme/kernels", rev, "11", "header comment (the add)")]
        rc, out = run(script, root, good, "--cuda", cuda)
        expect("good pins (a line inside the named struct or def among them): exit 0, one OK line each",
               rc == 0 and out.count("\nOK ") + out.startswith("OK ") == len(good))

        bad = {
            "a range past the end of the file": (pin("acme/kernels", rev, "4-60", "Scale"), "run past the end"),
            "a range that misses the struct": (pin("acme/kernels", rev, "1-3", "Scale"), "Scale neither on lines 1-3"),
            "a struct that is not in the file": (pin("acme/kernels", rev, "4-6", "Transform_Prescaled"),
                                                 "Transform_Prescaled neither on lines"),
            "a line past the named function's body": (pin("acme/kernels", rev, "11", "twice"),
                                                      "twice neither on lines 11"),
            "a line past the named def's body": (pin("acme/kernels", rev, "7", "outer", "include/ops.py"),
                                                 "outer neither on lines 7"),
            "a path that is not at the revision": (pin("acme/kernels", rev, "4-6", "Scale", "include/gone.h"),
                                                   "does not exist at"),
            "a malformed line range": (pin("acme/kernels", rev, "six-9", "Scale"), "is not N or N-M"),
            "a toolkit file that is not there": (pin("NVIDIA CUDA Toolkit", "13.0.96", "1", "x", "include/gone.h"),
                                                 "does not exist in the toolkit"),
        }
        for what, (p, message) in bad.items():
            rc, out = run(script, root, good + [p], "--cuda", cuda, "--allow-unchecked")
            expect(f"{what}: exit 1, a FAIL line saying so", rc == 1 and any(
                line.startswith("FAIL") and message in line for line in out.splitlines()))

        unchecked = [pin("acme/kernels", other, "4-6", "Scale"), pin("nobody/nothing", rev, "4-6", "Scale"),
                     pin("NVIDIA CUDA Toolkit", "12.9.0", "8", "twice")]
        rc, out = run(script, root, good + unchecked, "--cuda", cuda)
        expect("pins not at hand: UNCHECKED lines, exit 1", rc == 1 and out.count("UNCHECKED") == 3)
        rc, out = run(script, root, good + unchecked, "--cuda", cuda, "--allow-unchecked")
        expect("pins not at hand with --allow-unchecked: exit 0", rc == 0)

        rc, out = run(script, root, [pin("upstream/kernels", rev, "4-6", "Scale")], "--alias",
                      "upstream/kernels=someone/fork")
        expect("--alias finds the revision in a fork cloned as DIR/fork", rc == 0 and out.startswith("OK"))

        record = os.path.join(root, "reads.json")
        kept = pin("acme/kernels", other, "4-6", "Scale")
        with open(record, "w") as f:
            json.dump({"pins": [dict(kept, result="ok", read="2026-01-01", by="by hand", detail="read elsewhere"),
                                dict(pin("gone/repo", rev, "1", "x"), result="ok", read="2026-01-01", by="x",
                                     detail="-")]}, f)
        rc, out = run(script, root, good + [kept], "--cuda", cuda, "--allow-unchecked", "--record", record, "--date",
                      "2026-12-07", "--by", "the test")
        with open(record) as f:
            entries = json.load(f)["pins"]
        by_rev = {(e["repo"], e["revision"], e["lines"]): e for e in entries}
        expect("--record: pins read now carry the date and the reader",
               all(by_rev[(p["repo"], p["revision"], p["lines"])]["read"] == "2026-12-07" for p in good))
        expect("--record: a pin not at hand keeps its earlier read",
               by_rev[("acme/kernels", other, "4-6")]["read"] == "2026-01-01")
        expect("--record: pins no longer in the catalogue are dropped", len(entries) == len(good) + 1)
        if len(sys.argv) > 2:
            catalogue(script, sys.argv[2], root)
    return 1 if FAILURES else 0


def catalogue(script, bitproof, root):
    cards = json.loads(subprocess.run([bitproof, "recipes", "--json"], check=True, capture_output=True).stdout)
    pins = {json.dumps(p, sort_keys=True) for c in cards["recipes"] for p in c["pins"]}
    code = sum(1 for p in pins if json.loads(p)["kind"] == "code")
    empty = os.path.join(root, "empty")
    os.makedirs(empty)
    r = subprocess.run([sys.executable, script, "--repos", empty, "--bitproof", bitproof], capture_output=True, text=True)
    lines = r.stdout.splitlines()[:-1]
    expect(f"the catalogue's {len(pins)} pins ({code} of code), one line each, all unchecked here: exit 1",
           r.returncode == 1 and len(lines) == len(pins) and sum(l.startswith("UNCHECKED") for l in lines) == code
           and code > 50)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
