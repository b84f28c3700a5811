// Proof reports (kind "proof", `bitproof prove --report`, `report merge`): the
// kind's row and what reads one back — its checks beyond the schema, its
// judgement, its JUnit cases, its case map and `report verify` (the recorded
// spec proved again on this machine's CPU). Its Markdown is report.cpp's, beside
// the writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "error.hpp"
#include "report/kind.hpp"
#include "report/spec_report.hpp"

namespace bitproof {

[[nodiscard]] ReportKind proof_report_kind();

// The recorded spec (and its digest), the counts adding up, every string the
// recorded spec's (check_report_strings). Expects a report the envelope passed.
[[nodiscard]] Expected<Ok> check_proof_report(const Json& report, const std::string& path);

// The report judged again from its parts (ReportJudgement). Expects a report
// check_proof_report accepted.
[[nodiscard]] ReportJudgement judge_proof_report(const Json& report);

// The input a proof's SVG case map is drawn over: "scale", else the last input.
[[nodiscard]] std::string map_input(const Spec& spec);
// Whether the case map of the proof's domain can be drawn: the map input's
// interval spans at most kMaxMapCodes codes (a 16-bit format) and discovery can
// sweep it. Errors start "--svg: " (prove --svg checks before it proves).
inline constexpr std::uint64_t kMaxMapCodes = 65536;
[[nodiscard]] std::optional<Error> check_proof_map(const Spec& spec);

}  // namespace bitproof
