// bitproof's CUDA for the host: the types and intrinsics that dequantization
// code uses, for compiling a kernel team's own __device__ functions with a
// plain C++ compiler on a machine without the CUDA toolkit or a GPU. Every
// half / bfloat16 operation is bitproof's bit-exact software model
// (src/arith/soft_float.hpp): round to nearest even, subnormals kept, the
// GPU's canonical NaNs (0x7FFF, 0x7FFFFFFF). User code includes <cuda_fp16.h>,
// <cuda_bf16.h>, <cuda_fp8.h>, <cuda_fp4.h> or <cuda_runtime.h> as always; with
// this directory first on the include path those resolve here.
//
// What is modelled (the list was chosen by reading Marlin's dequant.h,
// TurboMind's converters and ggml-cuda's dequantize code; docs/user-recipes.md):
//   types     __half __half2 __half_raw __half2_raw __nv_bfloat16 __nv_bfloat162
//             __nv_bfloat16_raw __nv_fp8_storage_t __nv_fp8x2_storage_t
//             __nv_fp4_storage_t __nv_fp4x2_storage_t __nv_fp8_interpretation_t
//             __nv_fp4_interpretation_t, float2 (CUDA's vector type)
//   half      __hmul __hadd __hsub __hfma __hneg, their 2-wide forms (__hmul2 ...),
//             operators + - * on __half/__half2, __float2half(_rn|_rz),
//             __half2float, __floats2half2_rn, __float2half2_rn, __half22float2,
//             __halves2half2, __low2half __high2half __low2float __high2float,
//             __half2half2, __int2half_rn, __ushort_as_half __half_as_ushort
//   bfloat16  __hmul __hadd __hsub __hfma (bf16 overloads), __float2bfloat16(_rn),
//             __bfloat162float, __ushort_as_bfloat16 __bfloat16_as_ushort,
//             __floats2bfloat162_rn, __low2bfloat16 __high2bfloat16
//   float     __fmul_rn __fadd_rn __fsub_rn __fmaf_rn, __uint_as_float
//             __float_as_uint __int_as_float __float_as_int
//   bits      __byte_perm __funnelshift_l __funnelshift_r __popc __clz
//   vendor    __nv_cvt_fp8_to_halfraw __nv_cvt_fp8x2_to_halfraw2
//             __nv_cvt_fp4_to_halfraw __nv_cvt_fp4x2_to_halfraw2
//             __nv_cvt_e8m0_to_bf16raw (exact; NaN -> 0x7FFF, as the toolkit)
// Not modelled, so a compile error names it: inline PTX (asm), shuffles and
// other warp intrinsics, anything else. Plain float arithmetic (a * b on
// floats) is the host's IEEE binary32: the same bits as the GPU's mul.rn.f32
// except NaN payloads (x86's default NaN is 0xFFC00000) and contraction, which
// bitproof turns off on the host (-ffp-contract=off) and nvcc turns on.
#pragma once

#include <cstdint>
#include <cstring>

#include "arith/soft_arith.hpp"
#include "arith/soft_float.hpp"

#define __host__
#define __device__
#define __forceinline__ inline
#define __inline__ inline
#define __align__(n) alignas(n)
#define __restrict__ __restrict

namespace bitproof_cuda_host {
namespace soft = ::bitproof::soft;
using H = soft::Binary16;
using B = soft::Bfloat16;
using F = soft::Binary32;
constexpr soft::Round kRn = soft::Round::kNearestEven;
inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// A double rounded once into binary16 (as __double2half): sig * 2^exp, exactly, then round_pack.
inline std::uint32_t half_of_double(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, 8);
  const bool neg = (u >> 63) != 0;
  const int e = static_cast<int>((u >> 52) & 0x7FF);
  const std::uint64_t m = u & ((std::uint64_t{1} << 52) - 1);
  if (e == 0x7FF) return m != 0 ? 0x7FFFu : (neg ? 0xFC00u : 0x7C00u);
  if (e == 0 && m == 0) return neg ? 0x8000u : 0u;
  const std::uint64_t sig = e == 0 ? m : (m | (std::uint64_t{1} << 52));
  return soft::round_pack<H>(neg, (e == 0 ? 1 : e) - 1075, sig, kRn);
}
}  // namespace bitproof_cuda_host

struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};
struct __nv_bfloat16_raw {
  unsigned short x;
};
struct __nv_bfloat162_raw {
  unsigned short x, y;
};

// Trivially default-constructible, as the toolkit's: code keeps these in unions.
struct __half {
  unsigned short __x;
  __half() = default;
  __half(__half_raw r) : __x(r.x) {}  // NOLINT(google-explicit-constructor): as cuda_fp16.hpp
  __half(float f)                     // NOLINT(google-explicit-constructor): as cuda_fp16.hpp, nearest even
      : __x(static_cast<unsigned short>(::bitproof::soft::convert<bitproof_cuda_host::H, bitproof_cuda_host::F>(
            bitproof_cuda_host::bits_of(f), bitproof_cuda_host::kRn))) {}
  __half(double d) : __x(static_cast<unsigned short>(bitproof_cuda_host::half_of_double(d))) {}  // NOLINT
  __half(int i);                                 // NOLINT(google-explicit-constructor): nearest even, as __int2half_rn
  operator __half_raw() const { return {__x}; }  // NOLINT(google-explicit-constructor)
  operator float() const {                        // NOLINT(google-explicit-constructor)
    return bitproof_cuda_host::float_of(
        ::bitproof::soft::convert<bitproof_cuda_host::F, bitproof_cuda_host::H>(__x, bitproof_cuda_host::kRn));
  }
};

struct __half2 {
  __half x, y;
  __half2() = default;
  __half2(__half a, __half b) : x(a), y(b) {}
  __half2(__half2_raw r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}  // NOLINT(google-explicit-constructor)
  operator __half2_raw() const { return {x.__x, y.__x}; }            // NOLINT(google-explicit-constructor)
};

struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(__nv_bfloat16_raw r) : __x(r.x) {}  // NOLINT(google-explicit-constructor)
  __nv_bfloat16(float f)                            // NOLINT(google-explicit-constructor): nearest even
      : __x(static_cast<unsigned short>(::bitproof::soft::convert<bitproof_cuda_host::B, bitproof_cuda_host::F>(
            bitproof_cuda_host::bits_of(f), bitproof_cuda_host::kRn))) {}
  operator __nv_bfloat16_raw() const { return {__x}; }  // NOLINT(google-explicit-constructor)
  operator float() const { return bitproof_cuda_host::float_of(std::uint32_t{__x} << 16); }  // NOLINT
};

struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  __nv_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) : x(a), y(b) {}
};

struct float2 {
  float x, y;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
using nv_bfloat16 = __nv_bfloat16;
using nv_bfloat162 = __nv_bfloat162;
using half = __half;
using half2 = __half2;

namespace bitproof_cuda_host {
inline __half h(std::uint32_t bits) { return __half(__half_raw{static_cast<unsigned short>(bits)}); }
inline __nv_bfloat16 b(std::uint32_t bits) {
  return __nv_bfloat16(__nv_bfloat16_raw{static_cast<unsigned short>(bits)});
}
}  // namespace bitproof_cuda_host

// ---- reinterpretation ----
inline unsigned short __half_as_ushort(__half a) { return a.__x; }
inline __half __ushort_as_half(unsigned short u) { return bitproof_cuda_host::h(u); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 a) { return a.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return bitproof_cuda_host::b(u); }
inline float __uint_as_float(unsigned int u) { return bitproof_cuda_host::float_of(u); }
inline unsigned int __float_as_uint(float f) { return bitproof_cuda_host::bits_of(f); }
inline float __int_as_float(int i) { return bitproof_cuda_host::float_of(static_cast<std::uint32_t>(i)); }
inline int __float_as_int(float f) { return static_cast<int>(bitproof_cuda_host::bits_of(f)); }

// ---- binary16 ----
#define BITPROOF_HALF_OP(name, expr)                    \
  inline __half name(__half a, __half b) {              \
    using namespace bitproof_cuda_host;                 \
    return h(expr);                                     \
  }                                                     \
  inline __half2 name##2(__half2 a, __half2 b) {        \
    return __half2(name(a.x, b.x), name(a.y, b.y));     \
  }
// The operations are SoftArith's, the model the catalogue's recipes run on.
BITPROOF_HALF_OP(__hmul, ::bitproof::SoftArith::hmul(a.__x, b.__x))
BITPROOF_HALF_OP(__hadd, ::bitproof::SoftArith::hadd(a.__x, b.__x))
BITPROOF_HALF_OP(__hsub, ::bitproof::SoftArith::hsub(a.__x, b.__x))
#undef BITPROOF_HALF_OP
inline __half __hfma(__half a, __half b, __half c) {
  return bitproof_cuda_host::h(::bitproof::SoftArith::hfma(a.__x, b.__x, c.__x));
}
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline __half __hneg(__half a) { return bitproof_cuda_host::h(a.__x ^ 0x8000u); }
inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __half operator*(__half a, __half b) { return __hmul(a, b); }
inline __half operator+(__half a, __half b) { return __hadd(a, b); }
inline __half operator-(__half a, __half b) { return __hsub(a, b); }
inline __half operator-(__half a) { return __hneg(a); }
inline __half2 operator*(__half2 a, __half2 b) { return __hmul2(a, b); }
inline __half2 operator+(__half2 a, __half2 b) { return __hadd2(a, b); }
inline __half2 operator-(__half2 a, __half2 b) { return __hsub2(a, b); }

inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rz(float f) {
  using namespace bitproof_cuda_host;
  return h(soft::convert<H, F>(bits_of(f), soft::Round::kTowardZero));
}
inline float __half2float(__half a) { return static_cast<float>(a); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
inline __half2 __float2half2_rn(float a) { return __half2(__half(a), __half(a)); }
inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
inline __half2 __half2half2(__half a) { return __half2(a, a); }
inline __half __low2half(__half2 a) { return a.x; }
inline __half __high2half(__half2 a) { return a.y; }
inline float __low2float(__half2 a) { return static_cast<float>(a.x); }
inline float __high2float(__half2 a) { return static_cast<float>(a.y); }
inline float2 __half22float2(__half2 a) { return {static_cast<float>(a.x), static_cast<float>(a.y)}; }
inline __half __int2half_rn(int i) {
  return bitproof_cuda_host::h(::bitproof::SoftArith::int2half_rn(static_cast<std::uint32_t>(i)));
}
inline __half::__half(int i) : __x(__int2half_rn(i).__x) {}
inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__half(f.x), __half(f.y)); }
inline float __int2float_rn(int i) {
  using namespace bitproof_cuda_host;
  const bool neg = i < 0;
  const std::uint64_t mag = neg ? std::uint64_t{0} - static_cast<std::uint64_t>(static_cast<std::int64_t>(i))
                                : static_cast<std::uint64_t>(i);
  return float_of(mag == 0 ? 0 : soft::round_pack<F>(neg, 0, mag, kRn));
}

// ---- bfloat16 ----
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) {
  return bitproof_cuda_host::b(::bitproof::SoftArith::bmul(a.__x, b.__x));
}
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) {
  using namespace bitproof_cuda_host;
  return bitproof_cuda_host::b(soft::add<B>(a.__x, b.__x, kRn));
}
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) {
  using namespace bitproof_cuda_host;
  return bitproof_cuda_host::b(soft::add<B>(a.__x, b.__x ^ B::kSign, kRn));
}
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  using namespace bitproof_cuda_host;
  return bitproof_cuda_host::b(soft::fma<B>(a.__x, b.__x, c.__x, kRn));
}
inline __nv_bfloat162 __hmul2(__nv_bfloat162 a, __nv_bfloat162 b) {
  return __nv_bfloat162(__hmul(a.x, b.x), __hmul(a.y, b.y));
}
inline __nv_bfloat162 __hadd2(__nv_bfloat162 a, __nv_bfloat162 b) {
  return __nv_bfloat162(__hadd(a.x, b.x), __hadd(a.y, b.y));
}
inline __nv_bfloat162 __hsub2(__nv_bfloat162 a, __nv_bfloat162 b) {
  return __nv_bfloat162(__hsub(a.x, b.x), __hsub(a.y, b.y));
}
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
  return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 a) { return static_cast<float>(a); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(a, b); }
inline __nv_bfloat162 __float2bfloat162_rn(float a) { return __nv_bfloat162(a, a); }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162(a, a); }
inline float2 __bfloat1622float2(__nv_bfloat162 a) { return {static_cast<float>(a.x), static_cast<float>(a.y)}; }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 a) { return a.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 a) { return a.y; }

// ---- binary32 with the GPU's rounding and canonical NaN ----
inline float __fmul_rn(float a, float b) {
  using namespace bitproof_cuda_host;
  return float_of(::bitproof::SoftArith::fmul(bits_of(a), bits_of(b)));
}
inline float __fadd_rn(float a, float b) {
  using namespace bitproof_cuda_host;
  return float_of(soft::add<F>(bits_of(a), bits_of(b), kRn));
}
inline float __fsub_rn(float a, float b) {
  using namespace bitproof_cuda_host;
  return float_of(soft::add<F>(bits_of(a), bits_of(b) ^ F::kSign, kRn));
}
inline float __fmaf_rn(float a, float b, float c) {
  using namespace bitproof_cuda_host;
  return float_of(::bitproof::SoftArith::ffma(bits_of(a), bits_of(b), bits_of(c)));
}

// ---- bits ----
// __byte_perm(x, y, s): byte i of the result is byte (s >> 4i) & 7 of the
// eight bytes y:x (x the low four), as PTX prmt in its default mode.
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const std::uint64_t bytes = (std::uint64_t{y} << 32) | x;
  unsigned int out = 0;
  for (int i = 0; i < 4; ++i) out |= static_cast<unsigned int>((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return out;
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  const std::uint64_t both = (std::uint64_t{hi} << 32) | lo;
  return static_cast<unsigned int>((both << (shift & 31)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  const std::uint64_t both = (std::uint64_t{hi} << 32) | lo;
  return static_cast<unsigned int>(both >> (shift & 31));
}
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }

// ---- the toolkit's FP8 / FP4 / E8M0 conversions (cuda_fp8.h, cuda_fp4.h) ----
using __nv_fp8_storage_t = unsigned char;
using __nv_fp8x2_storage_t = unsigned short;
using __nv_fp4_storage_t = unsigned char;
using __nv_fp4x2_storage_t = unsigned char;
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };
enum __nv_fp4_interpretation_t { __NV_E2M1 };

namespace bitproof_cuda_host {
// An exact decode of a small float code (sign, `e` exponent bits, `m` mantissa
// bits, bias `bias`) into binary16 bits; NaN codes (as the caller says) to 0x7FFF.
inline unsigned short small_to_half(std::uint32_t code, int e, int m, int bias, bool nan, bool inf) {
  const bool neg = (code >> (e + m)) & 1;
  if (nan) return 0x7FFF;
  if (inf) return static_cast<unsigned short>((neg ? 0x8000u : 0u) | 0x7C00u);
  const std::uint32_t exp = (code >> m) & ((1u << e) - 1), man = code & ((1u << m) - 1);
  if (exp == 0 && man == 0) return neg ? 0x8000 : 0;
  // value = sig * 2^(p) with sig an integer; round_pack places it exactly (every such value fits binary16).
  const std::uint64_t sig = exp == 0 ? man : (man | (1u << m));
  const int p = (exp == 0 ? 1 - bias : static_cast<int>(exp) - bias) - m;
  return static_cast<unsigned short>(soft::round_pack<H>(neg, p, sig, kRn));
}
}  // namespace bitproof_cuda_host

inline __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t x, __nv_fp8_interpretation_t kind) {
  using bitproof_cuda_host::small_to_half;
  if (kind == __NV_E4M3) return {small_to_half(x, 4, 3, 7, (x & 0x7F) == 0x7F, false)};
  return {small_to_half(x, 5, 2, 15, (x & 0x7F) > 0x7C, (x & 0x7F) == 0x7C)};
}
inline __half2_raw __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t x, __nv_fp8_interpretation_t kind) {
  return {__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(x & 0xFF), kind).x,
          __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(x >> 8), kind).x};
}
inline __half_raw __nv_cvt_fp4_to_halfraw(__nv_fp4_storage_t x, __nv_fp4_interpretation_t) {
  return {bitproof_cuda_host::small_to_half(x & 0xF, 2, 1, 1, false, false)};
}
inline __half2_raw __nv_cvt_fp4x2_to_halfraw2(__nv_fp4x2_storage_t x, __nv_fp4_interpretation_t kind) {
  return {__nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(x & 0xF), kind).x,
          __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(x >> 4), kind).x};
}
// The FP8 storage types, widened exactly to float (NaN -> the GPU's 0x7FFFFFFF).
struct __nv_fp8_e4m3 {
  __nv_fp8_storage_t __x;
  explicit operator float() const {
    return __half2float(__half(__half_raw{__nv_cvt_fp8_to_halfraw(__x, __NV_E4M3).x}));
  }
};
struct __nv_fp8_e5m2 {
  __nv_fp8_storage_t __x;
  explicit operator float() const {
    return __half2float(__half(__half_raw{__nv_cvt_fp8_to_halfraw(__x, __NV_E5M2).x}));
  }
};

// UE8M0 -> BF16: 2^(s - 127) exactly (2^-127 is the BF16 subnormal 0x0040); 0xFF (NaN) -> 0x7FFF.
inline __nv_bfloat16_raw __nv_cvt_e8m0_to_bf16raw(__nv_fp8_storage_t s) {
  if (s == 0xFF) return {0x7FFF};
  return {static_cast<unsigned short>(s == 0 ? 0x0040 : s << 7)};
}
