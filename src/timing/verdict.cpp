#include "timing/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <sstream>

namespace bitproof::timing {
namespace {

double mean(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// max median / min median - 1 over the non-empty groups.
double spread(const std::vector<std::vector<double>>& groups) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    const double m = median(g);
    lo = any ? std::min(lo, m) : m;
    hi = any ? std::max(hi, m) : m;
    any = true;
  }
  return any && lo > 0 ? hi / lo - 1 : 0;
}

std::vector<OrderTest> order_tests(const std::vector<Sample>& samples) {
  std::vector<OrderTest> tests;
  for (int arm = 0; arm < 2; ++arm) {
    std::vector<std::vector<double>> after(2), position(4);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      if (s.arm != arm || s.throttled) continue;
      if (i > 0) after[samples[i - 1].arm == arm ? 0 : 1].push_back(s.us);
      if (s.position >= 0 && s.position < 4) position[static_cast<std::size_t>(s.position)].push_back(s.us);
    }
    tests.push_back({"carryover", arm, mann_whitney(after[0], after[1]), spread(after), false});
    tests.push_back({"position", arm, kruskal_wallis(position), spread(position), false});
  }
  return tests;
}

// The smallest positive gap between distinct values: the timer's tick when times are quantised.
double resolution(const std::array<std::vector<double>, 2>& times) {
  std::vector<double> all(times[0]);
  all.insert(all.end(), times[1].begin(), times[1].end());
  std::sort(all.begin(), all.end());
  double gap = 0;
  for (std::size_t i = 1; i < all.size(); ++i) {
    const double d = all[i] - all[i - 1];
    if (d > 0 && (gap == 0 || d < gap)) gap = d;
  }
  return gap;
}

std::string verdict_of(const Statistics& s, const VerdictOptions& o) {
  for (const OrderTest& t : s.order) {
    if (t.flagged) return "order-dependent";
  }
  if (s.interval.lo >= 1 - s.same_band && s.interval.hi <= 1 + s.same_band) return "same";
  if (s.interval.hi < 1 && s.test.p < o.alpha) return "faster";
  if (s.interval.lo > 1 && s.test.p < o.alpha) return "slower";
  return "ambiguous";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Statistics analyse(const std::vector<Sample>& samples, Protocol protocol, const VerdictOptions& o) {
  Statistics s;
  std::array<std::vector<double>, 2> times;
  for (const Sample& x : samples) {
    if (x.arm < 0 || x.arm > 1) continue;
    const auto arm = static_cast<std::size_t>(x.arm);
    if (x.throttled) {
      ++s.throttled[arm];
    } else {
      times[arm].push_back(x.us);
    }
  }
  for (std::size_t arm = 0; arm < 2; ++arm) s.samples[arm] = times[arm].size();
  const bool naive = protocol == Protocol::kNaive;
  for (std::size_t arm = 0; arm < 2; ++arm) s.centre_us[arm] = naive ? mean(times[arm]) : median(times[arm]);
  s.ratio = s.centre_us[1] / s.centre_us[0];
  s.interval = bootstrap_median_ratio(times[0], times[1], o.seed, o.resamples, o.level);
  s.test = mann_whitney(times[0], times[1]);
  if (naive) {
    s.interval = {s.ratio, s.ratio};
    s.verdict = s.ratio < 1 - o.same_within ? "faster" : s.ratio > 1 + o.same_within ? "slower" : "same";
    return s;
  }
  s.resolution_us = resolution(times);
  const double smaller = std::min(s.centre_us[0], s.centre_us[1]);
  s.same_band = std::max(o.same_within, smaller > 0 ? 1.5 * s.resolution_us / smaller : 0.0);
  s.band_from_timer = s.same_band > o.same_within;
  s.order = order_tests(samples);
  for (OrderTest& t : s.order) {
    t.flagged = t.test.p < o.order_alpha / static_cast<double>(s.order.size()) && t.effect >= s.same_band;
  }
  s.verdict = verdict_of(s, o);
  return s;
}

Expected<Claim> parse_claim(const std::string& text, const std::array<std::string, 2>& arm_names) {
  std::istringstream in(text);
  std::vector<std::string> w;
  for (std::string word; in >> word;) w.push_back(word);
  const auto percent = [&](const std::string& p) -> Expected<double> {
    if (p.size() < 2 || p.back() != '%') return Error{fmt::format("--claim \"{}\": \"{}\" is not a percentage", text, p)};
    char* end = nullptr;
    const double v = std::strtod(p.c_str(), &end);
    if (end != p.c_str() + p.size() - 1 || !(v > 0) || !(v < 100)) {
      return Error{fmt::format("--claim \"{}\": the percentage must lie in (0, 100)", text)};
    }
    return v / 100;
  };
  const Error form{fmt::format("--claim \"{}\": expected \"<arm> faster by P%\", \"<arm> slower by P%\" or \"same "
                               "within P%\" (arms: A, B, {}, {})",
                               text, arm_names[0], arm_names[1])};
  if (w.size() == 3 && lower(w[0]) == "same" && lower(w[1]) == "within") {
    auto f = percent(w[2]);
    if (!f) return f.error();
    return Claim{Claim::Kind::kSame, 1, *f, text};
  }
  if (w.size() != 4 || lower(w[2]) != "by" || (lower(w[1]) != "faster" && lower(w[1]) != "slower")) return form;
  int arm = -1;
  for (int i = 0; i < 2; ++i) {
    if (lower(w[0]) == (i == 0 ? "a" : "b") || lower(w[0]) == lower(arm_names[static_cast<std::size_t>(i)])) arm = i;
  }
  if (arm < 0) return Error{fmt::format("--claim \"{}\": no arm \"{}\" (arms: A, B, {}, {})", text, w[0], arm_names[0], arm_names[1])};
  auto f = percent(w[3]);
  if (!f) return f.error();
  return Claim{lower(w[1]) == "faster" ? Claim::Kind::kFaster : Claim::Kind::kSlower, arm, *f, text};
}

ClaimJudgement judge_claim(const Claim& c, const Statistics& s, const std::array<std::string, 2>& names) {
  for (const OrderTest& t : s.order) {
    if (t.flagged) {
      return {false, fmt::format("an order effect ({} of {}: {:.1f} %, p = {:.2g}) makes the times unattributable",
                                 t.kind, names[static_cast<std::size_t>(t.arm)], 100 * t.effect, t.test.p)};
    }
  }
  // The bounds the ratio B/A must respect, from the claim.
  double lo = 0, hi = INFINITY;
  if (c.kind == Claim::Kind::kSame) {
    lo = 1 - c.fraction;
    hi = 1 + c.fraction;
  } else if ((c.kind == Claim::Kind::kFaster) == (c.arm == 1)) {  // B faster, or A slower: B/A small
    hi = c.kind == Claim::Kind::kFaster ? 1 - c.fraction : 1 / (1 + c.fraction);
  } else {  // B slower, or A faster
    lo = c.kind == Claim::Kind::kSlower ? 1 + c.fraction : 1 / (1 - c.fraction);
  }
  const bool holds = s.interval.lo >= lo && s.interval.hi <= hi;
  const std::string bound = std::isinf(hi) ? fmt::format(">= {:.4f}", lo)
                            : lo == 0      ? fmt::format("<= {:.4f}", hi)
                                           : fmt::format("within [{:.4f}, {:.4f}]", lo, hi);
  return {holds, fmt::format("the claim needs B/A {}; the {:.0f} % interval is [{:.4f}, {:.4f}]", bound, 100 * 0.95,
                             s.interval.lo, s.interval.hi)};
}

std::string verdict_sentence(const Statistics& s, const std::array<std::string, 2>& names, Protocol protocol) {
  const std::string b = fmt::format("B ({})", names[1]), a = fmt::format("A ({})", names[0]);
  const double percent = 100 * std::fabs(1 - s.ratio);
  std::string what;
  if (s.verdict == "faster") what = fmt::format("{} is {:.1f} % faster than {}", b, percent, a);
  if (s.verdict == "slower") what = fmt::format("{} is {:.1f} % slower than {}", b, percent, a);
  if (s.verdict == "same") {
    what = fmt::format("{} and {} take the same time (within ±{:.2g} %{})", b, a, 100 * s.same_band,
                       s.band_from_timer ? ", the timer's resolution" : "");
  }
  if (s.verdict == "ambiguous") what = fmt::format("{} against {}: ambiguous", b, a);
  if (s.verdict == "order-dependent") what = fmt::format("{} against {}: order-dependent, not attributable", b, a);
  if (protocol == Protocol::kNaive) {
    return fmt::format("naive (A then B, no warm-up): {}: ratio of means {:.3f} (not a verdict)", what, s.ratio);
  }
  return fmt::format("{}: ratio {:.4f} [{:.4f}, {:.4f}], p = {:.2g}", what, s.ratio, s.interval.lo, s.interval.hi,
                     s.test.p);
}

}  // namespace bitproof::timing
