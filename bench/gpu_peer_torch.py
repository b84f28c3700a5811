#!/usr/bin/env python3
"""The PyTorch peer of the 2^32 claim, on the GPU: for every pair of FP16 codes,
half multiply against float multiply rounded to half, bits compared, mismatches
counted. Chunks of ROWS b-codes x all 65536 a-codes (one broadcast product per
chunk). Timed with CUDA events after a warm-up pass; prints one JSON line.

usage: gpu_peer_torch.py [ROWS] [REPEAT]
"""
import json
import sys

import torch


def sweep(a_half, a_float, rows):
    mismatches = torch.zeros((), dtype=torch.int64, device="cuda")
    codes = torch.arange(65536, dtype=torch.int32, device="cuda").to(torch.int16)
    for start in range(0, 65536, rows):
        b_bits = codes[start:start + rows]
        b_half = b_bits.view(torch.float16)[:, None]
        hmul = (b_half * a_half[None, :]).view(torch.int16)
        fround = (b_half.float() * a_float[None, :]).half().view(torch.int16)
        mismatches += (hmul != fround).sum()
    return mismatches


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    a_bits = torch.arange(65536, dtype=torch.int32, device="cuda").to(torch.int16)
    a_half = a_bits.view(torch.float16)
    a_float = a_half.float()
    mismatches = int(sweep(a_half, a_float, rows))  # warm-up, and the answer
    times = []
    for _ in range(repeat):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        sweep(a_half, a_float, rows)
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    median = times[len(times) // 2]
    print(json.dumps({"peer": "pytorch eager", "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                      "rows_per_chunk": rows, "cases": 65536 * 65536, "mismatches": mismatches,
                      "median_ms": median, "min_ms": times[0], "runs": repeat,
                      "cases_per_second": 65536 * 65536 / (median / 1000)}))


if __name__ == "__main__":
    main()
