#!/usr/bin/env bash
# Sweeps SPEC in N shards, merges them, and demands the merged `result` be
# byte-identical to the unsharded report WHOLE.
#   shards.sh BITPROOF SPEC N OUT_DIR WHOLE.json
set -euo pipefail
bp=$1 spec=$2 n=$3 out=$4 whole=$5
rm -rf "$out" && mkdir -p "$out"
for i in $(seq 1 "$n"); do
  "$bp" prove "$spec" --shard "$i/$n" --report "$out/shard-$i.json" --quiet
done
set +e
"$bp" report merge "$out"/shard-*.json -o "$out/merged.json" >/dev/null
rc=$?
set -e
[ "$rc" -le 1 ] || { echo "merge exited $rc"; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$(dirname "$0")/../cli/same_result.py" "$whole" "$out/merged.json"
