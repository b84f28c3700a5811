// The timing gate's sampling: two arms, each prepared and warmed on its own, then
// sampled in counterbalanced blocks until the noise target, a sample limit or the
// timeout; and the verdict from the samples alone (src/timing/verdict.hpp), so a
// report read back is judged exactly as it was when written.
//
// A TimedArm is whatever can replay one arm and time that replay: a CUDA Graph on
// the device (src/backend/cuda_timing.cpp), the same in a child process
// (--isolate), or a simulated arm in the tests. The session owns the protocol:
// the order of samples, the L2 flush request, the clock check and the stopping.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"

namespace bitproof::timing {

// One timed replay: its GPU time and the SM clock measured beside it.
struct Timed {
  double us = 0;
  double clock_mhz = 0;
};

// How an arm settled before sampling: replays run until the median of the last
// kSettleWindow times is within kSettleTolerance of the window before it.
struct Warmup {
  int replays = 0;
  bool settled = false;
  double last_median_us = 0;
};

inline constexpr int kSettleWindow = 10;
inline constexpr double kSettleTolerance = 0.02;
inline constexpr int kMaxWarmupReplays = 3000;
inline constexpr double kMaxWarmupSeconds = 5;
// Calls `replay` (one timed replay, in microseconds) until the times settle, at
// most kMaxWarmupReplays times or kMaxWarmupSeconds; settled = false when they did not.
[[nodiscard]] Expected<Warmup> warm_until_settled(const std::function<Expected<double>()>& replay);

class TimedArm {
 public:
  virtual ~TimedArm() = default;
  // Loads, allocates and fills what the arm needs, warms its launches until their times
  // settle (`settle` true) and captures its graph. Nothing of another arm is touched.
  virtual Expected<Warmup> prepare(bool settle) = 0;
  // One replay, timed; with `flush_l2` the device's L2 is flushed before it (untimed).
  virtual Expected<Timed> sample(bool flush_l2) = 0;
  [[nodiscard]] virtual std::string name() const = 0;
};

enum class Protocol : std::uint8_t {
  kCounterbalanced,  // each arm prepared and warmed on its own, then blocks A B B A, B A A B, ...
  kNaive,            // A prepared and timed first, then B: no warm-up, no flush, no blocks (the PR's mistake)
};
enum class BlockOrder : std::uint8_t { kAbba, kRandom };

struct SessionOptions {
  Protocol protocol = Protocol::kCounterbalanced;
  BlockOrder order = BlockOrder::kAbba;
  bool flush_l2 = true;               // --cache cold
  std::size_t min_samples = 50;       // per arm, before the noise target may stop the run
  std::size_t max_samples = 2000;     // per arm
  double noise_target = 0.005;        // median CI half-width relative to the median, per arm
  double min_time_s = 1;              // sampling wall time before the noise target may stop the run
  double timeout_s = 20;              // sampling wall time
  double throttle_fraction = 0.75;    // a sample whose clock is below this fraction of the reference is discarded
  double reference_clock_mhz = 0;     // 0: no clock check
  std::size_t naive_samples = 3;      // kNaive: replays timed per arm
  std::uint64_t seed = 1;             // kRandom block orders
};

// One sample as recorded: arm 0 (A) or 1 (B), its block and position in the
// block (kNaive: block 0, position = replay index), and what was measured.
struct Sample {
  int arm = 0;
  std::size_t block = 0;
  int position = 0;
  double us = 0;
  double clock_mhz = 0;
  bool throttled = false;
};

struct Session {
  std::vector<Sample> samples;
  Warmup warmup[2];
  std::string stopped;  // "noise target reached", "sample limit", "timeout", "naive: fixed count"
  double seconds = 0;
};

// The arms of block `block`: kAbba alternates A B B A and B A A B; kRandom is a
// permutation of A A B B drawn from splitmix64(seed, block).
[[nodiscard]] std::vector<int> block_arms(BlockOrder order, std::size_t block, std::uint64_t seed);

using SessionProgress = std::function<void(std::size_t samples_a, std::size_t samples_b)>;

// Runs the protocol over `arms` (A, B). A clock below throttle_fraction × reference
// marks the sample throttled: recorded, excluded from the statistics and the
// stopping rule. Errors come from the arms.
[[nodiscard]] Expected<Session> run_session(TimedArm& a, TimedArm& b, const SessionOptions& options,
                                            const SessionProgress& progress = {});

}  // namespace bitproof::timing
