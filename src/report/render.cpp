#include "report/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace bitproof {
namespace {

// ---- reading ----

Error bad(const std::string& path, const std::string& field, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

// Checks `j[key]` exists and has the JSON type `is` accepts.
template <class Pred>
Expected<Ok> need(const Json& j, const std::string& key, Pred is, const char* type, const std::string& path,
                  const std::string& field) {
  if (!j.is_object() || !j.contains(key)) return bad(path, field + key, "missing");
  if (!is(j.at(key))) return bad(path, field + key, std::string("expected ") + type);
  return Ok{};
}

constexpr auto kObject = [](const Json& j) { return j.is_object(); };
constexpr auto kArray = [](const Json& j) { return j.is_array(); };
constexpr auto kString = [](const Json& j) { return j.is_string(); };
constexpr auto kCount = [](const Json& j) { return j.is_number_unsigned(); };
constexpr auto kBool = [](const Json& j) { return j.is_boolean(); };

Expected<Ok> validate_claims(const Json& result, const std::string& kind, const std::string& path) {
  const Json& claims = result.at("claims");
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const std::string field = fmt::format("result.claims[{}].", i);
    if (auto ok = need(claims[i], "claim", kString, "a string", path, field); !ok) return ok;
    if (auto ok = need(claims[i], "recipes", kArray, "an array", path, field); !ok) return ok;
    if (kind == "proof") {
      for (const char* key : {"cases", "holding"}) {
        if (auto ok = need(claims[i], key, kCount, "a count", path, field); !ok) return ok;
      }
      if (auto ok = need(claims[i], "holds", kBool, "true or false", path, field); !ok) return ok;
      if (auto ok = need(claims[i], "summary", kString, "a string", path, field); !ok) return ok;
      if (auto ok = need(claims[i], "counterexamples", kArray, "an array", path, field); !ok) return ok;
    } else {
      if (auto ok = need(claims[i], "codes", kArray, "an array", path, field); !ok) return ok;
      if (auto ok = need(claims[i], "spec_interval_holds", kBool, "true or false", path, field); !ok) return ok;
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
  if (auto ok = need(report, "kind", kString, "a string", path, ""); !ok) return ok;
  const std::string kind = report.at("kind").get<std::string>();
  if (kind != "proof" && kind != "domain" && kind != "shard")
    return bad(path, "kind", fmt::format("unknown kind \"{}\"", kind));
  if (auto ok = need(report, "result", kObject, "an object", path, ""); !ok) return ok;
  if (auto ok = need(report, "environment", kObject, "an object", path, ""); !ok) return ok;
  const Json& result = report.at("result");
  if (auto ok = need(result, "spec", kObject, "an object", path, "result."); !ok) return ok;
  if (auto ok = need(result.at("spec"), "name", kString, "a string", path, "result.spec."); !ok) return ok;
  if (kind == "shard") {
    if (auto ok = need(result, "shard", kObject, "an object", path, "result."); !ok) return ok;
    return need(result, "part", kObject, "an object", path, "result.");
  }
  if (auto ok = need(result, "claims", kArray, "an array", path, "result."); !ok) return ok;
  if (kind == "proof") {
    if (auto ok = need(report, "backends", kArray, "an array", path, ""); !ok) return ok;
    if (auto ok = need(result, "verdict", kString, "a string", path, "result."); !ok) return ok;
  } else {
    if (auto ok = need(result, "over", kObject, "an object", path, "result."); !ok) return ok;
  }
  return validate_claims(result, kind, path);
}

Expected<Json> load_report(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read the report", path)};
  std::ostringstream text;
  text << in.rdbuf();
  Json report;
  try {
    report = Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    return Error{fmt::format("{}: invalid JSON at byte {} (truncated or not a report)", path, e.byte)};
  } catch (const Json::exception& e) {  // e.g. a number out of range: 1E999
    return Error{fmt::format("{}: invalid JSON ({})", path, e.what())};
  }
  if (auto ok = validate_report(report, path); !ok) return ok.error();
  return report;
}

// ---- JUnit ----

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

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

struct JUnitCase {
  std::string classname;
  std::string name;
  bool failed;
  std::string message;
  std::string body;
};

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
      cases.push_back({suite + "." + name, fmt::format("claim {}: {}", c, claim["summary"].get<std::string>()), failed,
                       claim["summary"].get<std::string>(), body});
    }
  }
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
    cases.push_back({suite + ".domain",
                     fmt::format("claim {}: {} over {}, maximal interval {}", c, claim["claim"].get<std::string>(),
                                 result["over"]["input"].get<std::string>(), maximal),
                     !holds, holds ? "" : "the claim does not hold on the spec's whole interval", body});
  }
  return cases;
}

}  // namespace

std::string render_junit(const Json& report) {
  const bool proof = report["kind"] == "proof";
  const std::vector<JUnitCase> cases = proof ? proof_cases(report) : domain_cases(report);
  std::size_t failures = 0;
  for (const JUnitCase& c : cases) failures += c.failed ? 1 : 0;
  const std::string suite = report["result"]["spec"]["name"].get<std::string>();
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"bitproof\" tests=\"{}\" failures=\"{}\">\n", cases.size(), failures);
  xml += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                     xml_escape(suite), cases.size(), failures);
  for (const JUnitCase& c : cases) {
    xml += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", xml_escape(c.classname),
                       xml_escape(c.name));
    if (!c.failed) {
      xml += "/>\n";
      continue;
    }
    xml += fmt::format(">\n      <failure type=\"refuted\" message=\"{}\">{}</failure>\n    </testcase>\n",
                       xml_escape(c.message), xml_escape(c.body));
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace bitproof
