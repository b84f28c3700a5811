// A kernel team's FP4 dequant, Marlin style: E2M1 codes packed in the top
// nibble of each 16-bit lane; sign kept, exponent and mantissa moved right by
// 3, which gives the FP16 bits of E2M1 x 2^-14 (code 1, 0.5, lands on an FP16
// subnormal); one __hmul2 by 2^14 (the bias) restores the value. Written as a
// team writes it (cuda_fp16.h, half2 lanes, bit casts), no inline PTX.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

namespace team {

// Two FP4 codes, one per 16-bit lane (at bits 15..12), to two halves.
__device__ __forceinline__ half2 dequant_fp4x2(uint32_t lanes) {
  const uint32_t sign = lanes & 0x80008000u;
  const uint32_t magnitude = (lanes & 0x70007000u) >> 3;
  const uint32_t bits = sign | magnitude;
  half2 raw;
  raw.x = __ushort_as_half(static_cast<unsigned short>(bits & 0xFFFF));
  raw.y = __ushort_as_half(static_cast<unsigned short>(bits >> 16));
  const half2 bias = __half2half2(__ushort_as_half(0x7400));  // 2^14
  return __hmul2(raw, bias);
}

}  // namespace team
