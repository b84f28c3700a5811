// A/B reports (kind "ab", `bitproof ab SPEC --report`): the kind's row and what
// reads one back — its checks beyond the schema and `report verify` (the
// recorded spec run again on the CPU model). Its writer and renderings are
// report/ab_report.hpp's.
#pragma once

#include <string>

#include "error.hpp"
#include "report/kind.hpp"

namespace bitproof {

[[nodiscard]] ReportKind ab_report_kind();

// The recorded A/B spec is one bitproof reads, its digest its own, and the
// result adds up (its outputs and arms the spec's, the counts agreeing with
// each other and with the differences listed). Expects a report the envelope passed.
[[nodiscard]] Expected<Ok> check_ab_report(const Json& report, const std::string& path);

}  // namespace bitproof
