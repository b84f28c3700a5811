// The policy operations the catalogue added (hsub, bmul, ffma, int2half_rn): the soft
// model against the oracle and, where the compiler has the operation, against it too
// (_Float16 for binary16, std::fma for binary32, float products rounded by hand for bfloat16).
// The sanitizer build takes every k-th operand pair and random triple (tests/sweep_stride.hpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>

#include "arith/soft_arith.hpp"
#include "oracle/oracle_arith.hpp"
#include "compiler_half.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"

using namespace bitproof;
using bitproof::test::stepped_count;
using bitproof::test::sweep_stride;

namespace {

bool is_nan16(std::uint16_t b) { return (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0; }

// A deterministic spread of 16-bit operands: every 61st code plus the specials.
std::vector<std::uint16_t> sample16() {
  std::vector<std::uint16_t> v = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0x7BFF, 0x7C00, 0xFC00,
                                  0x7E00, 0x0040, 0x0080, 0x7F7F, 0x7F80, 0x3F80};
  for (std::uint32_t c = 0; c < 65536; c += 61) v.push_back(static_cast<std::uint16_t>(c));
  return v;
}

}  // namespace

TEST_SUITE("arith") {
  TEST_CASE("hsub: soft == oracle == compiler _Float16 subtraction") {
    const auto ops = sample16();
    int mismatches = 0;
    for (std::size_t i = 0; i < ops.size(); i += sweep_stride()) {
      const std::uint16_t a = ops[i];
      for (std::uint16_t b : ops) {
        const std::uint16_t soft = SoftArith::hsub(a, b);
        const std::uint16_t oracle = OracleArith::hsub(a, b);
        const std::uint16_t compiler = half_bits(static_cast<CompilerHalf>(half_of(a) - half_of(b)));
        const bool compiler_ok = soft == compiler || (is_nan16(soft) && is_nan16(compiler));
        if ((soft != oracle || !compiler_ok) && ++mismatches <= 8) {
          FAIL_CHECK(fmt::format("hsub(0x{:04X}, 0x{:04X}): soft 0x{:04X} oracle 0x{:04X} compiler 0x{:04X}", a, b,
                                 soft, oracle, compiler));
        }
      }
    }
    CHECK(mismatches == 0);
  }

  TEST_CASE("bmul: soft == oracle; finite results == the float product rounded to bfloat16 by hand") {
    const auto ops = sample16();
    int mismatches = 0;
    for (std::size_t i = 0; i < ops.size(); i += sweep_stride()) {
      const std::uint16_t a = ops[i];
      for (std::uint16_t b : ops) {
        const std::uint16_t soft = SoftArith::bmul(a, b);
        const std::uint16_t oracle = OracleArith::bmul(a, b);
        // The float product of two bfloat16 values is exact unless it is an FP32 subnormal;
        // compare only where it is a normal float (then RNE to 16 bits by hand).
        const float p = std::bit_cast<float>(std::uint32_t{a} << 16) * std::bit_cast<float>(std::uint32_t{b} << 16);
        bool compare = std::isnormal(p);
        std::uint16_t by_hand = 0;
        if (compare) {
          const std::uint32_t u = std::bit_cast<std::uint32_t>(p);
          by_hand = static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
          compare = (by_hand & 0x7F80) != 0x7F80 || (by_hand & 0x7F) == 0;  // not turned into a NaN pattern
        }
        if ((soft != oracle || (compare && soft != by_hand)) && ++mismatches <= 8) {
          FAIL_CHECK(fmt::format("bmul(0x{:04X}, 0x{:04X}): soft 0x{:04X} oracle 0x{:04X} by hand 0x{:04X}", a, b,
                                 soft, oracle, by_hand));
        }
      }
    }
    CHECK(mismatches == 0);
    CHECK(SoftArith::bmul(0x0040, 0x7E80) == 0x3F00);  // 2^-127 (subnormal) × 2^126 = 0.5
    CHECK(SoftArith::bmul(0x7F80, 0x0000) == 0x7FFF);  // Inf × 0: canonical NaN
  }

  TEST_CASE("ffma: soft == oracle == std::fma on 200000 random triples and the zero-sign cases") {
    std::uint64_t seed = 6;
    int mismatches = 0;
    auto check = [&](std::uint32_t a, std::uint32_t b, std::uint32_t c) {
      const std::uint32_t soft = SoftArith::ffma(a, b, c);
      const std::uint32_t oracle = OracleArith::ffma(a, b, c);
      const float libm = std::fma(std::bit_cast<float>(a), std::bit_cast<float>(b), std::bit_cast<float>(c));
      const bool libm_ok = std::isnan(libm) ? soft == 0x7FFFFFFFu : soft == std::bit_cast<std::uint32_t>(libm);
      if ((soft != oracle || !libm_ok) && ++mismatches <= 8) {
        FAIL_CHECK(fmt::format("ffma(0x{:08X}, 0x{:08X}, 0x{:08X}): soft 0x{:08X} oracle 0x{:08X} libm 0x{:08X}", a, b,
                               c, soft, oracle, std::bit_cast<std::uint32_t>(libm)));
      }
    };
    for (std::uint64_t i = 0; i < stepped_count(200000); ++i) {
      const std::uint64_t r = splitmix64_next(seed);
      // Operands 2^-15..2^16 and addends 2^-30..2^33: products and addends overlap, so
      // cancellation and sticky-bit rounding are exercised.
      const auto with_exponent = [](std::uint64_t bits, std::uint32_t base, std::uint32_t span) {
        return static_cast<std::uint32_t>((bits & 0x807FFFFFu) | ((base + ((bits >> 23) % span)) << 23));
      };
      const std::uint64_t r2 = splitmix64_next(seed);
      check(with_exponent(r, 112, 32), with_exponent(r >> 31, 112, 32), with_exponent(r2, 97, 64));
    }
    check(0x80000000u, 0x3F800000u, 0x80000000u);  // -0 × 1 + -0 = -0
    check(0x80000000u, 0x3F800000u, 0x00000000u);  // -0 × 1 + +0 = +0
    check(0x00000001u, 0x3F000000u, 0x80000000u);  // 2^-149 × 0.5 - 0: tie to even 0
    CHECK(mismatches == 0);
  }

  TEST_CASE("int2half_rn: soft == oracle == compiler conversion for every int in [-70000, 70000] and the ends") {
    int mismatches = 0;
    auto check = [&](std::int32_t i) {
      const auto bits = static_cast<std::uint32_t>(i);
      const std::uint16_t soft = SoftArith::int2half_rn(bits);
      const std::uint16_t oracle = OracleArith::int2half_rn(bits);
      const std::uint16_t compiler = half_bits(static_cast<CompilerHalf>(i));
      if ((soft != oracle || soft != compiler) && ++mismatches <= 8) {
        FAIL_CHECK(fmt::format("int2half_rn({}): soft 0x{:04X} oracle 0x{:04X} compiler 0x{:04X}", i, soft, oracle,
                               compiler));
      }
    };
    for (std::int32_t i = -70000; i <= 70000; i += static_cast<std::int32_t>(sweep_stride())) check(i);
    check(INT32_MIN);
    check(INT32_MAX);
    CHECK(mismatches == 0);
  }
}
