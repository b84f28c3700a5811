#!/usr/bin/env bash
# Usage: scripts/ci/cache-key.sh source SOURCE_DIR BACKEND
#        scripts/ci/cache-key.sh tarball URL [SHA256]
# Prints the cache key (one line) of a bitproof tree on this runner:
#  source:  bitproof-<OS>-<machine>-<cpu|cuda>-<digest of every file the build reads from
#           SOURCE_DIR: CMakeLists.txt, cmake/, src/, kernels/, reports/schema.json,
#           scripts/setup.sh>. Docs, tests, proofs and examples do not change the binary, so
#           they do not change the key; no .git is needed (a downloaded action has none).
#  tarball: bitproof-<OS>-<machine>-tarball-<digest of URL and SHA256>.
# Exit 2 on bad usage or when SOURCE_DIR is not a bitproof source tree.
set -euo pipefail
die() {
  echo "cache-key.sh: $*" >&2
  exit 2
}
platform="$(uname -s)-$(uname -m)"
case "${1:-}" in
  source)
    src=${2:-}
    backend=${3:-cpu}
    if [ ! -f "$src/CMakeLists.txt" ] || [ ! -d "$src/src" ]; then die "${src:-(none)} is not a bitproof source tree"; fi
    flavour=cuda
    [ "$backend" = cpu ] && flavour=cpu
    digest=$(cd "$src" && find CMakeLists.txt cmake src kernels reports/schema.json scripts/setup.sh -type f |
      LC_ALL=C sort | xargs -d '\n' sha256sum | sha256sum | cut -c1-40)
    echo "bitproof-$platform-$flavour-$digest"
    ;;
  tarball)
    [ -n "${2:-}" ] || die "tarball: no URL"
    echo "bitproof-$platform-tarball-$(printf '%s %s' "$2" "${3:-}" | sha256sum | cut -c1-40)"
    ;;
  *) die "usage: cache-key.sh source SOURCE_DIR BACKEND | tarball URL [SHA256]" ;;
esac
