// HostFloatArith: the SoftArith policy with binary32 add, multiply and fused
// multiply-add done by the host CPU's own IEEE 754 unit (SSE/AVX on x86-64,
// round to nearest even, subnormals kept: FTZ and DAZ off), every NaN result
// made the canonical 0x7FFFFFFF as the soft model and the GPU make it. IEEE
// 754 fixes every other bit of these three operations, so the bits are the soft
// model's; host_float_agrees() checks that on this machine before it is used
// (edge operands × edge operands and random triples), and the tests check it
// operator by operator. Everything else (FP16 conversions, recipes) is SoftArith.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "arith/soft_arith.hpp"

namespace bitproof {

struct HostFloatArith : SoftArith {
  static constexpr const char* kName = "host-float";
  static std::uint32_t canonical(float r) {
    return std::isnan(r) ? 0x7FFFFFFFu : std::bit_cast<std::uint32_t>(r);
  }
  static std::uint32_t ffma(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return canonical(std::fma(std::bit_cast<float>(a), std::bit_cast<float>(b), std::bit_cast<float>(c)));
  }
  static std::uint32_t fadd(std::uint32_t a, std::uint32_t b) {
    return canonical(std::bit_cast<float>(a) + std::bit_cast<float>(b));
  }
  static std::uint32_t fmul(std::uint32_t a, std::uint32_t b) {
    return canonical(std::bit_cast<float>(a) * std::bit_cast<float>(b));
  }
};

struct HostFloatCheck {
  bool agrees = false;
  std::uint64_t operations = 0;  // compared with SoftArith
  std::string detail;            // the first disagreement, or why the check was not run
};

// HostFloatArith against SoftArith on this machine: FTZ/DAZ must be off, and
// ffma, fadd and fmul must give the soft model's bits on every pair and triple
// drawn from a set of edge operands (zeros, subnormals, normals at the binade
// edges, the largest finite, Inf, NaN) and on random triples. Run once.
[[nodiscard]] const HostFloatCheck& host_float_agrees();

}  // namespace bitproof
