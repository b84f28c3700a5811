#!/usr/bin/env bash
# Shards on the GPU (one process per GPU: CUDA_VISIBLE_DEVICES picks it): the
# spec swept in 3 shards with --backend cuda merges to the CPU's whole result,
# byte for byte; for a copy-back domain (<= 2^24 cases) and for an on-device
# one (2^32 cases, chunk sums). Exit 77 without a CUDA device.
#   shards_cuda.sh BITPROOF OUT_DIR SPEC...
set -u
bp=$1 out=$2
shift 2
rm -rf "$out" && mkdir -p "$out"
"$bp" prove "$1" --backend cuda --shard 1/3 --report "$out/probe.json" >/dev/null 2>"$out/probe.err"
rc=$?
if [ "$rc" = 3 ]; then echo "skipped: no CUDA device ($(cat "$out/probe.err"))"; exit 77; fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
for spec in "$@"; do
  name=$(basename "$spec" .json)
  "$bp" prove "$spec" --backend cpu --report "$out/$name.whole.json" --quiet
  [ $? -le 1 ] || { echo "FAIL: whole $name"; exit 1; }
  for i in 1 2 3; do
    "$bp" prove "$spec" --backend cuda --shard "$i/3" --report "$out/$name.shard-$i.json" --quiet
    [ $? = 0 ] || { echo "FAIL: shard $i/3 of $name on cuda"; exit 1; }
  done
  "$bp" report merge "$out/$name".shard-*.json -o "$out/$name.merged.json" >/dev/null
  [ $? -le 1 ] || { echo "FAIL: merge of $name"; exit 1; }
  "$py" "$(dirname "$0")/../cli/same_result.py" "$out/$name.whole.json" "$out/$name.merged.json" || exit 1
  grep -q '"name": "cuda"' "$out/$name.shard-1.json" || { echo "FAIL: shard not run on cuda"; exit 1; }
  echo "ok: $name: 3 cuda shards merge to the cpu result"
done
