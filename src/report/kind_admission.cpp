#include "report/kind_admission.hpp"

namespace bitproof {

ReportKind admission_report_kind() {
  ReportKind k;
  k.name = "admission";
  k.markdown = render_admission_markdown;
  k.junit = render_admission_junit;
  return k;
}

}  // namespace bitproof
