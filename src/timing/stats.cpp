#include "timing/stats.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <limits>
#include <numeric>

#include "splitmix.hpp"

namespace bitproof::timing {
namespace {

// Mid-ranks (1-based, ties averaged) of `values`, and the tie term sum(t^3 - t).
struct Ranks {
  std::vector<double> rank;
  double tie_term = 0;
};

Ranks mid_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return values[i] < values[j]; });
  Ranks r{std::vector<double>(values.size()), 0};
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double mid = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r.rank[order[k]] = mid;
    const double t = static_cast<double>(j - i + 1);
    r.tie_term += t * t * t - t;
    i = j + 1;
  }
  return r;
}

// The number of arrangements of m + n values with U = u, u = 0..m·n: the
// coefficients of the Gaussian binomial [m+n choose m]_q, built as
// prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), each division exact (a running sum).
std::vector<double> u_counts(std::size_t m, std::size_t n) {
  std::vector<double> c(m * n + 1, 0.0);
  c[0] = 1;
  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t u = c.size(); u-- > n + i;) c[u] -= c[u - n - i];  // × (1 - q^(n+i))
    for (std::size_t u = i; u < c.size(); ++u) c[u] += c[u - i];        // ÷ (1 - q^i)
  }
  return c;
}

double exact_two_sided(double u, std::size_t m, std::size_t n) {
  const std::vector<double> c = u_counts(m, n);
  const double total = std::accumulate(c.begin(), c.end(), 0.0);
  const double tail_u = std::min(u, static_cast<double>(m * n) - u);
  double tail = 0;
  for (std::size_t k = 0; static_cast<double>(k) <= tail_u; ++k) tail += c[k];
  return std::min(1.0, 2 * tail / total);
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return {};
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  const Ranks r = mid_ranks(all);
  const double m = static_cast<double>(a.size()), n = static_cast<double>(b.size());
  const double rank_sum = std::accumulate(r.rank.begin(), r.rank.begin() + static_cast<std::ptrdiff_t>(a.size()), 0.0);
  const double u = rank_sum - m * (m + 1) / 2;
  if (r.tie_term == 0 && a.size() * b.size() <= kExactMannWhitneyCells) {
    return {u, exact_two_sided(u, a.size(), b.size()), true};
  }
  const double total = m + n;
  const double variance = m * n / 12 * ((total + 1) - r.tie_term / (total * (total - 1)));
  if (variance <= 0) return {u, 1, false};
  const double z = std::max(0.0, std::fabs(u - m * n / 2) - 0.5) / std::sqrt(variance);
  return {u, std::erfc(z / std::sqrt(2.0)), false};
}

RankTest kruskal_wallis(const std::vector<std::vector<double>>& groups) {
  std::vector<double> all;
  std::vector<std::size_t> sizes;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    all.insert(all.end(), g.begin(), g.end());
    sizes.push_back(g.size());
  }
  if (sizes.size() < 2) return {};
  const Ranks r = mid_ranks(all);
  const double total = static_cast<double>(all.size());
  double sum = 0;
  std::size_t at = 0;
  for (std::size_t size : sizes) {
    const double rank_sum = std::accumulate(r.rank.begin() + static_cast<std::ptrdiff_t>(at),
                                            r.rank.begin() + static_cast<std::ptrdiff_t>(at + size), 0.0);
    sum += rank_sum * rank_sum / static_cast<double>(size);
    at += size;
  }
  const double correction = 1 - r.tie_term / (total * total * total - total);
  if (correction <= 0) return {};
  const double h = (12 / (total * (total + 1)) * sum - 3 * (total + 1)) / correction;
  const boost::math::chi_squared chi2(static_cast<double>(sizes.size() - 1));
  return {h, boost::math::cdf(boost::math::complement(chi2, std::max(0.0, h))), false};
}

Interval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b, std::uint64_t seed,
                                int resamples, double level) {
  if (a.empty() || b.empty() || resamples < 1) return {std::numeric_limits<double>::quiet_NaN(),
                                                        std::numeric_limits<double>::quiet_NaN()};
  std::vector<double> ratios(static_cast<std::size_t>(resamples));
  std::vector<double> draw_a(a.size()), draw_b(b.size());
  std::uint64_t state = seed;
  for (double& ratio : ratios) {
    for (double& v : draw_a) v = a[splitmix64_next(state) % a.size()];
    for (double& v : draw_b) v = b[splitmix64_next(state) % b.size()];
    ratio = median(draw_b) / median(draw_a);
  }
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - level) / 2;
  const auto pick = [&](double q) {
    const auto last = static_cast<double>(ratios.size() - 1);
    return ratios[static_cast<std::size_t>(std::clamp(std::round(q * last), 0.0, last))];
  };
  return {pick(tail), pick(1 - tail)};
}

double median_relative_halfwidth(std::vector<double> values) {
  const std::size_t n = values.size();
  if (n < 6) return std::numeric_limits<double>::infinity();
  std::sort(values.begin(), values.end());
  const double spread = 1.96 * std::sqrt(static_cast<double>(n)) / 2;
  const auto lo = static_cast<std::size_t>(std::max(0.0, std::floor(static_cast<double>(n) / 2 - spread)));
  const auto hi = static_cast<std::size_t>(std::min(static_cast<double>(n - 1), std::ceil(static_cast<double>(n) / 2 + spread)));
  const double mid = median(values);
  return mid > 0 ? (values[hi] - values[lo]) / (2 * mid) : std::numeric_limits<double>::infinity();
}

}  // namespace bitproof::timing
