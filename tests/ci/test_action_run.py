#!/usr/bin/env python3
"""test_action_run.py ACTION_YML TARBALL WORK_DIR

action.yml's install path, run (tests/ci/composite.py) in clean directories on a "bare runner":
PATH holds this machine's commands except every C/C++ compiler and curl, and an apt-get that
"installs" g++ and curl by putting the real ones on that PATH (it logs each call); each job has its
own workspace, HOME and XDG cache (no compiled worker carried over). The inputs are those
docs/ci.md's proving workflow gives the action (read from it), plus the asset's. The specs are a
kernel repository's: a user recipe (tests/package) and a catalogue proof. The release asset is the cpack
tarball TARBALL, served by a local HTTP server (and once by file://).

  1 asset, cache miss: downloads (curl installed first), checks the SHA-256, installs, caches;
    the user recipe proves (g++ installed).
  2 asset, cache hit, a fresh runner: nothing downloaded, g++ installed all the same, proves.
  3 control: 2 with the action's "Run-time needs" step removed (the cache-hit bug): the user
    recipe is bad input (no compiler) and the job fails; the test must see that.
  4 a wrong SHA-256: refused with "SHA-256 mismatch", the job fails, nothing cached or installed.
  5 a malformed SHA-256, and none at all: refused before any download (the server saw no request).
  6 source route, cache hit (the cache holds the installed tree under the source key): no build,
    g++ installed all the same, a catalogue spec proves (2 proved a user recipe on a hit).
  7 the removed `ref` input, set: the job fails and says how to pick a version.
  8 file:// asset, right SHA-256: installs, caches, a catalogue spec proves.
Exit 0 when every check holds, 1 otherwise, 77 (a skip) where this machine lacks g++ or curl.
"""
import copy
import hashlib
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import composite  # noqa: E402

action_yml, tarball, work = (os.path.abspath(a) for a in sys.argv[1:4])
src = os.path.dirname(action_yml)
with open(action_yml) as f:
    ACTION = yaml.safe_load(f)
COMPILERS = re.compile(r"^(c\+\+|g\+\+|gcc|cc|cpp|c89|c99|clang.*|.*-linux-gnu-(g\+\+|gcc|cpp|c\+\+).*|g\+\+-\d+|gcc-\d+|cpp-\d+|curl)$")
REAL = {t: shutil.which(t) for t in ("c++", "g++", "gcc", "cc", "curl")}
FAKE_APT = r"""#!/bin/bash
echo "apt-get $*" >>"$SIM_APT_LOG"
[ "$1" = update ] && exit 0
for p in "$@"; do
  case "$p" in
    g++) for t in c++ g++ gcc cc; do ln -sf "$(cat "$SIM_REAL/$t")" "$SIM_BIN/$t"; done ;;
    curl) ln -sf "$(cat "$SIM_REAL/curl")" "$SIM_BIN/curl" ;;
    install | ca-certificates | -*) ;;
    *) echo "fake apt-get: no package $p here" >&2; exit 100 ;;
  esac
done
"""
failures = 0


def check(ok, what, run=None):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures += 1
        if run is not None:
            print("    steps: " + ", ".join(f"{n}: {o}" for n, o in run.steps))
            print("\n".join("    " + line for line in "\n".join(run.log).splitlines()[-40:]))
    return ok


class Server:
    """A local HTTP server of one directory, counting the requests it answers."""

    def __init__(self, root):
        self.requests = 0
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k):
                super().__init__(*a, directory=root, **k)

            def log_message(self, *a):
                server.requests += 1

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


def bare_bin(path):
    """This machine's commands without compilers and curl, plus the fake apt-get and sudo."""
    os.makedirs(path)
    for d in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        if not os.path.isdir(d):
            continue
        for n in os.listdir(d):
            if COMPILERS.match(n) or n in ("apt-get", "sudo") or os.path.lexists(os.path.join(path, n)):
                continue
            os.symlink(os.path.join(d, n), os.path.join(path, n))
    for n, body in (("apt-get", FAKE_APT), ("sudo", '#!/bin/bash\nexec "$@"\n')):
        with open(os.path.join(path, n), "w") as f:
            f.write(body)
        os.chmod(os.path.join(path, n), 0o755)


def kernel_repo(path):
    """A kernel repository: a user recipe over its own header, and a catalogue proof."""
    os.makedirs(os.path.join(path, "proofs"))
    shutil.copytree(os.path.join(src, "tests", "package", "kernel"), os.path.join(path, "kernel"))
    shutil.copy(os.path.join(src, "tests", "package", "proofs", "fp4-user.json"), os.path.join(path, "proofs"))
    shutil.copy(os.path.join(src, "proofs", "dsv4-mxfp4-fp16-fold.json"), os.path.join(path, "proofs"))


def doc_inputs():
    """The `with:` docs/ci.md's proving workflow gives the action (its first workflow's first job)."""
    with open(os.path.join(src, "docs", "ci.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```ya?ml\n(.*?)```", f.read(), re.S)
    workflow = next(yaml.safe_load(b) for b in blocks if "jobs:" in b)
    job_ = next(iter(workflow["jobs"].values()))
    step = next(s for s in job_["steps"] if s.get("uses", "").startswith("./"))
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in (step.get("with") or {}).items()}


DOC_INPUTS = doc_inputs()


def job(name, inputs, cache, action=ACTION):
    """A fresh runner: its workspace, bin, HOME and apt log; the action run once there."""
    root = os.path.join(work, name)
    ws, sim_bin, home = (os.path.join(root, d) for d in ("workspace", "bin", "home"))
    kernel_repo(ws)
    bare_bin(sim_bin)
    os.makedirs(home)
    apt_log = os.path.join(root, "apt.log")
    open(apt_log, "w").close()
    env = {"PATH": sim_bin, "HOME": home, "XDG_CACHE_HOME": os.path.join(home, ".cache"), "LANG": "C.UTF-8",
           "SIM_BIN": sim_bin, "SIM_APT_LOG": apt_log, "SIM_REAL": os.path.join(work, "real"), "NO_COLOR": "1",
           "TMPDIR": os.environ.get("TMPDIR", "/tmp")}
    base = {**DOC_INPUTS, "upload": "false"}  # docs/ci.md's inputs (its artifact upload: scenario 1)
    run = composite.Run(action, src, ws, cache, env).run({**base, **inputs})
    with open(apt_log) as f:
        run.apt = f.read()
    run.ws = ws
    return run


def proved_user_recipe(run):
    report = os.path.join(run.ws, "bitproof-out", "proofs.fp4-user.json")
    return run.outputs.get("status") == "0" and os.path.isfile(report)


def main():
    missing = [t for t, path in REAL.items() if path is None]
    if missing:  # what the fake apt-get hands to the bare runner must exist here
        print(f"skipped: no {' '.join(missing)} on this machine (scripts/setup.sh installs g++ and curl)")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "real"))
    for t, path in REAL.items():  # the real tools' paths, read by the fake apt-get
        with open(os.path.join(work, "real", t), "w") as f:
            f.write(path)
    served = os.path.join(work, "served")
    os.makedirs(served)
    asset = os.path.join(served, os.path.basename(tarball))
    shutil.copy(tarball, asset)
    with open(asset, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    server = Server(served)
    url = f"{server.url}/{os.path.basename(tarball)}"
    cache = os.path.join(work, "cache")
    os.makedirs(cache)
    asset_inputs = {"tarball-url": url, "tarball-sha256": sha}

    print(f"ok   docs/ci.md's proving job gives the action: {DOC_INPUTS}")
    r = job("1-miss", {**asset_inputs, "upload": DOC_INPUTS.get("upload", "true")}, cache)
    check(not r.failed and proved_user_recipe(r), "1 asset, cache miss: installed and the user recipe proves", r)
    check(os.path.isfile(os.path.join(r.ws, "..", "artifacts", DOC_INPUTS["artifact-name"], "summary.md")),
          f"1 ... the reports uploaded as {DOC_INPUTS['artifact-name']} (the name the comment workflow downloads)", r)
    check(r.outcome("Build or download bitproof") == "success" and server.requests == 1,
          f"1 ... downloaded once from the local server ({server.requests} request)", r)
    check(re.search(r"^apt-get install .*\bcurl\b", r.apt, re.M) and re.search(r"^apt-get install .*\bg\+\+", r.apt, re.M),
          "1 ... curl and g++ installed on the bare runner", r)
    check(len(os.listdir(cache)) == 1, "1 ... the tree cached under one key", r)

    r = job("2-hit", asset_inputs, cache)
    check(r.outcome("Restore bitproof") == "success" and r.outcome("Build or download bitproof") == "skipped"
          and server.requests == 1, "2 asset, cache hit: restored, nothing downloaded", r)
    check(re.search(r"^apt-get install .*\bg\+\+", r.apt, re.M) is not None, "2 ... g++ installed on the cache-hit path", r)
    check(not r.failed and proved_user_recipe(r), "2 ... the user recipe proves with the restored tree", r)

    without = copy.deepcopy(ACTION)
    without["runs"]["steps"] = [s for s in without["runs"]["steps"] if s.get("name") != "Run-time needs"]
    r = job("3-control", asset_inputs, cache, without)
    summary = os.path.join(r.ws, "bitproof-out", "summary.md")
    said = open(summary, encoding="utf-8").read() if os.path.isfile(summary) else ""
    check(r.outcome("Build or download bitproof") == "skipped" and r.failed and r.outputs.get("status") == "2"
          and "user recipes need a C++ compiler" in said,
          "3 negative control: without the every-path step a restored tree has no compiler (status 2, job fails)", r)

    wrong = hashlib.sha256(b"another file").hexdigest()
    cache4 = os.path.join(work, "cache-wrong")
    os.makedirs(cache4)
    r = job("4-wrong-sha", {"tarball-url": url, "tarball-sha256": wrong}, cache4)
    said = "\n".join(r.log)
    check(r.failed and r.outcome("Build or download bitproof") == "failure" and "SHA-256 mismatch" in said
          and wrong in said and sha in said, "4 a wrong SHA-256: refused, naming both hashes; the job fails", r)
    check(not os.listdir(cache4) and not os.path.exists(os.path.join(r.ws, ".bitproof", "prefix", "bin")),
          "4 ... nothing cached, nothing installed", r)
    check(r.outcome("Prove") == "skipped" and r.outputs.get("status") == "", "4 ... nothing proven", r)

    before = server.requests
    for tag, value in (("5-malformed-sha", "ABC"), ("5-no-sha", "")):
        r = job(tag, {"tarball-url": url, "tarball-sha256": value}, cache4)
        check(r.failed and r.outcome("bitproof cache key") == "failure" and "tarball-sha256: expected" in "\n".join(r.log),
              f"5 tarball-sha256 {value!r}: refused before the download", r)
    check(server.requests == before and not os.listdir(cache4), "5 ... the server saw no request, nothing cached")

    key = subprocess.run(["bash", os.path.join(src, "scripts", "ci", "cache-key.sh"), "source", src, "cpu"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    cache6 = os.path.join(work, "cache-source")
    tree = os.path.join(cache6, key)
    os.makedirs(tree)
    subprocess.run(["tar", "-xzf", tarball, "-C", tree, "--strip-components=1"], check=True)
    r = job("6-source-hit", {"specs": "proofs/dsv4-mxfp4-fp16-fold.json"}, cache6)
    check(r.outcome("Restore bitproof") == "success" and r.outcome("Build or download bitproof") == "skipped"
          and re.search(r"^apt-get install .*\bg\+\+", r.apt, re.M) is not None and not r.failed
          and r.outputs.get("status") == "0", "6 source route, cache hit: no build, g++ installed, a proof holds", r)

    r = job("7-ref", {"ref": "v0.1.0"}, cache6)
    check(r.failed and r.outcome("No ref input") == "failure" and "OWNER/bitproof@REF" in "\n".join(r.log)
          and r.outcome("Prove") == "skipped", "7 the removed ref input: the job fails and says what to use", r)

    cache8 = os.path.join(work, "cache-file")
    os.makedirs(cache8)
    r = job("8-file-url", {"tarball-url": "file://" + asset, "tarball-sha256": sha,
                           "specs": "proofs/dsv4-mxfp4-fp16-fold.json"}, cache8)
    check(not r.failed and r.outputs.get("status") == "0" and len(os.listdir(cache8)) == 1,
          "8 file:// asset, right SHA-256: installed, cached, a catalogue proof holds", r)

    server.httpd.shutdown()
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
