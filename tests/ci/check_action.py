#!/usr/bin/env python3
"""check_action.py ACTION_YML DOCS_CI_MD [--shellcheck]

GitHub Actions cannot run here, so this checks action.yml's structure (python3-yaml):
a composite action whose inputs, steps and outputs refer to each other consistently; every
`run:` step in bash calling scripts that exist; third-party actions pinned to a commit SHA
with its version in a comment; the prove step never failing the job before the reports are
published, and the last step giving the verdict; the PR comment and the JUnit check guarded
against pull requests from forks and unable to fail the job; the comment found by its marker.
User code: allow-user-code (default false) reaches prove.sh; nothing proves under
pull_request_target (a first step fails the job there, the prove step is guarded, and no
publishing step names that event). comment/action.yml (the workflow_run comment) checks
nothing out and runs no step of its own: it posts through scripts/ci/post-comment.js.
Every YAML block of docs/ci.md parses; every `with:` given to either action there names one
of its inputs; no workflow there runs on pull_request_target; a workflow that proves has
no write permission; a workflow_run workflow checks nothing out, proves nothing and runs no
command, only downloads and comments; third-party actions are pinned by SHA. Each check runs
first on mutated copies, each of which must be caught (negative controls), then on the real
files.
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
REQUIRED_INPUTS = {"specs": "proofs/*.json", "backend": "cpu", "ref": "", "tarball-url": "", "comment": "true",
                   "allow-user-code": "false"}
FORK_GUARD = "github.event.pull_request.head.repo.full_name == github.repository"
NOT_PRT = "github.event_name != 'pull_request_target'"
PINNED = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}")


def pin_problem(uses, raw):
    """Why a third-party `uses:` is not pinned: a full commit SHA, its version in a comment on its line."""
    if not PINNED.fullmatch(uses):
        return f"uses {uses}: not pinned to a commit SHA"
    if not re.search(re.escape(uses) + r"\s+#\s*v\d", raw):
        return f"uses {uses}: no `# vX.Y.Z` comment naming the version the SHA is"
    return None


def triggers(workflow):
    """A workflow's events (PyYAML reads the key `on` as True)."""
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on}
    return set(on or [])


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


def problems_of(action, raw=None):
    raw = action_raw if raw is None else raw
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
        if "uses" in s and (why := pin_problem(s["uses"], raw)):
            p.append(f"{label}: {why}")
    by_name = {s.get("name"): s for s in steps}
    prove = next((s for s in steps if s.get("id") == "prove"), None)
    if prove is None:
        p.append("no step with id prove")
    else:
        if not re.search(r"scripts/ci/prove\.sh\"?\s*\|\|\s*true\s*$", prove.get("run", "")):
            p.append("the prove step can fail the job before the reports are published (no `|| true`)")
    # pull_request_target: a write token beside the pull request's code. Nothing proves there.
    guard = steps[0]
    if not (re.sub(r"\s+", " ", str(guard.get("if", ""))) == "github.event_name == 'pull_request_target'"
            and re.search(r"exit [1-9]", guard.get("run", ""))):
        p.append("the first step does not fail the job under pull_request_target")
    for i, s in enumerate(steps):
        label = f"step {i} ({s.get('name')})"
        if "prove.sh" in s.get("run", "") and NOT_PRT not in re.sub(r"\s+", " ", str(s.get("if", ""))):
            p.append(f"{label}: may prove under pull_request_target (no `{NOT_PRT}`)")
        if s is not guard and "pull_request_target" in re.sub(NOT_PRT, "", str(s.get("if", ""))):
            p.append(f"{label}: runs under pull_request_target")
    if prove is not None and (prove.get("env") or {}).get("ALLOW_USER_CODE") != "${{ inputs.allow-user-code }}":
        p.append("allow-user-code does not reach prove.sh (env ALLOW_USER_CODE)")
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
        env = comment.get("env") or {}
        if "MARKER" not in env or "startsWith(marker)" not in script or not posts_by_marker(env, script, root):
            p.append("the comment is not found by its marker and updated")
    if not any("actions/cache/restore@" in s.get("uses", "") for s in steps) or not any(
            "actions/cache/save@" in s.get("uses", "") for s in steps):
        p.append("no cache restore and save")
    return p


def posts_by_marker(env, script, base):
    """The step posts through scripts/ci/post-comment.js, which finds the comment by its marker and updates it."""
    target = str(env.get("POST_COMMENT", ""))
    if "require(process.env.POST_COMMENT)" not in script or not target.startswith("${{ github.action_path }}/"):
        return False
    path = os.path.normpath(os.path.join(base, target.split("}}/", 1)[1]))
    if not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8") as f:
        js = f.read()
    return all(x in js for x in ("updateComment", "startsWith(marker)", "pr.head.sha !== run.head_sha"))


def comment_action_problems(comment, raw):
    """comment/action.yml: a composite action of one github-script step that posts a file; no checkout, no command."""
    p = []
    if (comment.get("runs") or {}).get("using") != "composite":
        p.append("comment action: runs.using is not composite")
    steps = (comment.get("runs") or {}).get("steps") or []
    for i, s in enumerate(steps):
        label = f"comment action step {i} ({s.get('name')})"
        if "run" in s:
            p.append(f"{label}: runs a command (it may only post)")
        uses = s.get("uses", "")
        if "checkout" in uses:
            p.append(f"{label}: checks out code")
        elif not uses.startswith("actions/github-script@"):
            p.append(f"{label}: uses {uses}, not actions/github-script")
        elif (why := pin_problem(uses, raw)):
            p.append(f"{label}: {why}")
        elif not posts_by_marker(s.get("env") or {}, (s.get("with") or {}).get("script", ""),
                                 os.path.join(root, "comment")):
            p.append(f"{label}: does not post through scripts/ci/post-comment.js")
    if not steps:
        p.append("comment action: no steps")
    return p


def is_comment_action(uses):
    return re.search(r"bitproof/comment(@|$)", uses) is not None


def is_prove_action(uses):
    return not is_comment_action(uses) and (re.search(r"(^|/)bitproof(@|$)", uses) is not None or uses.startswith("./"))


def workflow_problems(n, doc, text):
    """A workflow of docs/ci.md: the split GitHub recommends for pull requests."""
    p = []
    where = f"docs/ci.md YAML block {n}"
    events = triggers(doc)
    if "pull_request_target" in events:
        p.append(f"{where}: runs on pull_request_target")
    top = doc.get("permissions")
    for name, job in (doc.get("jobs") or {}).items():
        steps = job.get("steps") or []
        perms = job.get("permissions", top)
        proves = any(is_prove_action(s.get("uses", "")) for s in steps)
        if proves and (not isinstance(perms, dict) or any(v != "read" for v in perms.values())):
            p.append(f"{where}: job {name} proves with permissions {perms!r} (only contents: read)")
        if "workflow_run" in events:
            for s in steps:
                uses = s.get("uses", "")
                if "checkout" in uses:
                    p.append(f"{where}: job {name} (workflow_run) checks out code")
                if is_prove_action(uses):
                    p.append(f"{where}: job {name} (workflow_run) proves")
                if "run" in s:
                    p.append(f"{where}: job {name} (workflow_run) runs a command")
        for s in steps:
            uses = s.get("uses", "")
            if uses and not uses.startswith("./") and not is_prove_action(uses) and not is_comment_action(uses):
                if (why := pin_problem(uses, text)):
                    p.append(f"{where}: {why}")
    return p


def docs_problems(action, docs):
    p = []
    blocks = re.findall(r"```ya?ml\n(.*?)```", docs, re.S)
    if not blocks:
        p.append("docs/ci.md has no YAML block")
    inputs = set((action.get("inputs") or {}).keys())
    comment_inputs = set((comment_action.get("inputs") or {}).keys())
    users = 0
    events = set()
    for n, text in enumerate(blocks):
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            p.append(f"docs/ci.md YAML block {n}: {e}")
            continue
        if isinstance(doc, dict) and "jobs" in doc:
            p += workflow_problems(n, doc, text)
            events |= triggers(doc)
        for job in ((doc or {}).get("jobs") or {}).values():
            for s in job.get("steps") or []:
                uses = s.get("uses", "")
                if is_prove_action(uses) or is_comment_action(uses):
                    users += 1
                    own, name = (comment_inputs, "comment/action.yml") if is_comment_action(uses) else (inputs, "action.yml")
                    for k in (s.get("with") or {}):
                        if k not in own:
                            p.append(f"docs/ci.md YAML block {n}: with: {k} is not an input of {name}")
    if users == 0:
        p.append("docs/ci.md shows no job using the action")
    if "workflow_run" not in events or "pull_request" not in events:
        p.append("docs/ci.md shows no pull_request workflow with a workflow_run workflow beside it")
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
    action_raw = f.read()
action = yaml.safe_load(action_raw)
with open(os.path.join(root, "comment", "action.yml")) as f:
    comment_raw = f.read()
comment_action = yaml.safe_load(comment_raw)
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
    ("an action pinned to a tag", lambda a: step(a, "Upload the reports").update({"uses": "actions/upload-artifact@v4"}),
     "not pinned to a commit SHA"),
    ("the pull_request_target guard removed", lambda a: a["runs"]["steps"].pop(0),
     "does not fail the job under pull_request_target"),
    ("prove under pull_request_target", lambda a: step(a, "Prove").pop("if"), "may prove under pull_request_target"),
    ("the comment under pull_request_target (as it was)", lambda a: step(a, "Sticky PR comment").update(
        {"if": "always() && (github.event_name == 'pull_request_target' || " + FORK_GUARD + ")"}),
     "runs under pull_request_target"),
    ("allow-user-code not passed", lambda a: step(a, "Prove")["env"].pop("ALLOW_USER_CODE"),
     "allow-user-code does not reach prove.sh"),
    ("allow-user-code on by default", lambda a: a["inputs"]["allow-user-code"].update({"default": "true"}),
     "input allow-user-code: default"),
    ("the comment posted without the marker script", lambda a: step(a, "Sticky PR comment")["env"].update(
        {"POST_COMMENT": "${{ github.action_path }}/scripts/ci/gone.js"}), "not found by its marker"),
    ("no verdict step last", lambda a: a["runs"]["steps"].pop(), "the last step is not the verdict"),
    ("a step used before it is defined", lambda a: a["runs"]["steps"].insert(0, a["runs"]["steps"].pop(
        a["runs"]["steps"].index(step(a, "bitproof tree")))), "not defined before it"),
]


def caught(what, found, expected):
    """0 when a mutation's problems name what it broke, else 1 (printed either way)."""
    if any(expected in x for x in found):
        print(f"ok   negative control caught: {what}")
        return 0
    print(f"FAIL negative control not caught: {what} (problems: {found})")
    return 1


failures = 0
for what, change, expected in mutations:
    failures += caught(what, problems_of(mutated(change)), expected)
docs_mutations = [
    ("docs pass an input the action lacks",
     "jobs:\n  j:\n    steps:\n      - uses: ./\n        with:\n          no-such-input: 1\n", "no-such-input"),
    ("docs pass the comment action an input it lacks",
     "jobs:\n  j:\n    steps:\n      - uses: OWNER/bitproof/comment@REF\n        with:\n          specs: x\n",
     "with: specs is not an input of comment/action.yml"),
    ("a workflow on pull_request_target",
     "on: pull_request_target\npermissions:\n  contents: read\njobs:\n  j:\n    steps:\n      - uses: ./\n",
     "runs on pull_request_target"),
    ("a proving job with a write token",
     "on: pull_request\npermissions:\n  contents: read\n  pull-requests: write\njobs:\n  j:\n    steps:\n"
     "      - uses: ./\n", "proves with permissions"),
    ("a proving job with the default token",
     "on: pull_request\njobs:\n  j:\n    steps:\n      - uses: OWNER/bitproof@REF\n", "proves with permissions"),
    ("the comment job checks out the pull request",
     "on:\n  workflow_run:\n    workflows: [bitproof]\njobs:\n  c:\n    steps:\n      - uses: actions/checkout@"
     "11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n        with:\n"
     "          ref: ${{ github.event.workflow_run.head_sha }}\n", "(workflow_run) checks out code"),
    ("the comment job runs a command",
     "on:\n  workflow_run:\n    workflows: [bitproof]\njobs:\n  c:\n    steps:\n      - run: bash x.sh\n",
     "(workflow_run) runs a command"),
    ("the comment job proves",
     "on:\n  workflow_run:\n    workflows: [bitproof]\njobs:\n  c:\n    permissions:\n      contents: read\n"
     "    steps:\n      - uses: ./third_party/bitproof\n", "(workflow_run) proves"),
    ("an unpinned action in the docs",
     "on: push\njobs:\n  j:\n    steps:\n      - uses: actions/download-artifact@v4\n", "not pinned to a commit SHA"),
]
for what, block, expected in docs_mutations:
    failures += caught(what, docs_problems(action, docs + "\n```yaml\n" + block + "```\n"), expected)
comment_mutations = [
    ("the comment action checks out", lambda c: c["runs"]["steps"].insert(0, {"uses": "actions/checkout@" + "0" * 40}),
     "checks out code"),
    ("the comment action runs a command", lambda c: c["runs"]["steps"].append({"run": "bash x.sh", "shell": "bash"}),
     "runs a command"),
    ("the comment action's script unpinned", lambda c: c["runs"]["steps"][0].update({"uses": "actions/github-script@v7"}),
     "not pinned to a commit SHA"),
]
for what, change, expected in comment_mutations:
    c = copy.deepcopy(comment_action)
    change(c)
    failures += caught(what, comment_action_problems(c, comment_raw), expected)

real = problems_of(action) + docs_problems(action, docs) + comment_action_problems(comment_action, comment_raw)
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
