#!/usr/bin/env bash
# Shards on the GPU (one process per GPU: CUDA_VISIBLE_DEVICES picks it): the
# spec swept in 3 shards with --backend cuda merges to the whole result, byte
# for byte; for a copy-back domain (<= 2^24 cases) and for an on-device one
# (2^32 cases, chunk sums), whose whole run is the CPU's. A spec given as
# cuda:SPEC is a block-sum domain (above 2^32 cases): its whole run is one CUDA
# process, and it is merged from 2 and from 3 shards of whole blocks. Exit 77
# without a CUDA device.
#   shards_cuda.sh BITPROOF OUT_DIR [cuda:]SPEC...
set -u
bp=$1 out=$2
shift 2
rm -rf "$out" && mkdir -p "$out"
"$bp" prove "${1#cuda:}" --backend cuda --shard 1/3 --report "$out/probe.json" >/dev/null 2>"$out/probe.err"
rc=$?
if [ "$rc" = 3 ]; then echo "skipped: no CUDA device ($(cat "$out/probe.err"))"; exit 77; fi
py=/usr/bin/python3
[ -x "$py" ] || py=python3
for arg in "$@"; do
  spec=${arg#cuda:} whole=cpu counts="3"
  [ "$arg" != "$spec" ] && whole=cuda counts="2 3"
  name=$(basename "$spec" .json)
  "$bp" prove "$spec" --backend "$whole" --report "$out/$name.whole.json" --quiet
  [ $? -le 1 ] || { echo "FAIL: whole $name on $whole"; exit 1; }
  for n in $counts; do
    for i in $(seq 1 "$n"); do
      "$bp" prove "$spec" --backend cuda --shard "$i/$n" --report "$out/$name.$n.shard-$i.json" --quiet
      [ $? -le 1 ] || { echo "FAIL: shard $i/$n of $name on cuda"; exit 1; }
    done
    "$bp" report merge "$out/$name.$n".shard-*.json -o "$out/$name.$n.merged.json" >/dev/null
    [ $? -le 1 ] || { echo "FAIL: merge of $name from $n shards"; exit 1; }
    "$py" "$(dirname "$0")/../cli/same_result.py" "$out/$name.whole.json" "$out/$name.$n.merged.json" || exit 1
    grep -q '"name": "cuda"' "$out/$name.$n.shard-1.json" || { echo "FAIL: shard not run on cuda"; exit 1; }
    echo "ok: $name: $n cuda shards merge to the $whole result"
  done
done
