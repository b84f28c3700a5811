#include "report/kind_ab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "operator/ab_spec.hpp"
#include "operator/kernel_cpu.hpp"
#include "parallel.hpp"
#include "report/ab_report.hpp"
#include "report/compare.hpp"

namespace bitproof {
namespace {

// An A/B result read back must add up: its outputs and arms are the spec's, the
// counts agree with each other and with the differences listed (the renderers rely
// on each difference naming both arms).
Expected<Ok> check_ab_consistency(const op::AbSpec& spec, const Json& result, const std::string& path) {
  const Json& outputs = result["outputs"];
  if (outputs.size() != spec.outputs.size())
    return report_field_error(path, "result.outputs", "not the spec's outputs");
  std::uint64_t elements = 0, differing_cases_max = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Json& o = outputs[i];
    if (o["name"] != spec.outputs[i])
      return report_field_error(path, fmt::format("result.outputs[{}].name", i), "not the spec's output");
    for (const op::Arm& arm : spec.arms) {
      if (!o["digest"].contains(arm.name))
        return report_field_error(path, fmt::format("result.outputs[{}].digest", i),
                                  fmt::format("no digest for arm \"{}\"", arm.name));
    }
    if (o["differing_cases"].get<std::uint64_t>() > result["cases"].get<std::uint64_t>())
      return report_field_error(path, fmt::format("result.outputs[{}].differing_cases", i), "more than the cases run");
    elements += o["differing_elements"].get<std::uint64_t>();
    differing_cases_max = std::max(differing_cases_max, o["differing_cases"].get<std::uint64_t>());
  }
  if (elements != result["differing_elements"].get<std::uint64_t>())
    return report_field_error(path, "result.differing_elements", "is not the sum over the outputs");
  const std::uint64_t differing = result["differing_cases"].get<std::uint64_t>();
  if (differing > result["cases"].get<std::uint64_t>() || differing < differing_cases_max ||
      (differing == 0) != (elements == 0))
    return report_field_error(path, "result.differing_cases", "does not agree with the outputs' counts");
  if (result["first_differences"].size() > std::min<std::uint64_t>(elements, result["keep"].get<std::uint64_t>()))
    return report_field_error(path, "result.first_differences", "lists more differences than were counted or kept");
  for (std::size_t i = 0; i < result["first_differences"].size(); ++i) {
    for (const op::Arm& arm : spec.arms) {
      const Json& d = result["first_differences"][i];
      if (!d.contains(arm.name) || !d[arm.name].is_object() || !d[arm.name].contains("decoded") ||
          !d[arm.name]["decoded"].is_string())
        return report_field_error(path, fmt::format("result.first_differences[{}]", i),
                                  fmt::format("no value for arm \"{}\"", arm.name));
    }
  }
  return Ok{};
}

std::string ab_junit(const Json& report) {
  return junit_document(report["result"]["spec"]["name"].get<std::string>(), ab_junit_cases(report));
}

// An A/B report's result, run again on the CPU model: the recorded spec (its
// element proofs and checkpoint resolved against `spec_dir`, default the
// report's directory), its cases, and the trace proof when one was recorded
// (with the audit it named, read by `read_audit`).
Expected<Json> rerun_ab(const Json& result, const std::string& path, const std::string& spec_dir,
                        const AuditReader& read_audit, const VerifyOptions& verify) {
  const auto& build_kernels = verify.build_kernels;
  const std::string dir = spec_dir.empty() ? std::filesystem::path(path).parent_path().string() : spec_dir;
  auto spec = op::parse_ab_spec(result["spec"].dump(), (std::filesystem::path(dir) / "result.spec").string());
  if (!spec) return spec.error();
  auto weights = op::load_weights(*spec, spec->checkpoint_path);
  if (!weights) return weights.error();
  const Json& trace = result["trace_proof"];
  AbOptions options;
  options.prove = !trace.is_null();
  if (options.prove && trace["audit"].is_string()) options.audit = trace["audit"].get<std::string>();
  options.read_audit = read_audit;
  options.keep = result["keep"].get<std::size_t>();
  std::optional<std::vector<op::KernelModule>> modules;
  if (spec->kernels) {
    if (!build_kernels)
      return Error{fmt::format("{}: result.spec: kernel arms: this command cannot build their modules", path)};
    auto built = build_kernels(*spec);
    if (!built) return built.error();
    modules = std::move(*built);
  }
  auto cpu = modules ? op::make_cpu_kernel_runner(*spec, *weights, *modules, resolve_threads(0), op::CpuArith::kHostFloat)
                     : op::make_cpu_runner(*spec, *weights, resolve_threads(0), op::CpuArith::kHostFloat);
  if (!cpu) return cpu.error();
  options.kernel_modules = modules ? &*modules : nullptr;
  auto outcome = run_ab_spec(*spec, *weights, options, {cpu->get()});
  if (!outcome) return outcome.error();
  return ab_result_json(*spec, *weights, *outcome, modules ? &*modules : nullptr);
}

Expected<Verification> verify_ab(const Json& report, const std::string& path, const VerifyOptions& options) {
  const Json& recorded = report["result"];
  auto now = rerun_ab(recorded, path, options.spec_dir, options.read_audit, options);
  if (!now) return now.error();
  const std::string name = recorded["spec"]["name"].get<std::string>();
  if (auto differs = result_differs(name, recorded, *now)) return *differs;
  const bool passes = ab_report_passes(report);
  std::vector<std::string> notes = ab_summary_lines(report);
  // Only the CPU is run here: what another backend recorded (its agreement with the CPU) is the
  // report's word, and said to be so.
  for (const Json& b : report["backends"]) {
    if (b["name"] == "cpu") continue;
    notes.push_back(fmt::format("not re-derived here: backend {} and its {} disagreement(s) with cpu are as the "
                                "report records them (run `bitproof ab --backend all` on that machine to check)",
                                b["name"].get<std::string>(), b.value("disagreements", std::uint64_t{0})));
  }
  return Verification{passes,
                      fmt::format("verified: {}: {}: the result part reproduces byte for byte on the CPU model",
                                  passes ? "PASS" : "FAIL", name),
                      std::move(notes), false};
}

}  // namespace

Expected<Ok> check_ab_report(const Json& report, const std::string& path) {
  const Json& result = report["result"];
  auto ab = op::parse_ab_spec(result["spec"].dump(), path + ": result.spec");
  if (!ab) return ab.error();
  if (auto ok = check_spec_digest(result, path); !ok) return ok;
  return check_ab_consistency(*ab, result, path);
}

ReportKind ab_report_kind() {
  ReportKind k;
  k.name = "ab";
  k.noun = "A/B";
  k.validate = check_ab_report;
  k.markdown = render_ab_markdown;
  k.junit = ab_junit;
  k.verify = verify_ab;
  k.diff = diff_results;
  return k;
}

}  // namespace bitproof
