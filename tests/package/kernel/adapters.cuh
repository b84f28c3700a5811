// bitproof's ABI over the team's decode: one E2M1 code in, FP16 bits out.
#pragma once
#include "dequant.cuh"

__device__ uint32_t bp_fp4(uint32_t code) { return __half_as_ushort(team::dequant_e2m1(code, 0x7400)); }  // 2^14
// The broken variant: bias 2^13, one wrong constant.
__device__ uint32_t bp_fp4_broken(uint32_t code) { return __half_as_ushort(team::dequant_e2m1(code, 0x7000)); }
