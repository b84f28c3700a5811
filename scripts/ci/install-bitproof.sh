#!/usr/bin/env bash
# Usage: scripts/ci/install-bitproof.sh PREFIX --tarball URL [--sha256 HEX]
#        scripts/ci/install-bitproof.sh PREFIX --source DIR [--backend cpu|cuda|all]
# Puts a working bitproof tree (bin/, include/bitproof/, share/bitproof/, lib/cmake/bitproof/)
# at PREFIX, which must not exist yet or be empty:
#  --tarball: downloads the release tarball `cpack` makes (any URL curl reads, file:// too),
#             checks its SHA-256 when given, unpacks it without its top directory;
#  --source:  installs the build dependencies (scripts/setup.sh) and builds DIR without tests
#             (CUDA only when BACKEND is not cpu) into DIR/build-ci, then `cmake --install`.
# Installs what a bare Debian runner lacks for that (curl; g++, which user recipes need at run
# time) with apt-get. Then runs PREFIX/bin/bitproof --version. Exit 0 on success; 2 on bad usage, a download or
# checksum failure, or a tree without a working command.
set -euo pipefail
die() { echo "install-bitproof.sh: $*" >&2; exit 2; }
[ $# -ge 3 ] || die "usage: install-bitproof.sh PREFIX (--tarball URL [--sha256 HEX] | --source DIR [--backend B])"
prefix=$1
shift
tarball="" sha="" source="" backend=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --tarball) tarball=${2:?}; shift 2 ;;
    --sha256) sha=${2:?}; shift 2 ;;
    --source) source=${2:?}; shift 2 ;;
    --backend) backend=${2:?}; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
if { [ -n "$tarball" ] && [ -n "$source" ]; } || { [ -z "$tarball" ] && [ -z "$source" ]; }; then
  die "give exactly one of --tarball and --source"
fi
if [ -e "$prefix" ] && [ -n "$(ls -A "$prefix")" ]; then die "$prefix exists and is not empty"; fi
mkdir -p "$prefix"

# What a bare container (debian:12) lacks: curl for the download, and a C++ compiler, which
# user recipes need at run time (the worker is compiled with the host compiler).
need=()
if [ -n "$tarball" ] && ! command -v curl >/dev/null 2>&1; then need+=(curl ca-certificates); fi
if ! command -v c++ >/dev/null 2>&1; then need+=(g++); fi
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "install-bitproof.sh: installing ${need[*]}"
    if ! { $sudo apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }; then
      die "cannot install ${need[*]}"
    fi
  else
    echo "install-bitproof.sh: warning: no ${need[*]} here and no apt-get to install them" >&2
  fi
fi

if [ -n "$tarball" ]; then
  file=$(mktemp)
  trap 'rm -f "$file"' EXIT
  curl -fsSL --retry 3 -o "$file" "$tarball" || die "cannot download $tarball"
  if [ -n "$sha" ]; then
    got=$(sha256sum "$file" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || die "$tarball: SHA-256 $got, expected $sha"
  fi
  tar -xzf "$file" -C "$prefix" --strip-components=1 || die "$tarball: not a gzip tarball"
else
  [ -f "$source/CMakeLists.txt" ] || die "$source is not a bitproof source tree"
  cuda=OFF
  [ "$backend" = cpu ] || cuda=AUTO
  bash "$source/scripts/setup.sh" --deps-only
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
  cmake -S "$source" -B "$source/build-ci" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DBITPROOF_CUDA=$cuda >/dev/null
  cmake --build "$source/build-ci" -j"$(nproc)"
  cmake --install "$source/build-ci" --prefix "$prefix" >/dev/null
fi
"$prefix/bin/bitproof" --version || die "$prefix/bin/bitproof does not run"
