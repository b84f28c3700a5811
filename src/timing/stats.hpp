// The statistics of the timing gate, distribution-free throughout (GPU times are
// skewed and have outliers; nothing here assumes a normal distribution):
// medians, the Mann-Whitney U test (exact when the samples are small and untied,
// the normal approximation with tie and continuity corrections otherwise), the
// Kruskal-Wallis H test, and a percentile bootstrap of the ratio of two medians
// drawn from splitmix64 (so an interval is a pure function of the samples and a
// seed: `report verify` recomputes it to the last bit).
#pragma once

#include <cstdint>
#include <vector>

namespace bitproof::timing {

// The median (the mean of the two middle values for an even count); NaN when empty.
[[nodiscard]] double median(std::vector<double> values);

struct RankTest {
  double statistic = 0;  // U of the first sample (Mann-Whitney) or H (Kruskal-Wallis)
  double p = 1;          // two-sided
  bool exact = false;    // from the exact null distribution rather than an approximation
};

// Two-sided Mann-Whitney U test of "a and b come from one distribution".
// statistic = U_a = #{(i, j): a_i > b_j} + #{a_i = b_j} / 2. Exact when
// |a|·|b| <= kExactMannWhitneyCells and no value is tied; p = 1 when a side is empty.
inline constexpr std::size_t kExactMannWhitneyCells = 2500;
[[nodiscard]] RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

// Kruskal-Wallis H test over groups (empty groups ignored), tie-corrected, p from
// the chi-squared distribution with (groups - 1) degrees of freedom; p = 1 with
// fewer than two non-empty groups or when every value is tied.
[[nodiscard]] RankTest kruskal_wallis(const std::vector<std::vector<double>>& groups);

struct Interval {
  double lo = 0;
  double hi = 0;
};

// Percentile bootstrap interval (`level`, e.g. 0.95) of median(b) / median(a):
// `resamples` pairs of resamples with replacement, indices from splitmix64(seed).
[[nodiscard]] Interval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                              std::uint64_t seed, int resamples, double level);

// The distribution-free 95 % confidence interval of one sample's median (order
// statistics n/2 ± 1.96·sqrt(n)/2), as a half-width relative to the median:
// the noise the stopping rule compares with its target. Infinity below 6 values.
[[nodiscard]] double median_relative_halfwidth(std::vector<double> values);

}  // namespace bitproof::timing
