#!/usr/bin/env bash
# Whole-process wall time of the DeepSeek V4 fold proof and its domain
# discovery, against the peer users write today (bench/peer_fold.py), measured
# in the same run with hyperfine (no shell in between, warm-up runs first).
# Usage: bench/prove.sh [runs]   (needs: scripts/setup.sh; apt-get install hyperfine)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
command -v hyperfine >/dev/null || { apt-get install -y -qq hyperfine >/dev/null; }
bp=${BITPROOF:-build/bitproof}
[ -x "$bp" ] || scripts/setup.sh >/dev/null
out=$(mktemp -d)
py=/usr/bin/python3  # Debian's interpreter: the one a fresh machine has
[ -x "$py" ] || py=python3
# The dynamically linked twin (a CUDA build's bitproof-cuda), when there is one:
# the same work, to show what the static link buys.
twin=()
[ -x "$(dirname "$bp")/bitproof-cuda" ] &&
  twin=(-n "bitproof-cuda prove (dynamic)" "$(dirname "$bp")/bitproof-cuda prove proofs/dsv4-mxfp4-fp16-fold.json --backend cpu")
hyperfine -N --warmup 20 --runs "$runs" --export-json "$out/prove.json" \
  -n "bitproof prove" "$bp prove proofs/dsv4-mxfp4-fp16-fold.json --backend cpu" \
  -n "bitproof prove (default --backend all)" "$bp prove proofs/dsv4-mxfp4-fp16-fold.json" \
  "${twin[@]}" \
  -n "bitproof prove --report" "$bp prove proofs/dsv4-mxfp4-fp16-fold.json --backend cpu --report $out/r.json" \
  -n "bitproof domain" "$bp domain proofs/dsv4-mxfp4-fp16-fold.json" \
  -n "python3 peer (208 cases)" "$py bench/peer_fold.py" >/dev/null
python3 - "$out/prove.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
peer = next(r for r in results if r["command"].startswith("python3 peer"))["median"]
print("| command | median ms | min ms | runs | peer / this |")
print("|---|---|---|---|---|")
for r in results:
    print(f"| {r['command']} | {r['median']*1e3:.2f} | {r['min']*1e3:.2f} | {len(r['times'])} | {peer / r['median']:.1f}x |")
PY
rm -rf "$out"
