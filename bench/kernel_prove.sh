#!/usr/bin/env bash
# ab --prove on kernel arms (issue 48's target: the full-size fused-GEMV pair, N = 2048 + 512 + 64,
# K = 4096, proven on 2 cores in < 60 s and < 4 GiB): wall and CPU seconds and peak RSS of
# `bitproof ab examples/fused-aux-gemv/fused.json --backend cpu --cases 1 --prove --threads 2`
# (NVRTC's compile and one concrete case included: the proof needs the cases' verdict), then the
# same without --prove, so the trace's own share is the difference. The operator trace's figure
# (bench/prove.sh: the fused GEMV template, 33.6 M nodes in 0.77 s) is the yardstick.
#
#   bench/kernel_prove.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
report=$(mktemp --suffix=.json)
trap 'rm -f "$report"' EXIT
/usr/bin/time -f "prove: wall %e s, user %U s, sys %S s, max RSS %M KB" \
  "$build/bitproof" ab examples/fused-aux-gemv/fused.json --backend cpu --cases 1 --prove --threads 2 --report "$report"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=r['result']['trace_proof']; e=r['environment']['timing']; print(f\"trace: {t['verdict']}, {t['elements']} elements, {t['nodes']} nodes, {len(t['lemmas'])} lemmas, {e['trace_seconds']:.2f} s (cases {e['cases_seconds']:.2f} s)\")" "$report"
/usr/bin/time -f "cases only: wall %e s, user %U s, sys %S s, max RSS %M KB" \
  "$build/bitproof" ab examples/fused-aux-gemv/fused.json --backend cpu --cases 1 --threads 2 -q
