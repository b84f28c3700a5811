// The soft model's new operations for issue 18 against the oracle arithmetic
// (OracleArith: exact, rounded once by Boost.Multiprecision): FP32 add rounded to odd,
// the binary64 FMA (128-bit product path) and the binary64 conversions, the BF16
// FMA / add / subtract / conversions. Random operands from splitmix64 plus the edges;
// the first mismatches printed in hex.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <vector>

#include "arith/soft_arith.hpp"
#include "oracle/oracle_arith.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"

using namespace bitproof;

namespace {

template <class F>
std::uint64_t mismatches(const char* what, int n, std::uint64_t seed, F&& one) {
  std::uint64_t state = seed, bad = 0;
  for (int i = 0; i < n; i += static_cast<int>(test::sweep_stride())) {
    const std::uint64_t r = splitmix64_next(state);
    const std::uint64_t s = splitmix64_next(state);
    std::string why = one(r, s);
    if (!why.empty() && ++bad <= 4) MESSAGE(what, ": ", why);
  }
  return bad;
}

// A double with random sign and mantissa and an exponent field near `centre` (±span),
// sometimes zero, subnormal, Inf or NaN.
std::uint64_t random_double(std::uint64_t r, int centre, int span) {
  const std::uint64_t sign = (r >> 63) << 63;
  const std::uint64_t man = r & ((std::uint64_t{1} << 52) - 1);
  switch ((r >> 52) & 0x1F) {
    case 0: return sign;                     // ±0
    case 1: return sign | (man >> 3);        // subnormal
    case 2: return sign | (0x7FFull << 52);  // ±Inf
    case 3: return 0x7FF8000000000000ull;    // NaN
    default: break;
  }
  const int e = centre + static_cast<int>((r >> 57) % (2 * span + 1)) - span;
  return sign | (static_cast<std::uint64_t>(e < 1 ? 1 : (e > 2046 ? 2046 : e)) << 52) | man;
}

}  // namespace

TEST_SUITE("arith") {
  TEST_CASE("fadd_ro: FP32 add rounded to odd, soft ≡ oracle on 2^20 random pairs and the edges") {
    static_assert(SoftArith::fadd_ro(0x7F7FFFFFu, 0x7F7FFFFFu) == 0x7F7FFFFFu);  // overflow: the largest finite
    static_assert(SoftArith::fadd_ro(0x00000001u, 0x80000001u) == 0x00000000u);  // exact cancellation: +0
    static_assert(SoftArith::fadd_ro(0x3F800000u, 0x00000001u) == 0x3F800001u);  // 1 + 2^-149: inexact, odd
    const std::uint64_t bad = mismatches("fadd_ro", 1 << 20, 1, [](std::uint64_t r, std::uint64_t s) -> std::string {
      // b's exponent within ±40 of a's: the sums round; sometimes far apart (sticky only).
      const auto a = static_cast<std::uint32_t>(r);
      std::uint32_t b = static_cast<std::uint32_t>(s);
      if ((s >> 32) % 4 != 0) b = (b & 0x807FFFFFu) | ((((a >> 23) & 0xFF) + ((s >> 40) % 81) - 40) & 0xFF) << 23;
      const std::uint32_t soft = SoftArith::fadd_ro(a, b), oracle = OracleArith::fadd_ro(a, b);
      if (soft == oracle) return "";
      return fmt::format("{:#010x} + {:#010x}: soft {:#010x} oracle {:#010x}", a, b, soft, oracle);
    });
    CHECK(bad == 0);
  }

  TEST_CASE("dfma: binary64 FMA, soft ≡ oracle on 2^18 random triples (near and far exponents, cancellation)") {
    // (1 + 2^-52)(1 − 2^-52) − 1 = −2^-104: only a single rounding keeps it.
    CHECK(SoftArith::dfma(0x3FF0000000000001ull, 0x3FEFFFFFFFFFFFFEull, 0xBFF0000000000000ull) == 0xB970000000000000ull);
    CHECK(OracleArith::dfma(0x3FF0000000000001ull, 0x3FEFFFFFFFFFFFFEull, 0xBFF0000000000000ull) ==
          0xB970000000000000ull);
    const std::uint64_t bad = mismatches("dfma", 1 << 18, 2, [](std::uint64_t r, std::uint64_t s) -> std::string {
      const std::uint64_t a = random_double(r, 1023, 30);
      const std::uint64_t b = random_double(s, 1023, 30);
      const std::uint64_t t = splitmix64(r ^ s);
      std::uint64_t c = random_double(t, 1023, (t & 1) != 0 ? 60 : 1100);
      if ((t & 6) == 0) c = OracleArith::dfma(a, b, 0) ^ (std::uint64_t{1} << 63) ^ (t >> 61);  // near −a·b
      const std::uint64_t soft = SoftArith::dfma(a, b, c), oracle = OracleArith::dfma(a, b, c);
      if (soft == oracle) return "";
      return fmt::format("{:#018x} * {:#018x} + {:#018x}: soft {:#018x} oracle {:#018x}", a, b, c, soft, oracle);
    });
    CHECK(bad == 0);
  }

  TEST_CASE("binary64 and BF16 conversions and BF16 fma / add / sub: soft ≡ oracle") {
    std::uint64_t bad = 0;
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
      const auto x = static_cast<std::uint16_t>(h);
      bad += SoftArith::half2double(x) != OracleArith::half2double(x);
      bad += SoftArith::bfloat162double(x) != OracleArith::bfloat162double(x);
      bad += SoftArith::bfloat162float(x) != OracleArith::bfloat162float(x);
      bad += SoftArith::double2half_rn(SoftArith::half2double(x)) !=
             (((x & 0x7C00) == 0x7C00 && (x & 0x3FF) != 0) ? 0x7FFF : x);  // round trip; NaN canonical
    }
    CHECK(bad == 0);
    bad += mismatches("double2half/bf16", 1 << 20, 3, [](std::uint64_t r, std::uint64_t) -> std::string {
      const std::uint64_t d = random_double(r, 1023, 140);
      if (SoftArith::double2half_rn(d) != OracleArith::double2half_rn(d) ||
          SoftArith::double2bfloat16_rn(d) != OracleArith::double2bfloat16_rn(d)) {
        return fmt::format("{:#018x}: soft {:#06x}/{:#06x} oracle {:#06x}/{:#06x}", d, SoftArith::double2half_rn(d),
                           SoftArith::double2bfloat16_rn(d), OracleArith::double2half_rn(d),
                           OracleArith::double2bfloat16_rn(d));
      }
      return "";
    });
    bad += mismatches("float2bfloat16_rn", 1 << 20, 4, [](std::uint64_t r, std::uint64_t) -> std::string {
      const auto f = static_cast<std::uint32_t>(r);
      if (SoftArith::float2bfloat16_rn(f) == OracleArith::float2bfloat16_rn(f)) return "";
      return fmt::format("{:#010x}: soft {:#06x} oracle {:#06x}", f, SoftArith::float2bfloat16_rn(f),
                         OracleArith::float2bfloat16_rn(f));
    });
    bad += mismatches("bf16 fma/add/sub", 1 << 19, 5, [](std::uint64_t r, std::uint64_t) -> std::string {
      const auto a = static_cast<std::uint16_t>(r), b = static_cast<std::uint16_t>(r >> 16),
                 c = static_cast<std::uint16_t>(r >> 32);
      if (SoftArith::bfma(a, b, c) == OracleArith::bfma(a, b, c) && SoftArith::badd(a, b) == OracleArith::badd(a, b) &&
          SoftArith::bsub(a, c) == OracleArith::bsub(a, c)) {
        return "";
      }
      return fmt::format("{:#06x} {:#06x} {:#06x}: bfma soft {:#06x} oracle {:#06x}", a, b, c, SoftArith::bfma(a, b, c),
                         OracleArith::bfma(a, b, c));
    });
    CHECK(bad == 0);
  }

  TEST_CASE("negative control: round to odd differs from nearest even and from toward zero") {
    // 1 + 2^-24 + 2^-25 = 0x3F800000 + 1.5 ulp/2: nearest is 1 + 2^-23, truncation 1, odd 1 + 2^-23 (odd already).
    // 1 + 2^-24: nearest (tie) 1, truncation 1, odd 1 + 2^-23.
    CHECK(SoftArith::fadd(0x3F800000u, 0x33800000u) == 0x3F800000u);
    CHECK(SoftArith::fadd_ro(0x3F800000u, 0x33800000u) == 0x3F800001u);
    // 1 + 3·2^-24 = 1 + 1.5 ulp: nearest 1 + 2 ulp (even), odd 1 + 1 ulp.
    CHECK(SoftArith::fadd(0x3F800000u, 0x34400000u) == 0x3F800002u);
    CHECK(SoftArith::fadd_ro(0x3F800000u, 0x34400000u) == 0x3F800001u);
  }
}
