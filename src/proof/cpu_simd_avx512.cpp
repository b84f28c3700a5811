// The CPU vector sweep for AVX-512 (F, CD, BW, DQ, VL) with F16C: the ISA's
// primitives under cpu_simd_sweep.hpp. Built with those flags (CMakeLists.txt)
// and reached only through avx512_impl(), after cpu_simd.cpp checked the CPU.
#include "proof/cpu_simd_job.hpp"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512CD__) && defined(__AVX512BW__) && \
    defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__F16C__)
#define BITPROOF_SIMD_AVX512 1
#endif

#if defined(BITPROOF_SIMD_AVX512)

#include <immintrin.h>

// GCC 12 warns inside its own intrinsic headers (the `__Y = __Y` idiom of
// _mm*_undefined_*); the values are fully overwritten.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#define BITPROOF_SIMD_BYTES 64
#include "proof/cpu_simd_lanes.hpp"

namespace bitproof::simd {
namespace {

constexpr const char* kIsaName = "avx512";

inline __m512i iv(W v) { return reinterpret_cast<__m512i>(v); }
inline Mask bits(WI mask) { return _mm512_movepi32_mask(reinterpret_cast<__m512i>(mask)); }
inline Mask ne_mask(W a, W b) { return _mm512_cmpneq_epi32_mask(iv(a), iv(b)); }
inline W lzcnt22(W x) { return reinterpret_cast<W>(_mm512_lzcnt_epi32(iv(x))); }
inline F half_to_float(W h) { return reinterpret_cast<F>(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(iv(h)))); }
template <int kRounding>
inline W float_to_half(F f) {
  const __m256i h = _mm512_cvtps_ph(reinterpret_cast<__m512>(f), kRounding | _MM_FROUND_NO_EXC);
  return reinterpret_cast<W>(_mm512_cvtepu16_epi32(h));
}
inline F fma_ps(F a, F b, F c) {
  return reinterpret_cast<F>(
      _mm512_fmadd_ps(reinterpret_cast<__m512>(a), reinterpret_cast<__m512>(b), reinterpret_cast<__m512>(c)));
}
inline W where_nan(F f, std::uint32_t code, W v) {
  constexpr int kNanClass = 0x01 | 0x80;  // vfpclassps: quiet NaN | signalling NaN
  return reinterpret_cast<W>(_mm512_mask_mov_epi32(iv(v),
                                                   _mm512_fpclass_ps_mask(reinterpret_cast<__m512>(f), kNanClass),
                                                   _mm512_set1_epi32(static_cast<int>(code))));
}
inline DH fma_pd(DH a, DH b, DH c) {
  return reinterpret_cast<DH>(
      _mm512_fmadd_pd(reinterpret_cast<__m512d>(a), reinterpret_cast<__m512d>(b), reinterpret_cast<__m512d>(c)));
}

}  // namespace
}  // namespace bitproof::simd

#include "proof/cpu_simd_sweep.hpp"

namespace bitproof::simd {
const SimdImpl* avx512_impl() { return &kImpl; }
}  // namespace bitproof::simd

#else

namespace bitproof::simd {
const SimdImpl* avx512_impl() { return nullptr; }
}  // namespace bitproof::simd

#endif
