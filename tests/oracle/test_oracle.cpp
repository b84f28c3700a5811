// The oracle's correct rounding, checked against the compiler's own binary16
// conversion (every FP16 midpoint and its neighbours, a million random FP32
// values), against its own definition for toward-zero, and by round trips
// through every code of every format.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

#include "oracle/exact.hpp"
#include "compiler_half.hpp"

using namespace bitproof;
using oracle::Exact;
using oracle::Rounding;

namespace {

std::uint16_t compiler_half_bits(float x) {
  const auto h = static_cast<CompilerHalf>(x);  // the compiler's round-to-nearest-even
  std::uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

std::uint32_t oracle_half(float x, Rounding mode) {
  return *oracle::round_to(FormatId::fp16, oracle::exact_of(FormatId::fp32, std::bit_cast<std::uint32_t>(x)), mode).code;
}

double half_value(std::uint32_t bits) {
  const auto b = static_cast<std::uint16_t>(bits);
  CompilerHalf h;
  std::memcpy(&h, &b, 2);
  return static_cast<double>(h);
}

// Compares the oracle with the compiler on x; counts and reports mismatches.
void expect_like_compiler(float x, int& mismatches) {
  const std::uint32_t want = compiler_half_bits(x);
  const std::uint32_t got = oracle_half(x, Rounding::kNearestEven);
  const bool both_nan = std::isnan(x) && std::isnan(half_value(got));
  if (got != want && !both_nan && ++mismatches <= 8) {
    FAIL_CHECK(fmt::format("fp32 0x{:08X} ({}) -> oracle 0x{:04X}, compiler 0x{:04X}", std::bit_cast<std::uint32_t>(x),
                           x, got, want));
  }
}

// Toward zero, by definition: the largest-magnitude code not above |x|.
void expect_toward_zero(float x, int& mismatches) {
  const std::uint32_t got = oracle_half(x, Rounding::kTowardZero);
  const double mag = std::fabs(static_cast<double>(x));
  const double below = std::fabs(half_value(got));
  const std::uint32_t next = (got & 0x7FFF) + 1;
  const double above = next >= 0x7C00 ? INFINITY : half_value(next);
  const bool sign_ok = std::signbit(half_value(got)) == std::signbit(x);
  const bool ok = below <= mag && (mag < above || (got & 0x7FFF) == 0x7BFF) && sign_ok;
  if (!ok && ++mismatches <= 8) {
    FAIL_CHECK(fmt::format("toward zero: fp32 {} -> 0x{:04X}", x, got));
  }
}

}  // namespace

TEST_SUITE("oracle") {
  TEST_CASE("every FP16 midpoint and its neighbours round as the compiler's _Float16 does") {
    int mismatches = 0;
    int rz_mismatches = 0;
    for (std::uint32_t code = 0; code < 0x7C00; ++code) {  // every finite non-negative half, up to max
      for (const float sign : {1.0f, -1.0f}) {
        const double lo = half_value(code);
        const double hi = code + 1 == 0x7C00 ? 65520.0 : half_value(code + 1);  // 65520: the overflow midpoint
        const auto mid = static_cast<float>((lo + hi) / 2);  // exact: 12 significant bits
        for (const float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), static_cast<float>(lo)}) {
          expect_like_compiler(sign * x, mismatches);
          expect_toward_zero(sign * x, rz_mismatches);
        }
      }
    }
    CHECK(mismatches == 0);
    CHECK(rz_mismatches == 0);
  }

  TEST_CASE("a million random FP32 values round as the compiler's _Float16 does") {
    std::mt19937_64 rng(20261129);
    int mismatches = 0;
    int rz_mismatches = 0;
    for (int i = 0; i < 1'000'000; ++i) {
      auto bits = static_cast<std::uint32_t>(rng());
      if (i % 2 == 0) bits = (bits & 0x807FFFFF) | ((100 + (bits >> 23) % 50) << 23);  // half the draws near FP16 range
      const float x = std::bit_cast<float>(bits);
      expect_like_compiler(x, mismatches);
      if (std::isfinite(x)) expect_toward_zero(x, rz_mismatches);
    }
    CHECK(mismatches == 0);
    CHECK(rz_mismatches == 0);
  }

  TEST_CASE("every code of every format survives a round trip") {
    for (std::size_t i = 0; i < kFormats.size(); ++i) {
      const auto id = static_cast<FormatId>(i);
      const FormatSpec& f = kFormats[i];
      const std::uint64_t step = f.bits > 16 ? 65537 : 1;
      for (std::uint64_t c = 0; c < f.code_count(); c += step) {
        const auto code = static_cast<std::uint32_t>(c);
        const Exact v = oracle::exact_of(id, code);
        for (Rounding mode : {Rounding::kNearestEven, Rounding::kTowardZero}) {
          const oracle::Rounded r = oracle::round_to(id, v, mode);
          REQUIRE(r.code.has_value());
          CHECK_FALSE(r.inexact);
          if (v.kind == Kind::kNaN) {
            CHECK(decode(f, *r.code).kind == Kind::kNaN);
          } else {
            CHECK_MESSAGE(*r.code == code, fmt::format("{} 0x{:X} -> 0x{:X}", f.name, code, *r.code));
          }
        }
      }
    }
  }

  TEST_CASE("midpoints between neighbouring codes of small formats go to the even code") {
    for (FormatId id : {FormatId::e2m1, FormatId::e4m3, FormatId::e5m2, FormatId::e2m3, FormatId::e3m2}) {
      const FormatSpec& f = spec_of(id);
      for (std::uint32_t code = 0; code < f.max_finite_code(); ++code) {
        const Exact lo = oracle::exact_of(id, code);
        const Exact hi = oracle::exact_of(id, code + 1);
        if (hi.kind != Kind::kFinite) continue;
        const Exact mid = oracle::mul(oracle::add(lo, hi), oracle::exact_of(FormatId::fp32, 0x3F000000));  // × 0.5
        const std::uint32_t even = (code % 2 == 0) ? code : code + 1;
        CHECK_MESSAGE(*oracle::round_to(id, mid, Rounding::kNearestEven).code == even, fmt::format("{} {}", f.name, code));
        CHECK(*oracle::round_to(id, mid, Rounding::kTowardZero).code == code);
      }
    }
  }

  TEST_CASE("overflow: Inf where the format has it, largest finite toward zero or when saturating") {
    const Exact big = oracle::exact_of(FormatId::fp32, std::bit_cast<std::uint32_t>(70000.0f));
    CHECK(*oracle::round_to(FormatId::fp16, big, Rounding::kNearestEven).code == 0x7C00);
    CHECK(*oracle::round_to(FormatId::fp16, big, Rounding::kTowardZero).code == 0x7BFF);
    CHECK(*oracle::round_to(FormatId::fp16, big, Rounding::kNearestEven, oracle::Overflow::kSaturate).code == 0x7BFF);
    const Exact just_below = oracle::exact_of(FormatId::fp32, std::bit_cast<std::uint32_t>(65519.996f));
    CHECK(*oracle::round_to(FormatId::fp16, just_below, Rounding::kNearestEven).code == 0x7BFF);
    const Exact e4m3_big = oracle::exact_of(FormatId::fp32, std::bit_cast<std::uint32_t>(480.0f));  // midpoint 448/512
    CHECK(*oracle::round_to(FormatId::e4m3, e4m3_big, Rounding::kNearestEven).code == 0x7F);  // NaN: no Inf
    CHECK(*oracle::round_to(FormatId::e4m3, e4m3_big, Rounding::kNearestEven, oracle::Overflow::kSaturate).code == 0x7E);
    CHECK_FALSE(oracle::round_to(FormatId::e2m1, big, Rounding::kNearestEven).code.has_value());
    CHECK(*oracle::round_to(FormatId::e2m1, big, Rounding::kNearestEven, oracle::Overflow::kSaturate).code == 0b0'11'1);
  }

  TEST_CASE("exact operations: signs of zero, Inf and NaN rules") {
    const Exact one = oracle::exact_of(FormatId::fp16, 0x3C00);
    const Exact minus_one = oracle::exact_of(FormatId::fp16, 0xBC00);
    const Exact inf = Exact::inf(false);
    CHECK(oracle::add(one, minus_one).kind == Kind::kZero);
    CHECK_FALSE(oracle::add(one, minus_one).negative);  // x - x = +0
    CHECK(oracle::add(Exact::zero(true), Exact::zero(true)).negative);
    CHECK_FALSE(oracle::add(Exact::zero(true), Exact::zero(false)).negative);
    CHECK(oracle::mul(Exact::zero(false), inf).kind == Kind::kNaN);
    CHECK(oracle::add(inf, Exact::inf(true)).kind == Kind::kNaN);
    CHECK(oracle::mul(minus_one, Exact::zero(false)).negative);
    CHECK(oracle::same_value(oracle::fma(one, one, minus_one), Exact::zero(false)));
    CHECK_FALSE(oracle::same_value(Exact::zero(true), Exact::zero(false)));
  }

  TEST_CASE("unrepresentable: negative into unsigned, below the least UE8M0, NaN into NaN-less formats") {
    CHECK_FALSE(oracle::round_to(FormatId::ue8m0, oracle::exact_of(FormatId::fp16, 0xBC00), Rounding::kNearestEven).code);
    CHECK_FALSE(oracle::round_to(FormatId::ue8m0, Exact::zero(false), Rounding::kNearestEven).code);
    CHECK_FALSE(oracle::round_to(FormatId::e2m1, Exact::nan(), Rounding::kNearestEven).code);
    CHECK(*oracle::round_to(FormatId::ue8m0, oracle::exact_of(FormatId::fp16, 0x3C00), Rounding::kNearestEven).code == 127);
  }

  TEST_CASE("to_string") {
    CHECK(oracle::to_string(oracle::exact_of(FormatId::fp16, 0x3800)) == "0.5");
    CHECK(oracle::to_string(oracle::exact_of(FormatId::fp16, 0x8000)) == "-0");
    CHECK(oracle::to_string(Exact::nan()) == "nan");
    CHECK(oracle::to_string(Exact::inf(true)) == "-inf");
    const Exact wide = oracle::mul(oracle::exact_of(FormatId::fp32, 0x3F800001), oracle::exact_of(FormatId::fp32, 0x3F800001));
    CHECK(oracle::to_string(oracle::mul(wide, wide)).find("*2^") != std::string::npos);  // 93 bits: not a double
  }
}
