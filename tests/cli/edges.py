#!/usr/bin/env python3
"""edges.py CHECK BITPROOF SOURCE_DIR WORKDIR: the rough edges a first week shows (issue 50),
one CHECK a ctest; exit 1 on a failure.

- show: prove prints --show counterexamples per claim and says how many more it kept and
  how many failing cases it did not keep.
- runs: domain over a 16-bit input summarises the runs a claim holds on in one short line.
- expect: --expect that matches a refuted claim's counts still exits 1 and says that an
  expected refutation belongs in the spec's "expect" (written out).
- help: audit/admit/ab list no --svg; each --junit help says what that command's XML holds;
  ab and time take -q; a spec of another kind names what it is and which command takes it.
- include-dirs: BITPROOF_INCLUDE_DIRS that lacks a header the worker reads names it and the
  directories that hold them all.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bptest import check, failures  # noqa: E402

NAME = sys.argv.pop(1)
from bptest import setup  # noqa: E402

bp, root, work, env, run = setup(own_cache=True)
DATA = os.path.join(root, "tests", "cli", "data")
REFUTED = os.path.join(DATA, "refuted.json")  # 656 cases, 374 fail


def counterexample_heads(out):
    return [line for line in out.splitlines() if re.match(r"^  case \d+ \(", line)]


def show():
    r = run("prove", REFUTED, "--backend", "cpu")
    heads = counterexample_heads(r.stdout)
    check("default: 3 counterexamples printed", r.returncode == 1 and len(heads) == 3, r.stdout)
    check("default: the rest are counted",
          "  and 5 more counterexamples kept (all 8 in the report: -o FILE; --show 8 prints them); "
          "366 more failing cases not kept (--keep N keeps N per claim)" in r.stdout, r.stdout)
    r = run("prove", REFUTED, "--backend", "cpu", "--show", "8")
    check("--show 8: all 8 kept printed", len(counterexample_heads(r.stdout)) == 8, r.stdout)
    check("--show 8: only the cases not kept are counted",
          "  and 366 more failing cases not kept (--keep N keeps N per claim)" in r.stdout, r.stdout)
    r = run("prove", REFUTED, "--backend", "cpu", "--keep", "20", "--show", "12")
    check("--keep 20 --show 12: 12 printed, 8 more kept",
          len(counterexample_heads(r.stdout)) == 12 and "and 8 more counterexamples kept (all 20 in the report" in r.stdout,
          r.stdout)
    r = run("prove", REFUTED, "--backend", "cpu", "--show", "0", "--keep", "400")
    check("--show 0 --keep 400: none printed, every failing case kept, nothing 'not kept'",
          not counterexample_heads(r.stdout) and "374 more counterexamples kept (all 374" in r.stdout
          and "not kept" not in r.stdout, r.stdout)
    r = run("prove", os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json"), "--backend", "cpu")
    check("a claim that holds: no 'more' line", r.returncode == 0 and " more " not in r.stdout, r.stdout)
    r = run("prove", REFUTED, "--show", "-1")
    check("--show -1: bad input", r.returncode == 2 and "--show" in r.stderr, r.stderr)


def runs():
    spec = os.path.join(work, "sqrt-rz.json")
    with open(spec, "w") as f:
        json.dump({"bitproof_spec": 1, "name": "hsqrt-rz", "inputs": [{"name": "a", "format": "fp16", "codes": "all"}],
                   "output": "fp16", "claims": [{"claim": "correctly_rounded", "recipes": ["fp16.fp32_sqrt"],
                                                 "rounding": "toward_zero"}]}, f)
    r = run("domain", spec, "--over", "a", "--report", os.path.join(work, "d.json"))
    line = next((x for x in r.stdout.splitlines() if x.startswith("  over a ")), "")
    report = json.load(open(os.path.join(work, "d.json"))) if r.returncode in (0, 1) else None
    holding = report["result"]["claims"][0]["holding"] if report else []
    codes = sum(hi - lo + 1 for lo, hi in holding)
    check("the claim holds on thousands of runs (the fixture is what the test needs)", len(holding) > 1000, len(holding))
    check("the runs line is short", 0 < len(line) < 300, f"{len(line)} characters: {line[:400]}")
    first = ", ".join(f"{lo}..{hi}" for lo, hi in holding[:8])
    want = (f"  over a (fp16, 65536 codes): holds on {codes} codes in {len(holding)} runs: {first} and "
            f"{len(holding) - 8} more runs (all in the report: -o FILE)")
    check("the first 8 runs, how many more, the codes in all", line == want, f"{line}\n  want {want}")
    r = run("domain", os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json"))
    check("a few runs: listed whole as before", "  over scale (ue8m0, 256 codes): holds on 113..128\n" in r.stdout,
          r.stdout)


def expect():
    r = run("prove", REFUTED, "--backend", "cpu", "--expect", "282/656", "--quiet")
    check("prove: matching --expect on a refuted claim still exits 1", r.returncode == 1, r.returncode)
    want = ('claim 0: 282/656 as --expect says, but --expect checks counts, not verdicts: the claim does not pass '
            '(exit 1); a refutation you expect belongs in the spec\'s claim: "expect": {"refuted": 374, "kinds": {')
    check("prove: and says where an expected refutation belongs", want in r.stdout, r.stdout)
    # The written-out expectation is one the spec accepts: with it the claim passes, without any flag.
    m = re.search(r'"expect": (\{.*\})$', r.stdout, re.M)
    spec = json.load(open(REFUTED))
    spec["claims"][0]["expect"] = json.loads(m.group(1)) if m else {}
    path = os.path.join(work, "finding.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    r2 = run("prove", path, "--backend", "cpu")
    check("the written-out expect makes the spec a finding that passes", r2.returncode == 0
          and "refuted as expected" in r2.stdout, r2.stdout + r2.stderr)
    r = run("prove", REFUTED, "--backend", "cpu", "--expect", "281/656")
    check("a count that does not match: EXPECTATION FAILED, no note",
          r.returncode == 1 and "EXPECTATION FAILED" in r.stdout and "checks counts" not in r.stdout, r.stdout)
    r = run("prove", os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json"), "--backend", "cpu",
            "--expect", "208/208")
    check("a claim that holds: exit 0, no note", r.returncode == 0 and "checks counts" not in r.stdout, r.stdout)
    r = run("domain", REFUTED, "--expect", "282/656")
    check("domain: the same", r.returncode == 1 and "claim 0: 282/656 as --expect says" in r.stdout, r.stdout)
    r = run("prove", "--help")
    check("--expect's help says it checks counts only", "a refuted claim still fails" in r.stdout, r.stdout)


def flag_help(out, flag):
    for line in out.splitlines():
        words = line.split()
        if words and flag in words[0].split(","):
            return " ".join(words[1:])
    return ""


def help_():
    junit = {}
    for command in ("audit", "admit", "ab", "prove", "domain", "time"):
        out = run(*command.split(), "--help").stdout
        has_svg = any(line.split() and "--svg" in line.split()[0].split(",") for line in out.splitlines())
        check(f"{command} --help {'lists' if command in ('prove', 'domain', 'time') else 'does not list'} --svg",
              has_svg == (command in ("prove", "domain", "time")), out)
        junit[command] = flag_help(out, "--junit")
    check("audit's --junit: a test case per scale tensor", "per scale tensor" in junit["audit"], junit["audit"])
    check("admit's --junit: a test case per audited tensor", "per audited tensor" in junit["admit"], junit["admit"])
    check("ab's --junit: outputs, trace proof, backends", "per output compared" in junit["ab"], junit["ab"])
    check("time's --junit: verdict, claim, calibration", "calibration" in junit["time"], junit["time"])
    check("no two commands' --junit help alike but prove's own", len({junit[c] for c in junit}) == len(junit), junit)
    r = run("audit", os.path.join(work, "nothing"), "--svg", os.path.join(work, "a.svg"))
    check("audit --svg: an unknown flag (exit 2)", r.returncode == 2 and 'unknown flag "--svg"' in r.stderr, r.stderr)
    ab_spec = os.path.join(root, "proofs", "ab", "dsv4-fused-aux-gemv.json")
    proof = os.path.join(root, "proofs", "dsv4-mxfp4-fp16-fold.json")
    for command in ("ab", "time"):
        out = run(command, "--help").stdout
        check(f"{command} takes -q", flag_help(out, "-q") != "" or "-q,--quiet" in out or "--quiet,-q" in out, out)
    for command in ("ab", "time"):
        r = run(command, os.path.join(work, "no-such-spec.json"), "-q")
        check(f"{command} -q parses (the error is the missing spec's)", r.returncode == 2
              and "cannot read" in r.stderr and "-q" not in r.stderr, r.stderr)
    kinds = [
        (("ab", proof), 'not an A/B spec ("bitproof_ab"): it is a proof spec ("bitproof_spec"), which prove, domain and '
                        'spec check take'),
        (("time", proof), 'neither a timing spec ("bitproof_time") nor an A/B spec ("bitproof_ab"): it is a proof spec '
                          '("bitproof_spec"), which prove, domain and spec check take'),
        (("prove", ab_spec), 'not a proof spec ("bitproof_spec"): it is an A/B spec ("bitproof_ab"), which ab and time '
                             'take'),
        (("prove", os.path.join(root, "proofs", "time", "k-loop-same.json")),
         'not a proof spec ("bitproof_spec"): it is a timing spec ("bitproof_time"), which time takes'),
        (("ab", os.path.join(root, "reports", "dsv4-mxfp4-fp16-fold.json")),
         'not an A/B spec ("bitproof_ab"): it is a report ("bitproof_report"), which the report commands take'),
    ]
    for args, want in kinds:
        r = run(*args)
        lines = r.stderr.splitlines()
        check(f"{' '.join(a if i == 0 else os.path.basename(a) for i, a in enumerate(args))}: names what the file is",
              r.returncode == 2 and len(lines) == 1 and want in r.stderr and r.stdout == "", r.stderr)


def include_dirs():
    import shutil
    uc = os.path.join(work, "uc")
    shutil.copytree(os.path.join(DATA, "user-code"), uc)
    spec = os.path.join(uc, "ex", "proof.json")
    half = os.path.join(root, "src", "user", "include")
    r = run("prove", spec, "--backend", "cpu", env_extra={"BITPROOF_INCLUDE_DIRS": half})
    want = (f"BITPROOF_INCLUDE_DIRS={half}: none of its directories holds hd.hpp, which the worker includes: give the "
            "installed header directory alone")
    check("src/user/include alone: one line naming the missing header", r.returncode == 2
          and len(r.stderr.splitlines()) == 1 and want in r.stderr, r.stderr)
    check("and the directories that hold them all", "in a source tree both src/user/include and src" in r.stderr,
          r.stderr)
    both = f"{half}:{os.path.join(root, 'src')}"
    r = run("prove", spec, "--backend", "cpu", env_extra={"BITPROOF_INCLUDE_DIRS": both})
    check("src/user/include:src proves (negative control)", r.returncode == 0, r.stdout + r.stderr)


def run_with_env(original):
    import subprocess

    def wrapped(*args, env_extra=None):
        if env_extra is None:
            return original(*args)
        return subprocess.run([bp, *args], env=dict(env, **env_extra), capture_output=True, text=True, timeout=600)
    return wrapped


run = run_with_env(run)
{"show": show, "runs": runs, "expect": expect, "help": help_, "include-dirs": include_dirs}[NAME]()
print(f"{len(failures)} failure(s)" if failures else "all checks pass")
sys.exit(1 if failures else 0)
