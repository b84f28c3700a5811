#!/usr/bin/env bash
# Every test: set up and build (Release, CUDA when nvcc is found), run the whole
# suite; then one clang build with -fsanitize=address,undefined that also holds the
# libFuzzer targets: the bounded fuzzing run (scripts/fuzz.sh) and the whole suite
# once more under the sanitizers. GPU tests report "skipped" on a machine without a GPU.
# Each phase prints its wall and CPU time (CI has 30 minutes on 2 cores: bench/RESULTS.md,
# "CI time").
set -euo pipefail
cd "$(dirname "$0")/.."

# Wall and CPU time (user + system of every process this script ran and waited for) per phase.
phase_wall=$SECONDS phase_cpu=0 phases=()
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
phase_done() {
  times >"$times_file"  # in this shell: a subshell's `times` starts from zero
  local cpu
  cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
                       printf "%.0f", t }' "$times_file")
  phases+=("$(printf '%-44s %5d s wall %6d s CPU' "$1" $((SECONDS - phase_wall)) $((cpu - phase_cpu)))")
  echo "test: ${phases[-1]}"
  phase_wall=$SECONDS phase_cpu=$cpu
}

# Without a GPU the GPU tests only build and report "skipped", so the kernels are compiled to PTX
# alone (CUDA_ARCHS=90-virtual): nvcc's front end still checks every kernel, ptxas (three quarters of
# the build's nvcc time, bench/RESULTS.md "CI time") runs on a GPU machine instead. CUDA_ARCHS set by
# hand is kept.
if [ -z "${CUDA_ARCHS:-}" ] && ! nvidia-smi -L >/dev/null 2>&1; then
  export CUDA_ARCHS=90-virtual
  echo "test: no GPU found: CUDA kernels built as PTX only (CUDA_ARCHS=90-virtual; set CUDA_ARCHS=90 for SASS)"
fi
scripts/setup.sh
jobs=$(nproc)
# What only the tests need: headless Chromium renders the SVG case map (cli.svg_in_chromium).
if ! command -v chromium >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "test: installing chromium"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
phase_done "setup, Release build"

echo "== tests (Release) =="
ctest --test-dir build -j"$jobs" --output-on-failure
phase_done "tests (Release)"

# One build for the sanitizers and the fuzz targets: clang (scripts/clang.sh installs clang-14
# and libFuzzer's runtime), -fsanitize=address,undefined on everything, the core also
# instrumented for libFuzzer's coverage (BITPROOF_FUZZ). -O1 with line tables: the sanitizers'
# and the fuzzers' reports still name function and line, at the least compile time.
echo "== build (clang: AddressSanitizer + UndefinedBehaviorSanitizer, libFuzzer targets) =="
cxx=$(scripts/clang.sh)
# A unity build (BITPROOF_UNITY: 8 sources a translation unit) compiles the shared templates once a
# batch; the Release build above stays one source a unit.
cmake -S . -B build-asan -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DBITPROOF_SANITIZE=ON -DBITPROOF_FUZZ=ON \
  -DBITPROOF_CUDA=OFF -DBITPROOF_UNITY=ON >/dev/null
cmake --build build-asan -j"$jobs"
phase_done "sanitizer + fuzzer build (clang)"

echo "== fuzzing (bounded) =="
FUZZ_BUILD_DIR=build-asan scripts/fuzz.sh
phase_done "fuzzing"

# The suites' largest sweeps take every k-th case here (tests/sweep_stride.hpp: the Release
# run above proved them exhaustively; the test binaries print the stride).
echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
# Tests labelled "heavy" (the largest report regenerations, tests/cli/CMakeLists.txt) ran above.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure --label-exclude heavy
phase_done "tests (sanitizers)"

echo "== time per phase =="
printf '%s\n' "${phases[@]}"
