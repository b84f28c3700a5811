// The CPU vector sweep for AVX2 with FMA and F16C: the ISA's primitives under
// cpu_simd_sweep.hpp, 8 lanes of one 256-bit register. Built with those
// flags (CMakeLists.txt) and reached only through avx2_impl(), after
// cpu_simd.cpp checked the CPU (and found no AVX-512).
#include "proof/cpu_simd_job.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define BITPROOF_SIMD_AVX2 1
#endif

#if defined(BITPROOF_SIMD_AVX2)

#include <immintrin.h>

#define BITPROOF_SIMD_BYTES 32
#include "proof/cpu_simd_lanes.hpp"

namespace bitproof::simd {
namespace {

constexpr const char* kIsaName = "avx2";

inline __m256i iv(W v) { return reinterpret_cast<__m256i>(v); }
inline Mask bits(WI mask) { return static_cast<Mask>(_mm256_movemask_ps(reinterpret_cast<__m256>(mask))); }
inline Mask ne_mask(W a, W b) { return bits(a != b); }
// AVX2 has no vector lzcnt: below 2^22 a value converts to FP32 exactly, and its exponent is 158 − lz.
inline W lzcnt22(W x) {
  const W exponent = reinterpret_cast<W>(__builtin_convertvector(reinterpret_cast<WI>(x), F)) >> 23;
  return sel(x == 0, splat(32), 158u - exponent);
}
inline F half_to_float(W h) {
  return reinterpret_cast<F>(
      _mm256_cvtph_ps(_mm_packus_epi32(_mm256_castsi256_si128(iv(h)), _mm256_extracti128_si256(iv(h), 1))));
}
template <int kRounding>
inline W float_to_half(F f) {
  return reinterpret_cast<W>(_mm256_cvtepu16_epi32(_mm256_cvtps_ph(reinterpret_cast<__m256>(f), kRounding)));
}
inline F fma_ps(F a, F b, F c) {
  return reinterpret_cast<F>(
      _mm256_fmadd_ps(reinterpret_cast<__m256>(a), reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(c)));
}
inline W where_nan(F f, std::uint32_t code, W v) {
  const __m256 nan = _mm256_cmp_ps(reinterpret_cast<__m256>(f), reinterpret_cast<__m256>(f), _CMP_UNORD_Q);
  return reinterpret_cast<W>(_mm256_blendv_ps(reinterpret_cast<__m256>(v), reinterpret_cast<__m256>(splat(code)), nan));
}
inline DH fma_pd(DH a, DH b, DH c) {
  return reinterpret_cast<DH>(
      _mm256_fmadd_pd(reinterpret_cast<__m256d>(a), reinterpret_cast<__m256d>(b), reinterpret_cast<__m256d>(c)));
}

}  // namespace
}  // namespace bitproof::simd

#include "proof/cpu_simd_sweep.hpp"

namespace bitproof::simd {
const SimdImpl* avx2_impl() { return &kImpl; }
}  // namespace bitproof::simd

#else

namespace bitproof::simd {
const SimdImpl* avx2_impl() { return nullptr; }
}  // namespace bitproof::simd

#endif
