#!/usr/bin/env bash
# Benchmark: what readers of a large audit report cost, the wall time and peak memory of each
# command on the report of bench/audit.sh's fp16-scales checkpoint (GPTQ FP16 group scales,
# 4,128 tensors of 2,049 codes: 8.5 M (code, count) pairs, an 86 MB report), warm cache, 2 cores:
#   audit CK --report R             the audit, its report written
#   audit CK --report R --markdown  the same with a rendering
#   report verify R                 the report checked and the checkpoint audited again
#   report verify R2 (changed)      the same for a report whose checkpoint changed since (seed 2's
#                                   report, its path now the seed 1 checkpoint): NOT VERIFIED and
#                                   the first differing line
#   report render R --markdown --junit
#   admit --audit R --domain D      against a domain report over fp16 (exit 1: codes outside)
# Each command runs REPEAT times for BITPROOF and, when given, for BASE (another build, e.g. the
# last commit's), interleaved; prints each one's median and range of seconds and its largest
# peak RSS, and whether both builds rendered the same Markdown and JUnit.
#
#   bench/audit_reports.sh [WORKDIR]   default out/bench-audit-reports (~1.2 GB; deleted unless KEEP=1)
#   BITPROOF=path BASE=path REPEAT=5 KEEP=1 bench/audit_reports.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$root/out/bench-audit-reports}
repeat=${REPEAT:-5}
bp=${BITPROOF:-$root/build/bitproof}
base=${BASE:-}
[ -x /usr/bin/time ] || apt-get install -y -qq time >/dev/null

rm -rf "$work" && mkdir -p "$work"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
ck=$work/ck
"$bp" synth-checkpoint "$ck" --cols 4096 --shards 4 --seed 1 --layout gptq --rows 4096 --layers 16 --experts 86 \
  --no-weights >/dev/null
"$bp" audit "$ck" --report "$work/audit.json" >/dev/null
"$bp" domain "$root/tests/audit/data/gptq-fp16-subnormal-scales.json" --report "$work/domain.json" >/dev/null
"$bp" synth-checkpoint "$work/ck2" --cols 4096 --shards 4 --seed 2 --layout gptq --rows 4096 --layers 16 --experts 86 \
  --no-weights >/dev/null
"$bp" audit "$work/ck2" --report "$work/changed.json" >/dev/null
rm -rf "$work/ck2" && ln -s "$ck" "$work/ck2"
cat "$ck"/*.safetensors >/dev/null

# timed LABEL CMD...: appends "LABEL seconds peak-kB" to $work/times (the exit status is not the point).
timed() {
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>&1 || true
  echo "$label $(tail -1 "$work/t")" >>"$work/times"
}
builds="new"
[ -n "$base" ] && builds="base new"
for _ in $(seq "$repeat"); do
  for b in $builds; do
    x=$bp
    [ "$b" = base ] && x=$base
    timed "$b audit" "$x" audit "$ck" --report "$work/$b.json"
    timed "$b audit+markdown" "$x" audit "$ck" --report "$work/$b.json" --markdown "$work/$b-audit.md"
    timed "$b verify" "$x" report verify "$work/audit.json"
    timed "$b verify-changed" "$x" report verify "$work/changed.json"
    timed "$b render" "$x" report render "$work/audit.json" --markdown "$work/$b.md" --junit "$work/$b.xml"
    timed "$b admit" "$x" admit --audit "$work/audit.json" --domain "$work/domain.json"
  done
done
echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(date -u +%F' '%H:%M) UTC, REPEAT=$repeat"
echo "# report: $(stat -c %s "$work/audit.json") bytes"
for command in audit audit+markdown verify verify-changed render admit; do
  for b in $builds; do
    grep "^$b $command " "$work/times" | sort -k3,3n | awk -v b="$b" -v c="$command" '
      { s[NR] = $3; if ($4 > m) m = $4 }
      END { printf "%-15s %-4s median %.2f s (%.2f-%.2f), peak %d MB\n", c, b, s[int((NR + 1) / 2)], s[1], s[NR], m / 1024 }'
  done
done
if [ -n "$base" ]; then
  cmp -s "$work/base.md" "$work/new.md" && cmp -s "$work/base.xml" "$work/new.xml" && echo "renderings identical" ||
    echo "renderings DIFFER"
  "$base" report verify "$work/changed.json" >"$work/base.verify" || true
  "$bp" report verify "$work/changed.json" >"$work/new.verify" || true
  cmp -s "$work/base.verify" "$work/new.verify" && echo "verify of the changed checkpoint: the same message" ||
    echo "verify of the changed checkpoint: messages DIFFER"
fi
