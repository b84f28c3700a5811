#!/usr/bin/env bash
# Usage: scripts/ci/runtime-needs.sh [download]
# Installs, with apt-get, what an installed bitproof tree needs on this runner and the runner
# may lack (a bare container such as debian:12): a C++ compiler (g++, as `c++`), with which
# `bitproof prove` compiles a spec's user recipes at run time; with `download`, curl and CA
# certificates too (the release tarball's download). Nothing when all of it is here.
# action.yml runs it on every path, a restored cache included: a cache holds the bitproof
# tree, never the runner's packages. $CXX, when set, names the compiler instead of c++; one
# that is not installed is not replaced (a warning says so). Exit 0, or 2 when a needed
# package cannot be installed.
set -euo pipefail
need=()
if [ "${1:-}" = download ] && ! command -v curl >/dev/null 2>&1; then need+=(curl ca-certificates); fi
if [ -n "${CXX:-}" ]; then
  command -v "${CXX%% *}" >/dev/null 2>&1 ||
    echo "runtime-needs.sh: warning: CXX=$CXX is not installed here; user recipes will not compile" >&2
elif ! command -v c++ >/dev/null 2>&1; then
  need+=(g++)
fi
[ ${#need[@]} -gt 0 ] || exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "runtime-needs.sh: warning: no ${need[*]} here and no apt-get to install them" >&2
  exit 0
fi
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "runtime-needs.sh: installing ${need[*]}"
if ! { "${sudo[@]}" apt-get update -qq &&
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }; then
  echo "runtime-needs.sh: cannot install ${need[*]}" >&2
  exit 2
fi
