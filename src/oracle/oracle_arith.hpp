// The oracle as an arithmetic policy: the same names as SoftArith (see
// src/arith/soft_arith.hpp for the contract), each computed exactly with
// arbitrary-precision integers and rounded once by oracle::round_to. Running a
// recipe with this policy is the second, independent CPU witness of its bits.
// Host only.
#pragma once

#include <cstdint>

#include "oracle/exact.hpp"

namespace bitproof {

struct OracleArith {
  static constexpr const char* kName = "oracle";
  // Every operation exact, rounded once: reference recipes that compute their intent
  // another way (exact.fma_fp16) take this policy's operation as their witness.
  static constexpr bool kExact = true;

  static std::uint16_t hmul(std::uint16_t a, std::uint16_t b);
  static std::uint16_t hmul_rz(std::uint16_t a, std::uint16_t b);
  static std::uint16_t hmul_ftz(std::uint16_t a, std::uint16_t b);
  static std::uint16_t hadd(std::uint16_t a, std::uint16_t b);
  static std::uint16_t hfma(std::uint16_t a, std::uint16_t b, std::uint16_t c);
  static std::uint16_t float2half_rn(std::uint32_t f);
  static std::uint16_t float2half_rz(std::uint32_t f);
  static std::uint32_t half2float(std::uint16_t h);
  static std::uint32_t fadd(std::uint32_t a, std::uint32_t b);
  static std::uint32_t fmul(std::uint32_t a, std::uint32_t b);
  static std::uint16_t hsub(std::uint16_t a, std::uint16_t b);
  static std::uint16_t bmul(std::uint16_t a, std::uint16_t b);
  static std::uint32_t ffma(std::uint32_t a, std::uint32_t b, std::uint32_t c);
  static std::uint16_t int2half_rn(std::uint32_t i);
  static std::uint16_t badd(std::uint16_t a, std::uint16_t b);
  static std::uint16_t bsub(std::uint16_t a, std::uint16_t b);
  static std::uint16_t bfma(std::uint16_t a, std::uint16_t b, std::uint16_t c);
  static std::uint32_t bfloat162float(std::uint16_t h);
  static std::uint16_t float2bfloat16_rn(std::uint32_t f);
  static std::uint32_t fadd_ro(std::uint32_t a, std::uint32_t b);
  static std::uint64_t half2double(std::uint16_t h);
  static std::uint64_t bfloat162double(std::uint16_t h);
  static std::uint64_t dfma(std::uint64_t a, std::uint64_t b, std::uint64_t c);
  static std::uint16_t double2half_rn(std::uint64_t d);
  static std::uint16_t double2bfloat16_rn(std::uint64_t d);
  static std::uint16_t hdiv(std::uint16_t a, std::uint16_t b);
  static std::uint16_t hsqrt(std::uint16_t a);
  static std::uint16_t bdiv(std::uint16_t a, std::uint16_t b);
  static std::uint16_t bsqrt(std::uint16_t a);
  static std::uint32_t fdiv(std::uint32_t a, std::uint32_t b);
  static std::uint32_t fsqrt(std::uint32_t a);
};

}  // namespace bitproof
