// The fast exact FMA oracle (oracle/fma_exact.hpp) against the Boost.Multiprecision
// oracle (exact.hpp): every triple of a 2^24 box of FP16 codes and of a 2^21 box of
// BF16 codes (every exponent field of FP16, the edge and middle exponents of BF16,
// both signs, zero / one / middle / full mantissas: zeros, subnormals, Inf and NaN
// included), a deterministic splitmix64 sample of the whole 2^48 space of each,
// and the known answers. A corrupted oracle must be caught by the same comparison.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <vector>

#include "arith/soft_arith.hpp"
#include "oracle/exact.hpp"
#include "oracle/fma_exact.hpp"
#include "report/report.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"

using namespace bitproof;
namespace fast = oracle::fast;

namespace {

std::uint32_t boost_fma(FormatId f, std::uint32_t a, std::uint32_t b, std::uint32_t c, oracle::Rounding mode) {
  const oracle::Exact v =
      oracle::fma(oracle::exact_of(f, a), oracle::exact_of(f, b), oracle::exact_of(f, c));
  return *oracle::round_to(f, v, mode).code;
}

bool is_nan(FormatId f, std::uint32_t code) { return decode(spec_of(f), code).kind == Kind::kNaN; }

// Codes of a box side: exponent fields × {+, −} × mantissas {0, 1, middle, all ones}.
std::vector<std::uint32_t> box_side(const fast::Binary f, const std::vector<std::uint32_t>& exponents) {
  std::vector<std::uint32_t> codes;
  const std::uint32_t top = 1u << (f.man_bits - 1);
  const std::uint32_t ones = (1u << f.man_bits) - 1;
  for (std::uint32_t sign = 0; sign < 2; ++sign) {
    for (std::uint32_t e : exponents) {
      for (std::uint32_t m : {0u, 1u, top, ones}) {
        codes.push_back((sign << (f.exp_bits + f.man_bits)) | (e << f.man_bits) | m);
      }
    }
  }
  return codes;
}

struct Tally {
  std::uint64_t cases = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::string> first;  // the first mismatches, decoded
};

// Fast against Boost on one triple, both rounding modes; NaN bits must be the canonical NaN.
void compare(Tally& t, FormatId f, fast::Binary bin, std::uint32_t a, std::uint32_t b, std::uint32_t c,
             fast::Mode mode = fast::Mode::kNearestEven) {
  const auto boost_mode = mode == fast::Mode::kNearestEven ? oracle::Rounding::kNearestEven
                                                           : oracle::Rounding::kTowardZero;
  ++t.cases;
  const fast::Result got = fast::fma(bin, bin, a, b, c, mode);
  const oracle::Exact v = oracle::fma(oracle::exact_of(f, a), oracle::exact_of(f, b), oracle::exact_of(f, c));
  const oracle::Rounded want = oracle::round_to(f, v, boost_mode);
  if (got.code == *want.code && got.inexact == want.inexact) return;
  ++t.mismatches;
  if (t.first.size() < 8) {
    t.first.push_back(fmt::format("a={} b={} c={}: exact {} -> boost {} (inexact {}), fast {} (inexact {})",
                                  describe_code(f, a), describe_code(f, b),
                                  describe_code(f, c), oracle::to_string(v),
                                  describe_code(f, *want.code), want.inexact,
                                  describe_code(f, got.code), got.inexact));
  }
}

void report_tally(const Tally& t, const char* what) {
  for (const std::string& line : t.first) MESSAGE(what, ": ", line);
  CHECK_MESSAGE(t.mismatches == 0, what, ": ", t.mismatches, " of ", t.cases, " triples differ");
}

const std::vector<std::uint32_t> kFp16Exponents = [] {
  std::vector<std::uint32_t> e;
  for (std::uint32_t i = 0; i < 32; ++i) e.push_back(i);  // every exponent field
  return e;
}();
// BF16: the subnormal and least normal fields, the middle (products near 1) and the top.
const std::vector<std::uint32_t> kBf16Exponents = {0, 1, 2, 60, 64, 100, 120, 126, 127, 128, 140, 190, 200, 253, 254, 255};

}  // namespace

TEST_SUITE("oracle") {
  TEST_CASE("fast FMA oracle: known answers (LLVM issue 98389, signed zeros, Inf·0, Inf−Inf, overflow)") {
    // 0x520b (+48.34375) · 0x00e9 (+233·2^-24) + 0x2ff6 (+0.1243896484375)
    CHECK(fast::fma_fp16(0b0'10100'1000001011, 0b0'00000'0011101001, 0b0'01011'1111110110) ==
          0b0'01100'0000000001);  // 0x3001 (+0.1251220703125); the FP32 route gives 0x3000 (+0.125)
    CHECK(boost_fma(FormatId::fp16, 0x520b, 0x00e9, 0x2ff6, oracle::Rounding::kNearestEven) == 0x3001);
    CHECK(fast::fma_fp16(0x0000, 0x3C00, 0x8000) == 0x0000);  // (+0)·1 + (−0) = +0
    CHECK(fast::fma_fp16(0x8000, 0x3C00, 0x8000) == 0x8000);  // (−0)·1 + (−0) = −0
    CHECK(fast::fma_fp16(0x3C00, 0xBC00, 0x3C00) == 0x0000);  // 1·(−1) + 1 = +0 (exact cancellation)
    CHECK(fast::fma_fp16(0x7C00, 0x0000, 0x3C00) == 0x7FFF);  // ∞·0 + 1 = NaN
    CHECK(fast::fma_fp16(0x7C00, 0x3C00, 0xFC00) == 0x7FFF);  // ∞ − ∞ = NaN
    CHECK(fast::fma_fp16(0x7C00, 0x3C00, 0x7C00) == 0x7C00);  // ∞ + ∞ = ∞
    CHECK(fast::fma_fp16(0x3C00, 0x3C00, 0xFC00) == 0xFC00);  // 1 − ∞ = −∞
    CHECK(fast::fma_fp16(0x7E00, 0x0000, 0x7C00) == 0x7FFF);  // NaN in: canonical NaN out
    CHECK(fast::fma_fp16(0x7BFF, 0x7BFF, 0xFBFF) == 0x7C00);  // 65504² − 65504: ∞
    CHECK(fast::fma(fast::kFp16, fast::kFp16, 0x7BFF, 0x7BFF, 0xFBFF, fast::Mode::kTowardZero).code == 0x7BFF);
    CHECK(fast::fma_bf16(0x7F7F, 0x7F7F, 0x0000) == 0x7F80);  // max² = ∞
    CHECK(fast::fma_bf16(0x0001, 0x0001, 0x0000) == 0x0000);  // 2^-266: +0
    CHECK(fast::fma_bf16(0x8001, 0x0001, 0x0000) == 0x8000);  // −2^-266 + 0 = −0 after rounding
  }

  TEST_CASE("fast FMA oracle: the soft FMA and the routes on the LLVM 98389 inputs") {
    CHECK(SoftArith::hfma(0x520b, 0x00e9, 0x2ff6) == 0x3001);
    const std::uint32_t fp32_route = SoftArith::float2half_rn(
        SoftArith::ffma(SoftArith::half2float(0x520b), SoftArith::half2float(0x00e9), SoftArith::half2float(0x2ff6)));
    CHECK(fp32_route == 0x3000);  // double rounding: 24 bits first lands on the midpoint, then ties to even
    const std::uint32_t fp64_route = SoftArith::double2half_rn(SoftArith::dfma(
        SoftArith::half2double(0x520b), SoftArith::half2double(0x00e9), SoftArith::half2double(0x2ff6)));
    CHECK(fp64_route == 0x3001);
    const std::uint32_t rto = SoftArith::float2half_rn(SoftArith::fadd_ro(
        SoftArith::fmul(SoftArith::half2float(0x520b), SoftArith::half2float(0x00e9)), SoftArith::half2float(0x2ff6)));
    CHECK(rto == 0x3001);
  }

  TEST_CASE("fast FMA oracle ≡ Boost oracle on every triple of a 2^24 FP16 box (both rounding modes on 2^18)") {
    const auto side = box_side(fast::kFp16, kFp16Exponents);
    REQUIRE(side.size() == 256);
    Tally rn, rz;
    const unsigned stride = test::sweep_stride();
    for (std::size_t i = 0; i < side.size(); ++i) {
      for (std::size_t j = 0; j < side.size(); ++j) {
        for (std::size_t k = 0; k < side.size(); k += stride) {
          compare(rn, FormatId::fp16, fast::kFp16, side[i], side[j], side[k]);
          if (j % 64 == 0) compare(rz, FormatId::fp16, fast::kFp16, side[i], side[j], side[k], fast::Mode::kTowardZero);
        }
      }
    }
    CHECK(rn.cases * stride >= (std::uint64_t{1} << 24));
    report_tally(rn, "fp16 nearest even");
    report_tally(rz, "fp16 toward zero");
  }

  TEST_CASE("the FP16 box reaches the oracle's window cut (terms more than kWindow binades apart)") {
    // Without such triples the box above could not catch a wrong sticky bit.
    const auto side = box_side(fast::kFp16, kFp16Exponents);
    std::uint64_t cut = 0;
    for (std::uint32_t a : side) {
      for (std::uint32_t b : side) {
        for (std::uint32_t c : side) {
          const auto x = fast::detail::decode(fast::kFp16, a), y = fast::detail::decode(fast::kFp16, b),
                     z = fast::detail::decode(fast::kFp16, c);
          using fast::detail::Cls;
          if (x.cls != Cls::kFinite || y.cls != Cls::kFinite || z.cls != Cls::kFinite) continue;
          if (fast::detail::alignment(x.sig * y.sig, x.exp + y.exp, z.sig, z.exp).cut) ++cut;
        }
      }
    }
    MESSAGE(cut, " triples of the FP16 box take the window cut");
    CHECK(cut > 1000);
  }

  TEST_CASE("fast FMA oracle ≡ Boost oracle on every triple of a 2^21 BF16 box (edge exponents)") {
    const auto side = box_side(fast::kBf16, kBf16Exponents);
    REQUIRE(side.size() == 128);
    Tally rn, rz;
    for (std::uint32_t a : side) {
      for (std::uint32_t b : side) {
        for (std::size_t k = 0; k < side.size(); k += test::sweep_stride()) {
          compare(rn, FormatId::bf16, fast::kBf16, a, b, side[k]);
          if ((b & 0x3) == 0) compare(rz, FormatId::bf16, fast::kBf16, a, b, side[k], fast::Mode::kTowardZero);
        }
      }
    }
    report_tally(rn, "bf16 nearest even");
    report_tally(rz, "bf16 toward zero");
  }

  TEST_CASE("fast FMA oracle ≡ Boost oracle on a deterministic sample of all 2^48 triples (2^19 each format)") {
    for (const auto& [f, bin] : {std::pair{FormatId::fp16, fast::kFp16}, std::pair{FormatId::bf16, fast::kBf16}}) {
      Tally t;
      std::uint64_t state = 0x98389;
      for (int n = 0; n < (1 << 19); ++n) {
        const std::uint64_t r = splitmix64_next(state);
        compare(t, f, bin, r & 0xFFFF, (r >> 16) & 0xFFFF, (r >> 32) & 0xFFFF);
      }
      report_tally(t, f == FormatId::fp16 ? "fp16 sample" : "bf16 sample");
    }
  }

  TEST_CASE("fast FMA oracle ≡ the soft FMA (src/arith) on 2^24 sampled triples of each format") {
    std::uint64_t state = 18;
    std::uint64_t fp16_diff = 0, bf16_diff = 0;
    for (int n = 0; n < (1 << 24); n += static_cast<int>(test::sweep_stride())) {
      const std::uint64_t r = splitmix64_next(state);
      const auto a = static_cast<std::uint16_t>(r), b = static_cast<std::uint16_t>(r >> 16),
                 c = static_cast<std::uint16_t>(r >> 32);
      if (SoftArith::hfma(a, b, c) != fast::fma_fp16(a, b, c) && fp16_diff++ < 4) {
        MESSAGE(fmt::format("fp16 {:#06x} {:#06x} {:#06x}: soft {:#06x} fast {:#06x}", a, b, c,
                            SoftArith::hfma(a, b, c), fast::fma_fp16(a, b, c)));
      }
      if (SoftArith::bfma(a, b, c) != fast::fma_bf16(a, b, c) && bf16_diff++ < 4) {
        MESSAGE(fmt::format("bf16 {:#06x} {:#06x} {:#06x}: soft {:#06x} fast {:#06x}", a, b, c,
                            SoftArith::bfma(a, b, c), fast::fma_bf16(a, b, c)));
      }
    }
    CHECK(fp16_diff == 0);
    CHECK(bf16_diff == 0);
  }

  TEST_CASE("negative control: an oracle that truncates is caught by the same comparison") {
    const auto side = box_side(fast::kFp16, kFp16Exponents);
    std::uint64_t caught = 0;
    for (std::uint32_t a : side) {
      for (std::uint32_t b : side) {
        const std::uint32_t c = 0x3C00;  // +1
        const std::uint32_t wrong = fast::fma(fast::kFp16, fast::kFp16, a, b, c, fast::Mode::kTowardZero).code;
        const std::uint32_t right = boost_fma(FormatId::fp16, a, b, c, oracle::Rounding::kNearestEven);
        if (wrong != right && !(is_nan(FormatId::fp16, wrong) && is_nan(FormatId::fp16, right))) ++caught;
      }
    }
    CHECK(caught > 1000);
  }
}
