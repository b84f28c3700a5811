// The lane types of the CPU vector sweep (cpu_simd_sweep.hpp): GCC vector
// extensions of one register of the unit's ISA, BITPROOF_SIMD_BYTES wide (64
// for AVX-512: 16 lanes of 32 bits; 32 for AVX2: 8 lanes), which the unit
// defines before including this. Wider-than-register vectors would be lowered
// lane by lane by GCC where the ISA has no native compare or select.
#pragma once

#include <cstdint>
#include <cstring>

#if !defined(BITPROOF_SIMD_BYTES) || (BITPROOF_SIMD_BYTES != 64 && BITPROOF_SIMD_BYTES != 32)
#error "BITPROOF_SIMD_BYTES must be 64 (AVX-512) or 32 (AVX2)"
#endif

namespace bitproof::simd {
namespace {

constexpr int kLanes = BITPROOF_SIMD_BYTES / 4;
using W = std::uint32_t __attribute__((vector_size(BITPROOF_SIMD_BYTES)));  // kLanes codes
using WI = std::int32_t __attribute__((vector_size(BITPROOF_SIMD_BYTES)));  // a compare: lanes of all ones or zero
using F = float __attribute__((vector_size(BITPROOF_SIMD_BYTES)));          // kLanes FP32 values
// Half the lanes, widened to 64 bits (FP64 arithmetic), and narrowed back.
using DH = double __attribute__((vector_size(BITPROOF_SIMD_BYTES)));
using UH = std::uint64_t __attribute__((vector_size(BITPROOF_SIMD_BYTES)));
using IH = std::int64_t __attribute__((vector_size(BITPROOF_SIMD_BYTES)));
using WH = std::uint32_t __attribute__((vector_size(BITPROOF_SIMD_BYTES / 2)));
using FH = float __attribute__((vector_size(BITPROOF_SIMD_BYTES / 2)));
using Mask = std::uint32_t;  // lane i is bit i
constexpr Mask kAllLanes = (1u << kLanes) - 1;
#if BITPROOF_SIMD_BYTES == 64
constexpr W kIota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#else
constexpr W kIota = {0, 1, 2, 3, 4, 5, 6, 7};
#endif

inline W load(const std::uint32_t* p) {
  W v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(std::uint32_t* p, W v) { std::memcpy(p, &v, sizeof v); }
inline W splat(std::uint32_t x) { return W{} + x; }
inline W sel(WI mask, W yes, W no) { return mask ? yes : no; }
inline W min_u(W a, W b) { return a < b ? a : b; }

// The low or high half of a vector, and two halves joined.
template <class Half, class Whole>
inline Half half_of(Whole v, bool high) {
  Half h;
  std::memcpy(&h, reinterpret_cast<const char*>(&v) + (high ? sizeof h : 0), sizeof h);
  return h;
}
template <class Whole, class Half>
inline Whole join(Half lo, Half hi) {
  static_assert(2 * sizeof(Half) == sizeof(Whole));
  Whole v;
  std::memcpy(&v, &lo, sizeof lo);
  std::memcpy(reinterpret_cast<char*>(&v) + sizeof lo, &hi, sizeof hi);
  return v;
}

}  // namespace
}  // namespace bitproof::simd
