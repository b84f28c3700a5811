#!/usr/bin/env python3
"""The claim sweep kernel's time (generic, and --specialize on) against the
hand-written peer of the same run and against its last recorded figures
(bench/gpu_recorded.json, kept with bench/RESULTS.md).

    gpu_ratio.py BENCH_BITPROOF_LOG BENCH_SPECIALIZED_LOG BENCH_HAND_LOG RECORDED_JSON

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


hand = hand_median(sys.argv[3])
recorded = json.load(open(sys.argv[4]))
for log, key, what in ((sys.argv[1], "fp16-hmul-vs-fp32-round", "generic"),
                       (sys.argv[2], "fp16-hmul-vs-fp32-round-specialized", "specialized")):
    bitproof = sweep_median(log)
    if bitproof is None:
        print(f"claim sweep ({what}): no timing in {log}")
        continue
    line = f"claim sweep kernel, {what} (2^32 hmul claim): {bitproof:.3f} ms"
    if hand is not None:
        line += f"; hand-written peer {hand:.3f} ms: {bitproof / hand:.2f}x the peer's time"
    print(line)
    mark = recorded[key]
    ratio = bitproof / mark["median_ms"]
    verdict = "REGRESSION" if ratio > 1.05 else ("faster" if ratio < 0.95 else "as recorded")
    print(f"  against the recorded {mark['median_ms']:.3f} ms ({mark['commit']}, {mark['date']}): {ratio:.3f}x, {verdict}")
