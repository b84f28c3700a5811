"""The common part of the scripts that drive the built command over a work
directory (tests/cli/user_recipes.py, tests/cli/output_tables.py,
tests/gpu/user_cuda.py): their arguments BITPROOF SOURCE_DIR WORKDIR, a clean
work directory, running the command, and checks that print ok/FAIL and count."""
import json
import os
import shutil
import subprocess
import sys
import time

failures = []


def setup(own_cache):
    """(bp, root, work, env, run) from sys.argv; WORKDIR emptied. own_cache: XDG_CACHE_HOME in WORKDIR."""
    bp, root, work = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, NO_COLOR="1", BITPROOF_PROGRESS="never")
    if own_cache:
        env["XDG_CACHE_HOME"] = os.path.join(work, "cache")

    def run(*args, cwd=None):
        return subprocess.run([bp, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)

    return bp, root, work, env, run


def bounded(argv, cwd, env, guard=120):
    """argv under a `guard`-second guard: (the completed run, or None when it had to be killed; seconds)."""
    start = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=guard)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return done, time.monotonic() - start


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n  {detail}"))
    if not ok:
        failures.append(what)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
