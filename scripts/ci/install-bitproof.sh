#!/usr/bin/env bash
# Usage: scripts/ci/install-bitproof.sh PREFIX --tarball URL --sha256 HEX
#        scripts/ci/install-bitproof.sh PREFIX --source DIR [--backend cpu|cuda|all]
# Puts a working bitproof tree (bin/, include/bitproof/, share/bitproof/, lib/cmake/bitproof/)
# at PREFIX, which must not exist yet or be empty:
#  --tarball: downloads the release tarball `cpack` makes (a release asset: any URL curl reads,
#             file:// too), refuses it unless its SHA-256 is HEX (64 hex digits, required), and
#             unpacks it without its top directory;
#  --source:  installs the build dependencies (scripts/setup.sh) and builds DIR without tests
#             (CUDA only when BACKEND is not cpu) into DIR/build-ci, then `cmake --install`.
# Installs what a bare Debian runner lacks for that (scripts/ci/runtime-needs.sh: curl; g++,
# which user recipes need at run time) with apt-get. Then runs PREFIX/bin/bitproof --version.
# Exit 0 on success; 2 on bad usage, a download or checksum failure (nothing unpacked), or a
# tree without a working command.
set -euo pipefail
die() { echo "install-bitproof.sh: $*" >&2; exit 2; }
[ $# -ge 3 ] || die "usage: install-bitproof.sh PREFIX (--tarball URL --sha256 HEX | --source DIR [--backend B])"
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
if [ -n "$tarball" ] && ! [[ "$sha" =~ ^[0-9a-f]{64}$ ]]; then
  die "--sha256: expected the tarball's SHA-256 (64 lowercase hex digits), got \"$sha\""
fi
if [ -e "$prefix" ] && [ -n "$(ls -A "$prefix")" ]; then die "$prefix exists and is not empty"; fi
mkdir -p "$prefix"

# What a bare container (debian:12) lacks: curl for the download, and a C++ compiler, which
# user recipes need at run time (the worker is compiled with the host compiler).
if [ -n "$tarball" ]; then
  bash "$(dirname "$0")/runtime-needs.sh" download || die "cannot install what the download needs"
else
  bash "$(dirname "$0")/runtime-needs.sh" || die "cannot install a C++ compiler"
fi

if [ -n "$tarball" ]; then
  file=$(mktemp)
  trap 'rm -f "$file"' EXIT
  curl -fsSL --retry 3 -o "$file" "$tarball" || die "cannot download $tarball"
  got=$(sha256sum "$file" | cut -d' ' -f1)
  [ "$got" = "$sha" ] || die "$tarball: SHA-256 mismatch: the download's is $got, tarball-sha256 (--sha256) is $sha; refused, nothing installed"
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
