#!/usr/bin/env python3
"""installed_headers.py BITPROOF SOURCE_DIR WORKDIR CMAKE BUILD_DIR: the installed header
directory alone is enough for a user recipe's host worker (issue 50).

- `cmake --install BUILD_DIR --component bitproof_headers` puts bitproof's headers in
  WORK/prefix/include/bitproof (nothing else of the build is needed).
- With BITPROOF_INCLUDE_DIRS=WORK/prefix/include/bitproof and nothing else, the command
  proves examples/marlin-fp4 (a user recipe, CPU backend): exit 0, its worker compiled with
  -I of that directory alone, and no include flag naming the source tree's src/.
- Negative control: BITPROOF_INCLUDE_DIRS=SOURCE_DIR/src/user/include alone (what the issue
  tried) is refused in one line naming the header it lacks and the directory that holds
  them all (exit 2); the directory installed above without arith/ is refused the same way.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bptest import check, failures, load, setup  # noqa: E402

cmake, build = sys.argv[4], os.path.abspath(sys.argv[5])
bp, root, work, env, run = setup(own_cache=True)
prefix = os.path.join(work, "prefix")
include = os.path.join(prefix, "include", "bitproof")
done = subprocess.run([cmake, "--install", build, "--component", "bitproof_headers", "--prefix", prefix],
                      capture_output=True, text=True)
check("cmake --install --component bitproof_headers: exit 0", done.returncode == 0, done.stdout + done.stderr)
installed = sorted(os.path.relpath(os.path.join(d, f), include) for d, _, fs in os.walk(include) for f in fs)
check("the component holds the host header and the soft arithmetic it includes",
      "bitproof_cuda_host.h" in installed and "arith/soft_float.hpp" in installed and "hd.hpp" in installed,
      installed)

example = os.path.join(work, "marlin-fp4")
shutil.copytree(os.path.join(root, "examples", "marlin-fp4"), example)


def prove(include_dirs, report):
    env["BITPROOF_INCLUDE_DIRS"] = include_dirs
    return run("prove", "proof.json", "--backend", "cpu", "--report", report, cwd=example)


done = prove(include, "installed.json")
check("BITPROOF_INCLUDE_DIRS=<prefix>/include/bitproof alone: the user recipe proves (exit 0)",
      done.returncode == 0 and "16/16 bit patterns equal" in done.stdout, done.stdout + done.stderr)
if done.returncode == 0:
    flags = load(os.path.join(example, "installed.json"))["environment"]["user_recipes"]["flags"]
    includes = [f for f in flags if f.startswith("-I")]
    check("the worker was compiled with -I of the installed directory alone", includes == ["-I" + include], flags)

done = prove(os.path.join(root, "src", "user", "include"), "src-user.json")
check("negative control: src/user/include alone is refused (exit 2, one line naming what it lacks)",
      done.returncode == 2 and "none of its directories holds" in done.stderr
      and "include/bitproof under the install prefix" in done.stderr and done.stderr.count("\n") == 1,
      done.stdout + done.stderr)
shutil.rmtree(os.path.join(include, "arith"))
done = prove(include, "hollow.json")
check("negative control: the installed directory without arith/ is refused (exit 2)",
      done.returncode == 2 and "arith/soft_" in done.stderr, done.stdout + done.stderr)
sys.exit(1 if failures else 0)
