#!/usr/bin/env bash
# Installs what bitproof needs from Debian 12's packages (only what is missing)
# and builds it, Release, into build/. CUDA is used when nvcc is found
# (BITPROOF_CUDA=AUTO); CUDA_ARCHS picks the GPU architectures (default 90).
# Usage: scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake git libboost-dev libfmt-dev nlohmann-json3-dev doctest-dev libcli11-dev libssl-dev libre2-dev pkg-config
          lld python3 python3-jsonschema)
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

# nvcc lives outside PATH on a stock CUDA install.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" "$@" >/dev/null
cmake --build build -j"$(nproc)"
