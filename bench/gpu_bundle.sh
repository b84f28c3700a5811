#!/usr/bin/env bash
# Packs bitproof_gpu_tests into one self-contained, compressed file for a GPU
# machine that has no Debian -dev packages and limited room for carried files:
# the kernels rebuilt for SASS only (no PTX; -gencode code=sm_XX), symbols
# stripped, xz-compressed; libfmt.so.9 travels beside it (also xz-compressed).
# libstdc++ and libcrypto stay dynamic: a static libstdc++ next to the one that
# compute-sanitizer's injected libraries load crashed the process (seen on an
# H200, 2026-11-29); CRYPTO=/usr/lib/x86_64-linux-gnu/libcrypto.a links it in.
#
#   bench/gpu_bundle.sh BUILD_DIR OUT_DIR [ARCH]    (ARCH default 90)
# On the GPU machine: python3 -c 'import lzma,sys; ...' unpacks (see gpu_sweep.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 out=$2 arch=${3:-90}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --build "$build" --target bitproof_gpu_tests -j2 >/dev/null
flags=(-std=c++20 --expt-relaxed-constexpr -O3 -Isrc -DBITPROOF_HAVE_CUDA_HEADERS=1
       -gencode "arch=compute_${arch},code=sm_${arch}")
"$nvcc" "${flags[@]}" -fatbin -o "$work/sweep.fatbin" kernels/sweep.cu &
"$nvcc" "${flags[@]}" --use_fast_math -DBITPROOF_KERNELS_HW_ONLY -fatbin -o "$work/sweep_fast_math.fatbin" kernels/sweep.cu &
wait
nvcc_version=$("$nvcc" --version | grep -oE "release [0-9.]+, V[0-9.]+")
sed -e "s|@kdir@|$work|g" -e "s|@CMAKE_CUDA_ARCHITECTURES@|${arch}-real|" -e "s|@nvcc_version@|$nvcc_version|" \
  kernels/kernel_images.cpp.in >"$work/kernel_images.cpp"
c++ -O2 -c "$work/kernel_images.cpp" -o "$work/kernel_images.o"
c++ -O3 "$build/tests/gpu/CMakeFiles/bitproof_gpu_tests.dir/test_gpu.cpp.o" "$work/kernel_images.o" \
  "$build/libbitproof_cuda.a" "$build/libbitproof_core.a" ${CRYPTO:-/usr/lib/x86_64-linux-gnu/libcrypto.so.3} /usr/lib/x86_64-linux-gnu/libfmt.so.9 \
  -ldl -lpthread -o "$work/bitproof_gpu_tests"
[ -n "${DEBUG_OUT:-}" ] && cp "$work/bitproof_gpu_tests" "$DEBUG_OUT"  # unstripped, for addr2line
strip "$work/bitproof_gpu_tests"
xz -9e -c "$work/bitproof_gpu_tests" >"$out/bitproof_gpu_tests.xz"
xz -9e -c /usr/lib/x86_64-linux-gnu/libfmt.so.9 >"$out/libfmt.so.9.xz"
ls -la "$out"
