#!/usr/bin/env bash
# Fuzzes, with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer,
# for a bounded time each: the safetensors header parser (src/audit/safetensors.cpp,
# strict_json.cpp; seeds from the checkpoint generator), the report reader and
# renderers (seeds: the committed reports), report merge (seeds: shard sets
# of small specs), the spec reader (seeds: every committed and test spec) and
# the .npy reader of output tables (10 s).
#
#   scripts/fuzz.sh [SECONDS]      the safetensors run, default 45 (or $FUZZ_SECONDS);
#                                  the report, merge and spec runs take a third of it each
#   FUZZ_BUILD_DIR=DIR             build directory (default build-fuzz in the repository)
#
# Self-contained: scripts/clang.sh installs clang-14 and libclang-rt-14-dev
# (Debian 12) with apt-get when clang or the libFuzzer runtime is missing. Exit 0 when the run
# found nothing; non-zero on a crash, leak, sanitizer report or timeout (the
# reproducing input is left in $FUZZ_BUILD_DIR/fuzz-crashes/) or a failed build.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-${FUZZ_SECONDS:-45}}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}

cxx=$("$root/scripts/clang.sh")

# The build: a directory already configured with BITPROOF_FUZZ (FUZZ_BUILD_DIR, e.g. a clang
# sanitizer build of the whole suite) is used as it is; otherwise this configures its own: -O1
# with line tables, what a fuzzing build needs (stack traces name the line) at the least
# compile time.
if ! grep -q "^BITPROOF_FUZZ:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
  cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DBITPROOF_FUZZ=ON -DBITPROOF_CUDA=OFF \
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" >/dev/null
fi
cmake --build "$build" --target fuzz_safetensors fuzz_safetensors_seeds fuzz_report fuzz_merge fuzz_spec fuzz_report_seeds fuzz_npy fuzz_npy_seeds \
  -j"$(nproc)" >/dev/null

seeds=$build/fuzz-seeds corpus=$build/fuzz-corpus crashes=$build/fuzz-crashes
rm -rf "$seeds"
mkdir -p "$corpus" "$crashes"
"$build/tests/audit/fuzz_safetensors_seeds" "$seeds"
echo "fuzz.sh: fuzzing the safetensors reader for ${seconds}s ($(ls "$seeds" | wc -l) seeds)"
"$build/tests/audit/fuzz_safetensors" "$corpus" "$seeds" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1

third=$((seconds / 3 > 0 ? seconds / 3 : 1))
rm -rf "$seeds-report" "$seeds-merge" "$seeds-spec"
"$build/tests/report/fuzz/fuzz_report_seeds" "$root" "$seeds-report" "$seeds-merge" "$seeds-spec"
for target in report merge spec; do
  mkdir -p "$corpus-$target"
  echo "fuzz.sh: fuzzing the $target reader for ${third}s ($(ls "$seeds-$target" | wc -l) seeds)"
  "$build/tests/report/fuzz/fuzz_$target" "$corpus-$target" "$seeds-$target" -max_total_time="$third" -max_len=65536 \
    -timeout=20 -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1
done
# The .npy reader of output tables: small, so a fixed 10 s (seeds: each accepted dtype and version).
rm -rf "$seeds-npy" && mkdir -p "$seeds-npy" "$corpus-npy"
"$build/tests/user/fuzz/fuzz_npy_seeds" "$seeds-npy"
echo "fuzz.sh: fuzzing the .npy table reader for 10s ($(ls "$seeds-npy" | wc -l) seeds)"
"$build/tests/user/fuzz/fuzz_npy" "$corpus-npy" "$seeds-npy" -max_total_time=10 -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1
echo "fuzz.sh: no crash in ${seconds}s + 3 x ${third}s + 10s"
