#!/usr/bin/env bash
# Prints the clang++ that the sanitizer and fuzzing build uses (Debian 12: clang-14
# with libFuzzer's runtime), installing clang-14 and libclang-rt-14-dev with apt-get
# when either is missing. Used by scripts/test.sh and scripts/fuzz.sh.
set -euo pipefail
fuzzer_runtime() { compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; }
pick_clang() { command -v clang++-14 || command -v clang++ || true; }
cxx=$(pick_clang)
if [ -z "$cxx" ] || ! fuzzer_runtime; then
  echo "clang.sh: installing clang-14 and libclang-rt-14-dev" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq && $sudo apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null
  cxx=$(pick_clang)
fi
[ -n "$cxx" ] || { echo "clang.sh: no clang++ after install" >&2; exit 1; }
echo "$cxx"
