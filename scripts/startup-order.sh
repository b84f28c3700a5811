#!/usr/bin/env bash
# Regenerates cmake/startup-order.txt: the functions (mangled names) that the
# DeepSeek V4 proof runs, with and without written reports, in the order
# callgrind first meets them. The command's link (lld) places them side by
# side so a small proof touches fewer pages of the binary (CMakeLists.txt,
# "Link layout"). Run after larger changes to the CLI, the engine or the
# oracle, then rebuild; a stale list only costs start-up time.
#   scripts/startup-order.sh          (needs a built build/bitproof; installs valgrind if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
bp=${BITPROOF:-build/bitproof}
[ -x "$bp" ] || { echo "startup-order.sh: build $bp first (scripts/setup.sh)" >&2; exit 2; }
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
spec=proofs/dsv4-mxfp4-fp16-fold.json
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$tmp/1.out" "$bp" prove "$spec" --backend cpu >/dev/null 2>&1
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$tmp/2.out" "$bp" prove "$spec" --backend cpu \
  --report "$tmp/r.json" --markdown "$tmp/r.md" >/dev/null 2>&1
# "fn=(id) name" and "cfn=(id) name" name a function the first time callgrind
# meets it; "'N" marks recursion depth; unnamed addresses are dropped.
cat "$tmp/1.out" "$tmp/2.out" | grep -oE "^c?fn=\([0-9]+\) .*" | sed -E "s/^c?fn=\([0-9]+\) //; s/'[0-9]+\$//" |
  grep -vE '^0x|^\(below main\)$' | awk '!seen[$0]++' >cmake/startup-order.txt
echo "cmake/startup-order.txt: $(wc -l <cmake/startup-order.txt) functions"
