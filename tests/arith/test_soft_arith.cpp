// The soft arithmetic (bit tricks on raw bits) against the oracle arithmetic
// (exact big integers, one rounding): every FP16 code against 448 edge codes
// for hmul, edge sweeps and random operands for hadd/hfma, every binary16 ->
// binary32 conversion and a million binary32 -> binary16 ones. The sanitizer
// build takes every k-th FP16 code and random operand (tests/sweep_stride.hpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <random>
#include <utility>
#include <vector>

#include "arith/soft_arith.hpp"
#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "oracle/oracle_arith.hpp"
#include "sweep_stride.hpp"

using namespace bitproof;
using bitproof::test::stepped_count;
using bitproof::test::sweep_stride;

namespace {

std::string half(std::uint32_t bits) {
  return fmt::format("0x{:04X} [{}|{:05b}|{:010b}] {}", bits, bits >> 15, (bits >> 10) & 31, bits & 0x3FF,
                     oracle::to_string(oracle::exact_of(FormatId::fp16, bits & 0xFFFF)));
}

// Every exponent field with mantissas 0, 1, 0x155, 0x200, 0x2AA, 0x3FE, 0x3FF,
// both signs: ±0, subnormals, powers of two, max, Inf, NaNs. 448 codes.
std::vector<std::uint16_t> edge_codes() {
  std::vector<std::uint16_t> codes;
  for (std::uint32_t sign : {0u, 0x8000u}) {
    for (std::uint32_t e = 0; e < 32; ++e) {
      for (std::uint32_t m : {0u, 1u, 0x155u, 0x200u, 0x2AAu, 0x3FEu, 0x3FFu}) {
        codes.push_back(static_cast<std::uint16_t>(sign | (e << 10) | m));
      }
    }
  }
  return codes;
}

struct SweepTally {
  std::uint64_t cases = 0;
  int mismatches = 0;
  void record(bool equal, const std::string& what) {
    ++cases;
    if (!equal && ++mismatches <= 8) FAIL_CHECK(what);
  }
};

template <class Soft, class Ref>
SweepTally sweep_binary(const std::vector<std::uint16_t>& rhs, Soft soft, Ref ref, const char* op, bool expect_equal = true) {
  SweepTally t;
  for (std::uint32_t a = 0; a < 65536; a += sweep_stride()) {
    for (std::uint16_t b : rhs) {
      const std::uint32_t s = soft(static_cast<std::uint16_t>(a), b);
      const std::uint32_t o = ref(static_cast<std::uint16_t>(a), b);
      if (s == o) {
        ++t.cases;
        continue;
      }
      ++t.mismatches;
      if (expect_equal && t.mismatches <= 8) {
        FAIL_CHECK(fmt::format("{}({}, {}): soft {} oracle {}", op, half(a), half(b), half(s), half(o)));
      }
    }
  }
  return t;
}

}  // namespace

// soft::bit_width at run time (a count of leading zeros) against its
// constant-evaluation form (one bit at a time), at every width with the bits
// below the top one all clear, all set and alternating.
template <class T, int kWidth>
constexpr T bits_of_width(int pattern) {
  if constexpr (kWidth == 0) {
    return T{0};
  } else {
    const T top = T{1} << (kWidth - 1);
    const T below = top - 1;
    const T alternating = static_cast<T>(~T{0} / 3) & below;  // ...0101
    return top | (pattern == 0 ? T{0} : pattern == 1 ? below : alternating);
  }
}

template <class T, int... kWidths>
int bit_width_mismatches(std::integer_sequence<int, kWidths...>) {
  int mismatches = 0;
  const auto check = [&]<int kWidth>() {
    for (int pattern = 0; pattern < 3; ++pattern) {
      volatile int at_run_time = pattern;  // keeps the run-time call out of constant evaluation
      const int width = soft::bit_width(bits_of_width<T, kWidth>(at_run_time));
      constexpr int kFolded[3] = {soft::bit_width(bits_of_width<T, kWidth>(0)),
                                  soft::bit_width(bits_of_width<T, kWidth>(1)),
                                  soft::bit_width(bits_of_width<T, kWidth>(2))};
      static_assert(kFolded[0] == kWidth && kFolded[1] == kWidth && kFolded[2] == kWidth);
      if (width != kWidth) {
        ++mismatches;
        FAIL_CHECK(fmt::format("bit_width at run time of a {}-bit value (pattern {}): {}", kWidth, pattern, width));
      }
    }
  };
  (check.template operator()<kWidths>(), ...);
  return mismatches;
}

TEST_SUITE("arith") {
  TEST_CASE("soft::bit_width: the run-time count of leading zeros equals the bit-by-bit form, every width") {
    CHECK(bit_width_mismatches<std::uint32_t>(std::make_integer_sequence<int, 33>{}) == 0);
    CHECK(bit_width_mismatches<std::uint64_t>(std::make_integer_sequence<int, 65>{}) == 0);
    CHECK(bit_width_mismatches<soft::U128>(std::make_integer_sequence<int, 129>{}) == 0);
  }

  TEST_CASE("hmul: every FP16 code times 448 edge codes, soft == oracle") {
    const SweepTally t = sweep_binary(edge_codes(), SoftArith::hmul, OracleArith::hmul, "hmul");
    CHECK(t.cases == stepped_count(65536) * 448);
    CHECK(t.mismatches == 0);
  }

  TEST_CASE("hmul_rz and hmul_ftz: every FP16 code times every 3rd edge code") {
    std::vector<std::uint16_t> some;
    for (std::size_t i = 0; i < edge_codes().size(); i += 3) some.push_back(edge_codes()[i]);
    CHECK(sweep_binary(some, SoftArith::hmul_rz, OracleArith::hmul_rz, "hmul_rz").mismatches == 0);
    CHECK(sweep_binary(some, SoftArith::hmul_ftz, OracleArith::hmul_ftz, "hmul_ftz").mismatches == 0);
  }

  TEST_CASE("hadd: every FP16 code plus 448 edge codes, soft == oracle") {
    CHECK(sweep_binary(edge_codes(), SoftArith::hadd, OracleArith::hadd, "hadd").mismatches == 0);
  }

  TEST_CASE("negative control: the sweep catches a multiply that truncates") {
    const SweepTally t = sweep_binary(edge_codes(), SoftArith::hmul_rz, OracleArith::hmul, "control", false);
    CHECK(t.mismatches > 1000);  // rounding happens in most products of arbitrary codes
  }

  TEST_CASE("random operands: hmul, hadd, hfma") {
    std::mt19937 rng(7);
    SweepTally mul, add, fma;
    const auto edges = edge_codes();
    for (std::uint64_t i = 0; i < stepped_count(1'000'000); ++i) {
      const auto a = static_cast<std::uint16_t>(rng());
      const auto b = static_cast<std::uint16_t>(rng());
      auto c = static_cast<std::uint16_t>(rng());
      if (i % 4 == 0) c = edges[rng() % edges.size()];
      if (i % 4 == 1) c = static_cast<std::uint16_t>(SoftArith::hmul(a, b) ^ 0x8000);  // near-cancellation
      mul.record(SoftArith::hmul(a, b) == OracleArith::hmul(a, b), fmt::format("hmul({}, {})", half(a), half(b)));
      add.record(SoftArith::hadd(a, b) == OracleArith::hadd(a, b), fmt::format("hadd({}, {})", half(a), half(b)));
      const std::uint32_t s = SoftArith::hfma(a, b, c), o = OracleArith::hfma(a, b, c);
      fma.record(s == o, fmt::format("hfma({}, {}, {}): soft {} oracle {}", half(a), half(b), half(c), half(s), half(o)));
    }
    CHECK(mul.mismatches == 0);
    CHECK(add.mismatches == 0);
    CHECK(fma.mismatches == 0);
  }

  TEST_CASE("hfma: edge codes cubed (448^3 would be slow: every 29th triple)") {
    const auto edges = edge_codes();
    SweepTally t;
    std::uint64_t n = 0;
    for (std::uint16_t a : edges) {
      for (std::uint16_t b : edges) {
        for (std::uint16_t c : edges) {
          if (n++ % (29 * sweep_stride()) != 0) continue;
          const std::uint32_t s = SoftArith::hfma(a, b, c), o = OracleArith::hfma(a, b, c);
          t.record(s == o, fmt::format("hfma({}, {}, {}): soft {} oracle {}", half(a), half(b), half(c), half(s), half(o)));
        }
      }
    }
    CHECK(t.mismatches == 0);
  }

  TEST_CASE("half2float: all 65536 codes; float2half: a million values, both modes") {
    for (std::uint32_t h = 0; h < 65536; ++h) {
      const auto bits = static_cast<std::uint16_t>(h);
      REQUIRE_MESSAGE(SoftArith::half2float(bits) == OracleArith::half2float(bits), half(h));
    }
    std::mt19937 rng(11);
    SweepTally rn, rz;
    for (std::uint64_t i = 0; i < stepped_count(1'000'000); ++i) {
      std::uint32_t f = rng();
      if (i % 2 == 0) f = (f & 0x807FFFFF) | ((95 + (f >> 23) % 60) << 23);  // concentrate near FP16's range
      rn.record(SoftArith::float2half_rn(f) == OracleArith::float2half_rn(f), fmt::format("float2half_rn 0x{:08X}", f));
      rz.record(SoftArith::float2half_rz(f) == OracleArith::float2half_rz(f), fmt::format("float2half_rz 0x{:08X}", f));
    }
    CHECK(rn.mismatches == 0);
    CHECK(rz.mismatches == 0);
  }
}
