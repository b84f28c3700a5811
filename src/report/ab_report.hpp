// A/B reports (kind "ab"): what `bitproof ab` found, as JSON (the `result` part
// deterministic: the same bits give the same bytes whatever backends ran), the
// lines the CLI prints, the Markdown PR comment and JUnit test cases. The
// renderers read the JSON, so a report read back renders as one just written.
#pragma once

#include <string>
#include <vector>

#include "operator/ab_spec.hpp"
#include "proof/ab_proof.hpp"
#include "report/report.hpp"

namespace bitproof {

// Backend details for the report's `backends` (never compared): one per runner.
struct AbBackendInfo {
  std::string name;  // "cpu", "cuda sm_90"
  Json info = Json::object();
};

[[nodiscard]] Json ab_result_json(const op::AbSpec& spec, const op::Weights& weights, const AbOutcome& outcome);
[[nodiscard]] Json ab_report(const op::AbSpec& spec, const op::Weights& weights, const AbOutcome& outcome,
                             const std::vector<AbBackendInfo>& backends);

// The lines `bitproof ab` prints, from a report's JSON.
[[nodiscard]] std::vector<std::string> ab_summary_lines(const Json& report);
// Whether the report's result passes: counted again from its parts.
[[nodiscard]] bool ab_report_passes(const Json& report);
[[nodiscard]] std::string render_ab_markdown(const Json& report);

// One <testcase>: a <failure> of `type` with `message` and `body` when it
// failed; `out`, when not empty, as its <system-out>.
struct JUnitCase {
  std::string classname;
  std::string name;
  bool failed = false;
  std::string message;
  std::string body;
  std::string type = "refuted";
  std::string out;
};
// A case of the default type ("refuted") and no captured output.
[[nodiscard]] inline JUnitCase junit_case(std::string classname, std::string name, bool failed, std::string message,
                                          std::string body) {
  JUnitCase c;
  c.classname = std::move(classname);
  c.name = std::move(name);
  c.failed = failed;
  c.message = std::move(message);
  c.body = std::move(body);
  return c;
}
[[nodiscard]] std::vector<JUnitCase> ab_junit_cases(const Json& report);
// One <testsuites> document with one suite of `cases`.
[[nodiscard]] std::string junit_document(const std::string& suite, const std::vector<JUnitCase>& cases);

}  // namespace bitproof
