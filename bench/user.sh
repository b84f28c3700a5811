#!/usr/bin/env bash
# User recipes on the CPU path (issue 13): whole-process wall time of the Marlin
# FP4 example (examples/marlin-fp4: a team's own CUDA source) on its first run
# (an empty cache: the compiler runs) and on a cached run (the worker from the
# cache, no compiler), against the same domain proven with the catalogue's
# recipe (proofs/marlin-e2m1-decode.json), in the same hyperfine run.
# Usage: bench/user.sh [runs]   (needs: scripts/setup.sh; hyperfine is installed when missing)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
command -v hyperfine >/dev/null || { apt-get install -y -qq hyperfine >/dev/null; }
bp=$(realpath "${BITPROOF:-build/bitproof}")
[ -x "$bp" ] || scripts/setup.sh >/dev/null
out=$(mktemp -d)
export XDG_CACHE_HOME=$out/cache
"$bp" prove examples/marlin-fp4/proof.json --backend cpu --quiet  # fills the cache for the cached runs
hyperfine -N --warmup 5 --runs "$runs" --export-json "$out/user.json" \
  -n "first run (compiles)" --prepare "rm -rf $out/cache" "$bp prove examples/marlin-fp4/proof.json --backend cpu --quiet" \
  >/dev/null
"$bp" prove examples/marlin-fp4/proof.json --backend cpu --quiet
hyperfine -N --warmup 20 --runs "$((runs * 4))" --export-json "$out/cached.json" \
  -n "cached run" "$bp prove examples/marlin-fp4/proof.json --backend cpu --quiet" \
  -n "catalogue recipe, same domain" "$bp prove proofs/marlin-e2m1-decode.json --backend cpu --quiet" >/dev/null
python3 - "$out/user.json" "$out/cached.json" <<'PY'
import json, sys
first = json.load(open(sys.argv[1]))["results"][0]
cached, catalogue = json.load(open(sys.argv[2]))["results"]
print(f"first run (compiles): median {first['median'] * 1e3:.1f} ms")
print(f"cached run:           median {cached['median'] * 1e3:.2f} ms")
print(f"catalogue, same domain: median {catalogue['median'] * 1e3:.2f} ms")
print(f"cached / catalogue: {cached['median'] / catalogue['median']:.2f}x")
PY
grep -m1 "model name" /proc/cpuinfo
