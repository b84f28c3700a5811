#include "proof/engine.hpp"

#include <algorithm>
#include <array>

#include "report/digest.hpp"

namespace bitproof {
namespace {

bool is_nan(FormatId f, std::uint32_t code) { return decode(spec_of(f), code).kind == Kind::kNaN; }

// Recipe output against the oracle's rounding: NaN matches any NaN (the oracle
// has no payloads); everything else must match bit for bit.
std::string against_oracle(FormatId f, const std::optional<std::uint32_t>& oracle_code, std::uint32_t code) {
  if (!oracle_code) return "unrepresentable";
  if (is_nan(f, *oracle_code) && is_nan(f, code)) return "";
  return difference_kind(f, *oracle_code, code);
}

}  // namespace

bool ProofResult::holds() const {
  return witness_disagreement_count == 0 &&
         std::all_of(claims.begin(), claims.end(), [](const ClaimResult& c) { return c.holds(); });
}

std::string difference_kind(FormatId format, std::uint32_t a, std::uint32_t b) {
  if (a == b) return "";
  const FormatSpec& f = spec_of(format);
  const Decoded x = decode(f, a);
  const Decoded y = decode(f, b);
  if (x.kind == Kind::kNaN && y.kind == Kind::kNaN) return "nan-bits";
  if (x.kind == Kind::kNaN || y.kind == Kind::kNaN) return "nan";
  if ((a & ~f.sign_mask()) == (b & ~f.sign_mask())) return "sign";
  if (x.kind == Kind::kInf || y.kind == Kind::kInf) return "inf";
  if (x.kind == Kind::kZero || y.kind == Kind::kZero) return "zero";
  return "value";
}

oracle::Exact intent_value(const RecipeCard& card, const std::uint32_t* codes) {
  const oracle::Exact first = oracle::exact_of(card.inputs[0], codes[0]);
  switch (card.intent) {
    case Intent::kValue: return first;
    case Intent::kProduct: return oracle::mul(first, oracle::exact_of(card.inputs[1], codes[1]));
  }
  return oracle::Exact::nan();
}

CaseEvaluator::CaseEvaluator(const Spec& spec) : spec_(spec), recipes_(spec.recipes()) {}

void CaseEvaluator::codes_of(std::uint64_t index, std::uint32_t* codes) const {
  for (std::size_t i = 0; i < spec_.inputs.size(); ++i) {
    const auto& set = spec_.inputs[i].codes;
    codes[i] = set[index % set.size()];
    index /= set.size();
  }
}

void CaseEvaluator::outputs(const std::uint32_t* codes, std::uint32_t* soft, std::uint32_t* witness) const {
  for (std::size_t r = 0; r < recipes_.size(); ++r) {
    soft[r] = recipes_[r]->soft(codes);
    witness[r] = recipes_[r]->oracle(codes);
  }
}

std::size_t CaseEvaluator::slot(const RecipeEntry* r) const {
  return static_cast<std::size_t>(std::find(recipes_.begin(), recipes_.end(), r) - recipes_.begin());
}

std::string CaseEvaluator::check(const Claim& claim, const std::uint32_t* codes, const std::uint32_t* soft) const {
  const FormatId out = spec_.output;
  if (claim.kind == ClaimKind::kEqual) {
    const std::uint32_t first = soft[slot(claim.recipes[0])];
    for (std::size_t i = 1; i < claim.recipes.size(); ++i) {
      std::string kind = difference_kind(out, first, soft[slot(claim.recipes[i])]);
      if (!kind.empty()) return kind;
    }
    return "";
  }
  for (const RecipeEntry* r : claim.recipes) {
    const oracle::Rounded expected = oracle::round_to(out, intent_value(*r->card, codes), claim.rounding);
    if (claim.kind == ClaimKind::kExact && (expected.inexact || !expected.code)) return "inexact";
    std::string kind = against_oracle(out, expected.code, soft[slot(r)]);
    if (!kind.empty()) return kind;
  }
  return "";
}

Counterexample CaseEvaluator::counterexample(const Claim& claim, std::uint64_t index, const std::uint32_t* codes,
                                             const std::uint32_t* soft, std::string kind) const {
  Counterexample cx;
  cx.case_index = index;
  cx.inputs.assign(codes, codes + spec_.inputs.size());
  cx.recipes = claim.recipes;
  cx.intent = intent_value(*claim.recipes[0]->card, codes);
  const oracle::Rounded rounded = oracle::round_to(spec_.output, cx.intent, claim.rounding);
  cx.intent_code = rounded.code;
  cx.intent_inexact = rounded.inexact;
  for (const RecipeEntry* r : claim.recipes) {
    const std::uint32_t bits = soft[slot(r)];
    cx.outputs.push_back(bits);
    cx.correctly_rounded.push_back(against_oracle(spec_.output, rounded.code, bits).empty());
  }
  cx.kind = std::move(kind);
  return cx;
}

ProofResult run_proof(const Spec& spec, const EngineOptions& options) {
  const CaseEvaluator eval(spec);
  const auto& recipes = eval.recipes();
  ProofResult result;
  result.cases = eval.case_count();
  result.claims.resize(spec.claims.size());
  CaseTableDigest digest(result.cases, static_cast<std::uint32_t>(spec.inputs.size()),
                         static_cast<std::uint32_t>(recipes.size()));
  std::array<std::uint32_t, kMaxArity> codes{};
  std::vector<std::uint32_t> soft(recipes.size());
  std::vector<std::uint32_t> witness(recipes.size());
  for (std::uint64_t i = 0; i < result.cases; ++i) {
    eval.codes_of(i, codes.data());
    eval.outputs(codes.data(), soft.data(), witness.data());
    digest.add(codes.data(), soft.data());
    for (std::size_t r = 0; r < recipes.size(); ++r) {
      if (soft[r] == witness[r]) continue;
      if (result.witness_disagreements.size() < options.keep) {
        result.witness_disagreements.push_back(
            {i, {codes.begin(), codes.begin() + spec.inputs.size()}, recipes[r], soft[r], witness[r]});
      }
      ++result.witness_disagreement_count;
    }
    for (std::size_t c = 0; c < spec.claims.size(); ++c) {
      ClaimResult& cr = result.claims[c];
      ++cr.cases;
      std::string kind = eval.check(spec.claims[c], codes.data(), soft.data());
      if (kind.empty()) {
        ++cr.holding;
        continue;
      }
      ++cr.by_kind[kind];
      if (cr.counterexamples.size() < options.keep) {
        cr.counterexamples.push_back(eval.counterexample(spec.claims[c], i, codes.data(), soft.data(), std::move(kind)));
      }
    }
  }
  result.case_digest = digest.finish_hex();
  return result;
}

}  // namespace bitproof
