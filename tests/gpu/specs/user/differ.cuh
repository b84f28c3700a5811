// A user recipe whose device code differs from its host code on one input
// code: what a kernel relying on something the soft model does not model
// looks like. `--backend all` must fail with that case.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>

__device__ uint32_t bp_differs(uint32_t code) {
  const uint32_t lane = (code & 0xF) << 12;
  uint32_t bits = (lane & 0x8000u) | ((lane & 0x7000u) >> 3);
#if defined(__CUDA_ARCH__)
  if (code == 0x5) bits ^= 1u;  // only the GPU build: case 5
#endif
  return __half_as_ushort(__hmul(__ushort_as_half(static_cast<unsigned short>(bits)), __ushort_as_half(0x7400)));
}
