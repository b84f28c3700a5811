// The host arithmetic policy: the names every recipe calls, on raw bits,
// implemented by the bit-exact software model in soft_float.hpp. The device
// policy (kernels/device_arith.cuh) maps the same names to CUDA intrinsics.
//
// Policy contract (each static, each on raw bit patterns):
//   hmul(a, b)      binary16 multiply, round-to-nearest-even (__hmul)
//   hmul_rz(a, b)   binary16 multiply, round toward zero
//   hmul_ftz(a, b)  binary16 multiply with subnormal inputs and result flushed
//   hadd(a, b)      binary16 add, RNE (__hadd)
//   hfma(a, b, c)   binary16 fused multiply-add, RNE (__hfma)
//   float2half_rn(f), float2half_rz(f)   binary32 -> binary16
//   half2float(h)   binary16 -> binary32, exact
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
    const std::uint32_t product = soft::mul<H>(soft::flush_subnormal<H>(a), soft::flush_subnormal<H>(b),
                                               soft::Round::kNearestEven);
    return static_cast<std::uint16_t>(soft::flush_subnormal<H>(product));
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
};

// A few facts the model must get right, checked at compile time.
static_assert(SoftArith::hmul(0x3C00, 0x3C00) == 0x3C00);  // 1 * 1 = 1
static_assert(SoftArith::hmul(0x0001, 0x3800) == 0x0000);  // 2^-24 * 0.5 = tie -> even 0
static_assert(SoftArith::hmul(0x0003, 0x3800) == 0x0002);  // 3*2^-25 = 1.5 quanta -> 2 quanta
static_assert(SoftArith::hmul(0x7BFF, 0x4000) == 0x7C00);  // 65504 * 2 -> Inf
static_assert(SoftArith::hmul_rz(0x7BFF, 0x4000) == 0x7BFF);
static_assert(SoftArith::hmul(0x0000, 0x7C00) == 0x7FFF);  // 0 * Inf = NaN
static_assert(SoftArith::hadd(0x3C00, 0xBC00) == 0x0000);  // 1 - 1 = +0
static_assert(SoftArith::float2half_rn(0x3F800000u) == 0x3C00);
static_assert(SoftArith::half2float(0x0001) == 0x33800000u);  // 2^-24

}  // namespace bitproof
