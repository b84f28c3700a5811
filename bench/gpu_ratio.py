#!/usr/bin/env python3
"""The claim sweep kernel's time against the hand-written peer of the same run and
against its last recorded figure (bench/gpu_recorded.json, kept with bench/RESULTS.md).

    gpu_ratio.py BENCH_BITPROOF_LOG BENCH_HAND_LOG RECORDED_JSON

Prints one line per comparison; "REGRESSION" when the kernel is more than 5 %
slower than recorded. Exit 0 always: a figure to read, not a test (no timing
assertions in tests)."""
import json
import sys


def sweep_median(log_path):
    try:
        text = open(log_path).read()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("cuda: "):
            try:
                return json.loads(line[len("cuda: "):])["timing"]["sweep"]["median_ms"]
            except (ValueError, KeyError):
                return None
    return None


def hand_median(log_path):
    try:
        for line in open(log_path):
            if line.startswith("{"):
                return json.loads(line)["median_ms"]
    except (OSError, ValueError, KeyError):
        return None
    return None


bitproof = sweep_median(sys.argv[1])
hand = hand_median(sys.argv[2])
recorded = json.load(open(sys.argv[3]))["fp16-hmul-vs-fp32-round"]
if bitproof is None:
    print("claim sweep: no timing in", sys.argv[1])
    sys.exit(0)
line = f"claim sweep kernel (2^32 hmul claim): {bitproof:.3f} ms"
if hand is not None:
    line += f"; hand-written peer {hand:.3f} ms: bitproof takes {bitproof / hand:.2f}x the peer's time"
print(line)
ratio = bitproof / recorded["median_ms"]
verdict = "REGRESSION" if ratio > 1.05 else ("faster" if ratio < 0.95 else "as recorded")
print(f"against the recorded {recorded['median_ms']:.3f} ms ({recorded['commit']}, {recorded['date']}): "
      f"{ratio:.3f}x, {verdict}")
