#!/usr/bin/env bash
# The 2^32 claim (proofs/fp16-hmul-vs-fp32-round.json) on the CPU backend, every
# core, against two plain scalar loops in the same run (bench/cpu_sweep_bench.cpp):
# the soft model case by case, and the CPU's own FP16 multiply (AVX512-FP16) vs
# F16C conversions around an FP32 multiply. REPEAT runs (default 3), medians.
#
#   bench/cpu_sweep.sh [BUILD_DIR] [REPEAT]     (BUILD_DIR default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeat=${2:-3}
cmake --build "$build" --target bitproof_cpu_sweep_bench -j2 >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$repeat"); do
  "$build/bitproof_cpu_sweep_bench" proofs/fp16-hmul-vs-fp32-round.json 4096 | tail -1
done | python3 -c '
import json, statistics, sys
runs = [json.loads(line) for line in sys.stdin]
ours = statistics.median(r["bitproof_cpu"]["cases_per_second"] for r in runs)
soft = statistics.median(r["peers"]["soft_scalar"]["cases_per_second"] for r in runs)
threads = runs[0]["threads"]
line = f"bitproof cpu backend: {ours:.3g} cases/s ({threads} threads, median of {len(runs)}); "
line += f"soft scalar loop: {soft:.3g} cases/s (x{ours / soft:.1f})"
if "native_scalar" in runs[0]["peers"]:
    native = statistics.median(r["peers"]["native_scalar"]["cases_per_second"] for r in runs)
    line += f"; native scalar loop (vmulsh vs F16C): {native:.3g} cases/s (x{ours / native:.2f})"
print(line)
print("seconds:", [round(r["bitproof_cpu"]["seconds"], 3) for r in runs])
'
