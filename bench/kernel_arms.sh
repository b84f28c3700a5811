#!/usr/bin/env bash
# Kernel arms on the CPU's PTX executor (issue 47's target: 8 cases of the full-size fused-GEMV
# pair, N = 2048 + 512 + 64, K = 4096, in < 30 s on 2 cores): wall and CPU seconds of
# `bitproof ab examples/fused-aux-gemv/fused.json --backend cpu --cases CASES --threads 2`
# (NVRTC's compile included; the two arms run on two threads).
#
#   bench/kernel_arms.sh [BUILD_DIR] [CASES]   (defaults: build 8)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cases=${2:-8}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "wall %e s, user %U s, sys %S s, max RSS %M KB" \
  "$build/bitproof" ab examples/fused-aux-gemv/fused.json --backend cpu --cases "$cases" --threads 2
