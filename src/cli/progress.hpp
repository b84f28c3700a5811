// A progress bar on stderr for long sweeps. Contract: draws only when stderr
// is a terminal, --quiet is off and the sweep has run for more than a second;
// redraws at most ten times a second; erases itself when done, so what stays
// on the terminal is the same as without it. No colour (NO_COLOR is moot).
// BITPROOF_PROGRESS=always draws even when stderr is not a terminal, from the
// first finished range (tests, CI logs); BITPROOF_PROGRESS=never never draws.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "proof/engine.hpp"

namespace bitproof::cli {

class Progress {
 public:
  Progress(std::string what, bool quiet);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The engine callback (thread-safe); empty when the bar is off.
  [[nodiscard]] ProgressFn callback();
  // Erases the bar if it was drawn.
  void done();

 private:
  void update(std::uint64_t cases_done, std::uint64_t total);
  std::string what_;
  bool enabled_;
  double quiet_seconds_;
  bool drawn_ = false;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

// One line of the bar, e.g. "prove dsv4 [#######.........]  43%  1.2e9 of 4.3e9 cases  0:02 left".
[[nodiscard]] std::string progress_line(const std::string& what, std::uint64_t done, std::uint64_t total,
                                        double seconds);

}  // namespace bitproof::cli
