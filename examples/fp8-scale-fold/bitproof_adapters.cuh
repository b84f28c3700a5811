// bitproof's ABI over the team's header: codes in, FP16 bits out.
#pragma once
#include "dequant.cuh"

__device__ uint32_t bp_fp8_folded(uint32_t byte, uint32_t scale_bits) {
  const half scale = __ushort_as_half(static_cast<unsigned short>(scale_bits));
  return __half_as_ushort(team::dequant(byte, team::fold_scale(scale)));
}

// Broken on purpose: 2^7 folded instead of 2^8.
__device__ uint32_t bp_fp8_folded_broken(uint32_t byte, uint32_t scale_bits) {
  const half scale = __ushort_as_half(static_cast<unsigned short>(scale_bits));
  return __half_as_ushort(team::dequant(byte, __hmul(scale, __float2half_rn(128.0f))));
}
