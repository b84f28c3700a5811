// From samples to a verdict, and a claim gated on it. Everything here is a pure
// function of the recorded samples and options: `report verify` recomputes it.
//
// ratio = median(B) / median(A), with a percentile bootstrap interval; the
// Mann-Whitney U test of A against B; and the order tests, per arm:
//   carryover  its samples run right after itself against those run right after
//              the other arm (Mann-Whitney U);
//   position   its samples by position in the block, 0..3 (Kruskal-Wallis H).
// An order test flags when its p is below order_alpha / (number of order tests)
// (Bonferroni) and its effect (the largest ratio between the groups' medians,
// minus 1) is at least the band below: an effect smaller than what counts as
// "same" cannot explain a difference.
//
// Verdict, first match:
//   order-dependent  an order test flagged;
//   same             the ratio's interval lies within 1 ± the band: same_within, widened to
//                    1.5 timer ticks where the timer is that coarse (CUDA events tick about
//                    every 0.5 us: a 6 us kernel cannot be told apart by 2 %);
//   faster           B faster: the interval lies below 1 and the U test's p < alpha;
//   slower           B slower: the interval lies above 1 and p < alpha;
//   ambiguous        otherwise (more samples, or a quieter machine, may decide).
// The naive protocol's "verdict" is the naive reading of its means (faster, slower
// or same by the ratio of means alone): what the PR's script would have claimed.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "error.hpp"
#include "timing/session.hpp"
#include "timing/stats.hpp"

namespace bitproof::timing {

struct VerdictOptions {
  double same_within = 0.01;
  double alpha = 0.01;
  double order_alpha = 0.01;
  int resamples = 2000;
  double level = 0.95;
  std::uint64_t seed = 1;  // the bootstrap's
};

struct OrderTest {
  std::string kind;  // "carryover" or "position"
  int arm = 0;
  RankTest test;
  double effect = 0;  // max group median / min group median - 1
  bool flagged = false;
};

struct Statistics {
  std::array<std::size_t, 2> samples{};    // unthrottled
  std::array<std::size_t, 2> throttled{};
  std::array<double, 2> centre_us{};       // medians (naive: means)
  double ratio = 0;                        // centre B / centre A
  double resolution_us = 0;                // the smallest gap between distinct sample times (the timer's tick)
  double same_band = 0;                    // max(same_within, 1.5 ticks / the smaller centre)
  bool band_from_timer = false;            // the timer, not same_within, set the band
  Interval interval;
  RankTest test;                           // Mann-Whitney U, A against B
  std::vector<OrderTest> order;
  std::string verdict;
};

[[nodiscard]] Statistics analyse(const std::vector<Sample>& samples, Protocol protocol, const VerdictOptions& options);

// A claim the gate checks: "<arm> faster by P%", "<arm> slower by P%" or "same within P%",
// <arm> one of A, B or an arm's name (any case).
struct Claim {
  enum class Kind : std::uint8_t { kFaster, kSlower, kSame };
  Kind kind = Kind::kSame;
  int arm = 1;
  double fraction = 0;  // P / 100
  std::string text;
};
[[nodiscard]] Expected<Claim> parse_claim(const std::string& text, const std::array<std::string, 2>& arm_names);

struct ClaimJudgement {
  bool passes = false;
  std::string why;
};
// Passes when no order effect was flagged and the whole interval lies beyond the claim.
[[nodiscard]] ClaimJudgement judge_claim(const Claim& claim, const Statistics& stats,
                                         const std::array<std::string, 2>& arm_names);

// "B (folded) is 3.1 % faster than A (ordinary): ratio 0.969 [0.962, 0.975], p = 2e-09"
[[nodiscard]] std::string verdict_sentence(const Statistics& stats, const std::array<std::string, 2>& arm_names,
                                           Protocol protocol);

}  // namespace bitproof::timing
