#include "report/kind_audit.hpp"

namespace bitproof {

ReportKind audit_report_kind() {
  ReportKind k;
  k.name = "audit";
  k.markdown = render_audit_markdown;
  k.junit = render_audit_junit;
  return k;
}

}  // namespace bitproof
