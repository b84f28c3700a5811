#!/usr/bin/env python3
"""everyday.py CHECK BITPROOF WORKDIR [ARGS...]: the command as a new user meets it
every day (issue 17): one vocabulary of flags, helpful mistakes, --quiet, the
catalogue's filters, spec check/new, NaN exclusions, and reports (Markdown, SVG)
that read well at 8-bit and 16-bit inputs. One CHECK a ctest; exit 1 on a failure.
(svg-fit takes the reports directory alone.)"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bptest import check, failures, load  # noqa: E402

ENV = dict(os.environ, NO_COLOR="1", BITPROOF_PROGRESS="never")
SVG = "{http://www.w3.org/2000/svg}"


def runner(bp):
    def run(*args):
        return subprocess.run([bp, *args], env=ENV, capture_output=True, text=True, timeout=600)
    return run


def flag_help(run, command, flag):
    """The help line of `flag` in `bitproof COMMAND --help` without the flag's names ("UINT:0..4096 CPU ...")."""
    out = run(*command.split(), "--help").stdout
    for line in out.splitlines():
        words = line.split()
        if words and flag in words[0].split(","):
            return " ".join(words[1:]) or "(flag)"
    return None


def vocabulary(run, work):
    """Each shared flag reads the same wherever it appears (docs/cli.md)."""
    where = {"--threads": ["prove", "domain", "audit", "ab"], "--keep": ["prove", "domain", "ab"],
             "--expect": ["prove", "domain"], "--quiet": ["prove", "domain"],
             "--markdown": ["prove", "domain", "audit", "admit", "report render", "report merge", "ab"],
             "-o": ["prove", "domain", "audit", "admit", "report merge", "ab"],
             "--no-user-code": ["prove", "domain", "spec check", "ab", "time", "report verify", "report merge",
                                "report render"]}
    for flag, commands in where.items():
        helps = {c: flag_help(run, c, flag) for c in commands}
        check(f"{flag} is offered by {', '.join(commands)}", all(helps.values()), helps)
        if flag in ("--threads", "--keep", "--expect", "--quiet", "--no-user-code"):
            texts = set(helps.values())
            check(f"{flag} means one thing in {', '.join(commands)}", len(texts) == 1, helps)
    check("--threads 0 means every core wherever it is offered",
          "0: one per hardware thread" in (flag_help(run, "audit", "--threads") or ""), flag_help(run, "audit", "--threads"))
    check("domain no longer has a --keep of its own meaning",
          "counterexamples per claim" in (flag_help(run, "domain", "--keep") or ""), flag_help(run, "domain", "--keep"))


def audit_markdown(run, work, spec):
    """audit and admit take -o/--report and --markdown like prove and domain."""
    ck = os.path.join(work, "ck")
    r = run("synth-checkpoint", ck, "--layers", "1", "--experts", "2", "--rows", "2", "--cols", "32")
    check("synth-checkpoint", r.returncode == 0, r.stderr)
    audit_json, audit_md = os.path.join(work, "a.json"), os.path.join(work, "a.md")
    r = run("audit", ck, "--threads", "0", "-o", audit_json, "--markdown", audit_md)
    check("audit --threads 0 -o A.json --markdown A.md: exit 0", r.returncode == 0, r.stderr)
    md = open(audit_md).read() if os.path.exists(audit_md) else ""
    check("audit's Markdown holds its summary line", md.startswith("## bitproof audit: ") and "scale tensors" in md, md)
    domain_json = os.path.join(work, "d.json")
    r = run("domain", spec, "-o", domain_json)
    check("domain -o D.json: exit 0", r.returncode == 0 and os.path.exists(domain_json), r.stderr)
    admit_md, admit_json = os.path.join(work, "m.md"), os.path.join(work, "m.json")
    r = run("admit", "--audit", audit_json, "--domain", domain_json, "-o", admit_json, "--markdown", admit_md)
    check("admit -o M.json --markdown M.md: exit 0 or 1", r.returncode in (0, 1) and os.path.exists(admit_json), r.stderr)
    md = open(admit_md).read() if os.path.exists(admit_md) else ""
    # The Markdown is the admission report rendered (as report render gives it), with admit's verdict.
    verdict = "admitted" if "ADMITTED" in r.stdout else "refused" if "REFUSED" in r.stdout else "?"
    check("admit's Markdown holds admit's verdict", md.startswith("## bitproof admit: ") and f"**Verdict: {verdict}**" in md, md)


def quiet(run, work, spec):
    """--quiet: the refuted claim only, never the holding one beside it."""
    for command in (["prove", spec, "--backend", "cpu", "--quiet"], ["domain", spec, "--quiet"]):
        r = run(*command)
        claims = [line for line in r.stdout.splitlines() if "→fp16 " in line]
        check(f"{command[0]} --quiet exits 1", r.returncode == 1, r.stdout + r.stderr)
        check(f"{command[0]} --quiet prints the refuted claim",
              any("fold+13≡folded: REFUTED" in line for line in claims), r.stdout)
        check(f"{command[0]} --quiet prints no holding claim",
              not any("folded≡ordinary" in line for line in claims), r.stdout)


def recipes(run, work):
    """recipes --family, --format, --grep, --brief: a filtered catalogue with a count."""
    whole = run("recipes", "--brief")
    total = int(re.search(r"^(\d+) of (\d+) recipes", whole.stdout, re.M).group(2))
    check("recipes --brief: one line a recipe and the count", len(whole.stdout.splitlines()) == total + 1,
          whole.stdout[-300:])
    vllm = run("recipes", "--family", "vllm", "--brief")
    lines = vllm.stdout.splitlines()
    check("--family vllm: only vllm recipes",
          vllm.returncode == 0 and len(lines) > 1 and all(line.startswith("vllm.") for line in lines[:-1]), vllm.stdout)
    check("--family vllm: says how many of all", re.match(rf"^{len(lines) - 1} of {total} recipes$", lines[-1]) is not None,
          lines[-1])
    e5m2 = run("recipes", "--format", "e5m2", "--brief")
    rows = e5m2.stdout.splitlines()[:-1]
    check("--format e5m2: every recipe takes or makes e5m2", rows and all("e5m2" in row.split()[-1] for row in rows),
          e5m2.stdout)
    grep = run("recipes", "--grep", "MARLIN")
    names = [line.split()[0] for line in grep.stdout.splitlines() if line and not line.startswith(" ")][:-1]
    check("--grep is case-insensitive and searches summaries and pins", grep.returncode == 0 and len(names) > 2
          and len(names) < total, grep.stdout[:400])
    both = run("recipes", "--family", "turbomind", "--grep", "control", "--brief")
    rows = both.stdout.splitlines()[:-1]
    check("filters combine", rows and all(r.startswith("turbomind.") and "control" in r for r in rows), both.stdout)


def spec_new(run, work):
    """spec new writes a commented spec that spec check accepts and prove proves."""
    path = os.path.join(work, "new.json")
    r = run("spec", "new", "--out", path)
    check("spec new --out: exit 0", r.returncode == 0, r.stderr)
    text = open(path).read() if os.path.exists(path) else ""
    check("the template is commented", text.count("\n//") + text.count("  //") >= 5, text[:300])
    r = run("spec", "check", path)
    check("spec check accepts the template", r.returncode == 0 and ": valid: " in r.stdout, r.stdout + r.stderr)
    r = run("prove", path, "--backend", "cpu")
    check("the template proves (the DeepSeek V4 fold)", r.returncode == 0 and "208/208" in r.stdout, r.stdout + r.stderr)
    r = run("spec", "new", "--claim", "exact", "--recipes", "vllm.e5m2_fp16.kv_cache")
    ok = r.returncode == 0 and '"claim": "exact"' in r.stdout and '"format": "e5m2"' in r.stdout
    check("spec new --claim exact --recipes R: the recipe's own inputs and output", ok, r.stdout + r.stderr)
    edited = os.path.join(work, "edited.json")
    with open(edited, "w") as f:
        f.write(r.stdout.replace('"name": "my-claim"', '"name": "Bad Name"'))
    r = run("spec", "check", edited)
    check("spec check names the field of a mistake", r.returncode == 2 and "edited.json: name: " in r.stderr, r.stderr)


# Triton's AMD software path without its NaN guard gives -0 for the E4M3FNUZ NaN byte 0x80:
# refuted on that NaN code alone (the committed finding fnuz-e4m3-fp16-nan-guard records it).
NAN_SPEC = {
    "bitproof_spec": 1, "name": "fnuz-nan-only",
    "inputs": [{"name": "element", "format": "e4m3fnuz", "codes": {"range": [0, 255]}}],
    "output": "fp16",
    "claims": [{"claim": "equal", "recipes": ["triton_amd.e4m3fnuz_fp16.sw_nan_guard", "triton_amd.e4m3fnuz_fp16.sw"]}],
}


def nan(run, work, data):
    """A claim refuted on NaN scale codes alone: 'N fail: all nan'; excluding NaN states it."""
    spec = dict(NAN_SPEC)
    refuted, excluded = os.path.join(work, "nan.json"), os.path.join(work, "nan-excluded.json")
    json.dump(spec, open(refuted, "w"))
    r = run("prove", refuted, "--backend", "cpu", "--markdown", os.path.join(work, "nan.md"))
    check("refuted on NaN codes only: exit 1", r.returncode == 1, r.stdout + r.stderr)
    m = re.search(r"\((\d+) fail: all nan\)", r.stdout)
    check("the CLI says 'N fail: all nan'", m is not None, r.stdout)
    md = open(os.path.join(work, "nan.md")).read() if os.path.exists(os.path.join(work, "nan.md")) else ""
    check("the Markdown says it too", m is not None and f"{m.group(1)} fail: all nan" in md, md[:800])
    spec["inputs"][0]["codes"]["exclude"] = ["nan"]
    json.dump(spec, open(excluded, "w"))
    r = run("prove", excluded, "--backend", "cpu", "-o", os.path.join(work, "nan-excluded.report.json"))
    check("with \"exclude\": [\"nan\"] the claim holds", r.returncode == 0, r.stdout + r.stderr)
    check("the domain label shows the exclusion", "e4m3fnuz[0..255 ∖ nan]→fp16" in r.stdout and "255/255" in r.stdout,
          r.stdout)
    report = load(os.path.join(work, "nan-excluded.report.json")) if r.returncode == 0 else {}
    codes = report.get("result", {}).get("spec", {}).get("inputs", [{}])[0].get("codes")
    check("the report records the spec as written", codes == {"range": [0, 255], "exclude": ["nan"]}, codes)
    r = run("report", "verify", os.path.join(work, "nan-excluded.report.json"))
    check("and verifies", r.returncode == 0, r.stdout + r.stderr)


def svg_size(path):
    root = ET.parse(path).getroot()
    return int(root.get("width")), int(root.get("height")), os.path.getsize(path), root


def svg_prove(run, work, spec, narrow16):
    """prove --svg draws the proof's own domain: no sweep of every code behind the user's back."""
    for name, path, columns in (("dsv4", spec, 13), ("narrow16", narrow16, 128)):
        out = os.path.join(work, f"prove-{name}.svg")
        r = run("prove", path, "--backend", "cpu", "--svg", out)
        check(f"prove --svg ({name}): exit 0", r.returncode == 0, r.stdout + r.stderr)
        if r.returncode != 0:
            continue
        width, height, size, root = svg_size(out)
        panels = root.findall(f".//{SVG}g[@class='cells']")
        claims = len(load(path)["claims"])
        check(f"prove --svg ({name}) draws the spec's {columns} codes, one panel a claim",
              len(panels) == claims and all(p.get("data-columns") == str(columns) for p in panels),
              [p.attrib for p in panels])
        text = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
        check(f"prove --svg ({name}) says it is the proof's own domain and where the whole map is",
              "the proof's own domain" in text and "bitproof domain SPEC --svg" in text, text[:300])


def svg_16bit(run, work, narrow16):
    """domain --svg over a 16-bit input: fits a PR page, zooms on the claim, labels by kind."""
    domain_json, svg = os.path.join(work, "narrow16.domain.json"), os.path.join(work, "narrow16.svg")
    r = run("domain", narrow16, "-o", domain_json, "--svg", svg)
    check("domain over a 16-bit scale: exit 0", r.returncode == 0, r.stdout + r.stderr)
    if r.returncode != 0:
        return
    width, height, size, root = svg_size(svg)
    check(f"fits a PR page: {width} x {height} px, {size} bytes", width <= 1400 and height <= 1200 and size < 200_000)
    panels = root.findall(f".//{SVG}g[@class='cells']")
    check("two panels: every code binned, then the zoom", len(panels) == 2, [p.attrib for p in panels])
    if len(panels) == 2:
        overview, zoom = panels[0].attrib, panels[1].attrib
        check("the overview bins 65536 codes into 256 columns",
              overview["data-columns"] == "256" and overview["data-codes-per-column"] == "256", overview)
        first, per = int(zoom["data-first-code"]), int(zoom["data-codes-per-column"])
        check("the zoom shows the claimed interval 15360..15487 at one code a column",
              per == 1 and first <= 15360 and first + int(zoom["data-columns"]) > 15487, zoom)
    claimed = root.findall(f".//{SVG}rect[@class='claimed']")
    check("the claimed interval is outlined on screen in both panels",
          len(claimed) == 2 and all(float(c.get("x")) + float(c.get("width")) <= width for c in claimed))
    text = [t.text or "" for t in root.iter(f"{SVG}text")]
    check("an equal claim is labelled by its kind", any(t.startswith("equal claim: ") for t in text)
          and any(re.match(r"equal on 0x[0-9A-F]{4}\.\.0x[0-9A-F]{4}, claimed 0x3C00\.\.0x3C7F", t) for t in text)
          and not any(t.startswith("exact") for t in text), [t for t in text if "claim" in t][:6])


def svg_fit(reports):
    """Every committed case map fits a PR page (8-bit and 16-bit inputs alike)."""
    for name in sorted(os.listdir(reports)):
        if not name.endswith(".svg"):
            continue
        width, height, size, root = svg_size(os.path.join(reports, name))
        check(f"{name}: {width} x {height} px, {size} bytes", width <= 1400 and size < 400_000)


def markdown_domain(run, work, spec, refuted):
    """The domain Markdown: holding sets, nested counterexamples, why there is no maximal interval."""
    md_path = os.path.join(work, "domain.md")
    r = run("domain", spec, "--markdown", md_path)
    md = open(md_path).read() if r.returncode == 0 else ""
    check("domain --markdown: exit 0", r.returncode == 0, r.stderr)
    check("the CLI's holding set is there", "- holds on scale codes: 113..128" in md, md[:1500])
    check("the maximal interval, in bold", "- maximal interval around 114..126: **113..128** (16 codes)" in md)
    nested = re.search(r"^- first counterexample below, at scale `0x70` = 3\.0517578125e-05:\n  - case 1793 \(mismatch: zero\):.*\n    - `turbomind\.mxfp4_fp16\.folded` → ",
                       md, re.M)
    check("a counterexample's case nests under 'first counterexample', its recipes under the case", nested is not None,
          md[:2500])
    md_path = os.path.join(work, "domain-refuted.md")
    r = run("domain", refuted, "--markdown", md_path)
    md = open(md_path).read() if os.path.exists(md_path) else ""
    check("refuted domain: exit 1", r.returncode == 1, r.stderr)
    check("no maximal interval says why, with the failing codes",
          "- no maximal interval: the claim fails inside the spec's interval, on scale 100..112, 129..140" in md,
          md[:1500])
    check("and the verdict on the spec's interval", "**Verdict on the spec's interval: refuted**" in md)


def markdown_prove(run, work, spec):
    """The prove Markdown: a short verdict line, the command that reproduces it, no hardware count without hardware."""
    md_path = os.path.join(work, "prove.md")
    r = run("prove", spec, "--backend", "cpu", "--markdown", md_path)
    md = open(md_path).read() if r.returncode == 0 else ""
    verdict = next((line for line in md.splitlines() if line.startswith("**Verdict")), "")
    check("the verdict line carries no 64-hex digest", verdict and not re.search(r"[0-9a-f]{64}", verdict), verdict)
    check("the verdict line says what was proven",
          verdict == "**Verdict: holds** — 2 claims over 208 cases (e2m1×ue8m0[114..126]→fp16)", verdict)
    check("the command that reproduces the report",
          re.search(r"```sh\nbitproof prove \S*dsv4-mxfp4-fp16-fold\.json --backend cpu --markdown \S*prove\.md\n```", md)
          is not None, md)
    check("no hardware-vs-model count when no hardware ran",
          "hardware-vs-model" not in md and "Backends (cpu): results identical (no hardware ran: CPU models only)." in md)
    check("the case digest stays, shortened, in the footer", re.search(r"case digest `[0-9a-f]{16}`\n$", md) is not None,
          md[-200:])


def main():
    name = sys.argv[1]
    if name == "svg-fit":
        svg_fit(sys.argv[2])
    else:
        bp, work = os.path.abspath(sys.argv[2]), os.path.join(os.path.abspath(sys.argv[3]), name)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        run, rest = runner(bp), sys.argv[4:]
        if name == "svg-16bit":
            work = os.path.dirname(work)  # the chromium test reads narrow16.svg from WORKDIR
        {"vocabulary": vocabulary, "audit-markdown": audit_markdown, "quiet": quiet, "recipes": recipes,
         "spec-new": spec_new, "nan": nan, "svg-prove": svg_prove, "svg-16bit": svg_16bit,
         "markdown-domain": markdown_domain, "markdown-prove": markdown_prove}[name](run, work, *rest)
    print(f"{len(failures)} failure(s)" if failures else "all checks pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
