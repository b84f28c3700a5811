// bitproof's ABI over the team's header: one code in, the output's bits out.
// Each adapter places the code in both lanes and checks the lanes agree.
#pragma once
#include "dequant.cuh"

__device__ uint32_t bp_marlin_fp4(uint32_t code) {
  const uint32_t lane = (code & 0xF) << 12;
  const half2 out = team::dequant_fp4x2(lane | (lane << 16));
  const unsigned short lo = __half_as_ushort(__low2half(out)), hi = __half_as_ushort(__high2half(out));
  return lo == hi ? lo : 0xDEAD;  // the lanes must decode alike
}

// The broken variant a reviewer must catch: the bias as 2^13 (one wrong constant).
__device__ uint32_t bp_marlin_fp4_broken(uint32_t code) {
  const uint32_t lane = (code & 0xF) << 12;
  const uint32_t bits = (lane & 0x8000u) | ((lane & 0x7000u) >> 3);
  return __half_as_ushort(__hmul(__ushort_as_half(static_cast<unsigned short>(bits)), __ushort_as_half(0x7000)));
}
