// The fast FMA oracle's run form (oracle::fast::fma_run, the GPU claim sweep's
// batches) against its case-by-case form fma(), which tests/oracle/test_fma_exact
// checks against Boost: every first input a (all 65,536 codes, in runs as the
// sweep forms them and unaligned ones) for (b, c) pairs of edge codes and a
// deterministic sample, both formats, both rounding modes, batch sizes 16, 8,
// 4 and 1; and as the GPU sweep uses it, one plan of a thread's 256 cases read
// batch by batch. Also: that nearly every run takes the straight path, and
// negative controls that make the comparison fail.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "format/format.hpp"
#include "oracle/fma_exact.hpp"
#include "report/report.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"

using namespace bitproof;
namespace fast = oracle::fast;

namespace {

struct Format {
  fast::Binary bin;
  FormatId id;
  const char* name;
};
const Format kFmaFormats[] = {{fast::kFp16, FormatId::fp16, "fp16"}, {fast::kBf16, FormatId::bf16, "bf16"}};

constexpr std::uint32_t kCodes = 1u << 16;

// b and c codes: ±0, the least and largest subnormal, the least normal, one, the
// largest finite, ∞, a NaN, and every exponent field with mantissa 0 and all ones.
std::vector<std::uint32_t> edge_codes(fast::Binary f) {
  const std::uint32_t ones = (1u << f.man_bits) - 1;
  const std::uint32_t sign = 1u << (f.exp_bits + f.man_bits);
  const std::uint32_t exp_one = ((1u << (f.exp_bits - 1)) - 1) << f.man_bits;
  const std::uint32_t inf = ((1u << f.exp_bits) - 1) << f.man_bits;
  std::vector<std::uint32_t> codes = {0, 1, ones, ones + 1, exp_one, inf - 1, inf, inf | 1};
  const std::uint32_t fields = 1u << f.exp_bits;
  const std::uint32_t field_step = fields > 32 ? fields / 32 : 1;  // BF16: every 8th field
  for (std::uint32_t e = 0; e + 1 < fields; e += field_step) {
    codes.push_back(e << f.man_bits);
    codes.push_back((e << f.man_bits) | ones);
  }
  const std::size_t n = codes.size();
  for (std::size_t i = 0; i < n; ++i) codes.push_back(codes[i] | sign);
  return codes;
}

struct Pair {
  std::uint32_t b;
  std::uint32_t c;
};

// Every b of the edge codes with a few c (and the reverse), plus a splitmix sample.
std::vector<Pair> pairs_of(fast::Binary f, std::uint64_t seed) {
  const std::vector<std::uint32_t> edges = edge_codes(f);
  std::vector<Pair> pairs;
  const std::uint32_t few[] = {0, 1, edges[4], edges[5], edges[4] | (1u << (f.exp_bits + f.man_bits))};
  for (std::uint32_t e : edges) {
    for (std::uint32_t x : few) {
      pairs.push_back({e, x});
      pairs.push_back({x, e});
    }
  }
  std::uint64_t state = seed;
  for (int i = 0; i < 256; ++i) {
    const std::uint64_t r = splitmix64_next(state);
    pairs.push_back({static_cast<std::uint32_t>(r & 0xFFFF), static_cast<std::uint32_t>((r >> 16) & 0xFFFF)});
  }
  return pairs;
}

struct RunTally {
  std::uint64_t cases = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::string> first;
};

// Case a's code from the run form (`run` names the run in messages) against fma().
void tally(RunTally& t, const Format& f, Pair p, fast::Mode mode, const std::string& run, std::uint32_t a,
           std::uint32_t code) {
  const std::uint32_t want = fast::fma(f.bin, f.bin, a, p.b, p.c, mode).code;
  ++t.cases;
  if (code == want) return;
  ++t.mismatches;
  if (t.first.size() < 8) {
    t.first.push_back(fmt::format("{} run {} b={} c={} a={}: run {} fma {}", f.name, run, describe_code(f.id, p.b),
                                  describe_code(f.id, p.c), describe_code(f.id, a), describe_code(f.id, code),
                                  describe_code(f.id, want)));
  }
}

// fma_run<kN> from every a0 = start, start + kN, … against fma() case by case.
template <int kN>
void compare_runs(RunTally& t, const Format& f, Pair p, std::uint32_t start, fast::Mode mode) {
  std::uint32_t codes[kN];
  for (std::uint32_t a0 = start; a0 + kN <= kCodes; a0 += kN) {
    fast::fma_run(f.bin, f.bin, a0, p.b, p.c, codes, mode);
    const std::string run = fmt::format("{:#06x}+{}", a0, kN);
    for (int i = 0; i < kN; ++i) tally(t, f, p, mode, run, a0 + static_cast<std::uint32_t>(i), codes[i]);
  }
}

// A GPU warp takes the heaviest form one of its runs needs (batch_form): the
// forms heavier than run r's own, on its cases t0 … t0 + kN − 1, against fma().
template <int kN>
void compare_heavier_forms(RunTally& t, const Format& f, Pair p, fast::Mode mode, const fast::LinearRun& r,
                           std::uint32_t a0, std::uint32_t t0, std::uint32_t (&codes)[kN]) {
  const fast::detail::Form own = fast::detail::form_of(r);
  const auto check = [&](const char* form) {
    const std::string run = fmt::format("{:#06x}+256 in form {}", a0, form);
    for (int i = 0; i < kN; ++i) tally(t, f, p, mode, run, a0 + t0 + static_cast<std::uint32_t>(i), codes[i]);
  };
  fast::detail::codes_in_form<true, true>(r, t0, codes);
  check("cut+clamp");
  if (!own.clamp) {
    fast::detail::codes_in_form<true, false>(r, t0, codes);
    check("cut");
  }
  if (!own.cut) {
    fast::detail::codes_in_form<false, true>(r, t0, codes);
    check("clamp");
  }
}

// The sweep's form: one plan of each whole run of kLong cases (from every
// a0 = 0, kLong, …), its batches of kN taken from it at t0 = 0, kN, …
// (run_shift != 0: read at the wrong case, a negative control). Counts the
// runs whose long plan is ok, and of those the ones whose product is cut.
struct LongRuns {
  std::uint64_t planned = 0;
  std::uint64_t cut = 0;
};
template <int kLong, int kN>
LongRuns compare_long_runs(RunTally& t, const Format& f, Pair p, fast::Mode mode, std::uint32_t run_shift = 0) {
  LongRuns runs;
  std::uint32_t codes[kN];
  for (std::uint32_t a0 = 0; a0 < kCodes; a0 += kLong) {
    const fast::LinearRun whole = fast::plan_run(f.bin, f.bin, a0, kLong, p.b, p.c, mode);
    runs.planned += whole.ok ? 1 : 0;
    runs.cut += whole.ok && whole.lost != 0 ? 1 : 0;
    const std::string run = fmt::format("{:#06x}+{} (plan {})", a0, kLong, whole.ok ? "whole" : "per batch");
    for (std::uint32_t t0 = 0; t0 < kLong; t0 += kN) {
      fast::fma_run(f.bin, f.bin, whole, t0 + run_shift, a0 + t0, p.b, p.c, codes, mode);
      for (int i = 0; i < kN; ++i) tally(t, f, p, mode, run, a0 + t0 + static_cast<std::uint32_t>(i), codes[i]);
      if (whole.ok && run_shift == 0) compare_heavier_forms(t, f, p, mode, whole, a0, t0, codes);
    }
  }
  return runs;
}

void report_runs(const RunTally& t, const char* what) {
  for (const std::string& line : t.first) MESSAGE(std::string(what), ": ", line);
  CHECK_MESSAGE(t.mismatches == 0, std::string(what), ": ", t.mismatches, " of ", t.cases, " cases differ");
}

}  // namespace

TEST_SUITE("oracle") {
  TEST_CASE("fast FMA oracle: the run form gives fma()'s codes on every a of edge and sampled (b, c)") {
    const unsigned stride = test::sweep_stride();
    for (const Format& f : kFmaFormats) {
      RunTally t;
      const std::vector<Pair> pairs = pairs_of(f.bin, 0x5EED'F00D);
      for (std::size_t i = 0; i < pairs.size(); i += stride) {
        compare_runs<16>(t, f, pairs[i], 0, fast::Mode::kNearestEven);
        if (i % 4 == 0) compare_runs<16>(t, f, pairs[i], 8, fast::Mode::kNearestEven);  // unaligned: runs cross fields
        if (i % 8 == 1) compare_runs<8>(t, f, pairs[i], 0, fast::Mode::kTowardZero);
        if (i % 8 == 2) compare_runs<4>(t, f, pairs[i], 0, fast::Mode::kNearestEven);
        if (i % 16 == 3) compare_runs<1>(t, f, pairs[i], 0, fast::Mode::kNearestEven);
      }
      CHECK(t.cases > 1'000'000);
      report_runs(t, f.name);
    }
  }

  TEST_CASE("fast FMA oracle: all but a few runs of 16 take the straight path (one form for a warp's batches)") {
    for (const Format& f : kFmaFormats) {
      std::uint64_t runs = 0;
      std::uint64_t case_by_case = 0;
      for (const Pair& p : pairs_of(f.bin, 0xC0FFEE)) {
        for (std::uint32_t a0 = 0; a0 < kCodes; a0 += 16) {
          ++runs;
          case_by_case += fast::run_is_linear(f.bin, f.bin, a0, 16, p.b, p.c) ? 0 : 1;
        }
      }
      MESSAGE(std::string(f.name), ": ", case_by_case, " of ", runs, " runs case by case");
      // Measured: 0.04 % over random (b, c); here, where edge codes meet (sums that cancel),
      // 0.17 % of FP16 runs and 1.08 % of BF16.
      CHECK(case_by_case * 50 < runs);
      CHECK(case_by_case > 0);  // the case-by-case path is reached (its codes are compared above)
    }
  }

  TEST_CASE("fast FMA oracle: one plan of a thread's 256 cases gives fma()'s codes in every batch of 16") {
    const unsigned stride = test::sweep_stride();
    for (const Format& f : kFmaFormats) {
      RunTally t;
      LongRuns all;
      std::uint64_t runs = 0;
      const std::vector<Pair> pairs = pairs_of(f.bin, 0x10'4C'0256);
      for (std::size_t i = 0; i < pairs.size(); i += 2 * stride) {
        const LongRuns r = i % 8 == 2 ? compare_long_runs<256, 16>(t, f, pairs[i], fast::Mode::kTowardZero)
                                      : compare_long_runs<256, 16>(t, f, pairs[i], fast::Mode::kNearestEven);
        all.planned += r.planned;
        all.cut += r.cut;
        runs += kCodes / 256;
        if (i % 16 == 4) compare_long_runs<128, 8>(t, f, pairs[i], fast::Mode::kNearestEven);
      }
      MESSAGE(std::string(f.name), ": ", all.planned, " of ", runs, " runs of 256 planned whole, ", all.cut,
              " of them with the product cut");
      report_runs(t, f.name);
      if (f.id == FormatId::fp16) {
        // FP16's runs of 256 lie in one exponent field (1,024 codes): most are planned whole,
        // through both forms (product exact, product cut to a sticky bit).
        CHECK(all.planned * 2 > runs);
        CHECK(all.cut > 0);
        CHECK(all.cut < all.planned);
      } else {
        CHECK(all.planned == 0);  // BF16's field holds 128 codes: every run of 256 is planned batch by batch
      }
    }
  }

  TEST_CASE("negative controls: a whole-run plan read at the wrong case, a cut product read without its sticky bit") {
    RunTally shifted;
    compare_long_runs<256, 16>(shifted, kFmaFormats[0], {0x3555, 0x0123}, fast::Mode::kNearestEven, 1);
    CHECK(shifted.mismatches > 10'000);
    // (2^-14 · 2^-14)-sized products under −32768: 43 binades down, cut to a sticky bit;
    // read as if exact, they take some 64 off the sum, a few last places of 32768.
    const fast::LinearRun cut = fast::plan_run(fast::kFp16, fast::kFp16, 0x0400, 256, 0x0400, 0xF800,
                                               fast::Mode::kTowardZero);
    REQUIRE(cut.ok);
    REQUIRE(cut.lost != 0);
    int wrong = 0;
    for (std::uint32_t t = 0; t < 256; ++t) {
      const std::uint32_t want = fast::fma(fast::kFp16, fast::kFp16, 0x0400 + t, 0x0400, 0xF800,
                                           fast::Mode::kTowardZero).code;
      CHECK(fast::detail::linear_code<true>(cut, t) == want);
      wrong += fast::detail::linear_code<false>(cut, t) != want ? 1 : 0;
    }
    CHECK(wrong > 0);
  }

  TEST_CASE("negative controls: a run whose codes pass ∞, in the form without the clamp") {
    // (65,024 + 32·t) · 1 + 128 for t < 16: from t = 14 the sum rounds past 65,536 (∞) to a NaN
    // code without the clamp (t = 13 rounds to 65,536 itself, whose code is ∞'s).
    const fast::LinearRun r = fast::plan_run(fast::kFp16, fast::kFp16, 0x7BF0, 16, 0x3C00, 0x5800);
    REQUIRE(r.ok);
    REQUIRE(r.clamps);
    CHECK(fast::detail::form_of(r).clamp);
    std::uint32_t codes[16];
    fast::detail::codes_in_form<false, false>(r, 0, codes);
    int wrong = 0;
    for (std::uint32_t t = 0; t < 16; ++t) wrong += codes[t] != fast::fma_fp16(0x7BF0 + t, 0x3C00, 0x5800) ? 1 : 0;
    CHECK(wrong == 2);
    fast::detail::codes_in_form<false, true>(r, 0, codes);
    for (std::uint32_t t = 0; t < 16; ++t) CHECK(codes[t] == fast::fma_fp16(0x7BF0 + t, 0x3C00, 0x5800));
    // The same run with + 8: the largest sum, 65,512, rounds to 65,504: no clamp needed.
    CHECK_FALSE(fast::plan_run(fast::kFp16, fast::kFp16, 0x7BF0, 16, 0x3C00, 0x4800).clamps);
  }

  TEST_CASE("negative controls: a plan forced across an exponent field, and the other rounding, are caught") {
    // Codes 0x07F8 … 0x0807 cross from field 1 to field 2, where a code's step doubles:
    // the straight path forced on them (consecutive significands) is wrong from the
    // second code of field 2.
    const fast::detail::LinearRun forced =
        fast::detail::from_plan(fast::kFp16, fast::detail::shared_plan(fast::kFp16, fast::kFp16, 0x07F8, 16, 0x3C00, 0),
                                0, 16, fast::Mode::kNearestEven);
    REQUIRE(forced.ok);
    int wrong = 0;
    for (std::uint32_t t = 0; t < 16; ++t) {
      wrong += fast::detail::linear_code<true>(forced, t) != fast::fma_fp16(0x07F8 + t, 0x3C00, 0) ? 1 : 0;
    }
    CHECK(wrong == 7);
    CHECK_FALSE(fast::run_is_linear(fast::kFp16, fast::kFp16, 0x07F8, 16, 0x3C00, 0));
    // The run form toward zero against fma() to nearest: the same comparison must count differences.
    std::uint64_t differ = 0;
    std::uint32_t codes[16];
    for (std::uint32_t a0 = 0; a0 < kCodes; a0 += 16) {
      fast::fma_run(fast::kFp16, fast::kFp16, a0, 0x3555, 0x0123, codes, fast::Mode::kTowardZero);
      for (std::uint32_t i = 0; i < 16; ++i) differ += codes[i] != fast::fma_fp16(a0 + i, 0x3555, 0x0123) ? 1 : 0;
    }
    CHECK(differ > 10'000);
  }
}
