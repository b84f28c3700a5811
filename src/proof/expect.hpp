// Findings: a claim that records the refutation it expects.
//
// A finding is a difference between two ways of computing that bitproof found
// and keeps: the spec's claim says it is refuted, on how many cases and of which
// kinds, and CI guards that exactly as it guards a proof.
//
//   {"claim": "equal", "recipes": ["a", "b"],
//    "expect": {"refuted": 6, "kinds": {"nan-bits": 6}}}
//
//   refuted  the exact number of failing cases, 1..cases of the domain
//   kinds    optional: failing cases per kind (value, sign, zero, inf, nan,
//            nan-bits, inexact, unrepresentable), each >= 1, summing to refuted
//
// Verdicts. A claim without an expectation holds or is refuted. A claim with one
// is "refuted_as_expected" when its failing count (and, when given, its kinds)
// are exactly as recorded, and "expectation_missed" otherwise: it holds (the
// finding is gone, the spec must change) or fails on other cases. A proof passes
// (exit 0) when every claim holds or is refuted as expected.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "error.hpp"

namespace bitproof {

struct Expectation {
  std::uint64_t refuted = 0;
  std::map<std::string, std::uint64_t> kinds;  // empty: any kinds
};

enum class ClaimVerdict : std::uint8_t { kHolds, kRefuted, kRefutedAsExpected, kExpectationMissed };

// The failing counts a verdict is judged on (a claim result or a report's claim).
struct ClaimCounts {
  std::uint64_t cases = 0;
  std::uint64_t holding = 0;
  std::map<std::string, std::uint64_t> by_kind;
};

[[nodiscard]] ClaimVerdict claim_verdict(const std::optional<Expectation>& expect, const ClaimCounts& counts);
// Whether `kind` is a kind a counterexample can have ("value", "sign", "nan" ...).
[[nodiscard]] bool is_counterexample_kind(std::string_view kind);
[[nodiscard]] bool verdict_passes(ClaimVerdict verdict);
// "holds", "refuted", "refuted_as_expected", "expectation_missed"
[[nodiscard]] std::string_view verdict_name(ClaimVerdict verdict);
[[nodiscard]] std::optional<ClaimVerdict> verdict_by_name(std::string_view name);

// The whole proof's verdict from its claims' verdicts: "holds" (every claim
// holds), "as_expected" (every claim holds or is refuted as expected, at least one
// is a finding), "refuted" otherwise.
[[nodiscard]] std::string_view proof_verdict_name(bool all_pass, bool any_finding);
[[nodiscard]] bool proof_verdict_passes(std::string_view name);

// "6 of 256: nan-bits" or "6 of 256: 4 nan-bits, 2 value"; kinds omitted when not recorded.
[[nodiscard]] std::string expectation_text(const Expectation& expect, std::uint64_t cases);
// "nan-bits" or "4 nan-bits, 2 value" (all kinds, most frequent first).
[[nodiscard]] std::string kinds_text(const std::map<std::string, std::uint64_t>& by_kind);

// Parses an "expect" object found at `field`; an error's message is "<field>: <what>"
// (the caller names the file). `cases` is the domain's size (0: unknown, not checked).
[[nodiscard]] Expected<Expectation> parse_expectation(const nlohmann::json& v, const std::string& field,
                                                      std::uint64_t cases);
[[nodiscard]] nlohmann::ordered_json expectation_json(const Expectation& expect);

}  // namespace bitproof
