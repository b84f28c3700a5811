// Domain reports (kind "domain", `bitproof domain SPEC --report`): the kind's
// row and what reads one back — its checks beyond the schema, its judgement,
// its JUnit cases, its case map (svg.cpp) and `report verify` (the discovery
// run again). Admission reads the domain report it admits against through
// these alone (audit/admission.cpp: load_domain_report). Its Markdown is
// report.cpp's, beside the writer.
#pragma once

#include <string>

#include "error.hpp"
#include "report/kind.hpp"
#include "report/spec_report.hpp"

namespace bitproof {

[[nodiscard]] ReportKind domain_report_kind();

// A domain report as every reader needs it: the envelope and the schema
// (check_report_envelope), kind "domain", then check_domain_report.
[[nodiscard]] Expected<Ok> validate_domain_report(const Json& report, const std::string& path);
// The recorded spec (and its digest) and every string the recorded spec's
// (check_report_strings). Expects a report the envelope passed.
[[nodiscard]] Expected<Ok> check_domain_report(const Json& report, const std::string& path);

// The report judged again from its parts: each claim over the spec's interval
// (ReportJudgement). Expects a report check_domain_report accepted.
[[nodiscard]] ReportJudgement judge_domain_report(const Json& report);

// The discovery the report records run again here: the result part it gives.
// User recipes' sources resolve against `spec_dir` (default: the report's directory).
[[nodiscard]] Expected<Json> rerun_domain_result(const Json& report, const std::string& path,
                                                 const std::string& spec_dir = {});

// The case map: rows are the cases of the other inputs (element codes), columns
// the swept input's codes (scale bytes); each cell equal / mismatch, inside or
// outside the claimed interval; the maximal exact interval marked. Needs claims
// that carry a map (domains of ≤ kDiscoveryMapLimit rows). svg.cpp.
[[nodiscard]] Expected<std::string> render_domain_svg(const Json& report, const std::string& path);

}  // namespace bitproof
