#include "report/kind_proof.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "proof/discovery.hpp"
#include "proof/engine.hpp"
#include "report/compare.hpp"
#include "report/junit.hpp"
#include "report/kind_domain.hpp"
#include "user/user_recipes.hpp"

namespace bitproof {
namespace {

// A proof's counts must add up: the domain's cases are the recorded spec's,
// every claim counts them all, holding and failing sum to them, the kinds sum
// to the failing ones. (What they say of the arithmetic `report verify` checks.)
Expected<Ok> check_proof_counts(const Json& result, std::uint64_t cases, const std::string& path) {
  if (result["domain"]["cases"].get<std::uint64_t>() != cases) {
    return report_field_error(path, "result.domain.cases",
                              fmt::format("{}, but the recorded spec's domain has {} cases",
                                          result["domain"]["cases"].get<std::uint64_t>(), cases));
  }
  for (std::size_t c = 0; c < result["claims"].size(); ++c) {
    const Json& claim = result["claims"][c];
    const std::string field = fmt::format("result.claims[{}]", c);
    const auto claimed = claim["cases"].get<std::uint64_t>(), holding = claim["holding"].get<std::uint64_t>();
    if (claimed != cases)
      return report_field_error(path, field + ".cases", fmt::format("{}, but the domain has {} cases", claimed, cases));
    if (holding > cases)
      return report_field_error(path, field + ".holding", fmt::format("{} is more than the {} cases", holding, cases));
    std::uint64_t by_kind = 0;
    for (const auto& [kind, n] : claim["by_kind"].items()) {
      if (__builtin_add_overflow(by_kind, n.get<std::uint64_t>(), &by_kind)) by_kind = UINT64_MAX;
    }
    if (claim["failing"].get<std::uint64_t>() != cases - holding || by_kind != cases - holding) {
      return report_field_error(path, field,
                                fmt::format("{} hold of {} cases, but {} fail and the kinds count {}", holding, cases,
                                            claim["failing"].get<std::uint64_t>(), by_kind));
    }
  }
  return Ok{};
}

std::vector<JUnitCase> proof_cases(const Json& report) {
  std::vector<JUnitCase> cases;
  const Json& result = report["result"];
  const std::string suite = result["spec"]["name"].get<std::string>();
  for (const Json& backend : report["backends"]) {
    const std::string name = backend.value("name", "backend");
    for (std::size_t c = 0; c < result["claims"].size(); ++c) {
      const Json& claim = result["claims"][c];
      const Json* counts = &claim;
      if (backend.contains("claims") && c < backend["claims"].size()) counts = &backend["claims"][c];
      const bool passes = verdict_passes(report_claim_verdict(result, c));
      const bool same_counts = (*counts)["holding"] == claim["holding"] && (*counts)["cases"] == claim["cases"];
      const bool failed = !passes || !same_counts;
      std::string body;
      for (const Json& cx : claim["counterexamples"]) body += counterexample_text(cx) + "\n";
      // Named by what it checks; the counts (rebuilt from the recorded spec and counts,
      // never the report's own "summary") in its output and its failure.
      const std::string summary = recorded_summary(result, c);
      JUnitCase test = junit_case(suite + "." + name, claim_test_name(result, c), failed, summary, body);
      test.out = summary;
      cases.push_back(std::move(test));
    }
  }
  // The backends' agreement and the witness belong to the verdict too: a red case when they fail.
  const ReportJudgement judged = judge_proof_report(report);
  std::string problems;
  for (const std::string& p : judged.problems) problems += p + "\n";
  cases.push_back(junit_case(suite + ".agreement", "backends agree, hardware equals the model, witness agrees",
                             !judged.problems.empty(), judged.problems.empty() ? "" : judged.problems.front(),
                             problems));
  return cases;
}

std::string proof_junit(const Json& report) {
  return junit_document(report["result"]["spec"]["name"].get<std::string>(), proof_cases(report));
}

// The case map of the proof's own domain: a discovery over the spec's interval
// of the map's input, drawn as a domain report's.
Expected<std::string> proof_case_map(const Json& report, const std::string& path) {
  auto spec = parse_spec(report["result"]["spec"].dump(), "result.spec");
  if (!spec) return spec.error();
  if (auto e = check_proof_map(*spec)) return *e;
  const std::string over = map_input(*spec);
  auto discovery = discover(*spec, over, {kDefaultKeep, 0, {}}, DiscoveryScope::kSpecInterval);
  if (!discovery) return discovery.error();
  return render_domain_svg(discovery_report(*spec, *discovery), path);
}

// The largest proof verify re-runs: 2^36 cases is about an hour and a half of the CPU
// sweep on two cores for a three-input FMA claim (bench/RESULTS.md).
constexpr std::uint64_t kMostCasesVerified = std::uint64_t{1} << 36;

// The recorded spec proved again on this machine's CPU: the result part it gives.
Expected<Json> rerun_proof(const Json& result, const std::string& path, const std::string& spec_dir) {
  auto spec = parse_spec(result["spec"].dump(), path + ": result.spec");
  if (!spec) return spec.error();
  if (spec->user && !spec_dir.empty()) spec->user->base_dir = spec_dir;
  if (spec->user) spec->user->no_cache = true;  // a verdict re-derived here takes nothing from the cache
  if (auto ok = check_sweepable(*spec); !ok) return ok.error();
  if (const std::uint64_t cases = spec->case_count(); cases > kMostCasesVerified) {
    return Error{
        fmt::format("{}: {} cases: report verify re-runs a proof on this machine's CPU, which takes days "
                    "past 2^36 cases; on a GPU, prove the spec again (bitproof prove proofs/{}.json "
                    "--backend cuda --report again.json) and compare (bitproof report diff {} again.json)",
                    path, cases, spec->name, path)};
  }
  const std::size_t keep = result.value("keep", std::size_t{8});
  EngineOptions options;
  options.keep = keep;
  return proof_result_json(*spec, run_proof(*spec, options), keep);
}

Expected<Verification> verify_proof(const Json& report, const std::string& path, const VerifyOptions& options) {
  auto now = rerun_proof(report["result"], path, options.spec_dir);
  if (!now) return now.error();
  // The result reproduces (or the first difference); what it says is the verdict.
  return reproduced_result(report["result"], *now, judge_proof_report(report));
}

}  // namespace

Expected<Ok> check_proof_report(const Json& report, const std::string& path) {
  const Json& result = report["result"];
  auto spec = read_recorded_spec(result, path);
  if (!spec) return spec.error();
  // Every string a renderer prints is the recorded spec's or follows from the codes.
  if (auto ok = check_proof_counts(result, spec->case_count(), path); !ok) return ok;
  return check_report_strings(*spec, result, path, true);
}

ReportJudgement judge_proof_report(const Json& report) {
  ReportJudgement j;
  const Json& result = report["result"];
  j.claims = result["claims"].size();
  for (std::size_t c = 0; c < j.claims; ++c) {
    const ClaimVerdict verdict = report_claim_verdict(result, c);
    j.claims_passing += verdict_passes(verdict) ? 1 : 0;
    j.findings = j.findings || verdict == ClaimVerdict::kRefutedAsExpected;
  }
  judge_witness(result, j);
  const Json& agreement = report["agreement"];
  std::string differing;
  for (const Json& b : report["backends"]) {
    if (!b["result_identical"].get<bool>()) differing += (differing.empty() ? "" : ", ") + b["name"].get<std::string>();
  }
  if (!agreement["results_identical"].get<bool>() || !differing.empty()) {
    j.problems.push_back(fmt::format("the backends disagree: the result of {} differs from the first backend's",
                                     differing.empty() ? "a backend" : differing));
  }
  if (const auto model = agreement["model_disagreements"].get<std::uint64_t>(); model > 0) {
    j.problems.push_back(fmt::format("the hardware's bits differ from the model's on {} evaluations", model));
  }
  const std::string judged = std::string(proof_verdict_name(j.claims_passing == j.claims, j.findings));
  if (result["verdict"].get<std::string>() != judged) {
    j.problems.push_back(fmt::format("the recorded verdict \"{}\" does not follow from the counts (\"{}\")",
                                     result["verdict"].get<std::string>(), judged));
  }
  j.passes = j.claims_passing == j.claims && j.problems.empty();
  return j;
}

std::string map_input(const Spec& spec) {
  return spec.input_index("scale") ? std::string("scale") : spec.inputs.back().name;
}

std::optional<Error> check_proof_map(const Spec& spec) {
  const std::string over = map_input(spec);
  const InputDomain& in = spec.inputs[*spec.input_index(over)];
  const std::uint64_t lo = in.range ? in.range->lo : *std::min_element(in.codes.begin(), in.codes.end());
  const std::uint64_t hi = in.range ? in.range->hi : *std::max_element(in.codes.begin(), in.codes.end());
  if (hi - lo + 1 > kMaxMapCodes) {
    return Error{fmt::format("--svg: the case map sweeps one input whole, at most {} codes; {} spans {} ({}..{})",
                             kMaxMapCodes, over, hi - lo + 1, lo, hi)};
  }
  if (const std::uint64_t rows = spec.case_count() / in.count(); rows > kDiscoveryMapLimit) {
    return Error{fmt::format("--svg: the case map draws at most {} cases per {} code; the other inputs give {}",
                             kDiscoveryMapLimit, over, rows)};
  }
  if (auto ok = check_discovery(spec, over, DiscoveryScope::kSpecInterval); !ok) {
    return Error{"--svg: the case map sweeps the proof's domain code by code: " + ok.error().message};
  }
  return std::nullopt;
}

ReportKind proof_report_kind() {
  ReportKind k;
  k.name = "proof";
  k.validate = check_proof_report;
  k.markdown = render_proof_markdown;
  k.junit = proof_junit;
  k.svg = proof_case_map;
  k.verify = verify_proof;
  k.diff = diff_results;
  return k;
}

}  // namespace bitproof
