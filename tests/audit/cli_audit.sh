#!/usr/bin/env bash
# CLI checks of bitproof audit / admit / synth-checkpoint / prove --scales-from.
#   cli_audit.sh BITPROOF SPEC WORKDIR CASE
# Each case builds its inputs in WORKDIR/CASE (generated or corrupted
# checkpoints), runs the command, and demands an exit code and output:
#   expect RC PATTERN CMD...   RC 2: stderr exactly one line "bitproof: error: ..."
#                              matching PATTERN, stdout empty; else stdout matches.
set -u
export LC_ALL=C
BP=$1 SPEC=$2 WORK=$3 CASE=$4
D=$WORK/$CASE
rm -rf "$D" && mkdir -p "$D" || exit 1
OUT=$D/stdout ERR=$D/stderr

fail() {
  echo "FAIL [$CASE]: $*"
  echo "--- stdout:"; head -20 "$OUT" 2>/dev/null
  echo "--- stderr:"; head -20 "$ERR" 2>/dev/null
  exit 1
}

expect() {
  local want=$1 pattern=$2
  shift 2
  "$@" >"$OUT" 2>"$ERR"
  local rc=$?
  [ "$rc" = "$want" ] || fail "exit code $rc, expected $want: $*"
  if [ "$want" = 2 ]; then
    [ "$(wc -l <"$ERR")" = 1 ] || fail "stderr is not exactly one line"
    [ -s "$OUT" ] && fail "stdout is not empty"
    grep -qE -- "^bitproof: error: .*$pattern" "$ERR" || fail "stderr does not match: $pattern"
  else
    grep -qE -- "$pattern" "$OUT" || fail "stdout does not match: $pattern"
  fi
  echo "ok [$CASE]: exit $rc: $(head -1 "$([ "$want" = 2 ] && echo "$ERR" || echo "$OUT")" | head -c 240)"
}

# le64 N: N as 8 little-endian bytes.
le64() {
  local n=$1 s="" i
  for i in 0 1 2 3 4 5 6 7; do s+=$(printf '\\x%02x' $(((n >> (8 * i)) & 255))); done
  printf "$s"
}

# st FILE HEADER DATA_BYTES [LENGTH]: a safetensors file with that header, DATA_BYTES
# zero bytes of data, and the header length LENGTH (default: the header's size).
st() {
  local f=$1 header=$2 data=$3 len=${4:-${#2}}
  { le64 "$len"; printf '%s' "$header"; head -c "$data" /dev/zero; } >"$f"
}

# t NAME DTYPE SHAPE BEGIN END: one header entry.
t() { printf '"%s":{"dtype":"%s","shape":%s,"data_offsets":[%s,%s]}' "$1" "$2" "$3" "$4" "$5"; }

synth() {  # synth DIR [options]: a small DeepSeek V4 layout checkpoint
  local dir=$1
  shift
  "$BP" synth-checkpoint "$dir" --layers 2 --experts 3 --rows 4 --cols 64 "$@" >/dev/null || fail "synth-checkpoint $*"
}

strip_env() { sed 's/,"environment":.*$//' "$1"; }

SUMMARY='^18 ue8m0 scale tensors \(F8_E8M0\), 144 codes: 114–126 \(0\.0001220703125 … 0\.5\); 0 NaN \(0xFF\)$'

case $CASE in
  # ---- good input ----
  synth_audit_summary)
    synth "$D/ck"
    expect 0 "$SUMMARY" "$BP" audit "$D/ck" ;;
  audit_nan_visible)
    synth "$D/ck" --nan-bytes 2 --scale-range 120:121
    expect 0 "codes: 120–121 \(0\.0078125 … 0\.015625\); 2 NaN \(0xFF\) in 2 tensors$" "$BP" audit "$D/ck"
    # The recipe's words only when asked for.
    grep -q "adjusted" "$OUT" && fail "a recipe view without --view"
    expect 0 "^turbomind view \(ue8m0\): adjusted half exponents 8–9, folded exponents 22–23; none flagged$" \
      "$BP" audit "$D/ck" --view turbomind ;;
  audit_view_flags_folded_32)  # a folded exponent of 32 (byte 130) is past FP16's range: flagged
    synth "$D/ck" --scale-range 114:130
    expect 0 "folded exponents 16–32; FLAGGED: [0-9]+ codes folded exponent past FP16's 30 \(31: Inf/NaN, 32\+: into the sign bit\) \(bytes 129, 130\)$" \
      "$BP" audit "$D/ck" --view turbomind
    synth "$D/ok" --scale-range 114:128  # negative control: 128 folds to 30, inside
    expect 0 "folded exponents 16–30; none flagged$" "$BP" audit "$D/ok" --view turbomind ;;
  audit_fp8_e4m3)  # an NVFP4 checkpoint: E4M3 block scales read as E4M3 (NaN 0x7F counted), or as UE4M3
    synth "$D/ck" --layout nvfp4 --nan-bytes 2 --scale-range 56:126
    expect 0 "^18 e4m3 scale tensors \(F8_E4M3\), 288 codes: 56–126 \(1 … 448\); 2 NaN in 2 tensors, 0 zero, 0 subnormal, 0 negative$" \
      "$BP" audit "$D/ck"
    grep -qE "^18 fp32 scale tensors \(F32\), 18 codes: 0x3A000000–0x3A000000 \(0\.00048828125 … 0\.00048828125\); 0 NaN, 0 Inf, 0 zero, 0 subnormal, 0 negative$" "$OUT" ||
      fail "no FP32 global-scale line"
    expect 0 "^18 ue4m3 scale tensors \(F8_E4M3\), 288 codes: 56–126 .*; 2 NaN in 2 tensors, 0 zero, 0 subnormal, 0 not ue4m3 codes$" \
      "$BP" audit "$D/ck" --format ue4m3 --dtype F8_E4M3 ;;
  audit_gptq_f16)  # GPTQ INT4 with FP16 group scales: 16-bit codes
    "$BP" synth-checkpoint "$D/ck" --layout gptq --layers 2 --experts 3 --rows 8 --cols 256 --nan-bytes 1 >/dev/null || fail synth
    expect 0 "^18 fp16 scale tensors \(F16\), 288 codes: 0x1C00–0x2400 \(0\.00390625 … 0\.015625\); 1 NaN in 1 tensors, 0 Inf, 0 zero, 0 subnormal, 0 negative$" \
      "$BP" audit "$D/ck" --report "$D/a.json"
    python3 - "$D/a.json" <<'PY' || fail "the report's FP16 histogram"
import json, sys
r = json.load(open(sys.argv[1]))["result"]
f = r["formats"][0]
assert f["format"] == "fp16" and f["code_bits"] == 16 and f["specials"]["nan"] == 1, f
assert sum(c for _, c in f["histogram"]) == 288 and [0x7E00, 1] in f["histogram"]
assert all(t["format"] == "fp16" and t["dtype"] == "F16" for t in r["tensors"])
PY
    # The Markdown's layer table writes the codes as the summary line does (hex), not as decimals.
    expect 0 "^wrote " "$BP" report render "$D/a.json" --markdown "$D/a.md" --junit "$D/a.xml"
    grep -qE '^\| 0 \| fp16 \| 9 \| [0-9]+ \| 0x1C00 \| 0x7E00 \| 0x1C00 \| 0x2400 \| 1 nan' "$D/a.md" || fail "the layer row's codes"
    grep -q 'codes 0x1C00\.\.0x2400' "$D/a.xml" || fail "the JUnit case's codes"
    grep -qE '\| (7168|9216|32256) \|' "$D/a.md" && fail "a 16-bit code in decimal"
    ;;
  audit_report_deterministic)
    synth "$D/ck" --shards 2
    expect 0 "$SUMMARY" "$BP" audit "$D/ck" --report "$D/a.json" --threads 1
    expect 0 "$SUMMARY" "$BP" audit "$D/ck" --report "$D/b.json" --threads 2
    [ "$(strip_env "$D/a.json")" = "$(strip_env "$D/b.json")" ] || fail "the result differs between runs"
    grep -q '"kind":"audit"' "$D/a.json" || fail "no kind"
    # Negative control: another seed gives another result.
    synth "$D/other" --shards 2 --seed 9
    expect 0 "$SUMMARY" "$BP" audit "$D/other" --report "$D/c.json"
    [ "$(strip_env "$D/a.json")" != "$(strip_env "$D/c.json")" ] || fail "the comparison cannot fail" ;;
  audit_sharded_same)
    synth "$D/one"
    synth "$D/two" --shards 2
    [ -f "$D/two/model.safetensors.index.json" ] || fail "no index written"
    expect 0 "$SUMMARY" "$BP" audit "$D/one" --report "$D/one.json"
    expect 0 "$SUMMARY" "$BP" audit "$D/two" --report "$D/two.json"
    # Same tensors and histograms; only file names and paths differ.
    norm() { strip_env "$1" | sed -e 's/"file":"[^"]*"//g' -e 's/"checkpoint":{[^}]*\]/"checkpoint"/' -e 's/"tensors":[0-9]*}/}/'; }
    [ "$(norm "$D/one.json" | sed 's/.*"overall"//')" = "$(norm "$D/two.json" | sed 's/.*"overall"//')" ] ||
      fail "sharded and single-file audits differ" ;;
  audit_paths)
    synth "$D/ck" --shards 2
    expect 0 "$SUMMARY" "$BP" audit "$D/ck/model.safetensors.index.json"
    expect 0 "^9 ue8m0 scale tensors" "$BP" audit "$D/ck/model-00001-of-00002.safetensors"
    expect 0 "^8 ue8m0 scale tensors" "$BP" audit "$D/ck" --select 'experts\.[01]\.w[12]'
    expect 0 "^18 ue8m0 scale tensors" "$BP" audit "$D/ck" --dtype F8_E8M0 ;;
  admit_inside)
    synth "$D/ck" --scale-range 113:128
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 0 "^ADMITTED: 18/18 selected tensors inside, 0 outside \(0 codes outside: 0 below, 0 above\); 2/2 layers inside$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" ;;
  admit_outside_refused)  # the negative control: one byte value past the proven 113..128
    synth "$D/ck" --scale-range 114:129
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 1 "^REFUSED: 0/18 selected tensors inside, 18 outside \([0-9]+ codes outside: 0 below, [0-9]+ above\); 0/2 layers inside$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json"
    expect 1 "outside: layers\.0\.ffn\.experts\.0\.w1\.scale \(model\.safetensors, layer 0\): codes 114\.\.129: 0 below, [0-9]+ above: 0x81 \[10000001\] 4 ×[0-9]+$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --claim 1 ;;
  admit_max_outside)  # a tolerant gate: exactly the count outside passes; one less refuses (negative control)
    synth "$D/ck" --nan-bytes 3
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 0 "^ADMITTED: 15/18 selected tensors inside, 3 outside \(3 codes outside: 0 below, 3 above, at most 3 tolerated \(--max-outside\)\)" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --max-outside 3
    grep -qE "outside: .*0xFF \[11111111\] nan ×1$" "$OUT" || fail "the NaN code is not listed, decoded"
    expect 1 "^REFUSED: 15/18" "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --max-outside 2
    expect 2 "--max-outside" "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --max-outside -1 ;;
  admit_fp16)  # GPTQ FP16 group scales against a domain report over the fp16 scale (held on the subnormals 1..16)
    data=$(dirname "$0")/data
    "$BP" domain "$data/gptq-fp16-subnormal-scales.json" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" synth-checkpoint "$D/in" --layout gptq --layers 2 --experts 2 --rows 8 --cols 128 --scale-range 1:16 >/dev/null || fail synth
    "$BP" audit "$D/in" --report "$D/in.json" >/dev/null || fail "audit"
    expect 0 "^proven interval 1\.\.16 of gptq-fp16-subnormal-scales \(fp16 codes; claims\[0\] equal 1\.\.16\)$" \
      "$BP" admit --audit "$D/in.json" --domain "$D/domain.json"
    grep -q "^ADMITTED: 12/12 selected tensors inside, 0 outside (0 codes outside: 0 below, 0 above)" "$OUT" || fail "not admitted"
    # Negative control: codes 0 and 17 (every tensor starts with them) lie below and above.
    "$BP" synth-checkpoint "$D/out" --layout gptq --layers 2 --experts 2 --rows 8 --cols 128 --scale-range 0:17 >/dev/null || fail synth
    "$BP" audit "$D/out" --report "$D/out.json" >/dev/null || fail "audit"
    expect 1 "^REFUSED: 0/12 selected tensors inside, 12 outside \([0-9]+ codes outside: [0-9]+ below, [0-9]+ above\)" \
      "$BP" admit --audit "$D/out.json" --domain "$D/domain.json"
    grep -qE "^  outside: layers\.0\.ffn\.experts\.0\.w1\.scales \(model\.safetensors, layer 0\): codes 0\.\.17: [1-9][0-9]* below, [1-9][0-9]* above: 0x0000 \[0\|00000\|0000000000\] 0 ×[0-9]+, .*0x0011 \[0\|00000\|0000010001\] 1\.0132789611816406e-06 ×[0-9]+$" "$OUT" ||
      fail "the codes outside are not listed, decoded" ;;
  verify_audit)  # report verify re-derives an audit (its checkpoint read again) and an admission (made again)
    synth "$D/ck" --nan-bytes 1
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 0 "^verified: audit of .*ck: the result part reproduces byte for byte$" "$BP" report verify "$D/audit.json"
    expect 1 "^REFUSED" "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --report "$D/m.json"
    expect 1 "^verified: REFUSED: admission of .*audit\.json against .*domain\.json: the result part reproduces" \
      "$BP" report verify "$D/m.json"
    "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --max-outside 1 --report "$D/tol.json" >/dev/null ||
      fail "admit --max-outside 1"
    expect 0 "^verified: ADMITTED: " "$BP" report verify "$D/tol.json"
    # Negative controls: a verdict that does not follow, a checkpoint changed since, inputs gone.
    sed 's/"verdict": "refused"/"verdict": "admitted"/' "$D/m.json" >"$D/lie.json"
    cmp -s "$D/m.json" "$D/lie.json" && fail "the verdict was not changed"
    expect 1 "^NOT VERIFIED: .*lie\.json: this machine's admission differs from the recorded one" \
      "$BP" report verify "$D/lie.json"
    rm -rf "$D/ck" && synth "$D/ck" --nan-bytes 1 --seed 7
    expect 1 "^NOT VERIFIED: .*audit\.json: this machine's audit of the checkpoint differs from the recorded one" \
      "$BP" report verify "$D/audit.json"
    grep -qE "^  line [0-9]+: recorded .* \| now " "$OUT" || fail "the first difference is not named"
    # The compact report (histograms read apart) and the same report indented (read whole) name
    # the same first difference.
    mkdir -p "$D/indented" && cp "$OUT" "$D/compact.out"
    python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"), indent=1)' \
      "$D/audit.json" "$D/indented/audit.json"
    expect 1 "^NOT VERIFIED: " "$BP" report verify "$D/indented/audit.json"
    [ "$(sed 1d "$OUT")" = "$(sed 1d "$D/compact.out")" ] || fail "the two reads name different first differences"
    rm -rf "$D/ck"
    expect 2 "audit\.json: result\.checkpoint\.path: .*ck: checkpoint: no such file or directory$" \
      "$BP" report verify "$D/audit.json"
    # An admission's audit must still describe the checkpoint on disk: gone, it admits nothing.
    expect 2 "m\.json: result\.audit\.file: .*audit\.json: result\.checkpoint: the checkpoint the audit read cannot be read again" \
      "$BP" report verify "$D/m.json"
    rm "$D/domain.json"
    expect 2 "m\.json: result\.domain\.file: .*domain\.json" "$BP" report verify "$D/m.json" ;;
  render_audit)  # report render: audit and admission reports to Markdown and JUnit
    synth "$D/ck" --nan-bytes 1
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 0 "^wrote .*a\.md, .*a\.xml$" "$BP" report render "$D/audit.json" --markdown "$D/a.md" --junit "$D/a.xml"
    grep -q '^| layer | format | tensors | codes | min | max | finite min | finite max | specials |$' "$D/a.md" || fail "audit: no per-layer table"
    grep -q '^\*\*1 tensors hold NaN, Inf or non-codes:\*\*$' "$D/a.md" || fail "audit: the NaN tensor is not listed first"
    [ "$(grep -c '<testcase ' "$D/a.xml")" = 18 ] || fail "audit: not one test case per tensor"
    grep -q 'tests="18" failures="1"' "$D/a.xml" || fail "audit: the NaN tensor's case does not fail"
    expect 1 "REFUSED" "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --report "$D/m.json" --markdown "$D/direct.md"
    expect 0 "^wrote " "$BP" report render "$D/m.json" --markdown "$D/m.md" --junit "$D/m.xml"
    cmp -s "$D/m.md" "$D/direct.md" || fail "admit --markdown and report render differ"
    grep -q '^\*\*Verdict: refused\*\*' "$D/m.md" || fail "admission: no verdict"
    # The tensor outside comes first, in its own table, with its code decoded; then the layers, outside first.
    [ "$(grep -n '^| tensor outside' "$D/m.md" | cut -d: -f1)" -lt "$(grep -n '^| layer |' "$D/m.md" | cut -d: -f1)" ] || fail "outside tensors not first"
    grep -q '^| `layers\.0\.ffn\.experts\.0\.w1\.scale` | 0 | 0 | 1 | `0xFF \[11111111\] nan` ×1 |$' "$D/m.md" || fail "admission: the tensor outside"
    grep -A2 '^| layer | tensors' "$D/m.md" | tail -1 | grep -q '^| 0 | 9 | 1 | 0 | 1 |' || fail "layers outside not first"
    [ "$(grep -c '<testcase ' "$D/m.xml")" = 18 ] || fail "admission: not one test case per tensor"
    grep -q 'tests="18" failures="1"' "$D/m.xml" || fail "admission: failures"
    # Negative control: the same checkpoint without the NaN renders no failure.
    synth "$D/clean"
    "$BP" audit "$D/clean" --report "$D/clean.json" --junit "$D/clean.xml" --markdown "$D/clean.md" >/dev/null || fail "audit --junit"
    # audit's own renderings are report render's of the report it wrote.
    "$BP" report render "$D/clean.json" --junit "$D/clean-render.xml" --markdown "$D/clean-render.md" >/dev/null || fail "render clean"
    cmp -s "$D/clean.xml" "$D/clean-render.xml" && cmp -s "$D/clean.md" "$D/clean-render.md" || fail "audit --junit/--markdown and report render differ"
    "$BP" admit --audit "$D/clean.json" --domain "$D/domain.json" --junit "$D/cm.xml" >/dev/null || fail "admit clean"
    grep -q 'tests="18" failures="0"' "$D/clean.xml" || fail "clean audit: failures"
    grep -q 'tests="18" failures="0"' "$D/cm.xml" || fail "clean admission: failures"
    python3 "$(dirname "$0")/../cli/validate_schema.py" "$(dirname "$0")/../../reports/schema.json" "$D/audit.json" "$D/m.json" >/dev/null ||
      fail "the reports do not validate against reports/schema.json" ;;
  admit_select)
    synth "$D/ck" --nan-bytes 1
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 1 "^REFUSED: 17/18 selected tensors inside, 1 outside \(1 codes outside: 0 below, 1 above\); 1/2 layers inside$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json"
    expect 0 "^ADMITTED: 9/9 selected tensors inside" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --select '^layers\.1\.' ;;
  admit_manifest)
    synth "$D/ck" --nan-bytes 1
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 1 "REFUSED" "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --report "$D/m.json"
    grep -q '"verdict": "refused"' "$D/m.json" || fail "manifest verdict"
    grep -q '"proven": \[' "$D/m.json" || fail "manifest proven interval"
    [ "$(grep -c '"inside": false' "$D/m.json")" = 2 ] || fail "manifest: one tensor and one layer outside" ;;
  scales_from)
    synth "$D/ck"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 0 "^e2m1×ue8m0\{114,115,116,117,118,119,… 13 codes\}→fp16 folded≡ordinary: 208/208 bit patterns equal" \
      "$BP" prove "$SPEC" --scales-from "$D/audit.json" --report "$D/set.json"
    expect 0 "^e2m1×ue8m0\[114\.\.126\]→fp16 folded≡ordinary: 208/208 bit patterns equal" \
      "$BP" prove "$SPEC" --scales-from-range "$D/audit.json" --report "$D/range.json"
    # The report records which: the proven spec's scale codes are a list, or a range.
    grep -q '"codes": {\s*"list": \[' <(tr -d '\n' <"$D/set.json" | sed 's/  */ /g') || fail "the set report records no list"
    grep -q '"codes": {\s*"range": \[' <(tr -d '\n' <"$D/range.json" | sed 's/  */ /g') || fail "the range report records no range"
    # One NaN byte: the set adds the one code 255 (16 cases); the range sweeps 127..255 as well.
    synth "$D/nan" --nan-bytes 1
    "$BP" audit "$D/nan" --report "$D/nan.json" >/dev/null || fail "audit"
    expect 1 "^e2m1×ue8m0\{114,115,116,117,118,119,… 14 codes\}→fp16 folded≡ordinary: REFUTED, 208/224 bit patterns equal" \
      "$BP" prove "$SPEC" --scales-from "$D/nan.json"
    expect 1 "^e2m1×ue8m0\[114\.\.255\]→fp16 folded≡ordinary: REFUTED, [0-9]+/2272 bit patterns equal" \
      "$BP" prove "$SPEC" --scales-from-range "$D/nan.json"
    synth "$D/wide" --scale-range 110:130
    "$BP" audit "$D/wide" --report "$D/wide.json" >/dev/null || fail "audit"
    expect 1 "^e2m1×ue8m0\[110\.\.130\]→fp16 folded≡ordinary: REFUTED" "$BP" prove "$SPEC" --scales-from-range "$D/wide.json" ;;

  # ---- bad checkpoints: exit 2, one line naming the file and the tensor ----
  bad_truncated)
    printf 'abc' >"$D/f.safetensors"
    expect 2 "f\.safetensors: header: truncated file: 3 bytes" "$BP" audit "$D/f.safetensors"
    synth "$D/ck"
    head -c 100 "$D/ck/model.safetensors" >"$D/cut.safetensors"
    expect 2 "cut\.safetensors: header: header length [0-9]+ past the end of the file \(100 bytes\)" \
      "$BP" audit "$D/cut.safetensors"
    head -c -1 "$D/ck/model.safetensors" >"$D/short.safetensors"
    expect 2 "short\.safetensors: norm\.weight: data_offsets \[[0-9]+, [0-9]+\] out of bounds" \
      "$BP" audit "$D/short.safetensors" ;;
  bad_header_past_end)
    st "$D/f.safetensors" '{}' 0 1000
    expect 2 "f\.safetensors: header: header length 1000 past the end of the file \(10 bytes\)$" \
      "$BP" audit "$D/f.safetensors" --report "$D/r.json"
    [ -e "$D/r.json" ] && fail "a report was written" ;;
  bad_header_over_limit)
    st "$D/f.safetensors" '{}' 0 100000001
    expect 2 "f\.safetensors: header: header length 100000001 over the limit of 100000000 bytes$" \
      "$BP" audit "$D/f.safetensors" ;;
  bad_invalid_json)
    st "$D/f.safetensors" '{"a": ' 0
    expect 2 "f\.safetensors: header: invalid JSON" "$BP" audit "$D/f.safetensors" ;;
  bad_non_object)
    st "$D/f.safetensors" '[1, 2]' 0
    expect 2 "f\.safetensors: header: must be a JSON object, found array$" "$BP" audit "$D/f.safetensors" ;;
  bad_offsets_out_of_bounds)
    st "$D/f.safetensors" "{$(t s.scale F8_E8M0 '[8]' 0 8)}" 4
    expect 2 "f\.safetensors: s\.scale: data_offsets \[0, 8\] out of bounds: the data buffer has 4 bytes$" \
      "$BP" audit "$D/f.safetensors" ;;
  bad_overlap)
    st "$D/f.safetensors" "{$(t a.scale F8_E8M0 '[8]' 0 8),$(t b.scale F8_E8M0 '[8]' 4 12)}" 12
    expect 2 "f\.safetensors: b\.scale: data_offsets \[4, 12\] overlap tensor a\.scale ending at 8$" \
      "$BP" audit "$D/f.safetensors" ;;
  bad_hole)
    st "$D/f.safetensors" "{$(t a.scale F8_E8M0 '[4]' 0 4),$(t b.scale F8_E8M0 '[4]' 8 12)}" 12
    expect 2 "f\.safetensors: b\.scale: data_offsets \[8, 12\] leave a hole of 4 bytes after tensor a\.scale$" \
      "$BP" audit "$D/f.safetensors"
    st "$D/g.safetensors" "{$(t a.scale F8_E8M0 '[4]' 0 4)}" 6
    expect 2 "g\.safetensors: a\.scale: the tensors end at 4 but the data buffer has 6 bytes \(2 trailing bytes\)$" \
      "$BP" audit "$D/g.safetensors" ;;
  bad_size_mismatch)
    st "$D/f.safetensors" "{$(t w.weight I8 '[4,4]' 0 8)}" 8
    expect 2 "f\.safetensors: w\.weight: data_offsets \[0, 8\] hold 8 bytes, but shape and dtype I8 need 16$" \
      "$BP" audit "$D/f.safetensors" ;;
  bad_unknown_dtype)
    st "$D/f.safetensors" "{$(t w.scale F8_E9M0 '[4]' 0 4)}" 4
    expect 2 "f\.safetensors: w\.scale: unknown dtype \"F8_E9M0\"$" "$BP" audit "$D/f.safetensors" ;;
  bad_duplicate_names)
    st "$D/f.safetensors" "{$(t w.scale F8_E8M0 '[4]' 0 4),$(t w.scale F8_E8M0 '[4]' 0 4)}" 4
    expect 2 "f\.safetensors: w\.scale: key given twice in one JSON object$" "$BP" audit "$D/f.safetensors"
    # The same name in two files of one directory.
    mkdir -p "$D/two"
    st "$D/two/a.safetensors" "{$(t w.scale F8_E8M0 '[4]' 0 4)}" 4
    st "$D/two/b.safetensors" "{$(t w.scale F8_E8M0 '[4]' 0 4)}" 4
    expect 2 "b\.safetensors: w\.scale: duplicate tensor name: also in .*a\.safetensors$" "$BP" audit "$D/two" ;;
  bad_missing_shard)
    synth "$D/ck" --shards 2
    rm "$D/ck/model-00002-of-00002.safetensors"
    expect 2 "model\.safetensors\.index\.json: layers\.1\.[a-z0-9_.]+: shard .*model-00002-of-00002\.safetensors is missing$" \
      "$BP" audit "$D/ck" ;;
  bad_index_missing_tensor)
    synth "$D/ck" --shards 2
    sed -i 's/"layers.0.ffn.experts.1.w2.scale"/"layers.0.ffn.experts.1.w2.scalX"/' "$D/ck/model.safetensors.index.json"
    expect 2 "model-00001-of-00002\.safetensors: layers\.0\.ffn\.experts\.1\.w2\.scale: tensor not in the weight map" \
      "$BP" audit "$D/ck"
    printf '{"weight_map": {"a": 3}}' >"$D/bad.index.json"
    expect 2 "bad\.index\.json: a: shard must be a file name" "$BP" audit "$D/bad.index.json"
    printf '{"weight_map": {"a": "../x.safetensors"}}' >"$D/up.index.json"
    expect 2 "up\.index\.json: a: shard \"\.\./x\.safetensors\" must be a relative path inside the checkpoint" \
      "$BP" audit "$D/up.index.json" ;;
  bad_no_checkpoint)
    expect 2 "nothing-here: checkpoint: no such file or directory$" "$BP" audit "$D/nothing-here"
    mkdir -p "$D/empty"
    expect 2 "empty: directory: no \.safetensors files$" "$BP" audit "$D/empty"
    st "$D/f.safetensors" "{$(t w.weight I8 '[4]' 0 4)}" 4
    expect 2 "f\.safetensors: selection: no scale tensor among 1 tensors" "$BP" audit "$D/f.safetensors" ;;
  bad_select)
    synth "$D/ck"
    expect 2 "--select: \(: invalid regular expression" "$BP" audit "$D/ck" --select '('
    expect 2 "selection: no scale tensor among" "$BP" audit "$D/ck" --select 'nothing matches' ;;
  bad_dtype)
    synth "$D/ck"
    expect 2 "--dtype: I8: not a scale format dtype \(scale dtypes: F8_E8M0, U8, F8_E4M3, F16, BF16, F32\)$" "$BP" audit "$D/ck" --dtype I8
    expect 2 "--dtype: Q8: unknown dtype$" "$BP" audit "$D/ck" --dtype F8_E8M0,Q8
    expect 2 "--format: e2m1: not a scale format \(scale formats: ue8m0, e4m3, ue4m3, fp16, bf16, fp32\)$" "$BP" audit "$D/ck" --format e2m1
    expect 2 "--view: fold: no such view \(views: turbomind\)$" "$BP" audit "$D/ck" --view fold
    "$BP" synth-checkpoint "$D/gptq" --layout gptq --layers 1 --experts 1 --rows 8 --cols 128 >/dev/null || fail synth
    expect 2 "--view: turbomind reads ue8m0 scales, but the selected tensors are fp16$" "$BP" audit "$D/gptq" --view turbomind ;;
  bad_shape_f16)  # a 16-bit scale tensor whose shape disagrees with its byte count
    st "$D/f.safetensors" "{$(t w.scales F16 '[4]' 0 4)}" 4
    expect 2 "f\.safetensors: w\.scales: data_offsets \[0, 4\] hold 4 bytes, but shape and dtype F16 need 8$" \
      "$BP" audit "$D/f.safetensors" ;;
  bad_admit_other_format)  # an FP16 audit against a domain report over UE8M0 scale bytes
    "$BP" synth-checkpoint "$D/ck" --layout gptq --layers 1 --experts 1 --rows 8 --cols 128 >/dev/null || fail synth
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    expect 2 "domain\.json: result\.over\.format: the domain report sweeps ue8m0 codes, but the audit .*audit\.json holds fp16 scales: a domain report of another format$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --report "$D/m.json"
    [ -e "$D/m.json" ] && fail "a manifest was written"
    expect 2 "audit\.json: result\.tensors: no ue8m0 scale tensor \(the audit holds fp16\)$" \
      "$BP" prove "$SPEC" --scales-from "$D/audit.json" ;;
  bad_render_audit)  # an audit has no case map and no spec to compare
    synth "$D/ck"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 2 "--svg: an audit report has no case map \(give --markdown or --junit\)$" "$BP" report render "$D/audit.json" --svg "$D/a.svg"
    [ -e "$D/a.svg" ] && fail "an SVG was written"
    # audit and admit do not offer --svg (their help does not list it): an unknown flag.
    expect 2 "audit: unknown flag \"--svg\"" "$BP" audit "$D/ck" --svg "$D/b.svg"
    expect 2 "admit: unknown flag \"--svg\"" "$BP" admit --audit "$D/audit.json" --domain "$D/audit.json" --svg "$D/b.svg"
    expect 2 "audit\.json: kind: an audit report records no spec to compare" "$BP" report diff "$D/audit.json" "$D/audit.json"
    sed 's/"codes":144/"codes":"many"/' "$D/audit.json" >"$D/bad.json"
    expect 2 "bad\.json: result\.overall\.codes: " "$BP" report render "$D/bad.json" --markdown "$D/b.md" ;;
  bad_report_path)
    synth "$D/ck"
    expect 2 "--report: /nonexistent-dir/a\.json: directory /nonexistent-dir does not exist$" \
      "$BP" audit "$D/ck" --report /nonexistent-dir/a.json ;;

  # ---- bad inputs to admit and prove --scales-from ----
  bad_admit_wrong_kind)
    synth "$D/ck"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    "$BP" prove "$SPEC" --report "$D/proof.json" >/dev/null || fail "prove"
    expect 2 "proof\.json: kind: a report of kind \"domain\" is needed \(bitproof domain SPEC --report\), found \"proof\"$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/proof.json" --report "$D/m.json"
    [ -e "$D/m.json" ] && fail "a manifest was written"
    expect 2 "audit\.json: kind: a report of kind \"domain\" is needed" "$BP" admit --audit "$D/audit.json" --domain "$D/audit.json"
    expect 2 "proof\.json: kind: a report of kind \"audit\" is needed" "$BP" admit --audit "$D/proof.json" --domain "$D/proof.json" ;;
  bad_admit_malformed_audit)
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    printf '{"bitproof_report": 1, "kind": "audit", ' >"$D/cut.json"
    expect 2 "cut\.json: report: invalid JSON" "$BP" admit --audit "$D/cut.json" --domain "$D/domain.json"
    expect 2 "missing\.json: cannot read the report: No such file or directory$" "$BP" admit --audit "$D/missing.json" --domain "$D/domain.json"
    synth "$D/ck"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    # The last tensor's max (greedy .* reaches the last occurrence), then the format's max.
    sed 's/\(.*\)"max":126,"finite_min"/\1"max":127,"finite_min"/' "$D/audit.json" >"$D/edited.json"
    expect 2 "edited\.json: tensor layers\..*: bytes, codes, min, max or specials disagree with the histogram$" \
      "$BP" admit --audit "$D/edited.json" --domain "$D/domain.json"
    sed 's/"max":126,"finite_min"/"max":127,"finite_min"/' "$D/audit.json" >"$D/format.json"
    expect 2 "format\.json: result: does not follow from its tensors' histograms: line [0-9]+: recorded +\"max\": 127, \| now +\"max\": 126,$" \
      "$BP" admit --audit "$D/format.json" --domain "$D/domain.json"
    sed 's/"adjusted/"ADJUSTED/; s/0 NaN (0xFF)/0 NaN/' "$D/audit.json" >"$D/summary.json"
    expect 2 "summary\.json: result: does not follow from its tensors' histograms" \
      "$BP" admit --audit "$D/summary.json" --domain "$D/domain.json" ;;
  bad_admit_claim)
    synth "$D/ck"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    expect 2 "domain\.json: result\.claims: --claim 5: the report has 2 claims$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --claim 5
    expect 2 "--select: \^nothing: selects none of the 18 tensors" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --select '^nothing' ;;
  bad_scales_from_wrong_kind)
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    expect 2 "domain\.json: kind: a report of kind \"audit\" is needed" "$BP" prove "$SPEC" --scales-from "$D/domain.json" ;;
  bad_scales_from_both)
    synth "$D/ck"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 2 "--scales" "$BP" prove "$SPEC" --scales-from "$D/audit.json" --scales 114:126 ;;
  bad_synth_not_empty)
    synth "$D/ck"
    expect 2 "ck: OUT_DIR: not empty" "$BP" synth-checkpoint "$D/ck" --layers 1 --experts 1 --rows 1 --cols 32
    expect 2 "--cols: 33 is not a positive multiple of 32 \(layout dsv4\)$" "$BP" synth-checkpoint "$D/new" --layers 1 --experts 1 --rows 1 --cols 33
    expect 2 "--cols: 64 is not a positive multiple of 128 \(layout gptq\)$" "$BP" synth-checkpoint "$D/new" --layout gptq --layers 1 --experts 1 --rows 8 --cols 64
    expect 2 "--layout: mxfp9: not a layout \(dsv4, nvfp4, gptq\)$" "$BP" synth-checkpoint "$D/new" --layout mxfp9 --layers 1 --experts 1 --rows 8 --cols 64
    expect 2 "--scale-range: 0:300 is not an interval of F8_E8M0 codes \(0\.\.255\)$" "$BP" synth-checkpoint "$D/new" --layers 1 --experts 1 --rows 1 --cols 32 --scale-range 0:300 ;;
  *)
    fail "unknown case $CASE" ;;
esac
rm -rf "$D"
exit 0
