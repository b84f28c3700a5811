// x*c + 1 with c = 1.1f, written two ways. As plain arithmetic it rounds twice
// on the CPU path (-ffp-contract=off) and with NVRTC --fmad=false, but NVRTC's
// default --fmad=true (nvcc's too) contracts it into fma(x, c, 1), one rounding:
// the bits differ wherever the two roundings do. __fmul_rn and __fadd_rn are
// never contracted. A kernel whose bits depend on the compiler's flags.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>

// Infinities and NaNs give 0: their NaN payloads are the host's (0xFFC00000 on
// x86) and the GPU's (0x7FFFFFFF), which differ whatever the flags.
__device__ uint32_t bp_contractible(uint32_t code) {
  const float x = __half2float(__ushort_as_half(static_cast<unsigned short>(code)));
  if (!(x - x == 0.0f)) return 0u;
  const float c = 1.1f;
  return __float_as_uint(x * c + 1.0f);
}

__device__ uint32_t bp_two_roundings(uint32_t code) {
  const float x = __half2float(__ushort_as_half(static_cast<unsigned short>(code)));
  if (!(x - x == 0.0f)) return 0u;
  return __float_as_uint(__fadd_rn(__fmul_rn(x, 1.1f), 1.0f));
}
