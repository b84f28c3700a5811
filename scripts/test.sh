#!/usr/bin/env bash
# Every test: set up and build (Release, CUDA when nvcc is found), run the whole
# suite; the bounded fuzzing run (clang, scripts/fuzz.sh); then build again with
# -fsanitize=address,undefined and run the whole suite once more. GPU tests
# report "skipped" on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
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

echo "== tests (Release) =="
ctest --test-dir build -j"$jobs" --output-on-failure

echo "== fuzzing (bounded) =="
scripts/fuzz.sh

# -O1 with minimal debug info: the sanitizers' reports still name function and line, and it
# compiles faster than RelWithDebInfo's -O2 -g (src/report/report.cpp, no debug info: 26 s of
# CPU at -O2, 19 s at -O1), so the suite keeps to CI's time.
echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DBITPROOF_SANITIZE=ON -DBITPROOF_CUDA=OFF >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure
