#!/usr/bin/env bash
# Fuzzes, with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer,
# for a bounded time each (two at a time where there are two cores): the
# safetensors header parser (src/checkpoint/safetensors.cpp, strict_json.cpp; seeds
# from the checkpoint generator), the report reader and
# renderers (seeds: the committed reports), report merge (seeds: shard sets
# of small specs), the spec reader (seeds: every committed and test spec),
# the .npy reader of output tables (10 s), the user build's texts read back
# (cache manifests, -M rules, -v search lists, ABI refusals: 10 s) and the PTX parser and
# executor, concrete and symbolic (seeds: tests/ptx/data, tests/cli/data/kernel_prove; 10 s).
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
cmake --build "$build" --target fuzz_safetensors fuzz_safetensors_seeds fuzz_report fuzz_merge fuzz_spec fuzz_report_seeds fuzz_npy fuzz_npy_seeds fuzz_build_text fuzz_ptx \
  -j"$(nproc)" >/dev/null

seeds=$build/fuzz-seeds corpus=$build/fuzz-corpus crashes=$build/fuzz-crashes logs=$build/fuzz-logs
rm -rf "$seeds" "$seeds-report" "$seeds-merge" "$seeds-spec" "$seeds-npy" "$seeds-build" "$seeds-ptx" "$logs"
mkdir -p "$corpus" "$crashes" "$logs" "$seeds-npy" "$seeds-build" "$seeds-ptx"
# The PTX parser and executor: nvcc's fixture module.
cp "$root"/tests/ptx/data/*.ptx "$seeds-ptx/"
for f in "$root"/tests/cli/data/kernel_prove/*.ptx; do cp "$f" "$seeds-ptx/kernel_prove-$(basename "$f")"; done
"$build/tests/audit/fuzz_safetensors_seeds" "$seeds"
"$build/tests/report/fuzz/fuzz_report_seeds" "$root" "$seeds-report" "$seeds-merge" "$seeds-spec"
"$build/tests/user/fuzz/fuzz_npy_seeds" "$seeds-npy"
# The user build's texts: one of each kind as bitproof and the compilers write them.
h64=$(printf 'a%.0s' $(seq 64))
printf 'bitproof-user-manifest-v2\ncompiler g++ 12\nkey %s\nworker %s\nuser %s /x/d.cuh\nsys %s /usr/include/stdio.h\n' \
  "$h64" "$h64" "$h64" "$h64" >"$seeds-build/manifest"
printf 't: /a/b.h \\\n /x\\ y/c.h /d\\#e.h /f$$g.h\n' >"$seeds-build/rule"
printf '#include <...> search starts here:\n /usr/include/c++/12\n /usr/include\nEnd of search list.\n' >"$seeds-build/search"
printf "w.cpp:2:8: error: incomplete type 'bitproof_abi::function_has_type<bitproof_recipe_1, __half (*)(unsigned int)>'\n" \
  >"$seeds-build/abi"

# fuzz NAME BINARY SEEDS SECONDS MAX_LEN TIMEOUT: one bounded libFuzzer run, its output in
# $logs/NAME.log (printed whole when it fails; its final statistics when it does not).
fuzz() {
  local name=$1 bin=$2 seed_dir=$3 secs=$4 max_len=$5 timeout=$6
  mkdir -p "$corpus-$name"
  echo "fuzz.sh: fuzzing the $name reader for ${secs}s ($(ls "$seed_dir" | wc -l) seeds)"
  if ! "$bin" "$corpus-$name" "$seed_dir" -max_total_time="$secs" -max_len="$max_len" -timeout="$timeout" \
       -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1 >"$logs/$name.log" 2>&1; then
    echo "fuzz.sh: the $name fuzzer failed (reproducer in $crashes/):"
    cat "$logs/$name.log"
    return 1
  fi
  echo "fuzz.sh: $name: $(grep -E '^Done [0-9]+ runs' "$logs/$name.log" | tail -1)," \
       "$(grep -E '^stat::number_of_executed_units' "$logs/$name.log" | awk '{print $2}') units"
}

# Each fuzzer is single-threaded: with two cores or more, the safetensors run goes alongside
# the others (each still gets its whole time; only the wall time is shared).
third=$((seconds / 3 > 0 ? seconds / 3 : 1))
others() {
  fuzz report "$build/tests/report/fuzz/fuzz_report" "$seeds-report" "$third" 65536 20 &&
    fuzz merge "$build/tests/report/fuzz/fuzz_merge" "$seeds-merge" "$third" 65536 20 &&
    fuzz spec "$build/tests/report/fuzz/fuzz_spec" "$seeds-spec" "$third" 65536 20 &&
    # The .npy reader of output tables: small, so a fixed 10 s (seeds: each accepted dtype and version).
    fuzz npy "$build/tests/user/fuzz/fuzz_npy" "$seeds-npy" 10 4096 10 &&
    fuzz build_text "$build/tests/user/fuzz/fuzz_build_text" "$seeds-build" 10 4096 10 &&
    # The PTX parser and executor (src/ptx): 10 s, texts up to 16 KiB.
    fuzz ptx "$build/tests/ptx/fuzz/fuzz_ptx" "$seeds-ptx" 10 16384 10
}
status=0
if [ "$(nproc)" -ge 2 ]; then
  fuzz safetensors "$build/tests/audit/fuzz_safetensors" "$seeds" "$seconds" 16384 10 &
  pid=$!
  others || status=1
  wait "$pid" || status=1
else
  fuzz safetensors "$build/tests/audit/fuzz_safetensors" "$seeds" "$seconds" 16384 10 && others || status=1
fi
[ "$status" -eq 0 ] || exit 1
echo "fuzz.sh: no crash in ${seconds}s + 3 x ${third}s + 3 x 10s"
