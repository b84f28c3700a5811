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

SUMMARY='^18 scale tensors, 144 bytes; raw E8M0 114–126, adjusted half exponents 2–14, folded exponents 16–28; 0 NaN bytes \(0xFF\)$'

case $CASE in
  # ---- good input ----
  synth_audit_summary)
    synth "$D/ck"
    expect 0 "$SUMMARY" "$BP" audit "$D/ck" ;;
  audit_nan_visible)
    synth "$D/ck" --nan-bytes 2 --scale-range 120:121
    expect 0 "raw E8M0 120–121, adjusted half exponents 8–9, folded exponents 22–23; 2 NaN bytes \(0xFF\) in 2 tensors$" \
      "$BP" audit "$D/ck" ;;
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
    expect 0 "^9 scale tensors" "$BP" audit "$D/ck/model-00001-of-00002.safetensors"
    expect 0 "^8 scale tensors" "$BP" audit "$D/ck" --select 'experts\.[01]\.w[12]'
    expect 0 "^18 scale tensors" "$BP" audit "$D/ck" --dtype F8_E8M0 ;;
  admit_inside)
    synth "$D/ck" --scale-range 113:128
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 0 "^ADMITTED: 18/18 selected tensors inside, 0 outside; 2/2 layers inside$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" ;;
  admit_outside_refused)  # the negative control: one byte value past the proven 113..128
    synth "$D/ck" --scale-range 114:129
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 1 "^REFUSED: 0/18 selected tensors inside, 18 outside; 0/2 layers inside$" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json"
    expect 1 "outside: layers\.0\.ffn\.experts\.0\.w1\.scale \(model\.safetensors, layer 0\): bytes 114\.\.129" \
      "$BP" admit --audit "$D/audit.json" --domain "$D/domain.json" --claim 1 ;;
  admit_select)
    synth "$D/ck" --nan-bytes 1
    "$BP" domain "$SPEC" --report "$D/domain.json" >/dev/null || fail "domain"
    "$BP" audit "$D/ck" --report "$D/audit.json" >/dev/null || fail "audit"
    expect 1 "^REFUSED: 17/18 selected tensors inside, 1 outside; 1/2 layers inside$" \
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
    expect 0 "^e2m1×ue8m0\[114\.\.126\]→fp16 folded≡ordinary: 208/208 bit patterns equal" \
      "$BP" prove "$SPEC" --scales-from "$D/audit.json"
    synth "$D/wide" --scale-range 110:130
    "$BP" audit "$D/wide" --report "$D/wide.json" >/dev/null || fail "audit"
    expect 1 "^e2m1×ue8m0\[110\.\.130\]→fp16 folded≡ordinary: REFUTED" "$BP" prove "$SPEC" --scales-from "$D/wide.json" ;;

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
    expect 2 "--dtype: F16: not a one-byte dtype$" "$BP" audit "$D/ck" --dtype F16
    expect 2 "--dtype: Q8: unknown dtype$" "$BP" audit "$D/ck" --dtype F8_E8M0,Q8 ;;
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
    # The last tensor's max (greedy .* reaches the last occurrence), then the overall max.
    sed 's/\(.*\)"max":126,"nan_bytes":0,"histogram"/\1"max":127,"nan_bytes":0,"histogram"/' "$D/audit.json" >"$D/edited.json"
    expect 2 "edited\.json: tensor layers\..*: bytes, min, max or nan_bytes disagree with the histogram$" \
      "$BP" admit --audit "$D/edited.json" --domain "$D/domain.json"
    sed 's/"max":126,"nan_bytes":0,"histogram"/"max":127,"nan_bytes":0,"histogram"/' "$D/audit.json" >"$D/overall.json"
    expect 2 "overall\.json: result\.overall\.max: disagrees with the tensors$" \
      "$BP" admit --audit "$D/overall.json" --domain "$D/domain.json" ;;
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
    expect 2 "--cols: 33 is not a positive multiple of 32$" "$BP" synth-checkpoint "$D/new" --layers 1 --experts 1 --rows 1 --cols 33 ;;
  *)
    fail "unknown case $CASE" ;;
esac
rm -rf "$D"
exit 0
