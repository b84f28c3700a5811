#!/usr/bin/env python3
"""time.py BITPROOF SOURCE_DIR WORKDIR: `bitproof time` without a GPU (issue 15).

Bad timing specs and flags: one line naming the file and field, exit 2, before any
device work. No GPU: exit 3 with one line. The committed H200 timing report
(reports/time/) verifies from its own samples on this machine, and every kind of
tampering with it is caught: a moved sample (exit 2), a changed time (NOT
VERIFIED, exit 1), a verdict that its samples do not give (exit 1)."""
import copy
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bptest  # noqa: E402
from bptest import check, load  # noqa: E402

bp, root, work, env, run = bptest.setup(own_cache=True)
good = load(os.path.join(root, "proofs", "time", "k-loop-twice.json"))


def write_json(name, doc):
    path = os.path.join(work, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f) if not isinstance(doc, str) else f.write(doc)
    return path


def bad(what, args, pattern, code=2):
    r = run(*args)
    lines = r.stderr.strip().splitlines()
    ok = r.returncode == code and len(lines) == 1 and re.search(pattern, r.stderr) is not None
    check(f"{what}: exit {code}, one line", ok, f"exit {r.returncode}: {r.stdout}{r.stderr}")


def spec_with(name, change):
    doc = copy.deepcopy(good)
    change(doc)
    # Kernel sources resolve against the spec's directory: keep the committed one reachable.
    for arm in doc.get("arms", []):
        if isinstance(arm, dict) and arm.get("file") == "k_loop.cu":
            arm["file"] = os.path.join(root, "proofs", "time", "k_loop.cu")
    return write_json(name, doc)


bad("not JSON", ["time", write_json("t0.json", "{")], r"t0\.json")
bad("neither a timing nor an A/B spec", ["time", write_json("t1.json", {"name": "x"})],
    r"t1\.json: \(top level\): neither a timing spec")
bad("one arm", ["time", spec_with("t2.json", lambda d: d["arms"].pop())], r"t2\.json: arms: expected exactly two arms")
bad("an empty buffer", ["time", spec_with("t3.json", lambda d: d["buffers"][0].update(bytes=0))],
    r"t3\.json: buffers\[0\]\.bytes: must lie in")
bad("an argument naming no buffer", ["time", spec_with("t4.json", lambda d: d["arms"][1]["args"][0].update(buffer="z"))],
    r"t4\.json: arms\[1\]\.args\[0\]\.buffer: names no buffer")
bad("a kernel file that is not there", ["time", spec_with("t5.json", lambda d: d["arms"][0].update(file="nope.cu"))],
    r"t5\.json: arms\[0\]\.file: no such file")
bad("a zero grid", ["time", spec_with("t6.json", lambda d: d["arms"][0].update(grid=[0]))], r"t6\.json: arms\[0\]\.grid\[0\]")
bad("a block past 1024 threads", ["time", spec_with("t7.json", lambda d: d["arms"][0].update(block=[64, 32]))],
    r"t7\.json: arms\[0\]\.block: more than 1024 threads")
bad("an unknown key", ["time", spec_with("t8.json", lambda d: d.update(warmup=3))], r"t8\.json: .*warmup")
bad("a u32 argument past 32 bits", ["time", spec_with("t9.json", lambda d: d["arms"][0]["args"][3].update(u32=2**33))],
    r"t9\.json: arms\[0\]\.args\[3\]\.u32: does not fit 32 bits")
spec = os.path.join(root, "proofs", "time", "k-loop-twice.json")
bad("a claim without a percentage", ["time", spec, "--claim", "twice faster"], r"--claim \"twice faster\": expected")
bad("a claim about an arm that is not there", ["time", spec, "--claim", "thrice faster by 5%"], r"no arm \"thrice\"")
bad("naive with a claim", ["time", spec, "--protocol", "naive", "--claim", "B faster by 5%"], r"--protocol naive")
bad("--noise 0", ["time", spec, "--noise", "0"], r"--noise")
bad("--checkpoint with a kernel spec", ["time", spec, "--checkpoint", work], r"--checkpoint: only an A/B spec")
if not os.path.exists("/dev/nvidiactl"):
    bad("no GPU", ["time", spec], r"(no CUDA|without the CUDA backend|libcuda|no device)", code=3)

# The committed H200 report: verified from its own samples, tampering caught.
committed = os.path.join(root, "reports", "time", "k-loop-twice.json")
if not os.path.exists(committed):  # written by bench/time.sh on a GPU machine
    print(f"{len(bptest.failures)} failure(s); the committed-report checks did not run: no {committed}")
    sys.exit(1 if bptest.failures else 0)
v = run("report", "verify", committed)
check("the committed timing report verifies here (exit 0)", v.returncode == 0 and "verified" in v.stdout,
      v.stdout + v.stderr)
rep = load(committed)
check("the committed report is the control's verdict: twice the FMA chain is slower, ratio near 2",
      rep["result"]["run"]["verdict"] == "slower" and 1.8 < rep["result"]["run"]["statistics"]["ratio"] < 2.2,
      json.dumps(rep["result"]["run"]["statistics"])[:300])
t = copy.deepcopy(rep)
t["result"]["run"]["samples"][0][3] *= 3
r = run("report", "verify", write_json("changed.json", t))
check("a changed sample time: NOT VERIFIED (exit 1)", r.returncode == 1 and "NOT VERIFIED" in r.stdout, r.stdout + r.stderr)
t = copy.deepcopy(rep)
t["result"]["run"]["verdict"] = "faster"
r = run("report", "verify", write_json("verdict.json", t))
check("a verdict the samples do not give: NOT VERIFIED (exit 1)", r.returncode == 1, r.stdout + r.stderr)
t = copy.deepcopy(rep)
t["result"]["run"]["samples"][0][0] = 1 - t["result"]["run"]["samples"][0][0]
bad("a sample moved to the other arm", ["report", "verify", write_json("moved.json", t)],
    r"moved\.json: result\.run\.samples\[0\]: is not where the recorded block order puts it")
t = copy.deepcopy(rep)
t["result"]["run"]["samples"][0][4] = 1.0
bad("a clock below the throttle threshold not marked throttled", ["report", "verify", write_json("clock.json", t)],
    r"throttle mark")
m = run("report", "render", committed, "--markdown", os.path.join(work, "r.md"), "--junit", os.path.join(work, "r.xml"))
check("render: Markdown and JUnit", m.returncode == 0 and "bitproof time" in open(os.path.join(work, "r.md")).read(),
      m.stdout + m.stderr)
print(f"{len(bptest.failures)} failure(s)" if bptest.failures else "all time CLI checks passed")
sys.exit(1 if bptest.failures else 0)
