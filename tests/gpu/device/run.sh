#!/usr/bin/env bash
# Runs the GPU tests (ctest label `gpu`, tests/gpu/CMakeLists.txt) on a GPU machine from the bundle
# tests/gpu/device/bundle.sh made (.gpu/), from the repository root: the build tree's CTest files
# name absolute paths of the machine that built it, so each test's command is spelled out here.
#   TESTS="limits ab_kernels" [OUT=DIR] [TAILN=N] bash tests/gpu/device/run.sh
# Each test's whole output goes to $OUT/<test>.log (default OUT: /tmp/bitproof-gpu); its exit code, wall
# seconds and last TAILN lines are printed. Tests: gpu cli_cuda shards_cuda user ab time limits
# ab_kernels kernel_prove python (compiles the module against this machine's interpreter first),
# faith_record (writes $OUT/faith_sm90.bin: tests/ptx/gpu/README.md), triton (examples/triton-gemv/
# make_ptx.py into $OUT/triton). Exit 0 when every test passed (0) or was skipped (77), else 1.
set -u
cd "$(dirname "$0")/../../.." || exit 2
out=${OUT:-/tmp/bitproof-gpu}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1 BITPROOF_SOURCE_DIR=$PWD
bp=$PWD/.gpu/bin/bitproof
[ -f .gpu/bundle.tgz ] && [ ! -x "$bp" ] && tar -C .gpu -xzf .gpu/bundle.tgz
work=/tmp/bitproof-gpu-work
mkdir -p "$work"
[ -x "$bp" ] || { echo "run: .gpu/bin/bitproof missing: tests/gpu/device/bundle.sh, then carry .gpu" >&2; exit 2; }
[ "$(cat .gpu/commit 2>/dev/null)" = "$(git rev-parse HEAD 2>/dev/null)" ] ||
  echo "run: note: .gpu was bundled at $(cat .gpu/commit 2>/dev/null), the tree is at $(git rev-parse HEAD 2>/dev/null)"

build_python() {  # the module for this machine's python3 (pybind11 from its site-packages)
  local inc pyb suffix d=build-py/bitproof objs=()
  inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])') || return 1
  pyb=$(python3 -c 'import pybind11; print(pybind11.get_include())') || return 1
  suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') || return 1
  mkdir -p "$d" build-py/obj && cp python/bitproof/*.py "$d/"
  for s in python/src/*.cpp; do
    objs+=("build-py/obj/$(basename "$s" .cpp).o")
    g++ -O2 -std=c++20 -fPIC -fvisibility=hidden -pthread -DBITPROOF_HAVE_CUDA_HEADERS=1 -Ipython/src -Isrc \
      -isystem .gpu/include -isystem "$inc" -isystem "$pyb" -isystem /usr/local/cuda/include -c "$s" -o "${objs[-1]}" &
  done
  wait
  g++ -shared -pthread -o "$d/_bitproof$suffix" "${objs[@]}" .gpu/lib/libbitproof_cuda.a .gpu/lib/libbitproof_core.a \
    .gpu/lib/libcrypto.a "$PWD/.gpu/lib/libre2.so.9" -ldl -Wl,-rpath,"$PWD/.gpu/lib"
}

run_test() {  # name -> its command
  local t=$1 py="python3"
  case $t in
    gpu) .gpu/bin/bitproof_gpu_tests ;;
    cli_cuda) tests/gpu/cli_cuda.sh "$bp" proofs/dsv4-mxfp4-fp16-fold.json ;;
    shards_cuda) tests/gpu/shards_cuda.sh "$bp" "$work/shards" tests/cli/data/shardable.json \
                   proofs/fp16-hmul-vs-fp32-round.json cuda:tests/gpu/specs/fma-blocksums.json ;;
    user) $py tests/gpu/user_cuda.py "$bp" . "$work/user" ;;
    ab) $py tests/gpu/ab_cuda.py "$bp" . "$work/ab" ;;
    time) $py tests/gpu/time_cuda.py "$bp" . "$work/time" ;;
    limits) $py tests/gpu/limits_cuda.py "$bp" . "$work/limits" ;;
    ab_kernels) $py tests/gpu/ab_kernels.py "$bp" . "$work/ab_kernels" ;;
    kernel_prove) $py tests/gpu/kernel_prove_gpu.py "$bp" . "$work/kernel_prove" ;;
    python) build_python || { echo "python: the module did not build"; return 1; }
            PYTHONPATH=$PWD/build-py $py tests/gpu/python_cuda.py "$bp" . "$work/python_cuda"
            local rc=$?; cp "$work/python_cuda/figures.json" "$out/python_figures.json" 2>/dev/null; return $rc ;;
    faith_record) g++ -O2 -I/usr/local/cuda/include tests/ptx/gpu/faith_gpu.cpp -lcuda -o "$work/faith_gpu" &&
                  "$work/faith_gpu" tests/ptx/gpu/faith.ptx "$out/faith_sm90.bin" ;;
    triton) mkdir -p "$work/triton" && $py examples/triton-gemv/make_ptx.py "$work/triton" &&
            tar -C "$work" -czf "$out/triton.tgz" triton ;;  # one file: at most 8 come back
    *) echo "run: unknown test $t"; return 2 ;;
  esac
}

failed=0
for t in ${TESTS:-gpu cli_cuda shards_cuda user ab time limits ab_kernels kernel_prove python}; do
  start=$SECONDS
  run_test "$t" >"$out/$t.log" 2>&1
  rc=$?
  echo "== $t: exit $rc, $((SECONDS - start)) s"
  tail -n "${TAILN:-8}" "$out/$t.log"
  [ $rc = 0 ] || [ $rc = 77 ] || failed=1
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/device: /'
exit $failed
