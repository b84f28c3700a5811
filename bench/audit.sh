#!/usr/bin/env bash
# Benchmark: bitproof audit against two peers, in the same run, on synthetic
# checkpoints written by `bitproof synth-checkpoint`:
#   cat FILES > /dev/null       the read bandwidth (warm page cache)
#   bitproof audit DIR          pread into per-thread buffers, vector histograms, all cores
#   bench/audit_peer.py DIR     python3 + numpy: parse headers, np.bincount each scale tensor
# Three checkpoints (shapes as DeepSeek V4-Flash's experts, hidden 4096, expert
# inter 2048: weight I8 [2048, 2048] + scale F8_E8M0 [2048, 128] = 256 KiB):
#   realistic    4 layers x 84 experts x w1,w2,w3, weights included: 4.3 GB, of
#                which 0.25 GB scale bytes (the layout fixes scales at 1/16 of weights)
#   scales-only  16 layers x 86 experts, --no-weights: 1.08 GB, all UE8M0 scale bytes
#                (cat and audit then read the same bytes)
#   fp16-scales  the GPTQ layout, 16 layers x 86 experts, rows 4096, --no-weights:
#                F16 group scales [32, 4096] = 256 KiB a tensor, 1.08 GB of 16-bit codes
#                uniform in 0x1C00..0x2400 (2,049 codes: the wide, scalar-counted case)
# Each command (and audit --threads 1) runs REPEAT times, interleaved, after two warming reads; the
# median wall time is reported, with CPU time (user + sys) / wall time = cores used.
# Both tools' overall histograms are compared (they must be equal).
#
#   bench/audit.sh [WORKDIR]      default out/bench-audit (needs ~6 GB; deleted afterwards unless KEEP=1)
#   BITPROOF=path REPEAT=10 KEEP=1 CONFIGS="scales-only fp16-scales" PYTHON=python3 bench/audit.sh
#   BOUND=build/bitproof_count16_bound: also print what bounds the fp16-scales audit on this CPU
#   (store rate, bitproof's counter, page-cache copy; bench/count16_bound.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-$root/out/bench-audit}
repeat=${REPEAT:-10}
configs=${CONFIGS:-realistic scales-only fp16-scales}
bp=${BITPROOF:-$root/build-bench/bitproof}
py=${PYTHON:-/usr/bin/python3}

if [ ! -x "$bp" ]; then
  cmake -S "$root" -B "$root/build-bench" -DBITPROOF_CUDA=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$root/build-bench" --target bitproof -j2 >/dev/null
  bp=$root/build-bench/bitproof
fi
if ! "$py" -c "import numpy" 2>/dev/null || [ ! -x /usr/bin/time ]; then
  apt-get install -y -qq python3-numpy time >/dev/null
fi

rm -rf "$work" && mkdir -p "$work"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

# timed LABEL CMD...: appends "LABEL wall cpu" to $work/times: wall in microseconds from bash's
# clock (/usr/bin/time's %e has 10 ms steps, a tenth of what is measured here), CPU from time.
timed() {
  local label=$1 start end
  shift
  start=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$work/t" "$@" >/dev/null
  end=$EPOCHREALTIME
  awk -v l="$label" -v s="$start" -v e="$end" '{ printf "%s %.4f %.2f\n", l, e - s, $1 + $2 }' "$work/t" >>"$work/times"
}
median() { grep "^$1 " "$work/times" | awk '{ print $2 }' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
cpu_of() { grep "^$1 " "$work/times" | awk -v m="$2" '$2 == m { print $3; exit }'; }

run_config() {
  local name=$1
  shift
  local ck=$work/$name
  "$bp" synth-checkpoint "$ck" --cols 4096 --shards 4 --seed 1 "$@" >/dev/null
  local files=("$ck"/*.safetensors)
  local total scale
  total=$(cat "${files[@]}" | wc -c)
  "$bp" audit "$ck" --report "$work/$name.audit.json" >/dev/null
  scale=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['result']['overall']['bytes'])" "$work/$name.audit.json")
  # Same histograms from both tools, per code width.
  "$py" "$root/bench/audit_peer.py" "$ck" --histogram "$work/$name.peer.json" >/dev/null
  "$py" - "$work/$name.audit.json" "$work/$name.peer.json" <<'EOF'
import json, sys
peer = json.load(open(sys.argv[2]))
dense = {}
for f in json.load(open(sys.argv[1]))["result"]["formats"]:
    if f["code_bits"] == 32:
        continue
    d = dense.setdefault(str(f["code_bits"]), [0] * (1 << f["code_bits"]))
    for code, count in f["histogram"]:
        d[code] += count
assert dense == peer, "bitproof and numpy histograms differ"
EOF
  cat "${files[@]}" >/dev/null
  cat "${files[@]}" >/dev/null
  : >"$work/times"
  for _ in $(seq "$repeat"); do
    timed cat cat "${files[@]}"
    timed audit "$bp" audit "$ck"
    timed audit1 "$bp" audit "$ck" --threads 1
    timed peer "$py" "$root/bench/audit_peer.py" "$ck"
  done
  # Cores free for us: one single-thread audit alone vs two at once (2 free cores: same wall time).
  /usr/bin/time -f "%e" -o "$work/one" "$bp" audit "$ck" --threads 1 >/dev/null
  /usr/bin/time -f "%e" -o "$work/two" bash -c "\"$bp\" audit \"$ck\" --threads 1 >/dev/null & \"$bp\" audit \"$ck\" --threads 1 >/dev/null; wait"
  echo "# $name: probe: one single-thread audit $(cat "$work/one") s, two at once $(cat "$work/two") s"
  local c a a1 p
  c=$(median cat) a=$(median audit) a1=$(median audit1) p=$(median peer)
  "$py" - "$name" "$total" "$scale" "$c" "$a" "$p" "$(cpu_of cat "$c")" "$(cpu_of audit "$a")" "$(cpu_of peer "$p")" \
    "$a1" <<'EOF'
import sys
name, total, scale = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c, a, p, cc, ac, pc, a1 = map(float, sys.argv[4:11])
gb = 1e9
print(f"| {name} | {total / gb:.2f} GB | {scale / gb:.3f} GB | cat {c:.3f} s ({total / c / gb:.2f} GB/s, {cc / c:.1f} cores) "
      f"| audit {a:.3f} s ({scale / a / gb:.2f} GB/s scale, {ac / a:.1f} cores; --threads 1: {a1:.3f} s) "
      f"| numpy {p:.2f} s ({scale / p / gb:.2f} GB/s scale, {pc / p:.1f} cores) "
      f"| audit scale B/s ÷ cat B/s = {scale / a / (total / c):.2f} | audit time ÷ cat time = {a / c:.2f} "
      f"| numpy time ÷ audit time = {p / a:.2f} |")
EOF
  # What bounds wide 16-bit codes on this CPU (bench/count16_bound.cpp), on the same files. The
  # tool's own bound takes cat to read at the bare copy rate; `cat` as timed above also pays its
  # syscalls, page-cache lookups and start-up, so the bound is also given against this run's cat:
  # audit time >= (B / copy + codes / rate) / cores, divided into cat's measured time.
  if [ "$name" = fp16-scales ] && [ -x "${BOUND:-}" ]; then
    local bound
    bound=$("$BOUND" "${files[@]}")
    sed "s/^/# $name: /" <<<"$bound"
    "$py" - "$name" "$total" "$c" "$bound" <<'EOF'
import re, sys
name, total, c, text = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rate = {k: float(re.search(rf"^{k}: +([0-9.]+)", text, re.M).group(1)) * 1e9 for k in ("store", "count", "copy")}
cat_bw = total / c
for cores in (1, 2):
    at = lambda codes_rate: cores / (cat_bw / rate["copy"] + cat_bw / (2 * codes_rate))
    print(f"# {name}: bound on {cores} core(s) against this run's cat ({cat_bw / 1e9:.2f} GB/s; the copy alone "
          f"{rate['copy'] / 1e9:.2f}): audit bandwidth <= {at(rate['store']):.2f}x cat's at the store floor, "
          f"{at(rate['count']):.2f}x at this count rate")
EOF
  fi
  rm -rf "$ck"
}

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -m), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p'), $(grep -o -w -e avx512f -e avx512bw -e avx512fp16 /proc/cpuinfo | sort -u | tr '\n' ' ')), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# bitproof: $("$bp" --version); numpy $("$py" -c 'import numpy; print(numpy.__version__)'); repeat $repeat, medians"
for config in $configs; do
  case $config in
    realistic) run_config realistic --rows 2048 --layers 4 --experts 84 ;;
    scales-only) run_config scales-only --rows 2048 --layers 16 --experts 86 --no-weights ;;
    fp16-scales) run_config fp16-scales --layout gptq --rows 4096 --layers 16 --experts 86 --no-weights ;;
    *) echo "unknown config $config" >&2; exit 2 ;;
  esac
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
