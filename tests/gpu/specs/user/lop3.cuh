// The Marlin-style E2M1 placement written twice: with inline PTX (lop3, which
// the CPU path cannot run) and in plain C++. On a GPU both run and agree; the
// report says the CPU witness is missing.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>

__device__ uint32_t bp_place_lop3(uint32_t code) {
  const uint32_t lane = (code & 0xF) << 12;
  uint32_t sign = 0;
  asm("lop3.b32 %0, %1, %2, %3, 0xC0;" : "=r"(sign) : "r"(lane), "r"(0x8000u), "r"(0u));  // lane & 0x8000
  return sign | ((lane & 0x7000u) >> 3);
}

__device__ uint32_t bp_place_plain(uint32_t code) {
  const uint32_t lane = (code & 0xF) << 12;
  return (lane & 0x8000u) | ((lane & 0x7000u) >> 3);
}
