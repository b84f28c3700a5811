#!/usr/bin/env python3
"""time_cuda.py BITPROOF SOURCE_DIR WORKDIR: `bitproof time` on the GPU (issue 15).

The gate's negative controls, for real: A against A is "same" (and a "same within"
claim passes while a "faster" claim fails); twice the FMA chain is "slower" by about
2x; the PR's mistake (A prepared and timed first, then an identical B, no warm-up,
one process) reports a large speed-up while the gate reports "same" or
"order-dependent"; --isolate (each arm in its own process) and --calibrate; the
reports verify from their own samples and render. Wall-clock limits (issue 45, item 8):
tests/gpu/limits_cuda.py. Exit 77 (skipped) without a GPU."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import bptest  # noqa: E402
from bptest import check, load  # noqa: E402

if not os.path.exists("/dev/nvidiactl"):
    print("skipped: no CUDA device")
    sys.exit(77)

bp, root, work, env, run = bptest.setup(own_cache=False)
specs = os.path.join(root, "proofs", "time")


def spec(name):
    return os.path.join(specs, name + ".json")


def out(name):
    return os.path.join(work, name)


def timed(name, *args):
    r = run("time", spec(name), "--min-time", "0.5", "--timeout", "4", *args)
    print(f"$ bitproof time {name} {' '.join(args)}  (exit {r.returncode})\n{r.stdout}{r.stderr}")
    return r


r = timed("k-loop-same", "--claim", "same within 3%", "--calibrate", "--report", out("same.json"), "--markdown",
          out("same.md"), "--svg", out("same.svg"), "--junit", out("same.xml"))
check("A against A: exit 0 under \"same within 3%\"", r.returncode == 0, r.stdout + r.stderr)
same = load(out("same.json"))
check("... verdict same", same["result"]["run"]["verdict"] == "same", same["result"]["run"]["sentence"])
check("... calibration (A against A') same", same["result"]["calibration"]["verdict"] == "same")
check("... every sample's clock recorded", all(s[4] > 0 for s in same["result"]["run"]["samples"]))
check("... the L2 flush is twice the L2", same["environment"]["device"]["l2_flush_bytes"]
      == 2 * same["environment"]["device"]["l2_bytes"])
v = run("report", "verify", out("same.json"))
check("report verify: the statistics re-derive from the samples (exit 0)", v.returncode == 0, v.stdout + v.stderr)
r = timed("k-loop-same", "--claim", "B faster by 5%")
check("A against A: \"B faster by 5%\" fails (exit 1)", r.returncode == 1, r.stdout + r.stderr)

r = timed("k-loop-twice", "--claim", "twice slower by 50%", "--report", out("twice.json"))
check("twice the K loop: exit 0 under \"twice slower by 50%\"", r.returncode == 0, r.stdout + r.stderr)
twice = load(out("twice.json"))["result"]["run"]
check("... verdict slower, ratio near 2", twice["verdict"] == "slower"
      and 1.7 < twice["statistics"]["ratio"] < 2.3, twice["sentence"])
r = timed("k-loop-twice", "--claim", "twice faster by 5%")
check("... \"twice faster by 5%\" fails (exit 1)", r.returncode == 1, r.stdout + r.stderr)

r = run("time", spec("lut-same"), "--protocol", "naive", "--report", out("naive.json"))
print(r.stdout + r.stderr)
naive = load(out("naive.json"))["result"]["run"]
check("the PR's mistake: naive A-then-B on identical arms (one module, a cold first use) reports B faster by over 20 %",
      r.returncode == 0 and naive["verdict"] == "faster" and naive["statistics"]["ratio"] < 0.8, naive["sentence"])
r = timed("lut-same", "--report", out("gate.json"), "--claim", "same within 2%")
gate = load(out("gate.json"))["result"]["run"]
check("... the gate on the same arms: same or order-dependent", gate["verdict"] in ("same", "order-dependent"),
      gate["sentence"])
r = timed("dsv4-w13-same", "--report", out("w13.json"))
w13 = load(out("w13.json"))["result"]["run"]
check("identical operator arms (the DeepSeek V4 W13 decode GEMM, each its own graph and weights): same",
      w13["verdict"] == "same", w13["sentence"])

r = timed("k-loop-same", "--isolate", "--report", out("isolated.json"))
check("--isolate: each arm in its own process, A against A same", r.returncode == 0
      and load(out("isolated.json"))["result"]["run"]["verdict"] == "same", r.stdout + r.stderr)
r = timed("k-loop-twice", "--cache", "hot", "--order", "random", "--report", out("hot.json"))
check("--cache hot --order random: twice is slower", load(out("hot.json"))["result"]["run"]["verdict"] == "slower",
      r.stdout)
m = run("report", "render", out("hot.json"), "--markdown", out("hot.md"))
check("report render --markdown of a time report", m.returncode == 0 and "bitproof time" in open(out("hot.md")).read(),
      m.stdout + m.stderr)
print(f"{len(bptest.failures)} failure(s)" if bptest.failures else "all time GPU checks passed")
sys.exit(1 if bptest.failures else 0)
