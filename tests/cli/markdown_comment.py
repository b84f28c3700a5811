#!/usr/bin/env python3
"""markdown_comment.py BITPROOF SOURCE_DIR WORKDIR: a proof's Markdown read as a PR comment,
and the words of its counterexamples (issue 50).

- A counterexample is tagged with the kind of mismatch, not of the input: "case N (mismatch:
  nan)" in the terminal and in the Markdown; the JSON "kind" field stays as it was.
- The claims' summaries appear once (the table), not again as an indented code block; a
  finding's cell says what failed; counterexample lines join the inputs with commas and end
  without ";".
- "Reproduce (from ...)" says where the recorded command works: the repository's root when run
  there, the directory in the repository it ran in, else the directory it was run in.
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bptest import check, failures, load, setup  # noqa: E402

bp, root, work, env, run = setup(own_cache=False)
spec = os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json")
md_path, json_path = os.path.join(work, "edge.md"), os.path.join(work, "edge.json")

# Past the fold's edge: refuted at scale 129, where the folded path gives NaN.
done = run("prove", spec, "--scales", "114:129", "--markdown", md_path, "--report", json_path, cwd=root)
check("prove past the edge: exit 1 (refuted)", done.returncode == 1, done.stdout + done.stderr)
check("the terminal tags a counterexample with its mismatch: (mismatch: nan)",
      re.search(r"^  case \d+ \(mismatch: nan\): element=", done.stdout, re.M) is not None, done.stdout)
check("no counterexample tagged the old way: case N (nan):", re.search(r"case \d+ \(nan\)", done.stdout) is None)
md = open(md_path).read() if os.path.exists(md_path) else ""
report = load(json_path) if os.path.exists(json_path) else {}
kinds = {cx["kind"] for c in report.get("result", {}).get("claims", []) for cx in c["counterexamples"]}
check("the JSON keeps \"kind\": \"nan\"", "nan" in kinds, kinds)

cases = [line for line in md.splitlines() if re.match(r"^\s*- case \d+ ", line)]
check("the Markdown tags counterexamples with their mismatch",
      cases and all(re.match(r"^\s*- case \d+ \(mismatch: [a-z-]+\): ", line) for line in cases), cases[:3])
check("counterexample lines do not end with ';' and join inputs with ', '",
      cases and not any(line.rstrip().endswith(";") for line in cases)
      and all(re.search(r"= [^;,]+, scale `0x", line) for line in cases), cases[:3])
outside = re.sub(r"```.*?```", "", md, flags=re.S)
indented = [line for line in outside.splitlines() if line.startswith("    ") and not line.lstrip().startswith("-")]
check("the summary appears once: no indented code block repeats the table", not indented, indented[:3])
check("the table is there", "| claim | recipes | holding | result |" in md, md[:600])

finding = os.path.join(work, "finding.md")
done = run("prove", os.path.join(root, "proofs", "fnuz-e4m3-bf16-nan-guard.json"), "--backend", "cpu",
           "--markdown", finding, cwd=root)
text = open(finding).read() if done.returncode == 0 else ""
check("a finding's table cell says what failed", "refuted as expected (finding: 1 fail: all nan)" in text,
      done.stderr + text[:1500])

# Where "Reproduce" says to run the recorded command.
in_repo = os.path.exists(os.path.join(root, ".git"))
if in_repo:
    done = run("prove", spec, "--markdown", os.path.join(work, "root.md"), cwd=root)
    text = open(os.path.join(work, "root.md")).read() if done.returncode == 0 else ""
    check("run at the repository root: Reproduce (from the repository root)",
          "\nReproduce (from the repository root):\n" in text, text[-600:])
    done = run("prove", "dsv4-mxfp4-fp16-fold.json", "--markdown", os.path.join(work, "sub.md"),
               cwd=os.path.join(root, "proofs"))
    text = open(os.path.join(work, "sub.md")).read() if done.returncode == 0 else ""
    check("run in proofs/: Reproduce (from `proofs` in the repository)",
          "\nReproduce (from `proofs` in the repository):\n" in text, text[-600:])
else:
    print("skip: the source tree is not a git checkout (no .git)")
outside_dir = tempfile.mkdtemp()
try:
    shutil.copy(spec, outside_dir)
    done = run("prove", "dsv4-mxfp4-fp16-fold.json", "--markdown", "out.md", cwd=outside_dir)
    text = open(os.path.join(outside_dir, "out.md")).read() if done.returncode == 0 else ""
    check("run outside any repository: Reproduce (from the directory it was run in)",
          "\nReproduce (from the directory it was run in):\n" in text and "repository" not in text.split("Reproduce")[1][:80],
          done.stderr + text[-600:])
finally:
    shutil.rmtree(outside_dir)
sys.exit(1 if failures else 0)
