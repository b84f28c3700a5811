#!/usr/bin/env bash
# Every test: set up and build (Release, CUDA when nvcc is found), run the whole
# suite; then build again with -fsanitize=address,undefined and run the whole
# suite once more. The bounded fuzzing run sits between the two. GPU tests report "skipped"
# on a machine without a GPU.
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

if [ -x scripts/fuzz.sh ]; then
  echo "== fuzzing (bounded) =="
  scripts/fuzz.sh
fi

echo "== tests (AddressSanitizer + UndefinedBehaviorSanitizer) =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBITPROOF_SANITIZE=ON -DBITPROOF_CUDA=OFF >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure

