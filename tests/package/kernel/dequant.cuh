// A kernel team's FP4 (E2M1) decode, as it ships: the code's bits placed in
// an FP16 as value x 2^-14, then one multiply by the bias 2^14.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>

namespace team {
__device__ inline __half dequant_e2m1(uint32_t code, unsigned short bias_bits) {
  const uint32_t q = (code & 0xF) << 12;
  const auto placed = static_cast<unsigned short>((q & 0x8000u) | ((q & 0x7000u) >> 3));
  return __hmul(__ushort_as_half(placed), __ushort_as_half(bias_bits));
}
}  // namespace team
