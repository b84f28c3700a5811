// The TurboMind SM70 MXFP4 decode and the DeepSeek V4 fold, written as a
// kernel team writes CUDA (cuda_fp16.h, __ushort_as_half, __hmul): the user-
// recipe ABI, codes in and output bits out. tests/user checks that compiled
// against bitproof's host header they give the catalogue recipes' bits.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

__device__ __forceinline__ unsigned short bp_adjust(uint32_t s) {  // clamp(s + 15 - 127, 0, 30)
  int a = static_cast<int>(s) - 112;
  return static_cast<unsigned short>(a < 0 ? 0 : (a > 30 ? 30 : a));
}
__device__ __forceinline__ __half bp_raw(uint32_t x) {  // E2M1 bits placed as FP16 x 2^-14
  return __ushort_as_half(static_cast<unsigned short>(((x << 12) & 0x8000) | ((x << 9) & 0x0E00)));
}
__device__ uint32_t bp_tm_ordinary(uint32_t x, uint32_t s) {
  const __half elem = __hmul(bp_raw(x), __ushort_as_half(0x7400));  // x 2^14
  return __half_as_ushort(__hmul(elem, __ushort_as_half(static_cast<unsigned short>(bp_adjust(s) << 10))));
}
__device__ uint32_t bp_tm_folded(uint32_t x, uint32_t s) {
  return __half_as_ushort(__hmul(bp_raw(x), __ushort_as_half(static_cast<unsigned short>((bp_adjust(s) + 14) << 10))));
}
// Broken on purpose (one wrong constant, +13): the tests demand it be refuted.
__device__ uint32_t bp_tm_folded_broken(uint32_t x, uint32_t s) {
  return __half_as_ushort(__hmul(bp_raw(x), __ushort_as_half(static_cast<unsigned short>((bp_adjust(s) + 13) << 10))));
}
// FP8 E4M3 -> FP16 through the toolkit conversion, the way vLLM's KV cache does.
__device__ uint32_t bp_e4m3_cvt(uint32_t c) {
  return __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3).x;
}
