#include "oracle/oracle_arith.hpp"

namespace bitproof {
namespace {

using oracle::Exact;
using oracle::Rounding;

std::uint32_t rounded(FormatId format, const Exact& value, Rounding mode) {
  // Every IEEE format holds every exact result (Inf and NaN included).
  return *oracle::round_to(format, value, mode).code;
}

Exact half(std::uint16_t bits) { return oracle::exact_of(FormatId::fp16, bits); }

// |v| below the least normal binary16 (2^-14) becomes a zero of the same sign.
Exact flushed(const Exact& v) {
  if (v.kind != Kind::kFinite) return v;
  const int top_exp = static_cast<int>(boost::multiprecision::msb(v.mag)) + v.exp2;
  return top_exp < -14 ? Exact::zero(v.negative) : v;
}

std::uint16_t to_half(const Exact& v, Rounding mode) {
  return static_cast<std::uint16_t>(rounded(FormatId::fp16, v, mode));
}

}  // namespace

std::uint16_t OracleArith::hmul(std::uint16_t a, std::uint16_t b) {
  return to_half(oracle::mul(half(a), half(b)), Rounding::kNearestEven);
}
std::uint16_t OracleArith::hmul_rz(std::uint16_t a, std::uint16_t b) {
  return to_half(oracle::mul(half(a), half(b)), Rounding::kTowardZero);
}
std::uint16_t OracleArith::hmul_ftz(std::uint16_t a, std::uint16_t b) {
  const std::uint16_t product = to_half(oracle::mul(flushed(half(a)), flushed(half(b))), Rounding::kNearestEven);
  return to_half(flushed(half(product)), Rounding::kNearestEven);
}
std::uint16_t OracleArith::hadd(std::uint16_t a, std::uint16_t b) {
  return to_half(oracle::add(half(a), half(b)), Rounding::kNearestEven);
}
std::uint16_t OracleArith::hfma(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
  return to_half(oracle::fma(half(a), half(b), half(c)), Rounding::kNearestEven);
}
std::uint16_t OracleArith::float2half_rn(std::uint32_t f) {
  return to_half(oracle::exact_of(FormatId::fp32, f), Rounding::kNearestEven);
}
std::uint16_t OracleArith::float2half_rz(std::uint32_t f) {
  return to_half(oracle::exact_of(FormatId::fp32, f), Rounding::kTowardZero);
}
std::uint32_t OracleArith::half2float(std::uint16_t h) {
  return rounded(FormatId::fp32, half(h), Rounding::kNearestEven);
}

}  // namespace bitproof
