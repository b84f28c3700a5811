#include "report/kind_time.hpp"

#include <fmt/format.h>

#include "report/compare.hpp"
#include "report/junit.hpp"
#include "report/time_report.hpp"

namespace bitproof {
namespace {

Expected<Ok> check_time_report(const Json& report, const std::string& path) {
  return check_time_consistency(report["result"], path);
}

std::string time_junit(const Json& report) {
  return junit_document(report["result"]["spec"]["name"].get<std::string>(), time_junit_cases(report));
}

Expected<std::string> time_svg(const Json& report, const std::string&) { return render_time_svg(report); }

Expected<Verification> verify_time(const Json& report, const std::string& path, const VerifyOptions&) {
  const Json& recorded = report["result"];
  auto now = rederive_time_result(recorded, path);
  if (!now) return now.error();
  const std::string name = recorded["spec"]["name"].get<std::string>();
  if (auto differs = result_differs(name, recorded, *now)) return *differs;
  const bool passes = time_report_passes(report);
  return Verification{passes,
                      fmt::format("verified: {}: {}: statistics, verdicts and claim re-derive exactly from the "
                                  "recorded samples (the times themselves are measurements: run bitproof "
                                  "time again to re-measure)",
                                  passes ? "PASS" : "FAIL", name),
                      time_summary_lines(report), false};
}

}  // namespace

ReportKind time_report_kind() {
  ReportKind k;
  k.name = "time";
  k.validate = check_time_report;
  k.markdown = render_time_markdown;
  k.junit = time_junit;
  k.svg = time_svg;
  k.verify = verify_time;
  k.diff = diff_results;
  return k;
}

}  // namespace bitproof
