#!/usr/bin/python3
"""Peer for bench/audit.sh: the checkpoint audit written the obvious way in
python3 + numpy (Debian's python3-numpy). Parses each safetensors header,
memory-maps the file, and np.bincount's every scale tensor (dtype F8_E8M0, or
U8 named *scale), the selection bitproof audit uses by default.

    audit_peer.py CHECKPOINT_DIR [--histogram OUT.json]

Prints "N scale tensors, B bytes; raw E8M0 LO-HI" and optionally writes the
overall histogram (256 counts) so the benchmark can check both tools agree.
"""
import glob
import json
import mmap
import os
import struct
import sys

import numpy as np


def scale_tensors(header):
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] == "F8_E8M0" or (info["dtype"] == "U8" and name.endswith("scale")):
            yield name, info["data_offsets"]


def main():
    root = sys.argv[1]
    out = sys.argv[3] if len(sys.argv) == 4 and sys.argv[2] == "--histogram" else None
    total = np.zeros(256, dtype=np.int64)
    tensors = 0
    for path in sorted(glob.glob(os.path.join(root, "*.safetensors"))):
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            buf = np.frombuffer(data, dtype=np.uint8)
            for _, (begin, end) in scale_tensors(header):
                total += np.bincount(buf[8 + n + begin:8 + n + end], minlength=256)
                tensors += 1
            del buf
            data.close()
    present = np.nonzero(total[:255])[0]
    print(f"{tensors} scale tensors, {int(total.sum())} bytes; raw E8M0 {present.min()}-{present.max()}; "
          f"{int(total[255])} NaN bytes")
    if out:
        with open(out, "w") as f:
            json.dump([int(c) for c in total], f)


if __name__ == "__main__":
    main()
