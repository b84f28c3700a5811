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
//   float2half_rn(f), float2half_rz(f)   binary32 -> binary16
//   half2float(h)   binary16 -> binary32, exact
//   fmul(a, b)      binary32 multiply, round-to-nearest-even (__fmul_rn); NaN
//                   results are the canonical 0x7FFFFFFF
#pragma once

#include <cstdint>

#include "arith/soft_float.hpp"

namespace bitproof {

struct SoftArith {
  static constexpr const char* kName = "soft";
  using H = soft::Binary16;
  using F = soft::Binary32;

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
  BP_HD static constexpr std::uint16_t float2half_rn(std::uint32_t f) {
    return static_cast<std::uint16_t>(soft::convert<H, F>(f, soft::Round::kNearestEven));
  }
  BP_HD static constexpr std::uint16_t float2half_rz(std::uint32_t f) {
    return static_cast<std::uint16_t>(soft::convert<H, F>(f, soft::Round::kTowardZero));
  }
  BP_HD static constexpr std::uint32_t half2float(std::uint16_t h) {
    return soft::convert<F, H>(h, soft::Round::kNearestEven);
  }
  BP_HD static constexpr std::uint32_t fmul(std::uint32_t a, std::uint32_t b) {
    return soft::mul<F>(a, b, soft::Round::kNearestEven);
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
static_assert(SoftArith::float2half_rn(0x3F800000u) == 0x3C00);
static_assert(SoftArith::half2float(0x0001) == 0x33800000u);  // 2^-24
static_assert(SoftArith::fmul(0x3FC00000u, 0x40000000u) == 0x40400000u);  // 1.5 * 2 = 3
static_assert(SoftArith::fmul(0x00000001u, 0x3F000000u) == 0x00000000u);  // 2^-149 * 0.5: tie -> even 0
static_assert(SoftArith::fmul(0x7F800000u, 0x00000000u) == 0x7FFFFFFFu);  // Inf * 0 = NaN

}  // namespace bitproof
