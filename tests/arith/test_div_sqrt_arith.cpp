// The soft model's divide and square root (soft_float.hpp div, sqrt; the policies'
// hdiv, hsqrt, bdiv, bsqrt, fdiv, fsqrt) against the oracle arithmetic (OracleArith:
// the Boost.Multiprecision quotient and root, 128 bits and a sticky bit, rounded once).
// Square roots of FP16 and BF16: every code. Divisions: every divisor against a set of
// dividends (2^24 pairs in each format), and 2^20 random FP32 pairs and roots. The
// first mismatches are printed in hex.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>

#include "arith/soft_arith.hpp"
#include "oracle/oracle_arith.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"

using namespace bitproof;

namespace {

// Counts mismatches of soft against oracle over the calls of `each` and prints the first few.
struct OpTally {
  const char* what;
  std::uint64_t cases = 0;
  std::uint64_t bad = 0;
  void check(std::uint32_t soft, std::uint32_t oracle, std::uint32_t a, std::uint32_t b = 0) {
    ++cases;
    if (soft != oracle && ++bad <= 4) {
      MESSAGE(fmt::format("{}: a=0x{:04X} b=0x{:04X}: soft 0x{:04X}, oracle 0x{:04X}", what, a, b, soft, oracle));
    }
  }
};

// Dividend i < 256 of a 16-bit format: both signs, 32 exponent fields stretched over the
// format's range (the all-ones field among them: Inf and NaN), four mantissas (zero, the
// least, a third, all ones): zeros and subnormals included.
std::uint32_t dividend(unsigned i, int man_bits) {
  const std::uint32_t man_mask = (1u << man_bits) - 1;
  const std::uint32_t mans[] = {0, 1, man_mask / 3, man_mask};
  const std::uint32_t field = (i >> 3) & 0x1F;
  const std::uint32_t exp_fields = (1u << (15 - man_bits)) - 1;
  const std::uint32_t e = field == 31 ? exp_fields : field * exp_fields / 31;
  return (i & 1) << 15 | e << man_bits | mans[(i >> 1) & 3];
}

}  // namespace

TEST_SUITE("arith") {
  TEST_CASE("hsqrt and bsqrt: soft ≡ oracle on every FP16 and BF16 code") {
    OpTally h{"hsqrt"}, b{"bsqrt"};
    for (std::uint32_t a = 0; a < 65536; ++a) {
      h.check(SoftArith::hsqrt(static_cast<std::uint16_t>(a)), OracleArith::hsqrt(static_cast<std::uint16_t>(a)), a);
      b.check(SoftArith::bsqrt(static_cast<std::uint16_t>(a)), OracleArith::bsqrt(static_cast<std::uint16_t>(a)), a);
    }
    CHECK(h.bad == 0);
    CHECK(b.bad == 0);
    CHECK(h.cases == 65536);
  }

  TEST_CASE("hdiv and bdiv: soft ≡ oracle on every divisor against 256 dividends (2^24 pairs each)") {
    OpTally h{"hdiv"}, b{"bdiv"};
    for (unsigned i = 0; i < 256; ++i) {
      const std::uint32_t ha = dividend(i, 10), ba = dividend(i, 7);
      for (std::uint32_t d = 0; d < 65536; d += test::sweep_stride()) {
        const auto x = static_cast<std::uint16_t>(d);
        h.check(SoftArith::hdiv(static_cast<std::uint16_t>(ha), x), OracleArith::hdiv(static_cast<std::uint16_t>(ha), x),
                ha, d);
        b.check(SoftArith::bdiv(static_cast<std::uint16_t>(ba), x), OracleArith::bdiv(static_cast<std::uint16_t>(ba), x),
                ba, d);
      }
    }
    CHECK(h.bad == 0);
    CHECK(b.bad == 0);
    CHECK(h.cases * test::sweep_stride() >= (std::uint64_t{1} << 24));
  }

  TEST_CASE("fdiv and fsqrt: soft ≡ oracle on 2^20 random FP32 operands and the edges") {
    OpTally q{"fdiv"}, r{"fsqrt"};
    const std::uint32_t edges[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x3F800000u,
                                   0x7F7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x40400000u, 0xBF800000u};
    for (std::uint32_t a : edges) {
      r.check(SoftArith::fsqrt(a), OracleArith::fsqrt(a), a);
      for (std::uint32_t b : edges) q.check(SoftArith::fdiv(a, b), OracleArith::fdiv(a, b), a, b);
    }
    std::uint64_t state = 18;
    for (int i = 0; i < (1 << 20); i += static_cast<int>(test::sweep_stride())) {
      const auto a = static_cast<std::uint32_t>(splitmix64_next(state));
      auto b = static_cast<std::uint32_t>(splitmix64_next(state));
      if (i % 2 == 0) b = (b & 0x807FFFFFu) | (a & 0x7F800000u);  // quotients near 1: every rounding position
      q.check(SoftArith::fdiv(a, b), OracleArith::fdiv(a, b), a, b);
      r.check(SoftArith::fsqrt(a & 0x7FFFFFFFu), OracleArith::fsqrt(a & 0x7FFFFFFFu), a & 0x7FFFFFFFu);
    }
    CHECK(q.bad == 0);
    CHECK(r.bad == 0);
  }

  TEST_CASE("a soft divide that truncates is caught (negative control of the comparison above)") {
    std::uint64_t bad = 0;
    for (std::uint32_t d = 0x3C01; d < 0x3C01 + 4096; ++d) {
      const auto truncated = static_cast<std::uint16_t>(soft::div<soft::Binary16>(0x3C00, d, soft::Round::kTowardZero));
      bad += truncated != OracleArith::hdiv(0x3C00, static_cast<std::uint16_t>(d));
    }
    CHECK(bad > 1000);
  }
}
