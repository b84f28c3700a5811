// bitproof's ABI over the team's header (../kernels/dequant.h): one code in, the bits out.
#pragma once
#include "../kernels/dequant.h"
__device__ uint32_t bp_team(uint32_t code) { return team::dequant_e2m1(code); }
// The broken variant: the bias as 2^13.
__device__ uint32_t bp_broken(uint32_t code) {
  const uint32_t q = (code & 0xF) << 12;
  const unsigned short placed = static_cast<unsigned short>((q & 0x8000u) | ((q & 0x7000u) >> 3));
  return __half_as_ushort(__hmul(__ushort_as_half(placed), __ushort_as_half(0x7000)));
}
