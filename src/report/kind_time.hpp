// Timing reports (kind "time", `bitproof time SPEC --report`): the kind's row
// and `report verify` of one (statistics, verdicts and claim re-derived from
// the recorded samples). Its writer, structural checks and renderings are
// report/time_report.hpp's.
#pragma once

#include "report/kind.hpp"

namespace bitproof {

[[nodiscard]] ReportKind time_report_kind();

}  // namespace bitproof
