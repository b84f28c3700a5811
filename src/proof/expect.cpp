#include "proof/expect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

namespace bitproof {
namespace {

// Every kind a counterexample can have (engine.hpp, Counterexample::kind).
constexpr std::array<std::string_view, 8> kKinds = {"value", "sign",     "zero",    "inf",
                                                    "nan",   "nan-bits", "inexact", "unrepresentable"};

Error at(const std::string& field, const std::string& what) { return Error{fmt::format("{}: {}", field, what)}; }

Expected<std::uint64_t> positive_count(const nlohmann::json& v, const std::string& field) {
  if (!v.is_number_unsigned()) return at(field, "expected a positive integer, found " + v.dump());
  if (v.get<std::uint64_t>() == 0) {
    return at(field, "0: an expected refutation fails on at least one case (a claim that holds has no \"expect\")");
  }
  return v.get<std::uint64_t>();
}

std::string kind_list() {
  std::string out;
  for (std::string_view k : kKinds) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

}  // namespace

bool is_counterexample_kind(std::string_view kind) { return std::find(kKinds.begin(), kKinds.end(), kind) != kKinds.end(); }

ClaimVerdict claim_verdict(const std::optional<Expectation>& expect, const ClaimCounts& counts) {
  const std::uint64_t failing = counts.cases - std::min(counts.holding, counts.cases);
  if (!expect) return failing == 0 ? ClaimVerdict::kHolds : ClaimVerdict::kRefuted;
  if (failing != expect->refuted) return ClaimVerdict::kExpectationMissed;
  if (!expect->kinds.empty() && expect->kinds != counts.by_kind) return ClaimVerdict::kExpectationMissed;
  return ClaimVerdict::kRefutedAsExpected;
}

bool verdict_passes(ClaimVerdict verdict) {
  return verdict == ClaimVerdict::kHolds || verdict == ClaimVerdict::kRefutedAsExpected;
}

std::string_view verdict_name(ClaimVerdict verdict) {
  switch (verdict) {
    case ClaimVerdict::kHolds: return "holds";
    case ClaimVerdict::kRefuted: return "refuted";
    case ClaimVerdict::kRefutedAsExpected: return "refuted_as_expected";
    case ClaimVerdict::kExpectationMissed: return "expectation_missed";
  }
  return "?";
}

std::optional<ClaimVerdict> verdict_by_name(std::string_view name) {
  for (ClaimVerdict v : {ClaimVerdict::kHolds, ClaimVerdict::kRefuted, ClaimVerdict::kRefutedAsExpected,
                         ClaimVerdict::kExpectationMissed}) {
    if (verdict_name(v) == name) return v;
  }
  return std::nullopt;
}

std::string_view proof_verdict_name(bool all_pass, bool any_finding) {
  if (!all_pass) return "refuted";
  return any_finding ? "as_expected" : "holds";
}

bool proof_verdict_passes(std::string_view name) { return name == "holds" || name == "as_expected"; }

std::string kinds_text(const std::map<std::string, std::uint64_t>& by_kind) {
  std::vector<std::pair<std::string, std::uint64_t>> kinds(by_kind.begin(), by_kind.end());
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (kinds.empty()) return "";
  if (kinds.size() == 1) return kinds.front().first;
  std::string out;
  for (const auto& [kind, n] : kinds) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, kind);
  return out;
}

std::string expectation_text(const Expectation& expect, std::uint64_t cases) {
  std::string out = fmt::format("{} of {}", expect.refuted, cases);
  if (!expect.kinds.empty()) out += ": " + kinds_text(expect.kinds);
  return out;
}

Expected<Expectation> parse_expectation(const nlohmann::json& v, const std::string& field, std::uint64_t cases) {
  if (!v.is_object()) return at(field, "expected an object {\"refuted\": N, \"kinds\": {...}}, found " + v.dump());
  for (const auto& [key, value] : v.items()) {
    if (key != "refuted" && key != "kinds") return at(field + "." + key, "unknown key (refuted, kinds)");
  }
  if (!v.contains("refuted")) return at(field + ".refuted", "missing (the number of cases the claim fails on)");
  Expectation expect;
  auto refuted = positive_count(v.at("refuted"), field + ".refuted");
  if (!refuted) return refuted.error();
  expect.refuted = *refuted;
  if (cases != 0 && expect.refuted > cases) {
    return at(field + ".refuted", fmt::format("{} cannot happen: the domain has {} cases", expect.refuted, cases));
  }
  if (!v.contains("kinds")) return expect;
  const nlohmann::json& kinds = v.at("kinds");
  if (!kinds.is_object() || kinds.empty()) {
    return at(field + ".kinds", "expected an object of failing cases per kind, found " + kinds.dump());
  }
  std::uint64_t sum = 0;
  for (const auto& [kind, count] : kinds.items()) {
    const std::string where = field + ".kinds." + kind;
    if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end()) {
      return at(where, fmt::format("unknown kind \"{}\" ({})", kind, kind_list()));
    }
    auto n = positive_count(count, where);
    if (!n) return n.error();
    sum += *n;
    expect.kinds[kind] = *n;
  }
  if (sum != expect.refuted) {
    return at(field + ".kinds", fmt::format("the kinds add up to {}, not to refuted = {}", sum, expect.refuted));
  }
  return expect;
}

nlohmann::ordered_json expectation_json(const Expectation& expect) {
  nlohmann::ordered_json j{{"refuted", expect.refuted}};
  if (!expect.kinds.empty()) {
    j["kinds"] = nlohmann::ordered_json::object();
    for (const auto& [kind, n] : expect.kinds) j["kinds"][kind] = n;
  }
  return j;
}

}  // namespace bitproof
