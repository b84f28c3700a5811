// A kernel team's FP8 (E4M3) weight dequant to FP16, Marlin style: the byte's
// sign kept and its exponent and mantissa moved right by 1 into an FP16 lane
// gives the bits of E4M3 x 2^-8; instead of multiplying every element by 2^8,
// the team folds 2^8 into the per-channel FP16 scale once, at load time.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

namespace team {

__device__ __forceinline__ half fp8_bits_to_half(uint32_t byte) {
  const uint32_t lane = (byte & 0xFF) << 8;
  return __ushort_as_half(static_cast<unsigned short>((lane & 0x8000u) | ((lane & 0x7F00u) >> 1)));
}

// Load time: the channel scale with 2^8 folded in.
__device__ __forceinline__ half fold_scale(half scale) { return __hmul(scale, __float2half_rn(256.0f)); }

// The hot loop: one multiply per element.
__device__ __forceinline__ half dequant(uint32_t byte, half folded_scale) {
  return __hmul(fp8_bits_to_half(byte), folded_scale);
}

}  // namespace team
