// What the kinds that record a prove spec (proof, domain, shard) share: the
// recorded spec read back, the judgement of a proof or a domain report, and a
// counterexample as a JUnit failure's text.
#pragma once

#include <string>
#include <vector>

#include "error.hpp"
#include "proof/spec.hpp"
#include "report/report.hpp"

namespace bitproof {

// result.spec as a spec bitproof reads (errors name "PATH: result.spec"), its
// digest its own (result.spec_sha256).
[[nodiscard]] Expected<Spec> read_recorded_spec(const Json& result, const std::string& path);

// A report judged again from its parts (the recorded verdict strings are not
// trusted): each claim's counts against its spec's expectation, the oracle
// witness, and for a proof the backends' agreement (every backend's result
// identical, the hardware's bits equal to the model's) and the recorded
// verdict against the counts. What exit 0 means for a report read back.
// report/kind_proof.hpp and report/kind_domain.hpp judge their kinds.
struct ReportJudgement {
  bool passes = false;
  std::size_t claims = 0;
  std::size_t claims_passing = 0;          // hold, or refuted exactly as their spec expects
  bool findings = false;                   // some claim is refuted as expected
  std::vector<std::string> problems;       // beyond the claims: witness, agreement, verdict
  [[nodiscard]] std::string word() const;  // "HOLDS", "AS EXPECTED", "REFUTED"
};

// The oracle witness's part of a judgement: a problem when the soft and the
// oracle arithmetic disagreed (result.witness.disagreements).
void judge_witness(const Json& result, ReportJudgement& j);

// A claim's JUnit test name: what it checks, from the recorded spec (its index,
// kind and recipes: "claim 0: equal folded ordinary"), never its counts or
// verdict, so a CI system tracks one test across passing and failing runs.
[[nodiscard]] std::string claim_test_name(const Json& result, std::size_t c);

// "case 5 (mismatch): a=0x3 [0|01|1] 1.5 ..." with the outputs and the oracle on lines below.
[[nodiscard]] std::string counterexample_text(const Json& cx);

}  // namespace bitproof
