#include "report/render.hpp"

#include "report/ab_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "operator/ab_spec.hpp"
#include "proof/spec.hpp"
#include "hash/digest.hpp"
#include "report/markup.hpp"
#include "report/schema.hpp"
#include "strict_json.hpp"
#include "report/time_report.hpp"

namespace bitproof {
namespace {

// ---- reading ----

Error bad(const std::string& path, const std::string& field, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

// A proof's counts must add up: the domain's cases are the recorded spec's,
// every claim counts them all, holding and failing sum to them, the kinds sum
// to the failing ones. (What they say of the arithmetic `report verify` checks.)
Expected<Ok> check_proof_counts(const Json& result, std::uint64_t cases, const std::string& path) {
  if (result["domain"]["cases"].get<std::uint64_t>() != cases) {
    return bad(path, "result.domain.cases", fmt::format("{}, but the recorded spec's domain has {} cases",
                                                         result["domain"]["cases"].get<std::uint64_t>(), cases));
  }
  for (std::size_t c = 0; c < result["claims"].size(); ++c) {
    const Json& claim = result["claims"][c];
    const std::string field = fmt::format("result.claims[{}]", c);
    const auto claimed = claim["cases"].get<std::uint64_t>(), holding = claim["holding"].get<std::uint64_t>();
    if (claimed != cases) return bad(path, field + ".cases", fmt::format("{}, but the domain has {} cases", claimed, cases));
    if (holding > cases) return bad(path, field + ".holding", fmt::format("{} is more than the {} cases", holding, cases));
    std::uint64_t by_kind = 0;
    for (const auto& [kind, n] : claim["by_kind"].items()) {
      if (__builtin_add_overflow(by_kind, n.get<std::uint64_t>(), &by_kind)) by_kind = UINT64_MAX;
    }
    if (claim["failing"].get<std::uint64_t>() != cases - holding || by_kind != cases - holding) {
      return bad(path, field, fmt::format("{} hold of {} cases, but {} fail and the kinds count {}", holding, cases,
                                          claim["failing"].get<std::uint64_t>(), by_kind));
    }
  }
  return Ok{};
}

// An A/B result read back must add up: its outputs and arms are the spec's, the
// counts agree with each other and with the differences listed (the renderers rely
// on each difference naming both arms).
Expected<Ok> check_ab_consistency(const op::AbSpec& spec, const Json& result, const std::string& path) {
  const Json& outputs = result["outputs"];
  if (outputs.size() != spec.outputs.size()) return bad(path, "result.outputs", "not the spec's outputs");
  std::uint64_t elements = 0, differing_cases_max = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Json& o = outputs[i];
    if (o["name"] != spec.outputs[i]) return bad(path, fmt::format("result.outputs[{}].name", i), "not the spec's output");
    for (const op::Arm& arm : spec.arms) {
      if (!o["digest"].contains(arm.name))
        return bad(path, fmt::format("result.outputs[{}].digest", i), fmt::format("no digest for arm \"{}\"", arm.name));
    }
    if (o["differing_cases"].get<std::uint64_t>() > result["cases"].get<std::uint64_t>())
      return bad(path, fmt::format("result.outputs[{}].differing_cases", i), "more than the cases run");
    elements += o["differing_elements"].get<std::uint64_t>();
    differing_cases_max = std::max(differing_cases_max, o["differing_cases"].get<std::uint64_t>());
  }
  if (elements != result["differing_elements"].get<std::uint64_t>())
    return bad(path, "result.differing_elements", "is not the sum over the outputs");
  const std::uint64_t differing = result["differing_cases"].get<std::uint64_t>();
  if (differing > result["cases"].get<std::uint64_t>() || differing < differing_cases_max || (differing == 0) != (elements == 0))
    return bad(path, "result.differing_cases", "does not agree with the outputs' counts");
  if (result["first_differences"].size() > std::min<std::uint64_t>(elements, result["keep"].get<std::uint64_t>()))
    return bad(path, "result.first_differences", "lists more differences than were counted or kept");
  for (std::size_t i = 0; i < result["first_differences"].size(); ++i) {
    for (const op::Arm& arm : spec.arms) {
      const Json& d = result["first_differences"][i];
      if (!d.contains(arm.name) || !d[arm.name].is_object() || !d[arm.name].contains("decoded") ||
          !d[arm.name]["decoded"].is_string())
        return bad(path, fmt::format("result.first_differences[{}]", i), fmt::format("no value for arm \"{}\"", arm.name));
    }
  }
  return Ok{};
}

}  // namespace

Expected<Ok> validate_report(const Json& report, const std::string& path) {
  if (!report.is_object()) return bad(path, "(top level)", "expected a JSON object");
  if (!report.contains("bitproof_report"))
    return bad(path, "bitproof_report", "missing (this file is not a bitproof report)");
  if (report.at("bitproof_report") != kReportVersion) {
    return bad(path, "bitproof_report",
               fmt::format("version {} is not supported (this bitproof reads {})", report.at("bitproof_report").dump(),
                           kReportVersion));
  }
  if (auto ok = validate_json(report, report_schema(), path); !ok) return ok;
  // Audit and admission reports record no spec: the schema is their contract
  // (admit re-checks an audit's counts against its histograms).
  if (is_audit_kind(report)) return Ok{};
  // The recorded spec must be one bitproof reads, and its digest its own.
  const Json& result = report["result"];
  if (report["kind"] == "time") return check_time_consistency(result, path);
  if (report["kind"] == "ab") {
    auto ab = op::parse_ab_spec(result["spec"].dump(), path + ": result.spec");
    if (!ab) return ab.error();
    if (sha256_hex(result["spec"].dump()) != result["spec_sha256"].get<std::string>())
      return bad(path, "result.spec_sha256", "is not the digest of the recorded spec");
    return check_ab_consistency(*ab, result, path);
  }
  auto spec = parse_spec(result["spec"].dump(), path + ": result.spec");
  if (!spec) return spec.error();
  if (sha256_hex(result["spec"].dump()) != result["spec_sha256"].get<std::string>()) {
    return bad(path, "result.spec_sha256", "is not the digest of the recorded spec");
  }
  // Every string a renderer prints is the recorded spec's or follows from the codes.
  if (report["kind"] == "proof") {
    if (auto ok = check_proof_counts(result, spec->case_count(), path); !ok) return ok;
    return check_report_strings(*spec, result, path, true);
  }
  if (report["kind"] == "domain") return check_report_strings(*spec, result, path, false);
  return Ok{};
}

Expected<Json> parse_report(const std::string& text, const std::string& path) {
  auto report = parse_ordered_json_strict(text, path, "");
  if (!report) return report.error();
  if (auto ok = validate_report(*report, path); !ok) return ok.error();
  return report;
}

Expected<Json> parse_report_without_histograms(const std::string& text, const std::string& path) {
  PairLists histograms{"result.tensors[].histogram", {}};
  auto report = parse_ordered_json_strict(text, path, "", histograms);
  if (!report) return report.error();
  if (auto ok = validate_report(*report, path); !ok) return ok.error();
  return report;
}

Expected<Json> load_report(const std::string& path) {
  auto text = read_input_file(path, "the report", kMaxReportBytes);
  if (!text) return text.error();
  return parse_report(*text, path);
}

// ---- JUnit ----

bool is_audit_kind(const Json& report) { return report["kind"] == "audit" || report["kind"] == "admission"; }

namespace {

std::string counterexample_text(const Json& cx) {
  std::string text = fmt::format("case {} ({}):", cx["case"].get<std::uint64_t>(), cx["kind"].get<std::string>());
  for (const Json& in : cx["inputs"]) {
    text += fmt::format(" {}={} [{}] {}", in["input"].get<std::string>(), in["bits"].get<std::string>(),
                        in["fields"].get<std::string>(), in["value"].get<std::string>());
  }
  for (const Json& out : cx["outputs"]) {
    text += fmt::format("\n  {} -> {} [{}] {}{}", out["recipe"].get<std::string>(), out["bits"].get<std::string>(),
                        out["fields"].get<std::string>(), out["value"].get<std::string>(),
                        out["correctly_rounded"].get<bool>() ? " (= oracle)" : " (!= oracle)");
  }
  const Json& o = cx["oracle"];
  text += fmt::format("\n  oracle: exact {} -> {}", o["exact"].get<std::string>(),
                      o["rounded"].is_null() ? "not representable" : o["rounded"]["bits"].get<std::string>());
  return text;
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
      // Named from the recorded spec and the counts, never from the report's own "summary".
      const std::string summary = recorded_summary(result, c);
      cases.push_back(junit_case(suite + "." + name, fmt::format("claim {}: {}", c, summary), failed, summary, body));
    }
  }
  // The backends' agreement and the witness belong to the verdict too: a red case when they fail.
  const ReportJudgement judged = judge_report(report);
  std::string problems;
  for (const std::string& p : judged.problems) problems += p + "\n";
  cases.push_back(junit_case(suite + ".agreement", "backends agree, hardware equals the model, witness agrees",
                             !judged.problems.empty(), judged.problems.empty() ? "" : judged.problems.front(), problems));
  return cases;
}

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
    cases.push_back(junit_case(suite + ".domain",
                               fmt::format("claim {}: {} over {}, maximal interval {}", c,
                                           claim["claim"].get<std::string>(),
                                           result["over"]["input"].get<std::string>(), maximal),
                               !holds, holds ? "" : "the claim does not hold on the spec's whole interval", body));
  }
  return cases;
}

}  // namespace

std::string ReportJudgement::word() const {
  if (!passes) return "REFUTED";
  return findings ? "AS EXPECTED" : "HOLDS";
}

ReportJudgement judge_report(const Json& report) {
  ReportJudgement j;
  const Json& result = report["result"];
  const bool proof = report["kind"] == "proof";
  j.claims = result["claims"].size();
  for (std::size_t c = 0; c < j.claims; ++c) {
    const bool passes = proof ? verdict_passes(report_claim_verdict(result, c)) : domain_claim_passes(result, c);
    j.claims_passing += passes ? 1 : 0;
    j.findings = j.findings || (proof && report_claim_verdict(result, c) == ClaimVerdict::kRefutedAsExpected);
  }
  if (const auto witness = result["witness"]["disagreements"].get<std::uint64_t>(); witness > 0) {
    j.problems.push_back(fmt::format("the soft and oracle arithmetic disagree on {} evaluations", witness));
  }
  if (proof) {
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
  }
  j.passes = j.claims_passing == j.claims && j.problems.empty();
  return j;
}

std::string junit_document(const std::string& suite, const std::vector<JUnitCase>& cases) {
  std::size_t failures = 0;
  for (const JUnitCase& c : cases) failures += c.failed ? 1 : 0;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"bitproof\" tests=\"{}\" failures=\"{}\">\n", cases.size(), failures);
  xml += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                     xml_escape(suite), cases.size(), failures);
  for (const JUnitCase& c : cases) {
    xml += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", xml_escape(c.classname),
                       xml_escape(c.name));
    if (!c.failed && c.out.empty()) {
      xml += "/>\n";
      continue;
    }
    xml += ">\n";
    if (c.failed) {
      xml += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", xml_escape(c.type),
                         xml_escape(c.message), xml_escape(c.body));
    }
    if (!c.out.empty()) xml += fmt::format("      <system-out>{}</system-out>\n", xml_escape(c.out));
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

std::string render_junit(const Json& report) {
  if (is_audit_kind(report)) return render_audit_junit(report);
  const std::string suite = report["result"]["spec"]["name"].get<std::string>();
  if (report["kind"] == "ab") return junit_document(suite, ab_junit_cases(report));
  if (report["kind"] == "time") return junit_document(suite, time_junit_cases(report));
  return junit_document(suite, report["kind"] == "proof" ? proof_cases(report) : domain_cases(report));
}

}  // namespace bitproof
