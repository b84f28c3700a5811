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
    """argv under a `guard`-second guard: (the completed run, or None when it had to be killed; seconds).
    When killed, what it had written by then is printed (with the process's state just before the kill)."""
    start = time.monotonic()
    with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            out, err = p.communicate(timeout=guard)
        except subprocess.TimeoutExpired:
            state = _state_of(p.pid)
            p.kill()
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a process of its own still holds the pipes
                out, err = "(not read: its pipes stayed open 10 s after the kill)", ""
            print(f"  killed after {guard} s: {' '.join(argv)}\n  its state then: {state}\n"
                  f"  its stdout: {out!r}\n  its stderr: {err!r}")
            return None, time.monotonic() - start
    return subprocess.CompletedProcess(argv, p.returncode, out, err), time.monotonic() - start


def _state_of(pid):
    """The process's state and kernel wait channel (Linux /proc), or why not known."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open(f"/proc/{pid}/wchan", encoding="utf-8") as f:
            return f"{state} (wchan {f.read().strip() or '-'}; threads {len(os.listdir(f'/proc/{pid}/task'))})"
    except OSError as e:
        return f"not known ({e})"


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + ("" if ok else f"\n  {detail}"))
    if not ok:
        failures.append(what)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
