#!/usr/bin/env bash
# bitproof time on the GPU (issue 15): the gate's verdict for the built-in ordinary
# against folded MXFP4 chain at the DeepSeek V4 decode shapes (W13 -> SwiGLU -> W2,
# M = 6) with the A/A calibration beside it; the controls (twice the FMA chain; a
# first-use cold state timed naively, then by the gate); the smallest difference the
# gate resolves at its default budget (the calibration's interval). The peer in the
# same run is the naive protocol itself: what a hand-written A-then-B script reports.
# Usage: bench/time.sh [OUTDIR]   (on a machine with an NVIDIA GPU; needs: scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bp=$(realpath "${BITPROOF:-build/bitproof}")
[ -x "$bp" ] || scripts/setup.sh >/dev/null
out=${1:-$(mktemp -d)}
mkdir -p "$out"
verdict() { python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))['result']
s = r['run']['statistics']
line = f\"{r['run']['sentence']}; {s['samples'][0]} + {s['samples'][1]} samples, {r['run']['stopped']}, {r['run']['seconds']:.1f} s\"
if r['calibration']:
    c = r['calibration']['statistics']['interval']
    line += f\"; A/A calibration {r['calibration']['statistics']['ratio']:.4f} [{c[0]:.4f}, {c[1]:.4f}] (resolves beyond {100 * max(1 - c[0], c[1] - 1):.2f} %)\"
print(line)" "$1"; }
for spec in ab/dsv4-mxfp4-fold-moe time/k-loop-twice time/k-loop-same; do
  name=$(basename "$spec")
  "$bp" time "proofs/$spec.json" --calibrate --quiet --report "$out/$name.json" --markdown "$out/$name.md" --svg "$out/$name.svg" || true
  echo "$name: $(verdict "$out/$name.json")"
done
"$bp" time proofs/time/lut-same.json --protocol naive --quiet --report "$out/lut-naive.json"
echo "lut-same, naive A then B: $(verdict "$out/lut-naive.json")"
"$bp" time proofs/time/lut-same.json --quiet --report "$out/lut-gate.json" || true
echo "lut-same, the gate: $(verdict "$out/lut-gate.json")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
grep -m1 "model name" /proc/cpuinfo
echo "reports in $out"
