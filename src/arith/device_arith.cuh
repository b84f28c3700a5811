// The device arithmetic policy: the SoftArith names (see soft_arith.hpp for the
// contract) mapped to the CUDA instructions a kernel would use. Host+device in
// the CUTLASS float8.h style: on the device each op is the hardware
// instruction; compiled for the host it falls back to its exact software twin
// (SoftArith), so host code that instantiates a recipe with DeviceArith still
// builds, and the CPU tests cover the twin.
//
//   op             device instruction                         note
//   hmul           __hmul            (mul.f16)                 may contract with a following add, as in kernels
//   hmul_rz        __float2half_rz(__fmul_rn(h2f(a), h2f(b))) no f16 multiply rounds toward zero in PTX; the
//                                                              binary32 product of two binary16 values is exact
//                                                              (22-bit significand, exponent in range), so one
//                                                              cvt.rz is the single rounding: hardware, not a twin
//   hmul_ftz       mul.rn.ftz.f16 (inline PTX)                 the hardware's own flush-to-zero multiply
//   hadd           __hadd            (add.f16)
//   hfma           __hfma            (fma.rn.f16)
//   hfma2          __hfma2           (fma.rn.f16x2, inline PTX: fma.rn.f16 on each half)
//   float2half_rn  __float2half_rn   (cvt.rn.f16.f32)
//   float2half_rz  __float2half_rz   (cvt.rz.f16.f32)
//   half2float     __half2float      (cvt.f32.f16)
//   fadd           __fadd_rn         (add.rn.f32; .ftz under --use_fast_math)
//   fmul           __fmul_rn         (mul.rn.f32; under -ftz=true, i.e. --use_fast_math, mul.rn.ftz.f32)
//   hsub           __hsub            (sub.f16)
//   bmul           __hmul on __nv_bfloat16 (sm_90: the native bf16 multiply)
//   ffma           __fmaf_rn         (fma.rn.f32; .ftz under --use_fast_math)
//   int2half_rn    __int2half_rn     (cvt.rn.f16.s32)
//   badd, bsub     __hadd / __hsub on __nv_bfloat16 (add.bf16 / sub.bf16 on sm_90)
//   bfma           __hfma on __nv_bfloat16 (fma.rn.bf16)
//   bfloat162float __bfloat162float  (exact: the bits << 16)
//   float2bfloat16_rn __float2bfloat16_rn (cvt.rn.bf16.f32)
//   fadd_ro        no PTX add rounds to odd: __fadd_rz, with the last bit set when
//                  __fadd_rd and __fadd_ru differ (the sum is inexact); all three
//                  are hardware adds (add.rz/rm/rp.f32), so this is not a twin
//   half2double    (double)__half2float (exact, cvt.f64.f32 after cvt.f32.f16)
//   bfloat162double (double)__bfloat162float (exact)
//   dfma           __fma_rn          (fma.rn.f64), a NaN operand taken in code first (b, c, a)
//   double2half_rn __double2half     (cvt.rn.f16.f64)
//   double2bfloat16_rn __double2bfloat16 (cvt.rn.bf16.f64)
//   hdiv           __hdiv            rcp.approx.ftz.f32 of b times a, cvt.rn.f16.f32, refined with two FP32
//                                    FMAs only when that result is below 0x008F in magnitude and nonzero
//   hsqrt          hsqrt             sqrt.approx.ftz.f32, then cvt.rn.f16.f32
//   bdiv           __hdiv on __nv_bfloat16  div.approx.f32 (b scaled by 1/4 when |b| >= 2^126), cvt.rn.bf16.f32
//   bsqrt          hsqrt on __nv_bfloat16   sqrt.approx.f32, then cvt.rn.bf16.f32
//   fdiv, fsqrt    __fdiv_rn, __fsqrt_rn (div.rn.f32, sqrt.rn.f32: IEEE, also under --use_fast_math)
//   The four approximate ones are modelled by their intent, the correctly rounded result: the
//   model sweep counts the cases where the hardware differs from it.
//
// Set BITPROOF_DEVICE_SOFT_FTZ to use SoftArith's twin for hmul_ftz on the device
// instead of the PTX instruction.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "arith/soft_arith.hpp"
#include "hd.hpp"

namespace bitproof {

struct DeviceArith {
  static constexpr const char* kName = "cuda";

  BP_HD static std::uint16_t hmul(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__hmul(__ushort_as_half(a), __ushort_as_half(b)));
#else
    return SoftArith::hmul(a, b);
#endif
  }
  BP_HD static std::uint16_t hmul_rz(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    const float product = __fmul_rn(__half2float(__ushort_as_half(a)), __half2float(__ushort_as_half(b)));
    return __half_as_ushort(__float2half_rz(product));
#else
    return SoftArith::hmul_rz(a, b);
#endif
  }
  BP_HD static std::uint16_t hmul_ftz(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__) && !defined(BITPROOF_DEVICE_SOFT_FTZ)
    std::uint16_t out;
    asm("{ mul.rn.ftz.f16 %0, %1, %2; }" : "=h"(out) : "h"(a), "h"(b));
    return out;
#else
    return SoftArith::hmul_ftz(a, b);
#endif
  }
  BP_HD static std::uint16_t hadd(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__hadd(__ushort_as_half(a), __ushort_as_half(b)));
#else
    return SoftArith::hadd(a, b);
#endif
  }
  BP_HD static std::uint16_t hfma(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__hfma(__ushort_as_half(a), __ushort_as_half(b), __ushort_as_half(c)));
#else
    return SoftArith::hfma(a, b, c);
#endif
  }
  BP_HD static std::uint32_t hfma2(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
    std::uint32_t d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));  // what __hfma2 emits
    return d;
#else
    return SoftArith::hfma2(a, b, c);
#endif
  }
  BP_HD static std::uint16_t float2half_rn(std::uint32_t f) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rn(__uint_as_float(f)));
#else
    return SoftArith::float2half_rn(f);
#endif
  }
  BP_HD static std::uint16_t float2half_rz(std::uint32_t f) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rz(__uint_as_float(f)));
#else
    return SoftArith::float2half_rz(f);
#endif
  }
  BP_HD static std::uint32_t half2float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__half2float(__ushort_as_half(h)));
#else
    return SoftArith::half2float(h);
#endif
  }
  BP_HD static std::uint32_t fadd(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__fadd_rn(__uint_as_float(a), __uint_as_float(b)));
#else
    return SoftArith::fadd(a, b);
#endif
  }
  BP_HD static std::uint32_t fmul(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__fmul_rn(__uint_as_float(a), __uint_as_float(b)));
#else
    return SoftArith::fmul(a, b);
#endif
  }
  BP_HD static std::uint16_t hsub(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__hsub(__ushort_as_half(a), __ushort_as_half(b)));
#else
    return SoftArith::hsub(a, b);
#endif
  }
  BP_HD static std::uint16_t bmul(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__hmul(__ushort_as_bfloat16(a), __ushort_as_bfloat16(b)));
#else
    return SoftArith::bmul(a, b);
#endif
  }
  BP_HD static std::uint32_t ffma(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__fmaf_rn(__uint_as_float(a), __uint_as_float(b), __uint_as_float(c)));
#else
    return SoftArith::ffma(a, b, c);
#endif
  }
  BP_HD static std::uint16_t int2half_rn(std::uint32_t i) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__int2half_rn(static_cast<int>(i)));
#else
    return SoftArith::int2half_rn(i);
#endif
  }
  BP_HD static std::uint16_t badd(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__hadd(__ushort_as_bfloat16(a), __ushort_as_bfloat16(b)));
#else
    return SoftArith::badd(a, b);
#endif
  }
  BP_HD static std::uint16_t bsub(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__hsub(__ushort_as_bfloat16(a), __ushort_as_bfloat16(b)));
#else
    return SoftArith::bsub(a, b);
#endif
  }
  BP_HD static std::uint16_t bfma(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__hfma(__ushort_as_bfloat16(a), __ushort_as_bfloat16(b), __ushort_as_bfloat16(c)));
#else
    return SoftArith::bfma(a, b, c);
#endif
  }
  BP_HD static std::uint32_t bfloat162float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__bfloat162float(__ushort_as_bfloat16(h)));
#else
    return SoftArith::bfloat162float(h);
#endif
  }
  BP_HD static std::uint16_t float2bfloat16_rn(std::uint32_t f) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__float2bfloat16_rn(__uint_as_float(f)));
#else
    return SoftArith::float2bfloat16_rn(f);
#endif
  }
  BP_HD static std::uint32_t fadd_ro(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
    const float x = __uint_as_float(a);
    const float y = __uint_as_float(b);
    const std::uint32_t truncated = __float_as_uint(__fadd_rz(x, y));
    const bool exact = __fadd_rd(x, y) == __fadd_ru(x, y);  // NaN: unequal, and NaN | 1 is NaN
    return exact ? truncated : (truncated | 1u);
#else
    return SoftArith::fadd_ro(a, b);
#endif
  }
  BP_HD static std::uint64_t half2double(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(__double_as_longlong(static_cast<double>(__half2float(__ushort_as_half(h)))));
#else
    return SoftArith::half2double(h);
#endif
  }
  BP_HD static std::uint64_t bfloat162double(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(
        __double_as_longlong(static_cast<double>(__bfloat162float(__ushort_as_bfloat16(h)))));
#else
    return SoftArith::bfloat162double(h);
#endif
  }
  // A NaN operand's payload is taken in code, in the order b, c, a: fma.rn.f64 returns the
  // first NaN of its operands 0, 2, 1, and which multiplicand is operand 0 is the compiler's
  // choice, which differed between kernels compiled from this one line on the H200 (the
  // generic, specialized and five-recipe sweeps gave three NaN-bit counts on the BF16 NaN-c
  // blocks, 2026-12-03, docs/fma.md). Every other result, the invalid operation's default
  // NaN included, is the hardware's.
  BP_HD static std::uint64_t dfma(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
#if defined(__CUDA_ARCH__)
    if (SoftArith::nan64(b)) return b | SoftArith::kQuiet64;
    if (SoftArith::nan64(c)) return c | SoftArith::kQuiet64;
    if (SoftArith::nan64(a)) return a | SoftArith::kQuiet64;
    const auto d = [](std::uint64_t bits) { return __longlong_as_double(static_cast<long long>(bits)); };
    return static_cast<std::uint64_t>(__double_as_longlong(__fma_rn(d(a), d(b), d(c))));
#else
    return SoftArith::dfma(a, b, c);
#endif
  }
  BP_HD static std::uint16_t double2half_rn(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__double2half(__longlong_as_double(static_cast<long long>(bits))));
#else
    return SoftArith::double2half_rn(bits);
#endif
  }
  BP_HD static std::uint16_t hdiv(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__hdiv(__ushort_as_half(a), __ushort_as_half(b)));
#else
    return SoftArith::hdiv(a, b);
#endif
  }
  BP_HD static std::uint16_t hsqrt(std::uint16_t a) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(::hsqrt(__ushort_as_half(a)));
#else
    return SoftArith::hsqrt(a);
#endif
  }
  BP_HD static std::uint16_t bdiv(std::uint16_t a, std::uint16_t b) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__hdiv(__ushort_as_bfloat16(a), __ushort_as_bfloat16(b)));
#else
    return SoftArith::bdiv(a, b);
#endif
  }
  BP_HD static std::uint16_t bsqrt(std::uint16_t a) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(::hsqrt(__ushort_as_bfloat16(a)));
#else
    return SoftArith::bsqrt(a);
#endif
  }
  BP_HD static std::uint32_t fdiv(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__fdiv_rn(__uint_as_float(a), __uint_as_float(b)));
#else
    return SoftArith::fdiv(a, b);
#endif
  }
  BP_HD static std::uint32_t fsqrt(std::uint32_t a) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(__fsqrt_rn(__uint_as_float(a)));
#else
    return SoftArith::fsqrt(a);
#endif
  }
  BP_HD static std::uint16_t double2bfloat16_rn(std::uint64_t bits) {
#if defined(__CUDA_ARCH__)
    return __bfloat16_as_ushort(__double2bfloat16(__longlong_as_double(static_cast<long long>(bits))));
#else
    return SoftArith::double2bfloat16_rn(bits);
#endif
  }
};

}  // namespace bitproof
