#!/usr/bin/env python3
"""The peer: the DeepSeek V4 fold check as users write it today, in plain
python3. 16 signed E2M1 codes x scale bytes 114..126, ordinary vs folded,
FP16 multiplies modelled with struct's binary16 packing (round-half-even)."""
import struct


def half_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def half_bits(value):
    return struct.unpack("<H", struct.pack("<e", value))[0]


def hmul(a, b):
    # Two binary16 values multiply exactly in a double; packing rounds once.
    try:
        return half_bits(half_value(a) * half_value(b))
    except OverflowError:
        return 0x7C00 if (a ^ b) & 0x8000 == 0 else 0xFC00


def raw(x):
    return ((x << 12) & 0x8000) | ((x << 9) & 0x0E00)


equal = 0
total = 0
for scale in range(114, 127):
    a = min(max(scale + 15 - 127, 0), 30)
    for x in range(16):
        ordinary = hmul(hmul(raw(x), 0x7400), (a << 10) & 0xFFFF)
        folded = hmul(raw(x), ((a + 14) << 10) & 0xFFFF)
        equal += ordinary == folded
        total += 1
print(f"{equal}/{total} FP16 bit patterns equal")
