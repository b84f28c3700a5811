#!/usr/bin/env bash
# report merge refuses (exit 2, one line) shards of different specs, overlapping
# shards and sets with a gap; and accepts the proper set (negative control).
#   shards_bad.sh BITPROOF WIDE_SPEC OTHER_SPEC OUT_DIR
set -uo pipefail
bp=$1 wide=$2 other=$3 out=$4
rm -rf "$out" && mkdir -p "$out"
for i in 1 2 3; do "$bp" prove "$wide" --shard "$i/3" --report "$out/w$i.json" --quiet || exit 1; done
"$bp" prove "$other" --shard 1/1 --report "$out/other.json" --quiet || exit 1
check=$(dirname "$0")/../cli/check.sh
"$check" 2 "of another spec" -- "$bp" report merge "$out/w1.json" "$out/w2.json" "$out/other.json" -o "$out/m.json" || exit 1
"$check" 2 "overlap another shard" -- "$bp" report merge "$out/w1.json" "$out/w2.json" "$out/w2.json" "$out/w3.json" -o "$out/m.json" || exit 1
"$check" 2 "are missing: no shard covers them" -- "$bp" report merge "$out/w1.json" "$out/w3.json" -o "$out/m.json" || exit 1
"$check" 2 "are missing: no shard covers them" -- "$bp" report merge "$out/w1.json" "$out/w2.json" -o "$out/m.json" || exit 1
"$check" 2 "not a shard report" -- "$bp" report merge "$out/w1.json" "$(dirname "$0")/../../reports/dsv4-mxfp4-fp16-fold.json" -o "$out/m.json" || exit 1
[ -e "$out/m.json" ] && { echo "a refused merge wrote its output"; exit 1; }
"$check" 1 "REFUTED" -- "$bp" report merge "$out/w1.json" "$out/w2.json" "$out/w3.json" -o "$out/m.json" || exit 1
