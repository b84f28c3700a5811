// A/B reports (kind "ab"): what `bitproof ab` found, as JSON (the `result` part
// deterministic: the same bits give the same bytes whatever backends ran), the
// lines the CLI prints, the Markdown PR comment and JUnit test cases. The
// renderers read the JSON, so a report read back renders as one just written.
#pragma once

#include <string>
#include <vector>

#include "operator/ab_spec.hpp"
#include "proof/ab_proof.hpp"
#include "report/junit.hpp"
#include "report/report.hpp"

namespace bitproof {

// Backend details for the report's `backends` (never compared): one per runner.
struct AbBackendInfo {
  std::string name;  // "cpu", "cuda sm_90"
  Json info = Json::object();
};

// `modules`: a spec with kernel arms records its kernel modules (result.kernel_modules: file,
// NVRTC options, every file read with its SHA-256, the PTX's SHA-256, and the lines of each
// launched kernel the executor computes unfused where ptxas may contract: "contractible").
[[nodiscard]] Json ab_result_json(const op::AbSpec& spec, const op::Weights& weights, const AbOutcome& outcome,
                                  const std::vector<op::KernelModule>* modules = nullptr);
[[nodiscard]] Json ab_report(const op::AbSpec& spec, const op::Weights& weights, const AbOutcome& outcome,
                             const std::vector<AbBackendInfo>& backends,
                             const std::vector<op::KernelModule>* modules = nullptr);

// The lines `bitproof ab` prints, from a report's JSON.
[[nodiscard]] std::vector<std::string> ab_summary_lines(const Json& report);
// Whether the report's result passes: counted again from its parts.
[[nodiscard]] bool ab_report_passes(const Json& report);
[[nodiscard]] std::string render_ab_markdown(const Json& report);

[[nodiscard]] std::vector<JUnitCase> ab_junit_cases(const Json& report);

}  // namespace bitproof
