#!/usr/bin/env bash
# Installs what bitproof needs from Debian 12's packages (only what is missing)
# and builds it, Release, into build/. CUDA is used when nvcc is found
# (BITPROOF_CUDA=AUTO); CUDA_ARCHS picks the GPU architectures (default 90).
# Usage: scripts/setup.sh [--deps-only] [--target T]... [extra cmake arguments]
#   --deps-only  install the build dependencies and stop (action.yml, scripts/ci/)
#   --target T   build only target T (repeatable; scripts/demo.sh builds `bitproof`):
#                then the packages only the tests use are not installed either.
# Without --target every target is built: the command(s), the CUDA kernels where
# nvcc is found, and every test suite (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

deps_only=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --deps-only) deps_only=1; shift ;;
    --target) targets+=("${2:?--target needs a name}"); shift 2 ;;
    *) break ;;
  esac
done

packages=(build-essential cmake git libboost-dev libfmt-dev nlohmann-json3-dev doctest-dev libcli11-dev libssl-dev libre2-dev pkg-config
          lld)
# Only the tests use these (schema validation, the CLI, package and CI tests; curl: the release
# asset's download in tests/ci; slurm-wlm and munge: the one-node Slurm of tests/slurm, which
# starts the daemons itself).
if [ ${#targets[@]} -eq 0 ] && [ $deps_only -eq 0 ]; then
  packages+=(python3 python3-jsonschema python3-yaml shellcheck curl slurm-wlm munge)
fi
# The Python module (BITPROOF_PYTHON=AUTO builds it when pybind11 is found) and its tests (NumPy
# arrays, pytest); not for --target builds (scripts/demo.sh builds the command alone).
if [ ${#targets[@]} -eq 0 ]; then
  packages+=(pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pytest)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ $deps_only -eq 1 ] && exit 0

# nvcc lives outside PATH on a stock CUDA install.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" "$@" >/dev/null
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build build -j"$(nproc)" --target "${targets[@]}"
else
  cmake --build build -j"$(nproc)"
fi
