#!/usr/bin/env python3
"""check_action.py ACTION_YML DOCS_CI_MD [--shellcheck]

GitHub Actions cannot run here, so this checks action.yml's structure (python3-yaml):
a composite action whose inputs, steps and outputs refer to each other consistently; every
`run:` step in bash calling scripts that exist; third-party actions pinned to a major
version; the prove step never failing the job before the reports are published, and the
last step giving the verdict; the PR comment and the JUnit check guarded against pull
requests from forks and unable to fail the job; the comment found by its marker. Every
YAML block of docs/ci.md parses, and every `with:` given to this action there names an
input. Each check runs first on mutated copies of action.yml, each of which must be caught
(negative controls), then on the real file.
With --shellcheck: every run block, its ${{ }} expressions replaced by a word, passes
shellcheck (exit 77, a skip, when shellcheck is not installed).
Exit 0 when everything holds, 1 otherwise.
"""
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

action_path, docs_path = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.abspath(action_path))
REQUIRED_INPUTS = {"specs": "proofs/*.json", "backend": "cpu", "ref": "", "tarball-url": "", "comment": "true"}
FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository"


def expressions(node):
    """Every ${{ }} expression anywhere in a parsed YAML node."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from expressions(k)
            yield from expressions(v)
    elif isinstance(node, list):
        for v in node:
            yield from expressions(v)
    elif isinstance(node, str):
        yield from re.findall(r"\$\{\{(.*?)\}\}", node, re.S)


def problems_of(action):
    p = []
    if not isinstance(action, dict):
        return ["not a mapping"]
    for key in ("name", "description", "inputs", "runs"):
        if key not in action:
            p.append(f"no {key}")
    runs = action.get("runs") or {}
    if runs.get("using") != "composite":
        p.append("runs.using is not composite")
    inputs = action.get("inputs") or {}
    for name, default in REQUIRED_INPUTS.items():
        if name not in inputs:
            p.append(f"no input {name}")
        elif str(inputs[name].get("default", "")) != default:
            p.append(f"input {name}: default {inputs[name].get('default')!r}, expected {default!r}")
    for name, spec in inputs.items():
        if not (spec or {}).get("description"):
            p.append(f"input {name} has no description")
    steps = runs.get("steps") or []
    if not steps:
        return p + ["no steps"]
    ids = [s.get("id") for s in steps if s.get("id")]
    if len(ids) != len(set(ids)):
        p.append("duplicate step ids")
    # Every inputs.X / steps.Y referred to exists (steps: defined before use).
    for expr in expressions(action):
        for name in re.findall(r"\binputs\.([A-Za-z0-9_-]+)", expr):
            if name not in inputs:
                p.append(f"expression refers to undeclared input {name}")
    seen = set()
    for i, s in enumerate(steps):
        for expr in expressions(s):
            for sid in re.findall(r"\bsteps\.([A-Za-z0-9_-]+)\.", expr):
                if sid not in seen:
                    p.append(f"step {i} ({s.get('name')}) refers to step {sid} not defined before it")
        if s.get("id"):
            seen.add(s["id"])
    for name, out in (action.get("outputs") or {}).items():
        for expr in expressions(out):
            for sid in re.findall(r"\bsteps\.([A-Za-z0-9_-]+)\.", expr):
                if sid not in ids:
                    p.append(f"output {name} refers to unknown step {sid}")
    for i, s in enumerate(steps):
        label = f"step {i} ({s.get('name')})"
        if ("run" in s) == ("uses" in s):
            p.append(f"{label}: needs exactly one of run and uses")
        if "run" in s:
            if s.get("shell") != "bash":
                p.append(f"{label}: run without shell: bash (composite steps need a shell)")
            for script in re.findall(r"\$GITHUB_ACTION_PATH/([A-Za-z0-9_./-]+)", s["run"]):
                if not os.path.isfile(os.path.join(root, script)):
                    p.append(f"{label}: runs {script}, which does not exist")
        if "uses" in s and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@v\d+", s["uses"]):
            p.append(f"{label}: uses {s['uses']}: not pinned to a major version")
    by_name = {s.get("name"): s for s in steps}
    prove = next((s for s in steps if s.get("id") == "prove"), None)
    if prove is None:
        p.append("no step with id prove")
    else:
        if not re.search(r"scripts/ci/prove\.sh\"?\s*\|\|\s*true\s*$", prove.get("run", "")):
            p.append("the prove step can fail the job before the reports are published (no `|| true`)")
    last = steps[-1]
    if "always()" not in str(last.get("if", "")) or "steps.prove.outputs.status" not in str(last.get("env", "")):
        p.append("the last step is not the verdict (if: always(), from steps.prove.outputs.status)")
    comment = by_name.get("Sticky PR comment")
    junit = by_name.get("Test results (JUnit)")
    for label, s in (("comment", comment), ("JUnit", junit)):
        if s is None:
            p.append(f"no {label} step")
            continue
        cond = re.sub(r"\s+", " ", str(s.get("if", "")))
        if FORK_GUARD not in cond:
            p.append(f"the {label} step is not guarded against pull requests from forks")
        if "always()" not in cond:
            p.append(f"the {label} step does not run after a refutation (no always())")
        if s.get("continue-on-error") is not True:
            p.append(f"the {label} step can fail the job (no continue-on-error)")
    if comment is not None:
        script = (comment.get("with") or {}).get("script", "")
        if "MARKER" not in str(comment.get("env", "")) or "updateComment" not in script or "startsWith(marker)" not in script:
            p.append("the comment is not found by its marker and updated")
    if not any("actions/cache/restore@" in s.get("uses", "") for s in steps) or not any(
            "actions/cache/save@" in s.get("uses", "") for s in steps):
        p.append("no cache restore and save")
    return p


def docs_problems(action, docs):
    p = []
    blocks = re.findall(r"```ya?ml\n(.*?)```", docs, re.S)
    if not blocks:
        p.append("docs/ci.md has no YAML block")
    inputs = set((action.get("inputs") or {}).keys())
    users = 0
    for n, text in enumerate(blocks):
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            p.append(f"docs/ci.md YAML block {n}: {e}")
            continue
        for job in ((doc or {}).get("jobs") or {}).values():
            for s in job.get("steps") or []:
                uses = s.get("uses", "")
                if re.search(r"(^|/)bitproof(@|$)", uses) or uses.startswith("./"):
                    users += 1
                    for k in (s.get("with") or {}):
                        if k not in inputs:
                            p.append(f"docs/ci.md YAML block {n}: with: {k} is not an input of action.yml")
    if users == 0:
        p.append("docs/ci.md shows no job using the action")
    if "example.invalid" in docs:
        p.append("docs/ci.md still has the placeholder clone address")
    return p


def shellcheck_problems(action):
    p = []
    for i, s in enumerate(action["runs"]["steps"]):
        if "run" not in s:
            continue
        body = re.sub(r"\$\{\{.*?\}\}", "EXPR", s["run"], flags=re.S)
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write("#!/usr/bin/env bash\n" + body)
        r = subprocess.run(["shellcheck", "-s", "bash", f.name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        os.unlink(f.name)
        if r.returncode != 0:
            p.append(f"step {i} ({s.get('name')}): shellcheck:\n{r.stdout}")
    return p


with open(action_path) as f:
    action = yaml.safe_load(f)
with open(docs_path) as f:
    docs = f.read()


def mutated(change):
    a = copy.deepcopy(action)
    change(a)
    return a


def step(a, name):
    return next(s for s in a["runs"]["steps"] if s.get("name") == name)


def drop_shell(a):
    next(s for s in a["runs"]["steps"] if "run" in s).pop("shell")


mutations = [
    ("fork guard dropped from the comment", lambda a: step(a, "Sticky PR comment").update(
        {"if": "always() && inputs.comment == 'true'"}), "comment step is not guarded"),
    ("fork guard dropped from JUnit", lambda a: step(a, "Test results (JUnit)").update({"if": "always()"}),
     "JUnit step is not guarded"),
    ("comment may fail the job", lambda a: step(a, "Sticky PR comment").pop("continue-on-error"),
     "comment step can fail"),
    ("an undeclared input", lambda a: step(a, "Prove")["env"].update({"X": "${{ inputs.no-such-input }}"}),
     "undeclared input no-such-input"),
    ("a run step without shell", drop_shell, "without shell"),
    ("a missing script", lambda a: step(a, "Prove").update({"run": 'bash "$GITHUB_ACTION_PATH/scripts/ci/gone.sh" || true'}),
     "does not exist"),
    ("the prove step fails early", lambda a: step(a, "Prove").update({"run": 'bash "$GITHUB_ACTION_PATH/scripts/ci/prove.sh"'}),
     "can fail the job before"),
    ("backend default gpu", lambda a: a["inputs"]["backend"].update({"default": "all"}), "input backend: default"),
    ("an unpinned action", lambda a: step(a, "Upload the reports").update({"uses": "actions/upload-artifact@main"}),
     "not pinned"),
    ("no verdict step last", lambda a: a["runs"]["steps"].pop(), "the last step is not the verdict"),
    ("a step used before it is defined", lambda a: a["runs"]["steps"].insert(0, a["runs"]["steps"].pop(
        a["runs"]["steps"].index(step(a, "bitproof tree")))), "not defined before it"),
]
failures = 0
for what, change, expected in mutations:
    found = problems_of(mutated(change))
    if any(expected in x for x in found):
        print(f"ok   negative control caught: {what}")
    else:
        print(f"FAIL negative control not caught: {what} (problems: {found})")
        failures += 1
docs_bad = docs_problems(action, docs + "\n```yaml\njobs:\n  j:\n    steps:\n      - uses: ./\n        with:\n"
                         "          no-such-input: 1\n```\n")
if any("no-such-input" in x for x in docs_bad):
    print("ok   negative control caught: docs pass an input the action lacks")
else:
    print("FAIL negative control not caught: docs pass an input the action lacks")
    failures += 1

real = problems_of(action) + docs_problems(action, docs)
for x in real:
    print(f"FAIL {x}")
failures += len(real)
if not real:
    print(f"ok   action.yml: {len(action['runs']['steps'])} steps, {len(action['inputs'])} inputs; docs/ci.md consistent")

if "--shellcheck" in sys.argv:
    if shutil.which("shellcheck") is None:
        print("shellcheck is not installed (Debian: shellcheck): skipped")
        sys.exit(77)
    bad = mutated(lambda a: step(a, "bitproof tree").update({"run": 'echo $UNQUOTED_PATH/x > $GITHUB_OUTPUT'}))
    if shellcheck_problems(bad):
        print("ok   negative control caught: an unquoted variable in a run block")
    else:
        print("FAIL negative control not caught by shellcheck")
        failures += 1
    sc = shellcheck_problems(action)
    for x in sc:
        print(f"FAIL {x}")
    failures += len(sc)
    if not sc:
        print("ok   every run block passes shellcheck")

sys.exit(1 if failures else 0)
