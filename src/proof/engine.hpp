// The CPU proof engine: sweeps every case of a spec's domain, evaluates each
// recipe with the soft arithmetic and, as an independent witness, with the
// oracle arithmetic, and checks every claim. A case where the two witnesses
// disagree is a failure in its own right.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oracle/exact.hpp"
#include "proof/spec.hpp"

namespace bitproof {

// One case where a claim fails, with everything a reader needs to see why.
struct Counterexample {
  std::uint64_t case_index = 0;
  std::vector<std::uint32_t> inputs;
  std::vector<const RecipeEntry*> recipes;
  std::vector<std::uint32_t> outputs;        // per recipe of the claim
  std::vector<bool> correctly_rounded;       // per recipe: equals the oracle's rounding
  oracle::Exact intent;                      // the exact value the recipes mean
  std::optional<std::uint32_t> intent_code;  // its correct rounding (nullopt: unrepresentable)
  bool intent_inexact = false;
  std::string kind;  // classification: value, sign, zero, inf, nan, nan-bits, inexact, unrepresentable
};

struct ClaimResult {
  std::uint64_t cases = 0;
  std::uint64_t holding = 0;
  std::map<std::string, std::uint64_t> by_kind;
  std::vector<Counterexample> counterexamples;  // the first `keep`, in case order
  [[nodiscard]] bool holds() const { return holding == cases; }
};

// Soft arithmetic and oracle arithmetic gave different bits for one recipe.
struct WitnessDisagreement {
  std::uint64_t case_index;
  std::vector<std::uint32_t> inputs;
  const RecipeEntry* recipe;
  std::uint32_t soft;
  std::uint32_t oracle;
};

struct ProofResult {
  std::uint64_t cases = 0;
  std::vector<ClaimResult> claims;  // per spec claim
  std::uint64_t witness_disagreement_count = 0;
  std::vector<WitnessDisagreement> witness_disagreements;  // the first `keep`
  std::string case_digest;                                  // see report/digest.hpp
  [[nodiscard]] bool holds() const;
};

struct EngineOptions {
  std::size_t keep = 8;  // counterexamples kept per claim
};

// Evaluates single cases of a spec; run_proof and discovery sweep with it.
class CaseEvaluator {
 public:
  explicit CaseEvaluator(const Spec& spec);

  [[nodiscard]] std::uint64_t case_count() const { return spec_.case_count(); }
  [[nodiscard]] const std::vector<const RecipeEntry*>& recipes() const { return recipes_; }

  // Input codes of case `index` (first input fastest).
  void codes_of(std::uint64_t index, std::uint32_t* codes) const;
  // Soft outputs of every spec recipe; the oracle witness fills `witness`.
  void outputs(const std::uint32_t* codes, std::uint32_t* soft, std::uint32_t* witness) const;
  // Empty when the claim holds on this case, else the counterexample kind.
  [[nodiscard]] std::string check(const Claim& claim, const std::uint32_t* codes, const std::uint32_t* soft) const;
  [[nodiscard]] Counterexample counterexample(const Claim& claim, std::uint64_t index, const std::uint32_t* codes,
                                              const std::uint32_t* soft, std::string kind) const;

 private:
  [[nodiscard]] std::size_t slot(const RecipeEntry* r) const;
  const Spec& spec_;
  std::vector<const RecipeEntry*> recipes_;
};

[[nodiscard]] ProofResult run_proof(const Spec& spec, const EngineOptions& options);

// The exact value of a recipe's intent on input codes.
[[nodiscard]] oracle::Exact intent_value(const RecipeCard& card, const std::uint32_t* codes);

// How two codes of one format differ (see Counterexample::kind); "" if equal.
[[nodiscard]] std::string difference_kind(FormatId format, std::uint32_t a, std::uint32_t b);

}  // namespace bitproof
