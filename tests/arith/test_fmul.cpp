// SoftArith::fmul (binary32 multiply, nearest even, canonical NaN) against the
// oracle arithmetic: 2048 FP32 edge codes x every 4th of them, FP16 values
// widened (the FP32 path of fp16.fp32_round) for 65536 x 16 pairs, and 300000
// random pairs. A deliberately truncating multiply must fail the same
// comparison (computed in the same pass: one oracle call a pair). The sanitizer
// build takes every k-th pair and FP16 code (tests/sweep_stride.hpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <vector>

#include "arith/soft_arith.hpp"
#include "oracle/oracle_arith.hpp"
#include "report/report.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"
#include "support.hpp"

using namespace bitproof;
using bitproof::test::sweep_stride;

namespace {

struct Fp32Tally {
  int soft = 0;      // soft operation != oracle
  int truncate = 0;  // the same operation truncating != oracle (the negative control)
};

// One binary32 operation of SoftArith against OracleArith: `op` names it, the
// three callables give soft, oracle and truncating results.
template <class Soft, class Oracle, class Truncating>
Fp32Tally mismatches(const char* op, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs, Soft soft_op,
                 Oracle oracle_op, Truncating truncating_op) {
  Fp32Tally t;
  for (std::size_t i = 0; i < pairs.size(); i += sweep_stride()) {
    const auto [a, b] = pairs[i];
    const std::uint32_t want = oracle_op(a, b);
    const std::uint32_t got = soft_op(a, b);
    if (truncating_op(a, b) != want) ++t.truncate;
    if (got == want) continue;
    if (t.soft++ < 8) {
      FAIL_CHECK(fmt::format("{} {} , {}: soft {} oracle {}", op, describe_code(FormatId::fp32, a),
                             describe_code(FormatId::fp32, b), describe_code(FormatId::fp32, got),
                             describe_code(FormatId::fp32, want)));
    }
  }
  return t;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> all_pairs() {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  const auto edges = test::float32_edges();
  for (std::uint32_t a : edges) {
    for (std::size_t j = 0; j < edges.size(); j += 4) pairs.emplace_back(a, edges[j]);
  }
  for (std::uint32_t h = 0; h < 65536; ++h) {
    for (std::uint32_t k = 0; k < 16; ++k) {
      const auto g = static_cast<std::uint16_t>((k * 1031 + h * 7) & 0xFFFF);
      pairs.emplace_back(SoftArith::half2float(static_cast<std::uint16_t>(h)), SoftArith::half2float(g));
    }
  }
  std::uint64_t seed = 42;
  for (int i = 0; i < 300000; ++i) {
    const std::uint64_t r = splitmix64_next(seed);
    pairs.emplace_back(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(r >> 32));
  }
  return pairs;
}

}  // namespace

TEST_SUITE("arith") {
  TEST_CASE("fmul: soft binary32 multiply equals the oracle on edge, FP16-product and random pairs") {
    const auto pairs = all_pairs();
    const Fp32Tally t = mismatches("fmul", pairs, SoftArith::fmul, OracleArith::fmul, [](std::uint32_t a, std::uint32_t b) {
      return soft::mul<soft::Binary32>(a, b, soft::Round::kTowardZero);
    });
    CHECK(t.soft == 0);
    CHECK(t.truncate > 0);  // negative control: truncation is caught by the same comparison
    MESSAGE(fmt::format("{} pairs (every {}th); the truncating multiply differs on {}", pairs.size(), sweep_stride(),
                        t.truncate));
  }

  TEST_CASE("fadd: soft binary32 add (the operators' block-partial reduction) equals the oracle") {
    const auto pairs = all_pairs();
    const Fp32Tally t = mismatches("fadd", pairs, SoftArith::fadd, OracleArith::fadd, [](std::uint32_t a, std::uint32_t b) {
      return soft::add<soft::Binary32>(a, b, soft::Round::kTowardZero);
    });
    CHECK(t.soft == 0);
    CHECK(t.truncate > 0);  // negative control
    MESSAGE(fmt::format("{} pairs; the truncating add differs on {}", pairs.size(), t.truncate));
  }

  TEST_CASE("fmul: the FP32 product of two FP16 values is exact (why fp16.fp32_round rounds once)") {
    int inexact = 0;
    for (std::uint32_t h = 0; h < 65536; h += 7 * sweep_stride()) {
      for (std::uint32_t g = 0; g < 65536; g += 509) {
        const oracle::Exact x = oracle::exact_of(FormatId::fp16, h);
        const oracle::Exact y = oracle::exact_of(FormatId::fp16, g);
        const oracle::Rounded r = oracle::round_to(FormatId::fp32, oracle::mul(x, y), oracle::Rounding::kNearestEven);
        if (r.inexact) ++inexact;
      }
    }
    CHECK(inexact == 0);
    // Negative control: the FP32 product of two FP32 values is not always exact.
    const oracle::Exact third = oracle::exact_of(FormatId::fp32, 0x3EAAAAABu);
    CHECK(oracle::round_to(FormatId::fp32, oracle::mul(third, third), oracle::Rounding::kNearestEven).inexact);
  }
}
