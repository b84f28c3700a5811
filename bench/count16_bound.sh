#!/usr/bin/env bash
# What bounds the 16-bit audit on this CPU (bench/count16_bound.cpp): the
# store rate of one store a code, bitproof's own counter, and the kernel's
# copy out of the page cache, measured on one core, and the audit/cat
# bandwidth ratio they allow on 1 and 2 cores. Writes bench/audit.sh's
# fp16-scales checkpoint (1.08 GB of FP16 group scales, 2,049 codes) to WORKDIR
# first, warms it, and deletes it afterwards unless KEEP=1. RUNS times (default 3).
#
#   bench/count16_bound.sh [WORKDIR]        default out/bench-count16 (needs ~1.1 GB)
#   BUILD=build RUNS=3 KEEP=1 bench/count16_bound.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$root/out/bench-count16}
build=${BUILD:-$root/build}
runs=${RUNS:-3}

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DBITPROOF_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" --target bitproof bitproof_count16_bound -j"$(nproc)" >/dev/null

rm -rf "$work" && mkdir -p "$work"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
"$build/bitproof" synth-checkpoint "$work/fp16-scales" --layout gptq --rows 4096 --layers 16 --experts 86 \
  --no-weights --cols 4096 --shards 4 --seed 1 >/dev/null
files=("$work"/fp16-scales/*.safetensors)
cat "${files[@]}" >/dev/null
cat "${files[@]}" >/dev/null

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')" \
  "(family $(lscpu | sed -n 's/^CPU family: *//p')), load $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$runs"); do
  echo "## run $run"
  "$build/bitproof_count16_bound" "${files[@]}"
done
