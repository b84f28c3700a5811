// Adapters of the wrong ABI: they return the value as a half, not its bits.
// bp_half_b differs from bp_half_a on 6 of the 16 E2M1 codes (1.25 for 1.5,
// 3.5 for 3, each zero's sign flipped); a uint32_t conversion of the values
// would call them equal everywhere.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>
__device__ float bp_e2m1_value(uint32_t code) {
  const float magnitude[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  return (code & 8) ? -magnitude[code & 7] : magnitude[code & 7];
}
__device__ half bp_half_a(uint32_t code) { return __float2half(bp_e2m1_value(code)); }
__device__ half bp_half_b(uint32_t code) {
  float v = bp_e2m1_value(code);
  if ((code & 7) == 3) v = (code & 8) ? -1.25f : 1.25f;
  if ((code & 7) == 5) v = (code & 8) ? -3.5f : 3.5f;
  if ((code & 7) == 0) v = (code & 8) ? 0.0f : -0.0f;
  return __float2half(v);
}
// Parameters of the wrong type.
__device__ uint32_t bp_int_param(int code) { return static_cast<uint32_t>(code); }
__device__ uint32_t bp_half_param(half code) { return __half_as_ushort(code); }
// The right ABI (the negative control).
__device__ uint32_t bp_bits(uint32_t code) { return __half_as_ushort(bp_half_a(code)); }
