// The host arithmetic policy: the names every recipe calls, on raw bits,
// implemented by the bit-exact software model in soft_float.hpp. The device
// policy (kernels/device_arith.cuh) maps the same names to CUDA intrinsics.
//
// Policy contract (each static, each on raw bit patterns):
//   hmul(a, b)      binary16 multiply, round-to-nearest-even (__hmul)
//   hmul_rz(a, b)   binary16 multiply, round toward zero
//   hmul_ftz(a, b)  binary16 multiply with subnormal inputs and result flushed to a
//                   zero of the product's sign. A result is flushed when it is tiny
//                   after rounding to 11 significant bits with an unbounded exponent
//                   (IEEE 754 "after rounding"): below 2^-14 there, even where the
//                   ordinary rounding would reach 2^-14. Measured on an H200
//                   (mul.rn.ftz.f16): it flushes exactly those 19376 extra FP16 pairs.
//   hadd(a, b)      binary16 add, RNE (__hadd)
//   hfma(a, b, c)   binary16 fused multiply-add, RNE (__hfma)
//   hfma2(a, b, c)  hfma on each 16-bit half of 32-bit words (__hfma2): low half with
//                   low halves, high with high
//   float2half_rn(f), float2half_rz(f)   binary32 -> binary16
//   half2float(h)   binary16 -> binary32, exact
//   fadd(a, b)      binary32 add, round-to-nearest-even (__fadd_rn); NaN results are
//                   the canonical 0x7FFFFFFF
//   fmul(a, b)      binary32 multiply, round-to-nearest-even (__fmul_rn); NaN
//                   results are the canonical 0x7FFFFFFF
//   hsub(a, b)      binary16 subtract, RNE (__hsub)
//   bmul(a, b)      bfloat16 multiply, RNE, subnormals kept (__hmul on __nv_bfloat16);
//                   NaN results are the canonical 0x7FFF
//   ffma(a, b, c)   binary32 fused multiply-add, one rounding, RNE (__fmaf_rn)
//   int2half_rn(i)  int32 (two's complement bits) -> binary16, RNE (__int2half_rn)
//   badd(a, b), bsub(a, b)   bfloat16 add / subtract, RNE (__hadd / __hsub on __nv_bfloat16)
//   bfma(a, b, c)   bfloat16 fused multiply-add, RNE, subnormals kept (__hfma on __nv_bfloat16)
//   bfloat162float(h), float2bfloat16_rn(f)   bfloat16 <-> binary32 (the first exact)
//   fadd_ro(a, b)   binary32 add rounded to odd (no CUDA rounding mode: see device_arith.cuh)
//   half2double(h), bfloat162double(h)        -> binary64 bits (uint64_t), exact
//   dfma(a, b, c)   binary64 fused multiply-add, RNE (__fma_rn)
//   double2half_rn(d), double2bfloat16_rn(d)  binary64 -> binary16 / bfloat16, RNE
//                   (__double2half, __double2bfloat16: cvt.rn.f16.f64 / cvt.rn.bf16.f64)
//   hdiv(a, b), hsqrt(a)   binary16 divide and square root, correctly rounded (RNE): the
//                   intent of __hdiv and hsqrt, which CUDA computes from approximate FP32
//                   reciprocals and roots (device_arith.cuh); the GPU's model sweep says
//                   whether the hardware gives these bits
//   bdiv(a, b), bsqrt(a)   the same for bfloat16 (__hdiv, hsqrt on __nv_bfloat16)
//   fdiv(a, b), fsqrt(a)   binary32 divide and square root, RNE (__fdiv_rn, __fsqrt_rn);
//                   NaN results are the canonical 0x7FFFFFFF
#pragma once

#include <cstdint>

#include "arith/soft_float.hpp"

namespace bitproof {

struct SoftArith {
  static constexpr const char* kName = "soft";
  using H = soft::Binary16;
  using F = soft::Binary32;
  using B = soft::Bfloat16;
  using D = soft::Binary64;

  BP_HD static constexpr std::uint16_t hmul(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::mul<H>(a, b, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t hmul_rz(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::mul<H>(a, b, soft::Round::kTowardZero));
  }
  BP_HD static constexpr std::uint16_t hmul_ftz(std::uint16_t a, std::uint16_t b) {
    const std::uint32_t x = soft::flush_subnormal<H>(a);
    const std::uint32_t y = soft::flush_subnormal<H>(b);
    const std::uint32_t product = soft::mul<H>(x, y, soft::Round::kNearestEven);
    // Tininess after rounding: the same product rounded to 11 bits in a format
    // with binary16's precision and an 8-bit exponent, compared with 2^-14.
    using Wide = soft::Ieee<8, 10>;
    const std::uint32_t wide = soft::mul<Wide>(soft::convert<Wide, H>(x, soft::Round::kNearestEven),
                                               soft::convert<Wide, H>(y, soft::Round::kNearestEven),
                                               soft::Round::kNearestEven);
    const std::uint32_t wide_exp = (wide >> Wide::kMan) & Wide::kExpAllOnes;
    const bool tiny = wide_exp != Wide::kExpAllOnes && wide_exp < static_cast<std::uint32_t>(Wide::kBias - 14);
    return static_cast<std::uint16_t>(tiny ? (product & H::kSign) : product);
  }
  BP_HD static constexpr std::uint16_t hadd(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::add<H>(a, b, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t hfma(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
    return static_cast<std::uint16_t>(soft::fma<H>(a, b, c, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint32_t hfma2(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    const auto half = [](std::uint32_t w, int i) { return static_cast<std::uint16_t>(w >> (16 * i)); };
    return hfma(half(a, 0), half(b, 0), half(c, 0)) | (std::uint32_t{hfma(half(a, 1), half(b, 1), half(c, 1))} << 16);
  }
  BP_HD static constexpr std::uint16_t float2half_rn(std::uint32_t f) {
    return static_cast<std::uint16_t>(soft::convert<H, F>(f, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t float2half_rz(std::uint32_t f) {
    return static_cast<std::uint16_t>(soft::convert<H, F>(f, soft::Round::kTowardZero));
  }
  BP_HD static constexpr std::uint32_t half2float(std::uint16_t h) {
    return soft::convert<F, H>(h, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint32_t fadd(std::uint32_t a, std::uint32_t b) {
    return soft::add<F>(a, b, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint32_t fmul(std::uint32_t a, std::uint32_t b) {
    return soft::mul<F>(a, b, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint16_t hsub(std::uint16_t a, std::uint16_t b) {
    // a - b is a + (-b) exactly, signed zeros included (IEEE 754 §6.3).
    return static_cast<std::uint16_t>(soft::add<H>(a, b ^ H::kSign, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t bmul(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::mul<soft::Bfloat16>(a, b, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint32_t ffma(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return soft::fma<F>(a, b, c, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint16_t int2half_rn(std::uint32_t i) {
    const bool neg = (i >> 31) != 0;
    const std::uint64_t mag = neg ? (std::uint64_t{1} << 32) - i : i;
    if (mag == 0) return 0;
    return static_cast<std::uint16_t>(soft::round_pack<H>(neg, 0, mag, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t badd(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::add<B>(a, b, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t bsub(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::add<B>(a, b ^ B::kSign, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t bfma(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
    return static_cast<std::uint16_t>(soft::fma<B>(a, b, c, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint32_t bfloat162float(std::uint16_t h) {
    return soft::convert<F, B>(h, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint16_t float2bfloat16_rn(std::uint32_t f) {
    return static_cast<std::uint16_t>(soft::convert<B, F>(f, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint32_t fadd_ro(std::uint32_t a, std::uint32_t b) {
    return soft::add<F>(a, b, soft::Round::kToOdd);
  }
  BP_HD static constexpr std::uint16_t hdiv(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::div<H>(a, b, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t hsqrt(std::uint16_t a) {
    return static_cast<std::uint16_t>(soft::sqrt<H>(a, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t bdiv(std::uint16_t a, std::uint16_t b) {
    return static_cast<std::uint16_t>(soft::div<B>(a, b, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t bsqrt(std::uint16_t a) {
    return static_cast<std::uint16_t>(soft::sqrt<B>(a, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint32_t fdiv(std::uint32_t a, std::uint32_t b) {
    return soft::div<F>(a, b, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint32_t fsqrt(std::uint32_t a) { return soft::sqrt<F>(a, soft::Round::kNearestEven); }
  // The binary64 path's NaNs are the H200's (sm_90, measured with run-time
  // inputs; tests/arith/test_fma_arith.cpp holds the measurements):
  //   (double)__half2float(h)     every NaN becomes 0x7FFFFFFFE0000000 (__half2float's 0x7FFFFFFF)
  //   (double)__bfloat162float(h) sign and payload kept, quiet bit set
  //   __fma_rn                    the first NaN of b, c, a, quieted; an invalid operation
  //                               (Inf x 0, Inf - Inf) gives 0xFFF8000000000000, negative.
  //                               The hardware takes the first NaN of its operands 0, 2, 1;
  //                               which multiplicand is operand 0 is the compiler's choice
  //                               and differs from kernel to kernel, so DeviceArith::dfma
  //                               takes NaN operands in code, in this order
  //   __double2half / bfloat16    sign and the payload's top bits kept (truncated), quiet bit set
  BP_HD static constexpr bool nan64(std::uint64_t d) {
    return (d & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (d & 0x000FFFFFFFFFFFFFull) != 0;
  }
  static constexpr std::uint64_t kQuiet64 = std::uint64_t{1} << 51;
  BP_HD static constexpr std::uint64_t half2double(std::uint16_t h) {
    if ((h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0) return 0x7FFFFFFFE0000000ull;
    return soft::convert<D, H>(h, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint64_t bfloat162double(std::uint16_t h) {
    if ((h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0) {
      return (std::uint64_t{h} >> 15 << 63) | 0x7FF0000000000000ull | kQuiet64 | (std::uint64_t{h} & 0x7F) << 45;
    }
    return soft::convert<D, B>(h, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint64_t dfma(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
    if (nan64(b)) return b | kQuiet64;
    if (nan64(c)) return c | kQuiet64;
    if (nan64(a)) return a | kQuiet64;
    const std::uint64_t r = soft::fma<D>(a, b, c, soft::Round::kNearestEven);
    return nan64(r) ? 0xFFF8000000000000ull : r;
  }
  BP_HD static constexpr std::uint16_t double2half_rn(std::uint64_t d) {
    if (nan64(d)) return static_cast<std::uint16_t>((d >> 48 & 0x8000) | 0x7E00 | (d >> 42 & 0x03FF));
    return static_cast<std::uint16_t>(soft::convert<H, D>(d, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t double2bfloat16_rn(std::uint64_t d) {
    if (nan64(d)) return static_cast<std::uint16_t>((d >> 48 & 0x8000) | 0x7FC0 | (d >> 45 & 0x007F));
    return static_cast<std::uint16_t>(soft::convert<B, D>(d, soft::Round::kNearestEven));
  }
};

// A few facts the model must get right, checked at compile time.
static_assert(SoftArith::hmul(0x3C00, 0x3C00) == 0x3C00);  // 1 * 1 = 1
static_assert(SoftArith::hmul(0x0001, 0x3800) == 0x0000);  // 2^-24 * 0.5 = tie -> even 0
static_assert(SoftArith::hmul(0x0003, 0x3800) == 0x0002);  // 3*2^-25 = 1.5 quanta -> 2 quanta
static_assert(SoftArith::hmul(0x7BFF, 0x4000) == 0x7C00);  // 65504 * 2 -> Inf
static_assert(SoftArith::hmul_rz(0x7BFF, 0x4000) == 0x7BFF);
static_assert(SoftArith::hmul_ftz(0x3BFF, 0x0400) == 0x0000);  // (1-2^-11)·2^-14: tiny after rounding (H200)
static_assert(SoftArith::hmul_ftz(0xBC00, 0x0400) == 0x8400);  // -1 · 2^-14 stays
static_assert(SoftArith::hmul(0x3BFF, 0x0400) == 0x0400);      // the ordinary multiply rounds up to 2^-14
static_assert(SoftArith::hmul(0x0000, 0x7C00) == 0x7FFF);  // 0 * Inf = NaN
static_assert(SoftArith::hadd(0x3C00, 0xBC00) == 0x0000);  // 1 - 1 = +0
static_assert(SoftArith::hdiv(0x3C00, 0x4200) == 0x3555);  // 1/3 = 0.333251953125 (0b0'01101'0101010101)
static_assert(SoftArith::hdiv(0x4000, 0x3C00) == 0x4000);  // 2/1 = 2
static_assert(SoftArith::hdiv(0x3C00, 0x0000) == 0x7C00);  // 1/0 = +Inf
static_assert(SoftArith::hdiv(0x8000, 0x8000) == 0x7FFF);  // 0/0 = NaN
static_assert(SoftArith::hdiv(0x0001, 0x4000) == 0x0000);  // 2^-24 / 2 = 2^-25: a tie, to even 0
static_assert(SoftArith::hdiv(0x0003, 0x4000) == 0x0002);  // 3·2^-25: 1.5 quanta, to even 2
static_assert(SoftArith::hdiv(0x7BFF, 0x3800) == 0x7C00);  // 65504 / 0.5 = 131008: Inf
static_assert(SoftArith::hsqrt(0x4400) == 0x4000);         // √4 = 2
static_assert(SoftArith::hsqrt(0x4000) == 0x3DA8);         // √2 = 1.4140625 (0b0'01111'0110101000)
static_assert(SoftArith::hsqrt(0x8000) == 0x8000);         // √-0 = -0
static_assert(SoftArith::hsqrt(0xBC00) == 0x7FFF);         // √-1 = NaN
static_assert(SoftArith::hsqrt(0x0001) == 0x0C00);         // √2^-24 = 2^-12
static_assert(SoftArith::fdiv(0x3F800000u, 0x40400000u) == 0x3EAAAAABu);  // 1/3 in binary32, rounded up
static_assert(SoftArith::fsqrt(0x40000000u) == 0x3FB504F3u);             // √2 in binary32
static_assert(SoftArith::bdiv(0x3F80, 0x4040) == 0x3EAB);                 // 1/3 in bfloat16
static_assert(SoftArith::float2half_rn(0x3F800000u) == 0x3C00);
static_assert(SoftArith::half2float(0x0001) == 0x33800000u);  // 2^-24
static_assert(SoftArith::fmul(0x3FC00000u, 0x40000000u) == 0x40400000u);  // 1.5 * 2 = 3
static_assert(SoftArith::fmul(0x00000001u, 0x3F000000u) == 0x00000000u);  // 2^-149 * 0.5: tie -> even 0
static_assert(SoftArith::fmul(0x7F800000u, 0x00000000u) == 0x7FFFFFFFu);  // Inf * 0 = NaN
static_assert(SoftArith::fadd(0x3F800000u, 0xBF800000u) == 0x00000000u);  // 1 - 1 = +0
static_assert(SoftArith::fadd(0x4B800000u, 0x3F800000u) == 0x4B800000u);  // 2^24 + 1: tie -> even 2^24
static_assert(SoftArith::hsub(0x6409, 0x6408) == 0x3C00);                  // 1033 - 1032 = 1
static_assert(SoftArith::hsub(0x0000, 0x0000) == 0x0000);                  // +0 - +0 = +0
static_assert(SoftArith::bmul(0x0040, 0x7E80) == 0x3F00);                  // 2^-127 (subnormal) * 2^126 = 0.5
static_assert(SoftArith::ffma(0x3F800000u, 0x3F800000u, 0xBF800000u) == 0);  // 1 * 1 - 1 = +0
static_assert(SoftArith::int2half_rn(0xFFFFFFF8u) == 0xC800);              // -8
static_assert(SoftArith::int2half_rn(2049) == 0x6800);                     // 2049: tie -> even 2048
static_assert(SoftArith::hfma(0x520b, 0x00e9, 0x2ff6) == 0x3001);          // LLVM #98389: one rounding
static_assert(SoftArith::bfma(0x3F80, 0x3F80, 0xBF80) == 0x0000);          // 1 * 1 - 1 = +0
static_assert(SoftArith::fadd_ro(0x3F800000u, 0x33800000u) == 0x3F800001u);  // 1 + 2^-24: inexact -> odd
static_assert(SoftArith::fadd_ro(0x3F800000u, 0x34000000u) == 0x3F800001u);  // 1 + 2^-23: exact, odd already
static_assert(SoftArith::fadd_ro(0x3F800000u, 0x34800000u) == 0x3F800002u);  // 1 + 2^-22: exact, even kept
static_assert(SoftArith::half2double(0x0001) == 0x3E70000000000000ull);     // 2^-24
static_assert(SoftArith::dfma(0x3FF0000000000001ull, 0x3FEFFFFFFFFFFFFEull, 0xBFF0000000000000ull) ==
              0xB970000000000000ull);  // (1+u)(1-u) - 1 = -u^2 = -2^-104, u = 2^-52: lost by two roundings
static_assert(SoftArith::double2half_rn(0x3FF0020000000000ull) == 0x3C00);  // 1 + 2^-11: tie -> even 1

}  // namespace bitproof
