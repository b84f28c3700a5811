#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bitproof::cli {
namespace {

constexpr int kBarWidth = 24;
constexpr double kQuietSeconds = 1.0;   // nothing is drawn before this
constexpr double kRedrawSeconds = 0.1;  // at most ten redraws a second

bool forced(const char* value) {
  const char* force = std::getenv("BITPROOF_PROGRESS");
  return force != nullptr && std::strcmp(force, value) == 0;
}

bool wanted(bool quiet) {
  if (quiet || forced("never")) return false;
  return forced("always") || isatty(STDERR_FILENO) == 1;
}

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

std::string progress_line(const std::string& what, std::uint64_t done, std::uint64_t total, double seconds) {
  const double fraction = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(fraction * kBarWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kBarWidth - filled), '.');
  std::string left = "";
  if (done > 0 && done < total) left = "  " + clock_text(seconds * (1.0 - fraction) / fraction) + " left";
  return fmt::format("{} [{}] {:3}%  {:.3g} of {:.3g} cases{}", what, bar, static_cast<int>(fraction * 100),
                     static_cast<double>(done), static_cast<double>(total), left);
}

Progress::Progress(std::string what, bool quiet)
    : what_(std::move(what)), enabled_(wanted(quiet)), quiet_seconds_(forced("always") ? 0.0 : kQuietSeconds) {}

Progress::~Progress() { done(); }

ProgressFn Progress::callback() {
  if (!enabled_) return {};
  return [this](std::uint64_t cases_done, std::uint64_t total) { update(cases_done, total); };
}

void Progress::update(std::uint64_t cases_done, std::uint64_t total) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start_).count();
  if (seconds < quiet_seconds_ || std::chrono::duration<double>(now - last_draw_).count() < kRedrawSeconds) return;
  last_draw_ = now;
  drawn_ = true;
  // \r and erase-to-end-of-line: the bar overwrites itself.
  std::fprintf(stderr, "\r%s\x1b[K", progress_line(what_, cases_done, total, seconds).c_str());
  std::fflush(stderr);
}

void Progress::done() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace bitproof::cli
