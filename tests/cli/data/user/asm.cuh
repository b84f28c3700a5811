// A user recipe with inline PTX (lop3), which the CPU path cannot model.
#pragma once
#include <cuda_fp16.h>
#include <cstdint>
__device__ uint32_t bp_lop3(uint32_t x) {
  uint32_t r;
  asm volatile("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(x), "r"(0x7000u), "r"(0x0400u));
  return r & 0xFFFF;
}
