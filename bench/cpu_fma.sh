#!/usr/bin/env bash
# Benchmark (issue 18): the CPU sweep on FP16 FMA triples. `bitproof prove
# proofs/fp16-hfma-exact.json --backend cpu` (hfma ≡ the exact oracle) on a slice of
# the 2^48 triples, with the vector sweep (AVX-512: vector hfma, the oracle's run
# form) and, as the peer in the same run, the scalar sweep (BITPROOF_SIMD=off: the
# soft model and the oracle case by case) on a smaller slice of the same kind.
# Rates are the report's cases_per_second (the sweep alone, no start-up).
#
#   bench/cpu_fma.sh [BITPROOF]      default build/bitproof
#   LOG2=36 SCALAR_LOG2=26 THREADS=2 bench/cpu_fma.sh    slice sizes 2^LOG2 (30..40), threads (0: all allowed)
#
# A slice of 2^k cases: every a, and b = 0 .. 2^(k-16) - 1 with c = 15360 (1.0) up to 2^32
# cases; above, every b and c = 15360 .. 15360 + 2^(k-32) - 1.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bp=${1:-$root/build/bitproof}
log2=${LOG2:-30} scalar_log2=${SCALAR_LOG2:-26} threads=${THREADS:-0}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

slice() {  # slice K: the --codes arguments of a 2^K-case slice
  local k=$1
  if [ "$k" -le 32 ]; then
    echo "--codes c=15360:15360 --codes b=0:$(((1 << (k - 16)) - 1))"
  else
    echo "--codes c=15360:$((15360 + (1 << (k - 32)) - 1))"
  fi
}
run() {  # run NAME K [env...]: prints the rate
  local name=$1 k=$2
  shift 2
  # shellcheck disable=SC2046
  env "$@" "$bp" prove "$root/proofs/fp16-hfma-exact.json" --backend cpu --threads "$threads" $(slice "$k") \
    --report "$out/$name.json" -q >/dev/null
  python3 - "$out/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
info, claim = r["backends"][0]["info"], r["result"]["claims"][0]
sweep = info["sweep"].split(" ")[0]
print(f"{info['cases_per_second']:.4g} {info['seconds']:.2f} {info['threads']} {sweep} {claim['holding']}/{claim['cases']}")
PY
}

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p'); $(grep -o -w -e avx512f -e avx512bw /proc/cpuinfo | sort -u | tr '\n' ' ')), $(nproc) cores allowed, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$bp" --version)"
read -r v_rate v_s v_threads v_sweep v_holds <<<"$(run vector "$log2")"
read -r s_rate s_s s_threads s_sweep s_holds <<<"$(run scalar "$scalar_log2" BITPROOF_SIMD=off)"
echo "| sweep | slice | threads | seconds | cases/s | holds |"
echo "|---|---|---|---|---|---|"
echo "| $v_sweep | 2^$log2 | $v_threads | $v_s | $v_rate | $v_holds |"
echo "| $s_sweep (peer) | 2^$scalar_log2 | $s_threads | $s_s | $s_rate | $s_holds |"
[ "$v_sweep" != scalar ] || echo "note: no vector sweep on this CPU (AVX-512, or AVX2 with FMA and F16C): both rows are the scalar sweep"
python3 -c "import sys; print(f'vector ÷ scalar: {float(sys.argv[1]) / float(sys.argv[2]):.1f}×')" "$v_rate" "$s_rate"
