// Admission reports (kind "admission", `bitproof admit --report`): the kind's
// row. The schema is the whole of what its renderings rely on; its Markdown
// and JUnit are render_audit.cpp's. Verifying one admits again from the audit
// and domain reports it names, which is the audit room's: the CLI registers
// that verifier into this row (set_report_verifier, src/cli/cmd_report.cpp).
#pragma once

#include <string>

#include "report/kind.hpp"

namespace bitproof {

[[nodiscard]] ReportKind admission_report_kind();

// Markdown of an admission: verdict, the tensors outside first with their
// codes below and above, a per-layer table, layers outside first.
[[nodiscard]] std::string render_admission_markdown(const Json& report);
// One <testcase> per tensor: it fails when the tensor holds codes outside the
// proven interval and the verdict is refused.
[[nodiscard]] std::string render_admission_junit(const Json& report);

}  // namespace bitproof
