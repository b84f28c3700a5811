#include "timing/session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "splitmix.hpp"
#include "timing/stats.hpp"

namespace bitproof::timing {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The unthrottled times of `arm`.
std::vector<double> times_of(const std::vector<Sample>& samples, int arm) {
  std::vector<double> t;
  for (const Sample& s : samples) {
    if (s.arm == arm && !s.throttled) t.push_back(s.us);
  }
  return t;
}

Expected<Ok> take(TimedArm& arm, int index, std::size_t block, int position, const SessionOptions& o, Session& s) {
  auto t = arm.sample(o.flush_l2 && o.protocol == Protocol::kCounterbalanced);
  if (!t) return t.error();
  const bool throttled = o.reference_clock_mhz > 0 && t->clock_mhz < o.throttle_fraction * o.reference_clock_mhz;
  s.samples.push_back({index, block, position, t->us, t->clock_mhz, throttled});
  return Ok{};
}

// The PR's measurement: A prepared (no settling) and timed, then B; the first replays count.
Expected<Session> run_naive(TimedArm& a, TimedArm& b, const SessionOptions& o) {
  Session s;
  const auto start = Clock::now();
  TimedArm* arms[2] = {&a, &b};
  for (int arm = 0; arm < 2; ++arm) {
    auto w = arms[arm]->prepare(false);
    if (!w) return w.error();
    s.warmup[arm] = *w;
    for (std::size_t i = 0; i < o.naive_samples; ++i) {
      if (auto ok = take(*arms[arm], arm, 0, static_cast<int>(i), o, s); !ok) return ok.error();
    }
  }
  s.stopped = "naive: a fixed count";
  s.seconds = seconds_since(start);
  return s;
}

}  // namespace

Expected<Warmup> warm_until_settled(const std::function<Expected<double>()>& replay) {
  std::vector<double> times;
  Warmup w;
  const auto start = Clock::now();
  while (w.replays < kMaxWarmupReplays && seconds_since(start) < kMaxWarmupSeconds) {
    auto t = replay();
    if (!t) return t.error();
    times.push_back(*t);
    ++w.replays;
    if (times.size() < 2 * kSettleWindow) continue;
    const auto end = times.end();
    const double last = median(std::vector<double>(end - kSettleWindow, end));
    const double before = median(std::vector<double>(end - 2 * kSettleWindow, end - kSettleWindow));
    w.last_median_us = last;
    if (std::fabs(last / before - 1) <= kSettleTolerance) {
      w.settled = true;
      break;
    }
  }
  return w;
}

std::vector<int> block_arms(BlockOrder order, std::size_t block, std::uint64_t seed) {
  if (order == BlockOrder::kAbba) return block % 2 == 0 ? std::vector<int>{0, 1, 1, 0} : std::vector<int>{1, 0, 0, 1};
  std::vector<int> arms{0, 0, 1, 1};
  std::uint64_t state = splitmix64(seed ^ (block * 0xD1B54A32D192ED03ull));
  for (std::size_t i = arms.size() - 1; i > 0; --i) {  // Fisher-Yates
    std::swap(arms[i], arms[splitmix64_next(state) % (i + 1)]);
  }
  return arms;
}

Expected<Session> run_session(TimedArm& a, TimedArm& b, const SessionOptions& o, const SessionProgress& progress) {
  if (o.protocol == Protocol::kNaive) return run_naive(a, b, o);
  Session s;
  TimedArm* arms[2] = {&a, &b};
  for (int arm = 0; arm < 2; ++arm) {
    auto w = arms[arm]->prepare(true);
    if (!w) return w.error();
    s.warmup[arm] = *w;
  }
  const auto start = Clock::now();
  for (std::size_t block = 0;; ++block) {
    const std::vector<int> order = block_arms(o.order, block, o.seed);
    for (std::size_t pos = 0; pos < order.size(); ++pos) {
      if (auto ok = take(*arms[order[pos]], order[pos], block, static_cast<int>(pos), o, s); !ok) return ok.error();
    }
    if (progress) progress(s.samples.size() / 2, s.samples.size() / 2);
    if (seconds_since(start) >= o.timeout_s) {
      s.stopped = "timeout";
      break;
    }
    if (s.samples.size() >= 2 * o.max_samples) {
      s.stopped = "sample limit";
      break;
    }
    // The noise check sorts every sample: once every 4 blocks is plenty.
    if (block % 4 != 3 || seconds_since(start) < o.min_time_s) continue;
    const std::vector<double> ta = times_of(s.samples, 0), tb = times_of(s.samples, 1);
    if (std::min(ta.size(), tb.size()) < o.min_samples) continue;
    if (median_relative_halfwidth(ta) <= o.noise_target && median_relative_halfwidth(tb) <= o.noise_target) {
      s.stopped = "noise target reached";
      break;
    }
  }
  s.seconds = seconds_since(start);
  return s;
}

}  // namespace bitproof::timing
