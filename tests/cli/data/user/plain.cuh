// A user recipe that compiles: the E2M1 bits placed as FP16 x 2^-14, times 2^14.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>
__device__ uint32_t bp_plain(uint32_t x) {
  const uint32_t q = (x & 0xF) << 12;
  return __half_as_ushort(__hmul(__ushort_as_half(static_cast<unsigned short>((q & 0x8000u) | ((q & 0x7000u) >> 3))),
                                 __ushort_as_half(0x7400)));
}
