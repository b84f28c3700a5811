// A kernel team's INT4 (GPTQ, symmetric, zero point 8) dequant to FP16 by the
// magic number: the nibble q in the low mantissa bits of 0x6400 (1024) is the
// half 1024 + q exactly; one subtraction of 1032 (0x6408) leaves q - 8, then
// the group scale multiplies it.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

namespace team {

__device__ __forceinline__ half int4_to_half(uint32_t q) {
  const half biased = __ushort_as_half(static_cast<unsigned short>(0x6400u | (q & 0xF)));
  return __hsub(biased, __ushort_as_half(0x6408));  // - (1024 + 8)
}

__device__ __forceinline__ half dequant(uint32_t q, half scale) { return __hmul(int4_to_half(q), scale); }

}  // namespace team
