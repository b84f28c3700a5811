#!/usr/bin/env bash
# bitproof ab on the CPU (issue 14): the fused auxiliary GEMV pair (N = 2624, K =
# 4096, 64 changing-input cases, both arms) with the soft model on every core,
# against a peer doing the same GEMVs with the CPU's own float FMA in the same
# run (bench/ab_peer.cpp); and the trace proofs of the fused GEMV and of the
# W13 -> SwiGLU -> W2 chain (their time, from the report's environment.timing).
# Usage: bench/ab.sh   (needs: scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bp=$(realpath "${BITPROOF:-build/bitproof}")
[ -x "$bp" ] || scripts/setup.sh >/dev/null
out=$(mktemp -d)
g++ -O2 -ffp-contract=off -pthread bench/ab_peer.cpp -o "$out/peer"
timing() { python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['environment']['timing']; print(f\"cases {t['cases_seconds']:.2f} s, trace {t['trace_seconds']:.2f} s, {t['trace_nodes']} trace nodes\")" "$1"; }
start=$(date +%s.%N)
"$bp" ab proofs/ab/dsv4-fused-aux-gemv.json --backend cpu --quiet --report "$out/gemv.json"
end=$(date +%s.%N)
echo "bitproof ab, fused aux GEMV, 64 cases, CPU backend (host binary32 unit, checked against the soft model): $(python3 -c "print(f'{$end - $start:.2f}')") s wall (process)"
"$out/peer"
"$bp" ab proofs/ab/dsv4-fused-aux-gemv.json --backend cpu --quiet --prove --cases 1 --report "$out/gemv-trace.json"
echo "trace proof, fused aux GEMV: $(timing "$out/gemv-trace.json")"
"$bp" ab proofs/ab/dsv4-mxfp4-fold-moe.json --backend cpu --quiet --prove --cases 1 --report "$out/moe-trace.json"
echo "trace proof, W13 -> SwiGLU -> W2 (M = 6): $(timing "$out/moe-trace.json")"
grep -m1 "model name" /proc/cpuinfo
nproc
