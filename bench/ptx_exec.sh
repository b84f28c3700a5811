#!/usr/bin/env bash
# The PTX executor's instructions a second on one core (issue 47's target: >= 1e8), on the fused
# aux GEMV fixture (bench/ptx_exec_bench.cpp). REPEAT runs (default 3), medians.
#
#   bench/ptx_exec.sh [BUILD_DIR] [REPEAT] [N0 N1 N2 K]   (defaults: build 3 2048 512 64 4096)
#
# BASELINE=PATH: also run PATH (a bitproof_ptx_bench of another revision, e.g. built from
# `git archive` of it with `g++ -O3 -DNDEBUG -std=c++20 -DFMT_HEADER_ONLY -Isrc
# -DBITPROOF_SOURCE_DIR='"DIR"' bench/ptx_exec_bench.cpp src/ptx/*.cpp`), interleaved with this
# build's runs, and print both medians and the ratio (this build's CPU-second rate / the baseline's).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
repeat=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
cmake --build "$build" --target bitproof_ptx_bench -j2 >/dev/null
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$repeat"); do
  if [ -n "${BASELINE:-}" ]; then
    echo "baseline $("$BASELINE" "$@")"
  fi
  echo "this $("$build/bitproof_ptx_bench" "$@")"
done | python3 -c '
import json, statistics, sys
runs = {}
for line in sys.stdin:
    who, _, js = line.partition(" ")
    runs.setdefault(who, []).append(json.loads(js))
med = {}
for who in ("baseline", "this"):
    if who not in runs:
        continue
    rs = runs[who]
    t = statistics.median(r["thread_instructions_per_second"] for r in rs)
    w = statistics.median(r["warp_instructions_per_second"] for r in rs)
    c = statistics.median(r["thread_instructions_per_cpu_second"] for r in rs)
    med[who] = c
    r0 = rs[0]
    rows, k, ti, wi = r0["rows"], r0["k"], r0["thread_instructions"], r0["warp_instructions"]
    secs = [r["seconds"] for r in rs]
    cpus = [r["cpu_seconds"] for r in rs]
    print(f"{who}: gemv_fused {rows} rows x K {k}: {ti} thread instructions ({wi} warp instructions); median of {len(rs)}: "
          f"{t:.3g} thread instr/s, {w:.3g} warp instr/s on one core (wall); {c:.3g} thread instr per CPU second; "
          f"seconds {secs}, CPU seconds {cpus}")
if "baseline" in med:
    b, t = runs["baseline"][0], runs["this"][0]
    same = (b["thread_instructions"], b["warp_instructions"]) == (t["thread_instructions"], t["warp_instructions"])
    ratio = med["this"] / med["baseline"]
    counts = "equal" if same else "DIFFER"
    print(f"ratio (this / baseline, thread instructions per CPU second): {ratio:.2f}; instruction counts {counts}")
'
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
