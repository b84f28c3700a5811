#!/usr/bin/python3
"""Peer for bench/audit.sh: the checkpoint audit written the obvious way in
python3 + numpy (Debian's python3-numpy). Parses each safetensors header,
memory-maps the file, and np.bincount's every scale tensor of the scale
dtypes bitproof audit reads by default (F8_E8M0 and U8 as bytes, F8_E4M3 as
bytes, F16 and BF16 as 16-bit codes; F32 global scales with np.unique), the
selection rule bitproof uses (F8_E8M0, or a name whose last component
contains "scale").

    audit_peer.py CHECKPOINT_DIR [--histogram OUT.json]

Prints one line per code width, "N scale tensors, C codes; codes LO-HI" and
optionally writes the histogram of each width ({"8": [256 counts], "16":
[65536 counts]}) so the benchmark can check both tools agree.
"""
import glob
import json
import mmap
import os
import struct
import sys

import numpy as np

WIDTH = {"F8_E8M0": 8, "U8": 8, "F8_E4M3": 8, "F16": 16, "BF16": 16, "F32": 32}


def scale_tensors(header):
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] not in WIDTH:
            continue
        if info["dtype"] == "F8_E8M0" or "scale" in name.rsplit(".", 1)[-1]:
            yield WIDTH[info["dtype"]], info["data_offsets"]


def main():
    root = sys.argv[1]
    out = sys.argv[3] if len(sys.argv) == 4 and sys.argv[2] == "--histogram" else None
    totals = {8: np.zeros(256, dtype=np.int64), 16: np.zeros(65536, dtype=np.int64)}
    wide = {}
    tensors = {8: 0, 16: 0, 32: 0}
    for path in sorted(glob.glob(os.path.join(root, "*.safetensors"))):
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            buf = np.frombuffer(data, dtype=np.uint8)
            codes = None
            for bits, (begin, end) in scale_tensors(header):
                codes = buf[8 + n + begin:8 + n + end]
                tensors[bits] += 1
                if bits == 8:
                    totals[8] += np.bincount(codes, minlength=256)
                elif bits == 16:
                    totals[16] += np.bincount(codes.view("<u2"), minlength=65536)
                else:
                    values, counts = np.unique(codes.view("<u4"), return_counts=True)
                    for v, c in zip(values.tolist(), counts.tolist()):
                        wide[v] = wide.get(v, 0) + c
            del buf, codes  # the views hold the map open
            data.close()
    for bits in (8, 16):
        present = np.nonzero(totals[bits])[0]
        if tensors[bits]:
            print(f"{tensors[bits]} {bits}-bit scale tensors, {int(totals[bits].sum())} codes; codes {present.min()}-{present.max()}")
    if tensors[32]:
        print(f"{tensors[32]} 32-bit scale tensors, {sum(wide.values())} codes; codes {min(wide)}-{max(wide)}")
    if out:
        with open(out, "w") as f:
            json.dump({str(b): [int(c) for c in totals[b]] for b in (8, 16) if tensors[b]}, f)


if __name__ == "__main__":
    main()
