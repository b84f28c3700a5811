#!/usr/bin/env python3
"""tamper.py IN OUT [EDIT...]: a copy of a report with edits, for negative
controls of the commands that read reports back.

An EDIT is PATH=JSON (set a field; PATH is dot-separated keys and list
indices, e.g. result.shard.end=240006 or backends.0.result_identical=false;
PATH=@OTHER copies the field at OTHER), PATH+=JSON (append to a list), or -PATH (delete the field). Without edits the
recorded result claims one case fewer holds, its counts and verdicts made to agree (what only `report verify`'s
re-run can refuse)."""
import json
import sys


def walk(doc, path):
    """The container holding the last key of PATH, and that key."""
    keys = path.split(".")
    node = doc
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last = keys[-1]
    return node, int(last) if isinstance(node, list) else last


def apply(doc, edit):
    if edit.startswith("-"):
        node, key = walk(doc, edit[1:])
        del node[key]
    elif "+=" in edit:
        path, value = edit.split("+=", 1)
        node, key = walk(doc, path)
        node[key].append(json.loads(value))
    else:
        path, value = edit.split("=", 1)
        node, key = walk(doc, path)
        if value.startswith("@"):
            source, name = walk(doc, value[1:])
            node[key] = source[name]
        else:
            node[key] = json.loads(value)


with open(sys.argv[1], encoding="utf-8") as f:
    report = json.load(f)
edits = sys.argv[3:]
if not edits:
    # A lie that adds up: one case moved from holding to failing, counts and
    # verdicts kept consistent, so only re-running the spec can refute it.
    claim = report["result"]["claims"][0]
    claim["holding"] -= 1
    claim["failing"] += 1
    claim["by_kind"]["value"] = claim["by_kind"].get("value", 0) + 1
    claim["holds"] = False
    claim["verdict"] = "refuted"
    report["result"]["verdict"] = "refuted"
for edit in edits:
    apply(report, edit)
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(report, f, indent=2)
