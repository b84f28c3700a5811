#!/usr/bin/env bash
# Packs what the GPU tests need on a GPU machine that has CUDA, Python, torch and Triton but none of
# Debian's -dev packages (tests/gpu/device/README.md): the commands and the GPU test binary of a build
# tree configured with SASS (CUDA_ARCHS=90, not 90-virtual: a PTX-only build makes the driver JIT
# every kernel at its first launch), and, for the Python module compiled there, the position-
# independent core libraries, libcrypto.a, libre2.so.9 and the third-party headers python/src reads.
# Usage: tests/gpu/device/bundle.sh [BUILD_DIR (default build-gpu)]   -> .gpu/bundle.tgz (ignored; about
# 28 MB: what travels to a lent machine is limited to 64 MiB with the tree), unpacked there by run.sh.
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build-gpu}
for f in bitproof bitproof-cuda tests/gpu/bitproof_gpu_tests libbitproof_core.a libbitproof_cuda.a; do
  [ -f "$build/$f" ] || { echo "bundle: $build/$f missing (cmake --build $build --target bitproof bitproof-cuda bitproof_gpu_tests _bitproof)" >&2; exit 2; }
done
grep -q -- '-fPIC' "$build/CMakeFiles/bitproof_core.dir/flags.make" ||
  { echo "bundle: $build's libraries are not position-independent (configure with pybind11-dev installed)" >&2; exit 2; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/include"
cp "$build/bitproof" "$build/bitproof-cuda" "$build/tests/gpu/bitproof_gpu_tests" "$stage/bin/"
cp "$build/libbitproof_core.a" "$build/libbitproof_cuda.a" /usr/lib/x86_64-linux-gnu/libcrypto.a "$stage/lib/"
cp -L /usr/lib/x86_64-linux-gnu/libre2.so.9 "$stage/lib/"
# bitproof's own headers where the commands look for them (../include/bitproof: NVRTC compiles user
# recipes and kernel arms against bitproof_cuda_host.h), as an install puts them.
cmake --install "$build" --component bitproof_headers --prefix "$stage" >/dev/null
# The headers python/src includes from Debian's -dev packages (boost, fmt, nlohmann, openssl, re2):
# the compiler's own dependency list, system C/C++, Python and pybind11 headers left out.
headers=$(for s in python/src/*.cpp; do
  c++ -std=c++20 -M -MT x -Ipython/src -Isrc -isystem /usr/include/python3.11 -isystem /usr/local/cuda/include \
    -DBITPROOF_HAVE_CUDA_HEADERS=1 "$s"
done | tr ' \\' '\n\n' | grep -E '^/usr/include/(x86_64-linux-gnu/)?(boost|fmt|nlohmann|openssl|re2|absl)/' | sort -u)
for h in $headers; do
  rel=${h#/usr/include/}
  rel=${rel#x86_64-linux-gnu/}  # Debian's multiarch openssl/configuration.h
  mkdir -p "$stage/include/$(dirname "$rel")"
  cp "$h" "$stage/include/$rel"
done
git rev-parse HEAD >"$stage/commit"
mkdir -p .gpu
tar -C "$stage" -czf .gpu/bundle.tgz .
echo "bundle: .gpu/bundle.tgz, $(du -h .gpu/bundle.tgz | cut -f1) (commit $(cat "$stage/commit"))"
