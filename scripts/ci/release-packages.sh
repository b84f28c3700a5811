#!/usr/bin/env bash
# Usage: scripts/ci/release-packages.sh TAG OUT_DIR [BUILD_DIR]
# The release assets of tag TAG (vX.Y.Z, which must be the version CMakeLists.txt declares), in
# OUT_DIR (made; must not hold files yet):
#   bitproof-X.Y.Z-Linux-<machine>.tar.gz  cpack TGZ: the relocatable tree action.yml installs
#                                           (tarball-url, tarball-sha256)
#   bitproof_X.Y.Z_<arch>.deb              cpack DEB: the same tree under /usr (Depends: g++,
#                                           which user recipes compile with)
#   SHA256SUMS                              sha256sum's lines for both
# Without BUILD_DIR: installs the build dependencies (scripts/setup.sh --deps-only) and builds
# this source tree CPU-only, Release, without tests, into build-release/. With BUILD_DIR: packages
# that build as it stands (what was built is what is packaged; ctest ci.release does this).
# Exit 0, or 2 on bad usage, a tag that is not the version, or a packaging failure.
set -euo pipefail
die() { echo "release-packages.sh: $*" >&2; exit 2; }
{ [ $# -ge 2 ] && [ $# -le 3 ]; } || die "usage: release-packages.sh TAG OUT_DIR [BUILD_DIR]"
tag=$1 out=$2 build=${3:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
version=$(sed -n 's/^project(bitproof VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || die "$src/CMakeLists.txt: no project(bitproof VERSION ...) line"
[ "$tag" = "v$version" ] || die "tag $tag is not v$version, the version CMakeLists.txt declares"
if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then die "$out exists and is not empty"; fi
if [ -z "$build" ]; then
  build="$src/build-release"
  bash "$src/scripts/setup.sh" --deps-only
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DBITPROOF_CUDA=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)"
fi
[ -f "$build/CPackConfig.cmake" ] || die "$build is not a configured bitproof build (no CPackConfig.cmake)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
cpack --config "$build/CPackConfig.cmake" -B "$out/cpack" -G "TGZ;DEB" \
  -D CPACK_DEBIAN_FILE_NAME=DEB-DEFAULT -D CPACK_DEBIAN_PACKAGE_DEPENDS=g++ \
  -D "CPACK_DEBIAN_PACKAGE_MAINTAINER=bitproof maintainers" -D CPACK_DEBIAN_PACKAGE_SECTION=devel \
  >"$out/cpack.log" 2>&1 || { cat "$out/cpack.log" >&2; die "cpack failed"; }
mv "$out"/cpack/*.tar.gz "$out"/cpack/*.deb "$out/"
rm -rf "$out/cpack" "$out/cpack.log"
(cd "$out" && sha256sum -- *.tar.gz *.deb >SHA256SUMS && cat SHA256SUMS)
