// Timing reports (kind "time"): every raw sample (arm, block, position, time,
// clock, throttled), the protocol, the warm-up, the statistics and the verdict,
// the claim's judgement and the A/A calibration. Unlike a proof's, the result is
// measured, not recomputed: what `report verify` checks is that the structure
// adds up (blocks in the recorded order, throttle marks from the recorded clocks)
// and that statistics, verdict and claim re-derive exactly from the samples.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "report/junit.hpp"
#include "report/report.hpp"
#include "timing/session.hpp"
#include "timing/time_spec.hpp"
#include "timing/verdict.hpp"

namespace bitproof {

// What a run was asked to do, as recorded (the report's result.protocol).
struct TimeProtocol {
  timing::SessionOptions session;
  timing::VerdictOptions verdict;
  bool isolate = false;
};

struct TimeRun {
  timing::Session session;
  std::optional<timing::Session> calibration;  // A against A
  std::optional<timing::Claim> claim;
};

[[nodiscard]] Json time_result_json(const timing::TimeSpec& spec, const TimeProtocol& protocol, const TimeRun& run);
[[nodiscard]] Json time_report(const timing::TimeSpec& spec, const TimeProtocol& protocol, const TimeRun& run,
                               const Json& device);

// The result re-derived from its own samples (statistics, verdicts, claim), for
// `report verify`; errors when the recorded structure does not add up.
[[nodiscard]] Expected<Json> rederive_time_result(const Json& result, const std::string& path);
// Structural checks beyond the schema (read back): arms, blocks, positions, throttle marks.
[[nodiscard]] Expected<Ok> check_time_consistency(const Json& result, const std::string& path);

// Whether the report passes: its claim's judgement, or (no claim) true.
[[nodiscard]] bool time_report_passes(const Json& report);
[[nodiscard]] std::vector<std::string> time_summary_lines(const Json& report);
[[nodiscard]] std::string render_time_markdown(const Json& report);
[[nodiscard]] std::vector<JUnitCase> time_junit_cases(const Json& report);
// The samples by arm in run order, and by position in the block.
[[nodiscard]] std::string render_time_svg(const Json& report);

}  // namespace bitproof
