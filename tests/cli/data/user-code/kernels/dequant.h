// The team's kernel header, outside the spec's directory: E2M1 to FP16 as the
// bits placed x 2^-14, times the bias 2^14 (0x7400).
#pragma once
#include <cuda_fp16.h>
#include <cstdint>
namespace team {
__device__ inline uint32_t dequant_e2m1(uint32_t code) {
  const uint32_t q = (code & 0xF) << 12;
  const unsigned short placed = static_cast<unsigned short>((q & 0x8000u) | ((q & 0x7000u) >> 3));
  return __half_as_ushort(__hmul(__ushort_as_half(placed), __ushort_as_half(0x7400)));
}
}  // namespace team
