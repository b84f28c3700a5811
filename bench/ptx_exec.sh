#!/usr/bin/env bash
# The PTX executor's instructions a second on one core (issue 47's target: >= 1e8), on the fused
# aux GEMV fixture (bench/ptx_exec_bench.cpp). REPEAT runs (default 3), medians.
#
#   bench/ptx_exec.sh [BUILD_DIR] [REPEAT] [N0 N1 N2 K]   (defaults: build 3 2048 512 64 4096)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeat=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
cmake --build "$build" --target bitproof_ptx_bench -j2 >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$repeat"); do
  "$build/bitproof_ptx_bench" "$@"
done | python3 -c '
import json, statistics, sys
runs = [json.loads(line) for line in sys.stdin]
t = statistics.median(r["thread_instructions_per_second"] for r in runs)
w = statistics.median(r["warp_instructions_per_second"] for r in runs)
c = statistics.median(r["thread_instructions_per_cpu_second"] for r in runs)
r0 = runs[0]
rows, k, ti, wi = r0["rows"], r0["k"], r0["thread_instructions"], r0["warp_instructions"]
secs = [r["seconds"] for r in runs]
cpus = [r["cpu_seconds"] for r in runs]
print(f"gemv_fused {rows} rows x K {k}: {ti} thread instructions ({wi} warp instructions); median of {len(runs)}: "
      f"{t:.3g} thread instr/s, {w:.3g} warp instr/s on one core (wall); {c:.3g} thread instr per CPU second; "
      f"seconds {secs}, CPU seconds {cpus}")
'
