#include "report/spec_report.hpp"

#include <fmt/format.h>

#include "report/kind.hpp"

namespace bitproof {

Expected<Spec> read_recorded_spec(const Json& result, const std::string& path) {
  auto spec = parse_spec(result["spec"].dump(), path + ": result.spec");
  if (!spec) return spec.error();
  if (auto ok = check_spec_digest(result, path); !ok) return ok.error();
  return spec;
}

std::string ReportJudgement::word() const {
  if (!passes) return "REFUTED";
  return findings ? "AS EXPECTED" : "HOLDS";
}

void judge_witness(const Json& result, ReportJudgement& j) {
  if (const auto witness = result["witness"]["disagreements"].get<std::uint64_t>(); witness > 0) {
    j.problems.push_back(fmt::format("the soft and oracle arithmetic disagree on {} evaluations", witness));
  }
}

std::string claim_test_name(const Json& result, std::size_t c) {
  const Json& claim = result["spec"]["claims"][c];
  std::string recipes;
  for (const Json& r : claim["recipes"]) {
    recipes += ' ';
    recipes += r.get<std::string>();
  }
  return fmt::format("claim {}: {}{}", c, claim["claim"].get<std::string>(), recipes);
}

std::string counterexample_text(const Json& cx) {
  std::string text = fmt::format("case {} (mismatch: {}):", cx["case"].get<std::uint64_t>(), cx["kind"].get<std::string>());
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

}  // namespace bitproof
