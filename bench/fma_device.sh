#!/usr/bin/env bash
# On a GPU machine (issue 18): the double-rounding table (all 2^32 pairs of FP16 / BF16
# add, subtract, multiply, divide and the 2^16 square roots against the FP32 route) and the FMA claims over all 2^48
# triples, with `bitproof prove --backend cuda`. Reports and logs go to $OUT (default
# ./fma-device-out); a summary is printed last (also $OUT/summary.txt).
#
#   BIN=<dir with bitproof> bench/fma_device.sh table
#   BIN=<dir with bitproof> bench/fma_device.sh whole SPEC...   all 2^48 triples of each spec
#   BIN=<dir with bitproof> bench/fma_device.sh probe SPEC...   a 2^40 slice (c = 0..255) of each
#   BIN=<dir with bitproof> bench/fma_device.sh shard SPEC I/N  shard I of N of all 2^48 triples
#     (whole 2^32-case blocks, for a device call too short for the whole run; merge the N
#     shard reports anywhere: bitproof report merge $OUT/fma/SPEC.shard-*-of-N.json -o R.json)
#
# SPEC names a file proofs/SPEC.json; the per-claim specs sweep two recipes each:
#   fp16-fma-fp32-route fp16-fma-fp64-route fp16-fma-rto fp16-hfma-exact bf16-fma-fp32-route
# A whole run takes 4-6 minutes on one H200 for an `equal` claim of two recipes (the claim
# kernel ~2.8 ms a 2^32-case block, plus one sampled model block in 256): measure a probe
# first. Each run has a limit of LIMIT seconds (default 590).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
BIN=${BIN:-build}
OUT=${OUT:-fma-device-out}
WHAT=${1:-}
shift || true
BP=$BIN/bitproof
[ -x "$BP" ] || { echo "fma_device.sh: $BP not found (BIN=<build dir>)" >&2; exit 2; }
mkdir -p "$OUT/table" "$OUT/fma"
. bench/steps.sh

log "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $("$BP" --version)"

run_spec() {  # run_spec NAME SPEC [prove arguments...] (2^32 table rows: the generic kernel; FMA: specialised)
  local name=$1 spec=$2
  shift 2
  [ -f "proofs/$spec.json" ] || { echo "fma_device.sh: proofs/$spec.json not found" >&2; return 2; }
  step "$name" "${LIMIT:-590}" "$BP" prove "proofs/$spec.json" --backend cuda --keep 16 \
    --report "$OUT/$name.json" --markdown "$OUT/$name.md" "$@"
  grep -vE "^  " "$OUT/$name.log" | head -8 | tee -a "$OUT/summary.txt"
}

case "$WHAT" in
  table)
    for spec in fp16-hmul-vs-fp32-round fp16-hadd-vs-fp32-round fp16-hsub-vs-fp32-round \
                bf16-badd-vs-fp32-round bf16-bsub-vs-fp32-round bf16-bmul-vs-fp32-round \
                fp16-hdiv-vs-fp32-round fp16-hsqrt-vs-fp32-round bf16-bdiv-vs-fp32-round bf16-bsqrt-vs-fp32-round; do
      run_spec "table/$spec" "$spec"
    done ;;
  whole)
    for spec in "$@"; do run_spec "fma/$spec" "$spec" --specialize on; done ;;
  probe)
    for spec in "$@"; do run_spec "fma/$spec-c0-255" "$spec" --specialize on --codes c=0:255; done ;;
  shard)
    spec=${1:?shard SPEC I/N} id=${2:?shard SPEC I/N}
    [ -f "proofs/$spec.json" ] || { echo "fma_device.sh: proofs/$spec.json not found" >&2; exit 2; }
    name="fma/$spec.shard-${id%/*}-of-${id#*/}"
    step "$name" "${LIMIT:-590}" "$BP" prove "proofs/$spec.json" --backend cuda --keep 16 --specialize on \
      --shard "$id" --report "$OUT/$name.json"
    grep -vE "^  " "$OUT/$name.log" | head -8 | tee -a "$OUT/summary.txt" ;;
  *)
    echo "usage: BIN=<dir> bench/fma_device.sh table | whole SPEC... | probe SPEC... | shard SPEC I/N" >&2
    exit 2 ;;
esac
log "done: $OUT"
