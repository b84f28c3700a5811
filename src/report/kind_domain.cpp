#include "report/kind_domain.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "proof/discovery.hpp"
#include "report/compare.hpp"
#include "report/junit.hpp"
#include "user/user_recipes.hpp"

namespace bitproof {
namespace {

// A domain report's claim c over the spec's interval: holds, or (for a finding over a
// range or "all" input) fails on exactly the recorded count; kinds are prove's to check.
bool domain_claim_passes(const Json& result, std::size_t c) {
  const Json& claim = result["claims"][c];
  if (claim.value("spec_interval_holds", false)) return true;
  try {
    const Json& spec_claim = result.at("spec").at("claims").at(c);
    if (!spec_claim.contains("expect")) return false;
    const std::string over = result.at("over").at("input").get<std::string>();
    for (const Json& in : result.at("spec").at("inputs")) {
      if (in.at("name") == over && in.at("codes").is_object() && in.at("codes").contains("list")) return false;
    }
    const std::uint64_t lo = result.at("over").at("spec_interval").at(0).get<std::uint64_t>();
    const std::uint64_t hi = result.at("over").at("spec_interval").at(1).get<std::uint64_t>();
    std::uint64_t failing = 0;
    for (const Json& run : claim.at("codes")) {
      const std::uint64_t from = std::max(run.at("from").get<std::uint64_t>(), lo);
      const std::uint64_t to = std::min(run.at("to").get<std::uint64_t>(), hi);
      const std::uint64_t cases = run.at("cases").get<std::uint64_t>();
      const std::uint64_t holding = run.at("holding").get<std::uint64_t>();
      if (from > to || holding > cases) continue;
      failing += (to - from + 1) * (cases - holding);
    }
    return failing == spec_claim.at("expect").at("refuted").get<std::uint64_t>();
  } catch (const Json::exception&) {
    return false;
  }
}

std::vector<JUnitCase> domain_cases(const Json& report) {
  std::vector<JUnitCase> cases;
  const Json& result = report["result"];
  const std::string suite = result["spec"]["name"].get<std::string>();
  for (std::size_t c = 0; c < result["claims"].size(); ++c) {
    const Json& claim = result["claims"][c];
    const bool holds = domain_claim_passes(result, c);
    const std::string maximal =
        claim["maximal"].is_null()
            ? "none"
            : fmt::format("{}..{}", claim["maximal"][0].get<std::uint32_t>(), claim["maximal"][1].get<std::uint32_t>());
    std::string body;
    for (const char* side : {"below", "above"}) {
      if (claim.contains(side) && !claim[side].is_null())
        body += std::string(side) + ": " + counterexample_text(claim[side]) + "\n";
    }
    // Named by what it checks; the maximal interval found in its output.
    JUnitCase test = junit_case(
        suite + ".domain", fmt::format("{} over {}", claim_test_name(result, c), result["over"]["input"].get<std::string>()),
        !holds, holds ? "" : "the claim does not hold on the spec's whole interval", body);
    test.out = fmt::format("maximal interval {}", maximal);
    cases.push_back(std::move(test));
  }
  return cases;
}

std::string domain_junit(const Json& report) {
  return junit_document(report["result"]["spec"]["name"].get<std::string>(), domain_cases(report));
}

Expected<Verification> verify_domain(const Json& report, const std::string& path, const VerifyOptions& options) {
  auto now = rerun_domain_result(report, path, options.spec_dir);
  if (!now) return now.error();
  // The result reproduces (or the first difference); what it says is the verdict.
  return reproduced_result(report["result"], *now, judge_domain_report(report));
}

}  // namespace

Expected<Ok> check_domain_report(const Json& report, const std::string& path) {
  const Json& result = report["result"];
  auto spec = read_recorded_spec(result, path);
  if (!spec) return spec.error();
  // Every string a renderer prints is the recorded spec's or follows from the codes.
  return check_report_strings(*spec, result, path, false);
}

Expected<Ok> validate_domain_report(const Json& report, const std::string& path) {
  if (auto ok = check_report_envelope(report, path); !ok) return ok;
  if (report["kind"] != "domain") {
    return report_field_error(path, "kind",
                              fmt::format("a {} report, not a domain report", report["kind"].get<std::string>()));
  }
  return check_domain_report(report, path);
}

ReportJudgement judge_domain_report(const Json& report) {
  ReportJudgement j;
  const Json& result = report["result"];
  j.claims = result["claims"].size();
  for (std::size_t c = 0; c < j.claims; ++c) j.claims_passing += domain_claim_passes(result, c) ? 1 : 0;
  judge_witness(result, j);
  j.passes = j.claims_passing == j.claims && j.problems.empty();
  return j;
}

Expected<Json> rerun_domain_result(const Json& report, const std::string& path, const std::string& spec_dir) {
  const Json& result = report["result"];
  auto spec = parse_spec(result["spec"].dump(), path + ": result.spec");
  if (!spec) return spec.error();
  if (spec->user && !spec_dir.empty()) spec->user->base_dir = spec_dir;
  if (spec->user) spec->user->no_cache = true;  // a verdict re-derived here takes nothing from the cache
  auto d = discover(*spec, result["over"]["input"].get<std::string>(), {});
  if (!d) return d.error();
  return discovery_result_json(*spec, *d);
}

ReportKind domain_report_kind() {
  ReportKind k;
  k.name = "domain";
  k.validate = check_domain_report;
  k.markdown = render_domain_markdown;
  k.junit = domain_junit;
  k.svg = render_domain_svg;
  k.verify = verify_domain;
  k.diff = diff_results;
  return k;
}

}  // namespace bitproof
