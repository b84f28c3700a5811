// bitproof's ABI over the team's header: codes in, FP16 bits out.
#pragma once
#include "dequant.cuh"

__device__ uint32_t bp_int4_magic(uint32_t q, uint32_t scale_bits) {
  return __half_as_ushort(team::dequant(q, __ushort_as_half(static_cast<unsigned short>(scale_bits))));
}

// Broken on purpose: the zero point as 7 (0x6407).
__device__ uint32_t bp_int4_magic_broken(uint32_t q, uint32_t scale_bits) {
  const half biased = __ushort_as_half(static_cast<unsigned short>(0x6400u | (q & 0xF)));
  const half centred = __hsub(biased, __ushort_as_half(0x6407));
  return __half_as_ushort(__hmul(centred, __ushort_as_half(static_cast<unsigned short>(scale_bits))));
}
