#!/usr/bin/env python3
"""same_result.py A.json B.json: exit 0 when the `result` parts are byte-identical
(as serialised, key order kept), else print the first differing line and exit 1."""
import json
import sys


def result_text(path):
    with open(path, encoding="utf-8") as f:
        return json.dumps(json.load(f)["result"], indent=2, ensure_ascii=False).splitlines()


a, b = result_text(sys.argv[1]), result_text(sys.argv[2])
if a == b:
    print(f"result parts identical ({len(a)} lines)")
    sys.exit(0)
for i, (x, y) in enumerate(zip(a, b)):
    if x != y:
        print(f"line {i + 1} differs:\n  {sys.argv[1]}: {x}\n  {sys.argv[2]}: {y}")
        break
else:
    print(f"lengths differ: {len(a)} vs {len(b)} lines")
sys.exit(1)
