#!/usr/bin/python3
"""Renders docs/catalogue.md from the committed reports (Debian's python3, standard library only).

  scripts/catalogue.py --specs          the catalogue's proof specs, one path a line
  scripts/catalogue.py --write FILE     write the catalogue
  scripts/catalogue.py --check FILE     exit 1 (and say so) when FILE is not what --write would write,
                                        or when a report carries a code pin docs/pin-reads.json lacks

For every spec below it reads reports/<name>.json (bitproof prove) and, when present,
reports/<name>.domain.json (bitproof domain): one row per claim with the recipes, the
source, the domain proven, the maximal interval the domain sweep found and the first
counterexample on each side of it. Nothing here recomputes a result: a stale or missing
report shows as such (the catalogue test regenerates the reports and this file). The last
section says when each pin was last read in the upstream source, from docs/pin-reads.json
(written by scripts/check-pins.py, which needs the upstream clones and so never runs in CI).
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The catalogue, in reading order: (spec name, family heading).
CATALOGUE = [
    ("dsv4-mxfp4-fp16-fold", "TurboMind SM70 MXFP4 → FP16 (DeepSeek V4 fold)"),
    ("dsv4-mxfp4-fp16-prescaled", "TurboMind SM70 MXFP4 → FP16 (DeepSeek V4 fold)"),
    ("marlin-e2m1-decode", "vLLM Marlin FP4"),
    ("marlin-e2m1-bf16-decode", "vLLM Marlin FP4"),
    ("marlin-e8m0-bf16-scale", "vLLM Marlin FP4"),
    ("marlin-mxfp4-bf16", "vLLM Marlin FP4"),
    ("marlin-nvfp4-fp16", "vLLM Marlin FP4"),
    ("marlin-nvfp4-bf16", "vLLM Marlin FP4"),
    ("marlin-nvfp4-current", "vLLM Marlin FP4"),
    ("marlin-nvfp4-bf16-rescale-overflow", "vLLM Marlin FP4"),
    ("fp8-e4m3-fp16-shift", "FP8 → FP16 by shift"),
    ("fp8-e4m3-fp16-scale-fold", "FP8 → FP16 by shift"),
    ("fp8-e4m3-fp16-scale-fold-edges", "FP8 → FP16 by shift"),
    ("fp8-e5m2-fp16-shift", "FP8 → FP16 by shift"),
    ("fp8-e5m2-fp16-nan", "FP8 → FP16 by shift"),
    ("gptq-int4-magic", "GPTQ INT4 → FP16 magic number"),
    ("gptq-int4-fma-fold", "GPTQ INT4 → FP16 magic number"),
    ("sm70-e8m0-fp16-scale", "SM70 UE8M0 → FP16 scale"),
    ("sm70-mxfp4-fp16", "SM70 UE8M0 → FP16 scale"),
    ("fp32fma-mxfp4-fp16", "Decode then FP32 FMA vs FP16 multiply"),
    ("llama-mxfp4-fp32", "llama.cpp MXFP4"),
    ("llama-mxfp4-cuda", "llama.cpp MXFP4"),
    ("triton-mxfp4-fp16-upcast", "triton_kernels MXFP4 upcast and Triton's AMD path"),
    ("triton-mxfp4-bf16-upcast", "triton_kernels MXFP4 upcast and Triton's AMD path"),
    ("triton-mxfp4-fp16-sm90-clamp", "triton_kernels MXFP4 upcast and Triton's AMD path"),
    ("lut-e2m1-fp16-decode", "E2M1 lookup-table decode (byte permute)"),
    ("lut-e2m1-bf16-decode", "E2M1 lookup-table decode (byte permute)"),
    ("awq-int4-zero-point", "INT4 with a zero point (AWQ, exllama)"),
    ("awq-int4-fold", "INT4 with a zero point (AWQ, exllama)"),
    ("gptq-v1-int4-zero-16", "INT4 with a zero point (AWQ, exllama)"),
    ("fnuz-e4m3-fp16", "AMD E4M3FNUZ → FP16"),
    ("fnuz-e4m3-fp16-sw-old", "AMD E4M3FNUZ → FP16"),
    ("fnuz-e4m3-fp16-nan-guard", "AMD E4M3FNUZ → FP16"),
    ("fnuz-e5m2-fp16", "AMD E5M2FNUZ → FP16, E4M3FNUZ → BF16"),
    ("fnuz-e4m3-bf16", "AMD E5M2FNUZ → FP16, E4M3FNUZ → BF16"),
    ("fnuz-e5m2-fp16-nan-guard", "AMD E5M2FNUZ → FP16, E4M3FNUZ → BF16"),
    ("fnuz-e4m3-bf16-nan-guard", "AMD E5M2FNUZ → FP16, E4M3FNUZ → BF16"),
    ("fp16-half2float", "FP16 ↔ FP32 conversions"),
    ("cuda-vendor-e2m1-fp16", "CUDA's own conversions (cuda_fp4.h, cuda_fp8.h) as witnesses"),
    ("cuda-vendor-e4m3-fp16", "CUDA's own conversions (cuda_fp4.h, cuda_fp8.h) as witnesses"),
    ("cuda-vendor-e5m2-fp16", "CUDA's own conversions (cuda_fp4.h, cuda_fp8.h) as witnesses"),
    ("cuda-vendor-e5m2-vllm", "CUDA's own conversions (cuda_fp4.h, cuda_fp8.h) as witnesses"),
    ("cuda-vendor-e8m0-bf16", "CUDA's own conversions (cuda_fp4.h, cuda_fp8.h) as witnesses"),
    ("cuda-vendor-mxfp4-fp32", "CUDA's own conversions (cuda_fp4.h, cuda_fp8.h) as witnesses"),
]
# Specs in the catalogue (scripts/regen-reports.sh regenerates their reports).
OWNED = [name for name, _ in CATALOGUE if name != "dsv4-mxfp4-fp16-fold"]
EXTRA_DOMAINS = {"llama-mxfp4-fp32": ["llama-mxfp4-fp32.element.domain.json"]}
PIN_READS = os.path.join("docs", "pin-reads.json")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def code_text(item):
    return f"`{item['bits']}` = {item['value']}"


def edge_text(over, edge):
    if edge is None:
        return "none (end of the format)"
    inputs = ", ".join(f"{i['input']} {code_text(i)}" for i in edge["inputs"])
    outs = "; ".join(f"`{o['recipe']}` → {code_text(o)}" for o in edge["outputs"])
    rounded = edge["oracle"]["rounded"]
    oracle = "not representable" if rounded is None else code_text(rounded)
    return f"{over} {edge_code(over, edge)} (mismatch: {edge['kind']}): {inputs} → {outs}; oracle {edge['oracle']['exact']} → {oracle}"


def edge_code(over, edge):
    for i in edge["inputs"]:
        if i["input"] == over:
            return f"`{i['bits']}`"
    return "?"


def runs_text(runs):
    return ", ".join(f"{lo}..{hi}" if lo != hi else f"{lo}" for lo, hi in runs) or "no code"


def domain_rows(domain, claim_index):
    if domain is None:
        return "—", "—", "—"
    d = domain["result"]["claims"][claim_index]
    over = domain["result"]["over"]["input"]
    maximal = d.get("maximal")
    held = f"{over} {maximal[0]}..{maximal[1]}" if maximal else "spec interval does not hold"
    held += f" (holds on {runs_text(d['holding'])})" if len(d["holding"]) < 12 else f" ({len(d['holding'])} runs)"
    return held, edge_text(over, d.get("below")), edge_text(over, d.get("above"))


def pin_lines(result):
    """Where each recipe of a spec comes from: its pins, with the upstream lines paraphrased."""
    lines = []
    for card in result.get("recipes", []):
        if card["role"] == "control":
            lines.append(f"- `{card['name']}`: negative control of `{card['control_of']}`: {cell(card['summary'])}")
            continue
        lines.append(f"- `{card['name']}`: {cell(card['summary'])}")
        for pin in card["pins"]:
            if pin["kind"] == "code":
                lines.append(f"  - {pin['repo']} `{pin['path']}` at `{pin['revision']}`, `{cell(pin['symbol'])}`, "
                             f"lines {pin['lines']}: {cell(pin['models'])}")
            else:
                lines.append(f"  - {pin['repo']} {pin['path']} ({cell(pin['symbol'])}; prose, no code read): "
                             f"{cell(pin['models'])}")
        if "caveat" in card:
            lines.append(f"  - **caveat**: {cell(card['caveat'])}")
    return lines


def verdict_text(claim):
    verdict = claim.get("verdict", "holds" if claim["holds"] else "refuted")
    return {"holds": "holds", "refuted": "**refuted**", "refuted_as_expected": "refuted as expected (finding)",
            "expectation_missed": "**not as expected**"}.get(verdict, verdict)


def findings(reports):
    """The section listing every claim that records an expected refutation."""
    out = ["## What the catalogue found", "",
           "Each finding is a claim whose spec records the refutation it expects (`\"expect\": {\"refuted\": N, "
           "\"kinds\": ...}`): `bitproof prove` exits 0 only while the claim is refuted exactly so, and CI",
           "regenerates every report, so a finding that disappears or changes fails the build as a broken proof would.",
           "", "| spec | claim | recipes | refuted | what it means |", "|---|---|---|---|---|"]
    for name, result in reports:
        roles = {card["name"]: card["role"] for card in result.get("recipes", [])}
        first = True
        for i, c in enumerate(result["claims"]):
            expect = result["spec"]["claims"][i].get("expect")
            if not expect:
                continue
            kinds = ", ".join(f"{n} {k}" for k, n in sorted(c["by_kind"].items(), key=lambda kv: -kv[1]))
            recipes = ", ".join(f"`{r}`" + (" (negative control)" if roles.get(r) == "control" else "")
                                for r in c["recipes"])
            meaning = cell(result["spec"].get("title", "")) if first else "(the same spec)"
            first = False
            out.append(f"| [`{name}`](../proofs/{name}.json) | {c['claim']} | {recipes} | "
                       f"{c['cases'] - c['holding']} of {c['cases']} ({kinds}); {verdict_text(c)} | {meaning} |")
    out.append("")
    return out


def pin_key(pin):
    return (pin["repo"], pin["path"], pin["revision"], pin["symbol"], pin.get("lines", ""))


def unrecorded_pins(reports, entries):
    """The code pins the reports carry that the record of reads lacks (a pin changed and not re-read)."""
    recorded = {pin_key(e) for e in entries}
    return sorted({pin_key(p) for _, result in reports for card in result.get("recipes", [])
                   for p in card["pins"] if p["kind"] == "code"} - recorded)


def loaded_reports():
    out = []
    for name, _ in CATALOGUE:
        path = os.path.join(ROOT, "reports", f"{name}.json")
        if os.path.exists(path):
            out.append((name, load(path)["result"]))
    return out


def pin_reads(reports):
    """The section saying when each code pin was last read, and by what."""
    out = ["## When each pin was last read", "",
           "`scripts/check-pins.py --repos DIR` reads every code pin in the upstream source (the file at the revision,",
           "the line ranges inside it, each named symbol on those lines or defined around them) where the repositories",
           "are at hand as git clones (a fork that carries upstream history serves for its commits); it cannot run in",
           "CI (no network there), so its reads are recorded in",
           f"[`{PIN_READS}`](pin-reads.json) and shown here. *ok*: read and found as pinned; *fail*: read and not",
           "found so; *unchecked*: the revision was in no clone at hand and nothing else records a read.", "",
           "| repository | revision | path | lines | symbol | result | last read | by |", "|---|---|---|---|---|---|---|---|"]
    path = os.path.join(ROOT, PIN_READS)
    entries = load(path)["pins"] if os.path.exists(path) else []
    for e in entries:
        out.append(f"| {cell(e['repo'])} | `{e['revision'][:12]}` | `{cell(e['path'])}` | {cell(e['lines'])} | "
                   f"`{cell(e['symbol'])}` | {e['result']} | {e['read'] or 'never'} | "
                   f"{cell(e['by'] or '—')}: {cell(e['detail'])} |")
    missing = unrecorded_pins(reports, entries)
    for repo, file, revision, symbol, lines in missing:
        out.append(f"| {cell(repo)} | `{revision[:12]}` | `{cell(file)}` | {cell(lines)} | `{cell(symbol)}` | "
                   f"**not in the record** | never | — |")
    out.append("")
    return out


def render():
    out = [
        "# The recipe catalogue",
        "",
        "Generated by `scripts/catalogue.py` from the committed reports in `reports/` (do not edit by hand;",
        "`scripts/regen-reports.sh` regenerates the reports and this file). Every row is one claim of a",
        "proof spec in `proofs/`: proven over the spec's own domain by `bitproof prove`, and swept over every",
        "code of one input by `bitproof domain` for the maximal interval where it holds and the first",
        "counterexample on each side. Under each spec, \"Where the recipes come from\" gives every recipe's pins:",
        "the upstream repository, file, commit (or release), function and lines it models, with what those lines",
        "compute in our own words, and a caveat where the model and the shipped code part (`bitproof recipes`",
        "prints the same). References are the plain computation a claim measures against and model no shipped",
        "code; negative controls are deliberately wrong. Where shipped code and model differ, the difference is",
        "kept as a finding: a claim that records its expected refutation, listed first.",
        "",
    ]
    family = None
    loaded = []
    body = []
    for name, heading in CATALOGUE:
        report_path = os.path.join(ROOT, "reports", f"{name}.json")
        if heading != family:
            body += [f"## {heading}", ""]
            family = heading
        if not os.path.exists(report_path):
            body += [f"### `{name}`", "", "**no report committed**", ""]
            continue
        result = load(report_path)["result"]
        loaded.append((name, result))
        domain_path = os.path.join(ROOT, "reports", f"{name}.domain.json")
        domain = load(domain_path) if os.path.exists(domain_path) else None
        spec = result["spec"]
        body += [f"### `{name}`", "", cell(spec.get("title", "")), "", f"Source: {cell(spec.get('source', '—'))}", ""]
        body += [f"Domain proven: `{result['domain']['label']}`, {result['domain']['cases']} cases; verdict "
                f"**{result['verdict']}**; case digest `{result['case_digest']['sha256'][:16]}…`", ""]
        body += ["| claim | recipes | holding | verdict | maximal domain (`bitproof domain`) | first counterexample below | "
                "first counterexample above |", "|---|---|---|---|---|---|---|"]
        for i, c in enumerate(result["claims"]):
            recipes = ", ".join(f"`{r}`" for r in c["recipes"])
            held, below, above = domain_rows(domain, i)
            body.append(f"| {c['claim']} | {recipes} | {c['holding']}/{c['cases']} | {verdict_text(c)} | {cell(held)} | "
                        f"{cell(below)} | "
                       f"{cell(above)} |")
        body.append("")
        body += ["Where the recipes come from:", ""] + pin_lines(result) + [""]
        for extra in EXTRA_DOMAINS.get(name, []):
            extra_path = os.path.join(ROOT, "reports", extra)
            if not os.path.exists(extra_path):
                continue
            d = load(extra_path)
            over = d["result"]["over"]["input"]
            body.append(f"Swept over `{over}` instead (`reports/{extra}`):")
            body.append("")
            for c in d["result"]["claims"]:
                body.append(f"- {c['claim']} {', '.join('`' + r + '`' for r in c['recipes'])}: holds on "
                           f"{over} {runs_text(c['holding'])}")
            body.append("")
    out += findings(loaded)
    out += body
    out += pin_reads(loaded)
    return "\n".join(out)


def main(argv):
    if len(argv) == 2 and argv[1] == "--specs":
        print("\n".join(f"proofs/{name}.json" for name in OWNED))
        return 0
    if len(argv) == 3 and argv[1] in ("--write", "--check"):
        text = render()
        if argv[1] == "--write":
            with open(argv[2], "w", encoding="utf-8") as f:
                f.write(text)
            return 0
        with open(argv[2], encoding="utf-8") as f:
            if f.read() != text:
                print(f"{argv[2]}: stale; run scripts/regen-reports.sh", file=sys.stderr)
                return 1
        record = os.path.join(ROOT, PIN_READS)
        missing = unrecorded_pins(loaded_reports(), load(record)["pins"] if os.path.exists(record) else [])
        if missing:
            repo, path, revision, _, lines = missing[0]
            print(f"{PIN_READS}: {len(missing)} pin(s) the reports carry are not recorded (first: {repo}@{revision[:12]} "
                  f"{path} lines {lines}); run scripts/check-pins.py --record {PIN_READS} (with --repos of the "
                  "upstream clones to read them, or an empty one to record them as unchecked)", file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
