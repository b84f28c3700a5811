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

// |v| rounded to binary16's 11 significant bits (nearest even) with no
// exponent limit is below 2^-14: IEEE 754 tininess "after rounding", the test
// the H200's mul.rn.ftz.f16 applies (see SoftArith::hmul_ftz).
bool tiny_after_rounding(const Exact& v) {
  if (v.kind != Kind::kFinite) return false;
  oracle::Int n = v.mag;
  int exp2 = v.exp2;
  const int bits = static_cast<int>(boost::multiprecision::msb(n)) + 1;
  if (bits > 11) {
    const int drop = bits - 11;
    oracle::Int q = n >> drop;
    const oracle::Int rest = n - (q << drop);
    const oracle::Int half = oracle::Int{1} << (drop - 1);
    if (rest > half || (rest == half && (q & 1) != 0)) q += 1;
    n = q;
    exp2 += drop;
  }
  return static_cast<int>(boost::multiprecision::msb(n)) + exp2 < -14;
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
  const Exact product = oracle::mul(flushed(half(a)), flushed(half(b)));
  if (tiny_after_rounding(product)) return to_half(Exact::zero(product.negative), Rounding::kNearestEven);
  return to_half(product, Rounding::kNearestEven);
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
std::uint32_t OracleArith::fmul(std::uint32_t a, std::uint32_t b) {
  return rounded(FormatId::fp32,
                 oracle::mul(oracle::exact_of(FormatId::fp32, a), oracle::exact_of(FormatId::fp32, b)),
                 Rounding::kNearestEven);
}
std::uint32_t OracleArith::fadd(std::uint32_t a, std::uint32_t b) {
  return rounded(FormatId::fp32,
                 oracle::add(oracle::exact_of(FormatId::fp32, a), oracle::exact_of(FormatId::fp32, b)),
                 Rounding::kNearestEven);
}

std::uint16_t OracleArith::hsub(std::uint16_t a, std::uint16_t b) {
  Exact minus_b = half(b);
  minus_b.negative = !minus_b.negative;
  return to_half(oracle::add(half(a), minus_b), Rounding::kNearestEven);
}
std::uint16_t OracleArith::bmul(std::uint16_t a, std::uint16_t b) {
  return static_cast<std::uint16_t>(rounded(
      FormatId::bf16, oracle::mul(oracle::exact_of(FormatId::bf16, a), oracle::exact_of(FormatId::bf16, b)),
      Rounding::kNearestEven));
}
std::uint32_t OracleArith::ffma(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  const auto f = [](std::uint32_t bits) { return oracle::exact_of(FormatId::fp32, bits); };
  return rounded(FormatId::fp32, oracle::fma(f(a), f(b), f(c)), Rounding::kNearestEven);
}
std::uint16_t OracleArith::int2half_rn(std::uint32_t i) {
  // The int32 value, read through the oracle's own two's-complement decoding of an
  // int8..int32-wide integer: here the value is built directly from the bits.
  const bool negative = (i >> 31) != 0;
  const std::uint64_t magnitude = negative ? (std::uint64_t{1} << 32) - i : i;
  const Exact v = magnitude == 0 ? Exact::zero(false) : Exact{Kind::kFinite, negative, oracle::Int{magnitude}, 0};
  return to_half(v, Rounding::kNearestEven);
}

std::uint16_t OracleArith::badd(std::uint16_t a, std::uint16_t b) {
  return static_cast<std::uint16_t>(rounded(
      FormatId::bf16, oracle::add(oracle::exact_of(FormatId::bf16, a), oracle::exact_of(FormatId::bf16, b)),
      Rounding::kNearestEven));
}
std::uint16_t OracleArith::bsub(std::uint16_t a, std::uint16_t b) {
  Exact minus_b = oracle::exact_of(FormatId::bf16, b);
  minus_b.negative = !minus_b.negative;
  return static_cast<std::uint16_t>(
      rounded(FormatId::bf16, oracle::add(oracle::exact_of(FormatId::bf16, a), minus_b), Rounding::kNearestEven));
}
std::uint16_t OracleArith::bfma(std::uint16_t a, std::uint16_t b, std::uint16_t c) {
  const auto f = [](std::uint16_t bits) { return oracle::exact_of(FormatId::bf16, bits); };
  return static_cast<std::uint16_t>(
      rounded(FormatId::bf16, oracle::fma(f(a), f(b), f(c)), Rounding::kNearestEven));
}
std::uint32_t OracleArith::bfloat162float(std::uint16_t h) {
  return rounded(FormatId::fp32, oracle::exact_of(FormatId::bf16, h), Rounding::kNearestEven);
}
std::uint16_t OracleArith::float2bfloat16_rn(std::uint32_t f) {
  return static_cast<std::uint16_t>(rounded(FormatId::bf16, oracle::exact_of(FormatId::fp32, f), Rounding::kNearestEven));
}
std::uint32_t OracleArith::fadd_ro(std::uint32_t a, std::uint32_t b) {
  // Round to odd, by its definition: truncate, and set the last bit if anything was lost.
  const Exact sum = oracle::add(oracle::exact_of(FormatId::fp32, a), oracle::exact_of(FormatId::fp32, b));
  const oracle::Rounded truncated = oracle::round_to(FormatId::fp32, sum, Rounding::kTowardZero);
  return truncated.inexact ? (*truncated.code | 1u) : *truncated.code;
}

std::uint16_t OracleArith::hdiv(std::uint16_t a, std::uint16_t b) {
  return to_half(oracle::div(half(a), half(b)), Rounding::kNearestEven);
}
std::uint16_t OracleArith::hsqrt(std::uint16_t a) { return to_half(oracle::sqrt(half(a)), Rounding::kNearestEven); }
std::uint16_t OracleArith::bdiv(std::uint16_t a, std::uint16_t b) {
  return static_cast<std::uint16_t>(rounded(
      FormatId::bf16, oracle::div(oracle::exact_of(FormatId::bf16, a), oracle::exact_of(FormatId::bf16, b)),
      Rounding::kNearestEven));
}
std::uint16_t OracleArith::bsqrt(std::uint16_t a) {
  return static_cast<std::uint16_t>(
      rounded(FormatId::bf16, oracle::sqrt(oracle::exact_of(FormatId::bf16, a)), Rounding::kNearestEven));
}
std::uint32_t OracleArith::fdiv(std::uint32_t a, std::uint32_t b) {
  return rounded(FormatId::fp32,
                 oracle::div(oracle::exact_of(FormatId::fp32, a), oracle::exact_of(FormatId::fp32, b)),
                 Rounding::kNearestEven);
}
std::uint32_t OracleArith::fsqrt(std::uint32_t a) {
  return rounded(FormatId::fp32, oracle::sqrt(oracle::exact_of(FormatId::fp32, a)), Rounding::kNearestEven);
}

namespace {
constexpr int kDoubleExp = 11;
constexpr int kDoubleMan = 52;
Exact dbl(std::uint64_t bits) { return oracle::exact_of_ieee(bits, kDoubleExp, kDoubleMan); }
std::uint64_t to_double(const Exact& v) { return oracle::round_to_ieee(v, kDoubleExp, kDoubleMan, Rounding::kNearestEven); }
}  // namespace

// NaNs: the values are exact, the NaN bits the H200's (SoftArith states the
// rules; written here again from the measurements, as field arithmetic).
namespace {
constexpr std::uint64_t kDoubleQuiet = std::uint64_t{1} << (kDoubleMan - 1);
bool is_nan_double(std::uint64_t d) { return dbl(d).kind == Kind::kNaN; }
std::uint64_t quieted(std::uint64_t d) { return d | kDoubleQuiet; }
// A binary64 NaN narrowed to a format of `man` mantissa bits: sign, all-ones
// exponent, the payload's top `man` bits, the quiet bit.
std::uint16_t narrowed_nan(std::uint64_t d, int exp, int man) {
  const std::uint64_t sign = d >> 63;
  const std::uint64_t top = (d & ((std::uint64_t{1} << kDoubleMan) - 1)) >> (kDoubleMan - man);
  return static_cast<std::uint16_t>(sign << (exp + man) | ((std::uint64_t{1} << exp) - 1) << man |
                                    std::uint64_t{1} << (man - 1) | top);
}
}  // namespace

std::uint64_t OracleArith::half2double(std::uint16_t h) {
  if (half(h).kind == Kind::kNaN) return 0x7FFFFFFFE0000000ull;  // __half2float gives 0x7FFFFFFF for every NaN
  return to_double(half(h));
}
std::uint64_t OracleArith::bfloat162double(std::uint16_t h) {
  if (oracle::exact_of(FormatId::bf16, h).kind == Kind::kNaN) {
    const std::uint64_t sign = h >> 15, payload = h & 0x7Fu;
    return quieted(sign << 63 | std::uint64_t{0x7FF} << kDoubleMan | payload << (kDoubleMan - 7));
  }
  return to_double(oracle::exact_of(FormatId::bf16, h));
}
std::uint64_t OracleArith::dfma(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  for (std::uint64_t x : {b, c, a}) {  // the sweep kernels' operand order (SoftArith::dfma)
    if (is_nan_double(x)) return quieted(x);
  }
  const Exact r = oracle::fma(dbl(a), dbl(b), dbl(c));
  if (r.kind == Kind::kNaN) return std::uint64_t{0xFFF8} << 48;  // invalid: the negative default NaN
  return to_double(r);
}
std::uint16_t OracleArith::double2half_rn(std::uint64_t d) {
  if (is_nan_double(d)) return narrowed_nan(d, 5, 10);
  return to_half(dbl(d), Rounding::kNearestEven);
}
std::uint16_t OracleArith::double2bfloat16_rn(std::uint64_t d) {
  if (is_nan_double(d)) return narrowed_nan(d, 8, 7);
  return static_cast<std::uint16_t>(rounded(FormatId::bf16, dbl(d), Rounding::kNearestEven));
}

}  // namespace bitproof
