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
command, only downloads and comments; third-party actions are pinned by SHA.
Pins: every third-party action is pinned to the commit SHA of VERIFIED_PINS, with that tag in
its comment (checked against the tags of each action's repository). Composite actions never
use github.action_repository or github.action_ref (not promised there: github.action_path is).
action.yml installs its run-time needs (a C++ compiler) on every path, a cache hit included.
A job in a container whose image has no git (debian, ubuntu) installs git before
actions/checkout (else checkout falls back to the REST API: no submodules).
.github/workflows/*.yml parse and hold the same rules; release.yml builds on a tag with
scripts/ci/release-packages.sh in a job without write permission and attaches the .tar.gz,
the .deb and SHA256SUMS from a job that has it but checks nothing out and runs no script.
Every run block of the actions, the workflows and docs/ci.md's YAML passes `bash -n`.
Each check runs first on mutated copies, each of which must be caught (negative controls),
then on the real files.
With --shellcheck: every run block of action.yml, comment/action.yml, the workflows and
docs/ci.md, its ${{ }} expressions replaced by a word, passes shellcheck, and so does every
script they run (scripts/ci/*.sh) (exit 77, a skip, when shellcheck is not installed).
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
# Each third-party action's pin: the commit its tag names, checked (2026-12-07) with
# `git rev-parse TAG^{commit}` in a snapshot of the action's repository. A new pin is added here
# only after the same check.
VERIFIED_PINS = {
    "actions/checkout": ("v4.2.2", "11bd71901bbe5b1630ceea73d27597364c9af683"),
    "actions/cache/restore": ("v4.2.3", "5a3ec84eff668545956fd18022155c47e93e2684"),
    "actions/cache/save": ("v4.2.3", "5a3ec84eff668545956fd18022155c47e93e2684"),
    "actions/upload-artifact": ("v4.6.2", "ea165f8d65b6e75b540449e92b4886f43607fa02"),
    "actions/download-artifact": ("v4.3.0", "d3f86a106a0bac45b974a628896c90dbdf5c8093"),
    "actions/github-script": ("v7.0.1", "60a0d83039c74a4aee543508d2ffcb1c3799cdea"),
    "mikepenz/action-junit-report": ("v4.3.1", "db71d41eb79864e25ab0337e395c352e84523afe"),
}
GITLESS_IMAGES = re.compile(r"^(docker://)?(debian|ubuntu)(:|$)")
NOT_IN_COMPOSITE = re.compile(r"github\.action_(repository|ref)\b")


def pin_problem(uses, raw):
    """Why a third-party `uses:` is not pinned: the verified commit SHA of its tag, the tag in a comment on its line."""
    if not PINNED.fullmatch(uses):
        return f"uses {uses}: not pinned to a commit SHA"
    m = re.search(re.escape(uses) + r"\s+#\s*(v\d[\w.-]*)", raw)
    if not m:
        return f"uses {uses}: no `# vX.Y.Z` comment naming the version the SHA is"
    name, sha = uses.split("@")
    if VERIFIED_PINS.get(name) != (m.group(1), sha):
        return f"uses {uses} # {m.group(1)}: not a verified pin (VERIFIED_PINS: {VERIFIED_PINS.get(name)})"
    return None


def checkout_problems(where, job):
    """A job in a git-less container (debian, ubuntu) must install git before actions/checkout."""
    image = job.get("container")
    image = image.get("image", "") if isinstance(image, dict) else str(image or "")
    if not GITLESS_IMAGES.match(image):
        return []
    has_git = False
    for s in job.get("steps") or []:
        if re.search(r"apt-get install[^\n]*\sgit(\s|$)", str(s.get("run", ""))):
            has_git = True
        if str(s.get("uses", "")).startswith("actions/checkout@") and not has_git:
            return [f"{where}: actions/checkout in container {image} before git is installed (REST API fallback:"
                    " no submodules)"]
    return []


def run_blocks(node, where):
    """(label, script) of every run: in an action (runs.steps) or a workflow (jobs.*.steps)."""
    if "runs" in node:
        jobs = {"action": {"steps": (node.get("runs") or {}).get("steps") or []}}
    else:
        jobs = node.get("jobs") or {}
    for name, job in jobs.items():
        for i, s in enumerate((job or {}).get("steps") or []):
            if "run" in s:
                yield f"{where} {name} step {i} ({s.get('name')})", re.sub(r"\$\{\{.*?\}\}", "EXPR", s["run"], flags=re.S)


def bash_n_problems(node, where):
    p = []
    for label, body in run_blocks(node, where):
        r = subprocess.run(["bash", "-n"], input=body, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            p.append(f"{label}: bash -n: {r.stdout.strip()}")
    return p


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
    # A restored cache holds the tree, not the runner's packages: the compiler user recipes need is
    # installed on every path, after the restore and before the proofs.
    restore = next((i for i, s in enumerate(steps) if "actions/cache/restore@" in s.get("uses", "")), None)
    needs = [i for i, s in enumerate(steps) if "scripts/ci/runtime-needs.sh" in s.get("run", "")]
    prove_at = steps.index(prove) if prove is not None else None
    if not needs:
        p.append("no step installs the run-time needs (scripts/ci/runtime-needs.sh)")
    elif any(steps[i].get("if") not in (None, "") for i in needs):
        p.append("the run-time needs step is conditional: a cache hit may skip it")
    elif restore is None or prove_at is None or not restore < needs[0] < prove_at:
        p.append("the run-time needs step is not between the cache restore and the proofs")
    for expr in expressions(action):
        if NOT_IN_COMPOSITE.search(expr):
            p.append(f"expression ${{{{{expr}}}}}: github.action_repository/action_ref are not promised in a "
                     "composite action (github.action_path is)")
    p += bash_n_problems(action, "action.yml")
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
    for expr in expressions(comment):
        if NOT_IN_COMPOSITE.search(expr):
            p.append(f"comment action: ${{{{{expr}}}}} is not promised in a composite action")
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
        p += checkout_problems(f"{where}: job {name}", job)
    p += bash_n_problems(doc, where)
    return p


def release_problems(wf, raw, where=".github/workflows/release.yml"):
    """On a tag: a read-only job builds with scripts/ci/release-packages.sh; the job that may write
    checks nothing out, runs no script of the repository, verifies SHA256SUMS and attaches the
    .tar.gz, the .deb and SHA256SUMS."""
    p = []
    on = wf.get("on", wf.get(True)) or {}
    if not (isinstance(on, dict) and set(on) == {"push"} and (on["push"] or {}).get("tags")):
        p.append(f"{where}: not run on pushed tags alone (on: {on!r})")
    top = wf.get("permissions")
    if not isinstance(top, dict) or any(v != "read" for v in top.values()):
        p.append(f"{where}: top-level permissions {top!r} (contents: read only)")
    builds, publishes = [], []
    for name, job in (wf.get("jobs") or {}).items():
        perms = job.get("permissions", top)
        writes = isinstance(perms, dict) and any(v == "write" for v in perms.values())
        steps = job.get("steps") or []
        runs = "\n".join(str(s.get("run", "")) for s in steps)
        if "scripts/ci/release-packages.sh" in runs:
            builds.append(name)
            if writes:
                p.append(f"{where}: job {name} builds with write permission {perms!r}")
        if writes:
            publishes.append(name)
            for s in steps:
                if "checkout" in s.get("uses", "") or s.get("uses", "").startswith("./"):
                    p.append(f"{where}: job {name} holds a write token and checks out or runs the repository")
            if re.search(r"scripts/|\bbash\b|\./[A-Za-z]", runs.replace("./*", "")):
                p.append(f"{where}: job {name} holds a write token and runs a script")
            if not re.search(r"gh release upload[^\n]*\*\.tar\.gz[^\n]*\*\.deb[^\n]*SHA256SUMS", runs):
                p.append(f"{where}: job {name} does not attach the .tar.gz, the .deb and SHA256SUMS")
            if "sha256sum -c SHA256SUMS" not in runs:
                p.append(f"{where}: job {name} attaches files without checking SHA256SUMS")
        p += checkout_problems(f"{where}: job {name}", job)
        for s in steps:
            uses = s.get("uses", "")
            if uses and (why := pin_problem(uses, raw)):
                p.append(f"{where}: job {name}: {why}")
    if not builds:
        p.append(f"{where}: no job runs scripts/ci/release-packages.sh")
    if not publishes:
        p.append(f"{where}: no job attaches the assets (contents: write)")
    elif not all(builds and builds[0] in ([wf["jobs"][j].get("needs")] if isinstance(wf["jobs"][j].get("needs"), str)
                                        else wf["jobs"][j].get("needs") or []) for j in publishes):
        p.append(f"{where}: the publishing job does not wait for the build (needs:)")
    p += bash_n_problems(wf, where)
    if not os.path.isfile(os.path.join(root, "scripts", "ci", "release-packages.sh")):
        p.append("scripts/ci/release-packages.sh does not exist")
    return p


def inputs_default(name):
    return str(((action.get("inputs") or {}).get(name) or {}).get("default", ""))


def docs_problems(action, docs):
    p = []
    blocks = re.findall(r"```ya?ml\n(.*?)```", docs, re.S)
    if not blocks:
        p.append("docs/ci.md has no YAML block")
    inputs = set((action.get("inputs") or {}).keys())
    comment_inputs = set((comment_action.get("inputs") or {}).keys())
    users = 0
    events = set()
    uploaded, downloaded = set(), set()  # artifact names: the proving jobs', the workflow_run jobs'
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
                if is_prove_action(uses) and "workflow_run" not in triggers(doc or {}):
                    uploaded.add(str((s.get("with") or {}).get("artifact-name", inputs_default("artifact-name"))))
                if uses.startswith("actions/download-artifact@") and "workflow_run" in triggers(doc or {}):
                    downloaded.add(str((s.get("with") or {}).get("name", "")))
    if downloaded - uploaded:
        p.append(f"docs/ci.md: the comment workflow downloads artifact(s) {sorted(downloaded - uploaded)}, "
                 f"the proving workflow uploads {sorted(uploaded)}")
    if users == 0:
        p.append("docs/ci.md shows no job using the action")
    if "workflow_run" not in events or "pull_request" not in events:
        p.append("docs/ci.md shows no pull_request workflow with a workflow_run workflow beside it")
    if "example.invalid" in docs:
        p.append("docs/ci.md still has the placeholder clone address")
    return p


def shellcheck_problems(node, where="action.yml"):
    p = []
    for label, body in run_blocks(node, where):
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write("#!/usr/bin/env bash\n" + body)
        r = subprocess.run(["shellcheck", "-s", "bash", f.name], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        os.unlink(f.name)
        if r.returncode != 0:
            p.append(f"{label}: shellcheck:\n{r.stdout}")
    return p


def script_shellcheck_problems(paths):
    r = subprocess.run(["shellcheck", "-s", "bash"] + paths, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return [] if r.returncode == 0 else [f"shellcheck {' '.join(paths)}:\n{r.stdout}"]


def all_run_sources():
    """(where, parsed) of everything with run blocks: the actions, the workflows, docs/ci.md's YAML."""
    yield "action.yml", action
    yield "comment/action.yml", comment_action
    for name, wf, _ in workflows:
        yield name, wf
    for n, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", docs, re.S)):
        doc = yaml.safe_load(block)
        if isinstance(doc, dict) and "jobs" in doc:
            yield f"docs/ci.md YAML block {n}", doc


with open(action_path) as f:
    action_raw = f.read()
action = yaml.safe_load(action_raw)
with open(os.path.join(root, "comment", "action.yml")) as f:
    comment_raw = f.read()
comment_action = yaml.safe_load(comment_raw)
with open(docs_path) as f:
    docs = f.read()
workflows = []  # (path, parsed, text) of .github/workflows/*.yml
wf_dir = os.path.join(root, ".github", "workflows")
for name in sorted(os.listdir(wf_dir)) if os.path.isdir(wf_dir) else []:
    if name.endswith((".yml", ".yaml")):
        with open(os.path.join(wf_dir, name)) as f:
            wf_text = f.read()
        workflows.append((f".github/workflows/{name}", yaml.safe_load(wf_text), wf_text))
release = next(((wf, t) for n, wf, t in workflows if n.endswith("/release.yml")), None)


def mutated(change):
    a = copy.deepcopy(action)
    change(a)
    return a


def step(a, name):
    return next(s for s in a["runs"]["steps"] if s.get("name") == name)


def needs_after_prove(a):
    """The run-time needs step moved to just before the verdict (after the proofs)."""
    steps = a["runs"]["steps"]
    moved = steps.pop(steps.index(step(a, "Run-time needs")))
    steps.insert(len(steps) - 1, moved)


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
    ("the run-time needs only on a cache miss (the bug of issue 50)", lambda a: step(a, "Run-time needs").update(
        {"if": "steps.cache.outputs.cache-hit != 'true'"}), "run-time needs step is conditional"),
    ("the run-time needs step dropped", lambda a: a["runs"]["steps"].remove(step(a, "Run-time needs")),
     "no step installs the run-time needs"),
    ("the run-time needs after the proofs", needs_after_prove, "not between the cache restore and the proofs"),
    ("github.action_repository in a composite step", lambda a: step(a, "bitproof cache key")["env"].update(
        {"REPO": "${{ github.action_repository }}"}), "not promised in a composite action"),
    ("a run block bash cannot parse", lambda a: step(a, "bitproof tree").update({"run": "if true; then echo x\n"}),
     "bash -n"),
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
    ("the comment workflow downloads another artifact than the proofs upload",
     "on:\n  workflow_run:\n    workflows: [bitproof]\njobs:\n  c:\n    steps:\n      - uses: actions/download-artifact@"
     "d3f86a106a0bac45b974a628896c90dbdf5c8093 # v4.3.0\n        with:\n          name: bitproof-report\n",
     "downloads artifact(s) ['bitproof-report']"),
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
    ("github.action_ref in the comment action", lambda c: c["runs"]["steps"][0]["env"].update(
        {"REF": "${{ github.action_ref }}"}), "not promised in a composite action"),
]
for what, change, expected in comment_mutations:
    c = copy.deepcopy(comment_action)
    change(c)
    failures += caught(what, comment_action_problems(c, comment_raw), expected)
# A pin whose comment names another tag than the one its SHA was verified for.
failures += caught("a SHA pinned under another tag's comment", problems_of(action, action_raw.replace(
    "ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.2", "ea165f8d65b6e75b540449e92b4886f43607fa02 # v4.6.1")),
    "not a verified pin")
failures += caught("an unverified SHA (tag comment kept)", problems_of(mutated(
    lambda a: step(a, "Upload the reports").update({"uses": "actions/upload-artifact@" + "1" * 40})),
    action_raw.replace("ea165f8d65b6e75b540449e92b4886f43607fa02", "1" * 40)), "not a verified pin")
GIT_STEP = re.search(r"\n *- name: git for actions/checkout\n *run: [^\n]*", docs)
if GIT_STEP is None:
    print("FAIL docs/ci.md: no `git for actions/checkout` step before checkout in its container job")
    failures += 1
else:
    failures += caught("docs/ci.md's container job without its git step", docs_problems(
        action, docs.replace(GIT_STEP.group(0), "")), "before git is installed")


def release_mutation(change):
    wf = copy.deepcopy(release[0])
    change(wf)
    return wf


def publish_run(wf):
    return next(s for s in wf["jobs"]["publish"]["steps"] if "run" in s)


if release is None:
    print("FAIL no .github/workflows/release.yml")
    failures += 1
else:
    release_mutations = [
        ("the publishing job checks out the repository", lambda w: w["jobs"]["publish"]["steps"].insert(
            0, {"uses": "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"}), "checks out or runs"),
        ("the publishing job runs a script", lambda w: publish_run(w).update(
            {"run": "bash scripts/ci/x.sh\n" + publish_run(w)["run"]}), "runs a script"),
        ("the build job with a write token", lambda w: w["jobs"]["build"].update({"permissions": {"contents": "write"}}),
         "builds with write permission"),
        ("the .deb not attached", lambda w: publish_run(w).update({"run": publish_run(w)["run"].replace(" ./*.deb", "")}),
         "does not attach"),
        ("assets attached unchecked", lambda w: publish_run(w).update(
            {"run": publish_run(w)["run"].replace("sha256sum -c SHA256SUMS", "true")}), "without checking SHA256SUMS"),
        ("the release build without git in debian:12", lambda w: w["jobs"]["build"]["steps"].pop(0),
         "before git is installed"),
        ("a release on pull requests", lambda w: w.update({"on": {"pull_request": None, "push": {"tags": ["v*"]}}}),
         "not run on pushed tags alone"),
        ("publishing before the build", lambda w: w["jobs"]["publish"].pop("needs"), "does not wait for the build"),
        ("a write token for every job", lambda w: w.update({"permissions": {"contents": "write"}}),
         "top-level permissions"),
    ]
    for what, change, expected in release_mutations:
        failures += caught(what, release_problems(release_mutation(change), release[1]), expected)

real = problems_of(action) + docs_problems(action, docs) + comment_action_problems(comment_action, comment_raw)
for name, wf, text in workflows:
    if not isinstance(wf, dict) or "jobs" not in wf:
        real.append(f"{name}: not a workflow")
    elif name.endswith("/release.yml"):
        real += release_problems(wf, text, name)
    else:
        real += workflow_problems(name, wf, text)
for x in real:
    print(f"FAIL {x}")
failures += len(real)
if not real:
    print(f"ok   action.yml: {len(action['runs']['steps'])} steps, {len(action['inputs'])} inputs; docs/ci.md consistent; "
          f"{len(workflows)} workflow(s): {', '.join(n for n, _, _ in workflows)}")

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
    if release is not None:
        bad_wf = release_mutation(lambda w: publish_run(w).update({"run": "cd dist\n" + publish_run(w)["run"]}))
        if shellcheck_problems(bad_wf, "release.yml"):
            print("ok   negative control caught: a workflow run block shellcheck warns about (cd without || exit)")
        else:
            print("FAIL negative control not caught by shellcheck in a workflow")
            failures += 1
    sc = [x for where, node in all_run_sources() for x in shellcheck_problems(node, where)]
    # The scripts those blocks run (scripts/ci/*.sh), as files; first a copy of one with an unquoted variable.
    ci_dir = os.path.join(root, "scripts", "ci")
    ci_scripts = sorted(os.path.join(ci_dir, n) for n in os.listdir(ci_dir) if n.endswith(".sh"))
    with tempfile.TemporaryDirectory() as tmp:
        bad_script = os.path.join(tmp, "runtime-needs.sh")
        with open(os.path.join(ci_dir, "runtime-needs.sh")) as f, open(bad_script, "w") as g:
            g.write(f.read() + "\necho $CXX > $HOME/x\n")
        if script_shellcheck_problems([bad_script]):
            print("ok   negative control caught: scripts/ci/runtime-needs.sh with an unquoted variable")
        else:
            print("FAIL negative control not caught: shellcheck on a script with an unquoted variable")
            failures += 1
    script_problems = script_shellcheck_problems(ci_scripts)
    sc += script_problems
    if not script_problems:
        print(f"ok   scripts/ci: {len(ci_scripts)} scripts pass shellcheck")
    for x in sc:
        print(f"FAIL {x}")
    failures += len(sc)
    if not sc:
        print(f"ok   every run block passes shellcheck ({sum(1 for w, n in all_run_sources() for _ in run_blocks(n, w))}"
              " blocks: the actions, the workflows, docs/ci.md)")

sys.exit(1 if failures else 0)
