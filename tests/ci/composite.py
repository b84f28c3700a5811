"""composite.py: runs a composite action's steps on this machine, as GitHub's runner would, for tests.

GitHub Actions cannot run here; this runs action.yml itself (not a copy of its logic): each step's
`if:` and `${{ }}` expressions are evaluated (the subset action.yml uses: contexts inputs, steps,
github, env; literals; == != && || ! and parentheses; always() success() failure()), `run:` steps
run under `bash --noprofile --norc -eo pipefail` (GitHub's `shell: bash`) with GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH and GITHUB_WORKSPACE, and their outputs are read back.
Third-party `uses:` steps are simulated where the install path depends on them:
actions/cache/restore and actions/cache/save against a directory standing for GitHub's cache
(an exact key match restores the path and sets cache-hit to 'true'), actions/upload-artifact
(copied to WORK/artifacts); the others (github-script, the JUnit report: GitHub's API) are
recorded as not simulated. A step that fails without continue-on-error fails the job; later
steps run only when their condition says always() or failure().
"""
import os
import re
import shutil
import subprocess
import tempfile

TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))|(?P<call>[A-Za-z_]\w*\(\))"
                   r"|(?P<num>\d+)|(?P<name>[A-Za-z_][\w.-]*))")
STATUS_CALLS = ("always()", "success()", "failure()", "cancelled()")


class ExpressionError(Exception):
    pass


def lookup(ctx, dotted):
    node = ctx
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return ""
        node = node.get(part, "")
    return node


def evaluate(expr, ctx, failed=False):
    """The value of one expression (no ${{ }} around it)."""
    out, pos = [], 0
    expr = expr.strip()
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ExpressionError(f"cannot read {expr[pos:]!r} in {expr!r}")
        pos = m.end()
        if m.group("str") is not None:
            out.append(repr(m.group("str")[1:-1].replace("''", "'")))
        elif m.group("op"):
            out.append({"&&": " and ", "||": " or ", "!": " not "}.get(m.group("op"), m.group("op")))
        elif m.group("call"):
            call = m.group("call")
            if call not in STATUS_CALLS:
                raise ExpressionError(f"function {call} not simulated")
            out.append(repr({"always()": True, "success()": not failed, "failure()": failed,
                             "cancelled()": False}[call]))
        elif m.group("num"):
            out.append(m.group("num"))
        else:
            name = m.group("name")
            value = {"true": True, "false": False, "null": ""}.get(name) if name in ("true", "false", "null") \
                else lookup(ctx, name)
            out.append(repr(value))
    return eval("".join(out), {"__builtins__": {}}, {})  # only literals and operators built above


def text(value):
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def substitute(s, ctx):
    """A string with every ${{ expr }} replaced by its value."""
    if not isinstance(s, str):
        return text(s)
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: text(evaluate(m.group(1), ctx)), s, flags=re.S)


def condition(cond, ctx, failed):
    """A step's if: (a bare expression or one in ${{ }}); without a status call it means success() && (...)."""
    if cond is None or cond == "":
        return not failed
    cond = str(cond).strip()
    if cond.startswith("${{") and cond.endswith("}}"):
        cond = cond[3:-2]
    value = evaluate(cond, ctx, failed)
    if not any(c in cond for c in STATUS_CALLS):
        return bool(value) and not failed
    return bool(value)


def read_outputs(path):
    """key=value lines and key<<DELIMITER blocks, as GitHub reads GITHUB_OUTPUT."""
    outputs = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            outputs[key] = "\n".join(lines[i + 1:j])
            i = j + 1
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            outputs[key] = value
        i += 1
    return outputs


class Run:
    """One job running the action once: run(inputs) -> self, with .steps, .outputs, .failed, .log."""

    def __init__(self, action, action_path, workspace, cache_dir, env, event="push"):
        self.action, self.action_path, self.workspace, self.cache_dir = action, action_path, workspace, cache_dir
        self.env, self.event = env, event
        self.steps = []  # (name, outcome): success, failure, skipped, not simulated
        self.log = []
        self.failed = False
        self.outputs = {}

    def run(self, given):
        inputs = {k: text((v or {}).get("default", "")) for k, v in (self.action.get("inputs") or {}).items()}
        unknown = set(given) - set(inputs)
        if unknown:
            raise ExpressionError(f"inputs not declared by the action: {sorted(unknown)}")
        ctx = {"github": {"event_name": self.event, "action_path": self.action_path, "workspace": self.workspace,
                          "workflow": "test", "job": "job", "repository": "owner/kernels", "event": {}},
               "steps": {}, "env": {}}
        ctx["inputs"] = {k: substitute(v, ctx) for k, v in inputs.items()}
        ctx["inputs"].update(given)
        for i, step in enumerate(self.action["runs"]["steps"]):
            name = step.get("name") or step.get("uses") or f"step {i}"
            if not condition(step.get("if"), ctx, self.failed):
                self.steps.append((name, "skipped"))
                continue
            env = {k: substitute(v, ctx) for k, v in (step.get("env") or {}).items()}
            if "run" in step:
                ok, outputs = self.run_step(name, step, env, ctx)
            else:
                ok, outputs = self.uses_step(name, step, ctx)
            if step.get("id"):
                ctx["steps"][step["id"]] = {"outputs": outputs, "outcome": "success" if ok else "failure"}
            if not ok and step.get("continue-on-error") is not True:
                self.failed = True
        self.outputs = {k: substitute((v or {}).get("value", ""), ctx)
                        for k, v in (self.action.get("outputs") or {}).items()}
        return self

    def run_step(self, name, step, env, ctx):
        tmp = tempfile.mkdtemp(prefix="step-")
        script, out, summary = (os.path.join(tmp, n) for n in ("step.sh", "output", "summary"))
        with open(script, "w") as f:
            f.write(substitute(step["run"], ctx))
        for p in (out, summary):
            open(p, "w").close()
        full = dict(self.env, GITHUB_OUTPUT=out, GITHUB_STEP_SUMMARY=summary, GITHUB_ACTION_PATH=self.action_path,
                    GITHUB_WORKSPACE=self.workspace, GITHUB_EVENT_NAME=self.event, **env)
        cwd = os.path.join(self.workspace, substitute(step.get("working-directory", "."), ctx))
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=cwd, env=full,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log.append(f"--- {name} (exit {r.returncode})\n{r.stdout}")
        outputs = read_outputs(out)
        shutil.rmtree(tmp)
        self.steps.append((name, "success" if r.returncode == 0 else "failure"))
        return r.returncode == 0, outputs

    def uses_step(self, name, step, ctx):
        uses = step["uses"]
        args = {k: substitute(v, ctx) for k, v in (step.get("with") or {}).items()}
        if uses.startswith("actions/cache/restore@"):
            stored = os.path.join(self.cache_dir, args["key"])
            hit = os.path.isdir(stored)
            if hit:
                target = os.path.join(self.workspace, args["path"])
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(stored, target, symlinks=True)
            self.steps.append((name, "success"))
            self.log.append(f"--- {name}: cache {'hit' if hit else 'miss'} for {args['key']}")
            return True, {"cache-hit": "true" if hit else "false", "cache-primary-key": args["key"],
                          "cache-matched-key": args["key"] if hit else ""}
        if uses.startswith("actions/cache/save@"):
            stored = os.path.join(self.cache_dir, args["key"])
            source = os.path.join(self.workspace, args["path"])
            if not os.path.isdir(source):
                self.steps.append((name, "failure"))
                return False, {}
            if not os.path.isdir(stored):
                shutil.copytree(source, stored, symlinks=True)
            self.steps.append((name, "success"))
            return True, {}
        if uses.startswith("actions/upload-artifact@"):
            shutil.copytree(os.path.join(self.workspace, args["path"]),
                            os.path.join(self.workspace, "..", "artifacts", args["name"]), dirs_exist_ok=True)
            self.steps.append((name, "success"))
            return True, {}
        self.steps.append((name, "not simulated"))
        return True, {}

    def outcome(self, name):
        return next((o for n, o in self.steps if n == name), None)
