// bench/gpu_sweep.sh: the 2^32-case sweep with a user recipe, against the
// catalogue's same claim (proofs/fp16-hmul-vs-fp32-round.json). One __hmul
// of two FP16 codes, as a kernel writes it.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>

__device__ uint32_t bp_hmul(uint32_t a, uint32_t b) {
  const __half x = __ushort_as_half(static_cast<unsigned short>(a));
  const __half y = __ushort_as_half(static_cast<unsigned short>(b));
  return __half_as_ushort(__hmul(x, y));
}
