// The element proofs an A/B spec's trace proof relies on: each named proof spec is
// swept here, now, on the scale interval the A/B spec gives (never read from a
// report), and an `equal` claim that holds there justifies substituting its
// recipes for each other in the traced graphs (operator/trace.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"
#include "operator/trace.hpp"

namespace bitproof {

namespace user {
class UserRecipes;
}

struct ElementProofRun {
  op::ElementProofRef ref;
  std::string spec_name;
  std::string spec_sha256;  // of the proof spec file's bytes
  std::string case_digest;  // the sweep's case-table digest
  std::uint64_t cases = 0;
  std::uint64_t holding = 0;
  std::vector<const RecipeEntry*> recipes;  // the claim's
  // The proof spec's user recipes, which `recipes` may point into: kept alive with the run.
  std::shared_ptr<const user::UserRecipes> user;
  [[nodiscard]] bool holds() const { return cases > 0 && holding == cases; }
};

// Sweeps each element proof of `spec` (exit 2 when a proof spec cannot be read, or
// its claim is not an `equal` claim over an e2m1 input with every code and a
// ue8m0 input).
[[nodiscard]] Expected<std::vector<ElementProofRun>> run_element_proofs(const op::AbSpec& spec, unsigned threads);

// The substitutions the runs offer, one per run, in order (a run that does not
// hold gives one with holds = false: it justifies nothing, and says so).
[[nodiscard]] std::vector<op::Substitution> substitutions_of(const std::vector<ElementProofRun>& runs);

}  // namespace bitproof
