// Checkpoint audit reports (kind "audit", `bitproof audit CHECKPOINT --report`):
// the kind's row. The schema is the whole of what its renderings rely on; its
// Markdown and JUnit are render_audit.cpp's. Verifying one audits the
// checkpoint again, which is the audit room's: the CLI registers that
// verifier into this row (set_report_verifier, src/cli/cmd_report.cpp). The
// audit room's own reader (audit/admission.hpp: parse_audit_report) checks
// what admission and prove --scales-from take from it.
#pragma once

#include <string>

#include "report/kind.hpp"

namespace bitproof {

[[nodiscard]] ReportKind audit_report_kind();

// Markdown of an audit: summary lines, tensors holding NaN, Inf or non-codes,
// a per-layer table.
[[nodiscard]] std::string render_audit_markdown(const Json& report);
// One <testcase> per tensor: it fails when the tensor holds NaN, Inf or codes
// that are no code of its format.
[[nodiscard]] std::string render_audit_junit(const Json& report);

}  // namespace bitproof
