#include "proof/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>

#include "proof/cpu_simd.hpp"
#include "format/diff_kind.hpp"
#include "oracle/fma_exact.hpp"
#include "parallel.hpp"
#include "hash/digest.hpp"
#include "user/user_recipes.hpp"

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

// Chunk-sum accumulation for one part (see engine.hpp): A, B per recipe, then
// one failing count per claim, flushed at each chunk's last case.
class ChunkSummer {
 public:
  ChunkSummer(std::uint64_t cases, std::size_t recipes, std::size_t claims)
      : cases_(cases), recipes_(recipes), current_(2 * recipes + claims, 0) {}

  void add(std::uint64_t index, const std::uint32_t* outputs, const std::vector<bool>& failing) {
    const std::uint64_t offset = index % kChunkCases;
    const std::uint64_t length = std::min(kChunkCases, cases_ - (index - offset));
    const auto weight = static_cast<std::uint32_t>((length + 15) / 16 - (offset >> 4));
    for (std::size_t r = 0; r < recipes_; ++r) {
      current_[2 * r] += outputs[r];
      current_[2 * r + 1] += weight * outputs[r];
    }
    for (std::size_t c = 0; c < failing.size(); ++c) current_[2 * recipes_ + c] += failing[c] ? 1 : 0;
    if (offset + 1 == length) {
      words_.insert(words_.end(), current_.begin(), current_.end());
      std::fill(current_.begin(), current_.end(), 0);
    }
  }
  std::vector<std::uint32_t> take() { return std::move(words_); }

 private:
  std::uint64_t cases_;
  std::size_t recipes_;
  std::vector<std::uint32_t> current_;
  std::vector<std::uint32_t> words_;
};

template <class T>
void append_kept(std::vector<T>& into, std::vector<T>&& from, std::size_t keep) {
  for (T& item : from) {
    if (into.size() >= keep) break;
    into.push_back(std::move(item));
  }
}

}  // namespace

bool ProofResult::holds() const {
  return witness_disagreement_count == 0 && model_disagreement_count == 0 &&
         std::all_of(claims.begin(), claims.end(), [](const ClaimResult& c) { return c.holds(); });
}

ClaimCounts counts_of(const ClaimResult& r) { return {r.cases, r.holding, r.by_kind}; }

ClaimVerdict claim_verdict(const Claim& claim, const ClaimResult& r) {
  return claim_verdict(claim.expect, counts_of(r));
}

bool ProofResult::passes(const Spec& spec) const {
  if (witness_disagreement_count != 0 || model_disagreement_count != 0) return false;
  for (std::size_t c = 0; c < claims.size(); ++c) {
    if (!verdict_passes(claim_verdict(spec.claims[c], claims[c]))) return false;
  }
  return true;
}

bool ProofResult::has_findings(const Spec& spec) const {
  return std::any_of(spec.claims.begin(), spec.claims.end(), [](const Claim& c) { return c.expect.has_value(); });
}

namespace {

std::optional<oracle::fast::Binary> fast_binary(FormatId f) {
  if (f == FormatId::fp16) return oracle::fast::kFp16;
  if (f == FormatId::bf16) return oracle::fast::kBf16;
  return std::nullopt;
}

}  // namespace

bool fast_oracle_applies(const RecipeCard& card, FormatId output) {
  return card.intent == Intent::kFma && card.arity == 3 && card.inputs[0] == card.inputs[1] &&
         card.inputs[1] == card.inputs[2] && fast_binary(card.inputs[0]) && fast_binary(output);
}

bool fast_oracle_applies(const Claim& claim, FormatId output) {
  return claim.kind == ClaimKind::kEqual ||
         std::all_of(claim.recipes.begin(), claim.recipes.end(),
                     [&](const RecipeEntry* r) { return !r->is_user() && fast_oracle_applies(*r->card, output); });
}

oracle::Rounded intent_rounded(const RecipeCard& card, FormatId output, const std::uint32_t* codes,
                               oracle::Rounding mode) {
  if (fast_oracle_applies(card, output)) {
    const auto m = mode == oracle::Rounding::kNearestEven ? oracle::fast::Mode::kNearestEven
                                                           : oracle::fast::Mode::kTowardZero;
    const oracle::fast::Result r =
        oracle::fast::fma(*fast_binary(card.inputs[0]), *fast_binary(output), codes[0], codes[1], codes[2], m);
    return {r.code, r.inexact};
  }
  return oracle::round_to(output, intent_value(card, codes), mode);
}

std::string difference_kind(FormatId format, std::uint32_t a, std::uint32_t b) {
  return std::string(diff_kind_name(classify_difference(kind_format(spec_of(format)), a, b)));
}

oracle::Exact intent_value(const RecipeCard& card, const std::uint32_t* codes) {
  const oracle::Exact first = oracle::exact_of(card.inputs[0], codes[0]);
  switch (card.intent) {
    case Intent::kValue: return first;
    case Intent::kProduct: return oracle::mul(first, oracle::exact_of(card.inputs[1], codes[1]));
    case Intent::kZeroPointProduct: {
      oracle::Exact zero_point = oracle::exact_of(card.inputs[1], codes[1]);
      if (zero_point.kind != Kind::kNaN) zero_point.negative = !zero_point.negative;
      return oracle::mul(oracle::add(first, zero_point), oracle::exact_of(card.inputs[2], codes[2]));
    }
    case Intent::kSum: return oracle::add(first, oracle::exact_of(card.inputs[1], codes[1]));
    case Intent::kDifference: {
      oracle::Exact minus = oracle::exact_of(card.inputs[1], codes[1]);
      if (minus.kind != Kind::kNaN) minus.negative = !minus.negative;
      return oracle::add(first, minus);
    }
    case Intent::kFma:
      return oracle::fma(first, oracle::exact_of(card.inputs[1], codes[1]), oracle::exact_of(card.inputs[2], codes[2]));
    case Intent::kQuotient: return oracle::div(first, oracle::exact_of(card.inputs[1], codes[1]));
    case Intent::kSquareRoot: return oracle::sqrt(first);
  }
  return oracle::Exact::nan();
}

CaseEvaluator::CaseEvaluator(const Spec& spec) : spec_(spec), recipes_(spec.recipes()), tables_(recipes_.size()) {
  bool any_table = false;
  for (std::size_t r = 0; r < recipes_.size(); ++r) {
    if (!recipes_[r]->is_user()) continue;
    tables_[r] = spec.user ? spec.user->table(spec.inputs, recipes_[r]->user_slot) : nullptr;
    // No table: a GPU runs the recipe alone (UserRecipes::gpu_runs), its hardware
    // bits unwitnessed; otherwise a sweep whose tables were never made, a caller's bug.
    if (tables_[r] == nullptr && (!spec.user || spec.user->cpu_witness_missing(spec.inputs).empty())) std::abort();
    any_table = true;
  }
  if (!any_table) return;
  list_positions_.resize(spec.inputs.size());
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const InputDomain& in = spec.inputs[i];
    for (std::uint64_t k = 0; !in.range && k < in.codes.size(); ++k) list_positions_[i][in.codes[k]] = k;
  }
}

std::uint64_t CaseEvaluator::index_of(const std::uint32_t* codes) const {
  std::uint64_t index = 0, stride = 1;
  for (std::size_t i = 0; i < spec_.inputs.size(); ++i) {
    const InputDomain& in = spec_.inputs[i];
    index += stride * (in.range ? codes[i] - in.range->lo : list_positions_[i].at(codes[i]));
    stride *= in.count();
  }
  return index;
}

void CaseEvaluator::codes_of(std::uint64_t index, std::uint32_t* codes) const {
  for (std::size_t i = 0; i < spec_.inputs.size(); ++i) {
    const InputDomain& in = spec_.inputs[i];
    codes[i] = in.code(index % in.count());
    index /= in.count();
  }
}

void CaseEvaluator::outputs(const std::uint32_t* codes, std::uint32_t* soft, std::uint32_t* witness) const {
  soft_outputs(codes, soft);
  witness_outputs(codes, witness);
}

bool CaseEvaluator::witnessed(std::size_t slot) const {
  return !recipes_[slot]->is_user() || tables_[slot] != nullptr;
}

// An unwitnessed user recipe (no CPU table) reads as 0 here: only a hardware
// backend sweeps such a spec, with its own bits in the claims.
void CaseEvaluator::soft_outputs(const std::uint32_t* codes, std::uint32_t* soft) const {
  for (std::size_t r = 0; r < recipes_.size(); ++r) {
    if (recipes_[r]->is_user()) {
      soft[r] = tables_[r] != nullptr ? (*tables_[r])[index_of(codes)] : 0;
    } else {
      soft[r] = recipes_[r]->soft(codes);
    }
  }
}

void CaseEvaluator::witness_outputs(const std::uint32_t* codes, std::uint32_t* witness) const {
  for (std::size_t r = 0; r < recipes_.size(); ++r) {
    if (recipes_[r]->is_user()) {
      witness[r] = tables_[r] != nullptr ? (*tables_[r])[index_of(codes)] : 0;
    } else {
      witness[r] = recipes_[r]->oracle(codes);
    }
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
  // The recipes of a claim mostly mean one value (the same intent over the same
  // input formats): it is rounded once for all of them.
  const RecipeCard* rounded_for = nullptr;
  oracle::Rounded expected;
  for (const RecipeEntry* r : claim.recipes) {
    const RecipeCard& card = *r->card;
    if (rounded_for == nullptr || card.intent != rounded_for->intent || card.inputs != rounded_for->inputs) {
      expected = intent_rounded(card, out, codes, claim.rounding);
      rounded_for = &card;
    }
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
  // The oracle shown is the first recipe's intent that is given (proof/spec.cpp: an
  // equal claim may name user recipes without one, never only such recipes).
  const RecipeEntry* explained = claim.recipes[0];
  for (const RecipeEntry* r : claim.recipes) {
    if (!spec_.user || spec_.user->has_intent(r)) {
      explained = r;
      break;
    }
  }
  cx.intent = intent_value(*explained->card, codes);
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

// ---- policy ----

WitnessMode witness_mode_for(std::uint64_t cases) {
  return cases <= kFullWitnessLimit ? WitnessMode::kFull : WitnessMode::kSampled;
}

DigestMode digest_mode_for(std::uint64_t cases) {
  if (cases <= kFullDigestLimit) return DigestMode::kFull;
  return cases <= kBlockCases ? DigestMode::kChunkSums : DigestMode::kBlockSums;
}

std::uint64_t range_unit(std::uint64_t cases) {
  return digest_mode_for(cases) == DigestMode::kBlockSums ? kBlockCases : kChunkCases;
}

std::string_view witness_mode_name(WitnessMode mode) { return mode == WitnessMode::kFull ? "full" : "sampled"; }

std::string_view digest_mode_name(DigestMode mode) {
  switch (mode) {
    case DigestMode::kFull: return "full";
    case DigestMode::kChunkSums: return "chunk-sums";
    case DigestMode::kBlockSums: return "block-sums";
  }
  return "?";
}

std::string digest_algorithm(DigestMode mode) {
  switch (mode) {
    case DigestMode::kFull: return "bitproof-cases-v1 (sha256, 65536-case chunks)";
    case DigestMode::kChunkSums:
      return "bitproof-chunksums-v1 (sha256 over per-chunk output sums A, B per recipe and failing counts per claim)";
    case DigestMode::kBlockSums: break;
  }
  return "bitproof-blocksums-v1 (sha256 over the sha256 of each 2^32-case block's per-chunk output sums A, B per recipe "
         "and failing counts per claim)";
}

std::string witness_rule(WitnessMode mode) {
  if (mode == WitnessMode::kFull) return "every case";
  return fmt::format("first chunk, one case per stratum of {} strata (splitmix64 offset), every kept counterexample",
                     kWitnessStrata);
}

Expected<Ok> check_sweepable(const Spec& spec, bool hardware) {
  if (spec.user) {
    if (auto ok = spec.user->evaluate(spec.inputs); !ok) return ok.error();
    // Without hardware bits a recipe with no CPU table has no bits at all.
    if (const std::string why = spec.user->cpu_witness_missing(spec.inputs); !why.empty() && !hardware) return Error{why};
  }
  return check_claims_sweepable(spec, hardware);
}

Expected<Ok> check_claims_sweepable(const Spec& spec, bool hardware) {
  const std::uint64_t cases = spec.case_count();
  if (cases <= kFullDigestLimit) return Ok{};
  for (std::size_t i = 0; i < spec.claims.size(); ++i) {
    if (spec.claims[i].kind == ClaimKind::kEqual) continue;
    // FMA intents of FP16/BF16: the fast exact oracle runs on every case, on the CPU.
    if (!hardware && fast_oracle_applies(spec.claims[i], spec.output)) continue;
    if (hardware && fast_oracle_applies(spec.claims[i], spec.output)) {
      return Error{fmt::format(
          "{}: claims[{}]: a {} claim above {} cases is checked on the CPU only (the fast FMA oracle); on a GPU "
          "state it as `equal` with the reference recipe exact.fma_fp16 or exact.fma_bf16 (this one has {})",
          spec.path, i, claim_name(spec.claims[i].kind), kFullDigestLimit, cases)};
    }
    return Error{
        fmt::format("{}: claims[{}]: a {} claim consults the oracle on every case; domains above {} cases "
                    "take `equal` claims only, or FP16/BF16 FMA intents (the fast oracle) (this one has {})",
                    spec.path, i, claim_name(spec.claims[i].kind), kFullDigestLimit, cases)};
  }
  return Ok{};
}

std::size_t chunk_sum_words(const Spec& spec) { return 2 * spec.recipes().size() + spec.claims.size(); }

// ---- one range ----

namespace {

struct RangeState {
  const CaseEvaluator& eval;
  const Spec& spec;
  const EngineOptions& options;
  SweepPart& part;
  std::size_t recipes;
};

void witness_case(RangeState& s, std::uint64_t i, const std::uint32_t* codes, const std::uint32_t* soft,
                  std::uint32_t* witness) {
  s.eval.witness_outputs(codes, witness);
  ++s.part.witnessed_cases;
  for (std::size_t r = 0; r < s.recipes; ++r) {
    if (soft[r] == witness[r]) continue;
    if (s.part.witness_disagreements.size() < s.options.keep) {
      s.part.witness_disagreements.push_back(
          {i, {codes, codes + s.spec.inputs.size()}, s.eval.recipes()[r], soft[r], witness[r]});
    }
    ++s.part.witness_disagreement_count;
  }
}

void compare_hardware(RangeState& s, std::uint64_t i, const std::uint32_t* codes, const std::uint32_t* soft,
                      const std::uint32_t* hw) {
  for (std::size_t r = 0; r < s.recipes; ++r) {
    if (!s.eval.witnessed(r)) continue;  // a user recipe the CPU could not run: nothing to compare with
    ++s.part.model_compared;
    if (hw[r] == soft[r]) continue;
    if (s.part.model_disagreements.size() < s.options.keep) {
      // A user recipe's model is the CPU worker's bits (host header): its own oracle.
      const RecipeEntry* recipe = s.eval.recipes()[r];
      const std::uint32_t oracle = recipe->is_user() ? soft[r] : recipe->oracle(codes);
      s.part.model_disagreements.push_back({i, {codes, codes + s.spec.inputs.size()}, recipe, soft[r], oracle, hw[r]});
    }
    ++s.part.model_disagreement_count;
  }
}

}  // namespace

SweepPart sweep_range(const CaseEvaluator& eval, const Spec& spec, const EngineOptions& options, std::uint64_t begin,
                      std::uint64_t end, const std::uint32_t* hardware) {
  const std::uint64_t cases = spec.case_count();
  const std::size_t recipes = eval.recipes().size();
  const bool full_witness = witness_mode_for(cases) == WitnessMode::kFull;
  const bool full_digest = digest_mode_for(cases) == DigestMode::kFull;
  SweepPart part;
  part.begin = begin;
  part.end = end;
  part.claims.resize(spec.claims.size());
  RangeState state{eval, spec, options, part, recipes};
  std::optional<CaseTableDigest> digest;
  if (full_digest)
    digest.emplace(cases, static_cast<std::uint32_t>(spec.inputs.size()), static_cast<std::uint32_t>(recipes));
  ChunkSummer summer(cases, recipes, spec.claims.size());
  std::array<std::uint32_t, kMaxArity> codes{};
  std::vector<std::uint32_t> soft(recipes);
  std::vector<std::uint32_t> witness(recipes);
  std::vector<bool> failing(spec.claims.size());
  for (std::uint64_t i = begin; i < end; ++i) {
    eval.codes_of(i, codes.data());
    eval.soft_outputs(codes.data(), soft.data());
    if (full_witness) witness_case(state, i, codes.data(), soft.data(), witness.data());
    const std::uint32_t* outs = soft.data();
    if (hardware != nullptr) {
      outs = hardware + (i - begin) * recipes;
      compare_hardware(state, i, codes.data(), soft.data(), outs);
    }
    for (std::size_t c = 0; c < spec.claims.size(); ++c) {
      ClaimResult& cr = part.claims[c];
      ++cr.cases;
      std::string kind = eval.check(spec.claims[c], codes.data(), outs);
      failing[c] = !kind.empty();
      if (kind.empty()) {
        ++cr.holding;
        continue;
      }
      ++cr.by_kind[kind];
      if (cr.counterexamples.size() < options.keep) {
        cr.counterexamples.push_back(eval.counterexample(spec.claims[c], i, codes.data(), outs, std::move(kind)));
      }
    }
    if (digest) {
      digest->add(codes.data(), outs);
    } else {
      summer.add(i, outs, failing);
    }
  }
  if (digest) {
    part.chunk_digests = digest->take_chunk_hashes();
  } else {
    part.chunk_sums = summer.take();
  }
  return part;
}

// ---- parts ----

std::vector<std::pair<std::uint64_t, std::uint64_t>> split_ranges(std::uint64_t begin, std::uint64_t end,
                                                                  std::size_t pieces, std::uint64_t unit) {
  if (begin == end) return {{begin, end}};  // an empty slice is one empty range (one empty part per claim)
  const std::uint64_t first = begin / unit;
  const std::uint64_t units = (end - begin + unit - 1) / unit;
  const std::uint64_t wanted = std::max<std::size_t>(pieces, 1);
  const std::uint64_t per = std::max<std::uint64_t>(1, (units + wanted - 1) / wanted);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (std::uint64_t k = 0; k < units; k += per) {
    ranges.emplace_back((first + k) * unit, std::min(end, (first + k + per) * unit));
  }
  return ranges;
}

namespace {

// "tag", case count (u64 LE), input, recipe and claim counts (u32 LE).
std::vector<std::uint8_t> sums_header(const Spec& spec, std::string_view tag) {
  std::vector<std::uint8_t> head(tag.begin(), tag.end());
  put_le(head, spec.case_count(), 8);
  put_le(head, spec.inputs.size(), 4);
  put_le(head, spec.recipes().size(), 4);
  put_le(head, spec.claims.size(), 4);
  return head;
}

void hash_words(Sha256& h, const std::uint32_t* words, std::size_t n) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(n * 4);
  for (std::size_t k = 0; k < n; ++k) put_le(bytes, words[k], 4);
  h.update(bytes.data(), bytes.size());
}

}  // namespace

std::string chunk_sums_digest(const Spec& spec, const std::vector<std::uint32_t>& words) {
  const std::vector<std::uint8_t> head = sums_header(spec, "bitproof-chunksums-v1");
  Sha256 h;
  h.update(head.data(), head.size());
  hash_words(h, words.data(), words.size());
  return to_hex(h.finish());
}

void fold_blocks(const Spec& spec, SweepPart& part, const std::vector<std::uint64_t>& kept) {
  const std::uint64_t cases = spec.case_count();
  if (digest_mode_for(cases) != DigestMode::kBlockSums || part.chunk_sums.empty()) return;
  if (part.begin % kBlockCases != 0 || (part.end % kBlockCases != 0 && part.end != cases)) return;
  const std::size_t words = chunk_sum_words(spec);
  const std::uint64_t first_chunk = part.begin / kChunkCases, chunk_end = first_chunk + part.chunk_sums.size() / words;
  for (auto k = std::lower_bound(kept.begin(), kept.end(), first_chunk); k != kept.end() && *k < chunk_end; ++k) {
    const auto at = part.chunk_sums.begin() + static_cast<std::ptrdiff_t>((*k - first_chunk) * words);
    part.kept_chunk_sums[*k].assign(at, at + static_cast<std::ptrdiff_t>(words));
  }
  std::size_t at = 0;
  for (std::uint64_t block = part.begin; block < part.end; block += kBlockCases) {
    const std::uint64_t chunks = (std::min(part.end, block + kBlockCases) - block + kChunkCases - 1) / kChunkCases;
    Sha256 h;
    hash_words(h, part.chunk_sums.data() + at, chunks * words);
    at += chunks * words;
    const auto digest = h.finish();
    part.block_digests.insert(part.block_digests.end(), digest.begin(), digest.end());
  }
  part.chunk_sums = {};
}

// The block-sum digest of a whole domain's block digests (block order).
std::string block_sums_digest(const Spec& spec, const std::vector<std::uint8_t>& blocks) {
  const std::vector<std::uint8_t> head = sums_header(spec, "bitproof-blocksums-v1");
  Sha256 h;
  h.update(head.data(), head.size());
  h.update(blocks.data(), blocks.size());
  return to_hex(h.finish());
}

SweepPart join_parts(const EngineOptions& options, std::vector<SweepPart> parts) {
  std::sort(parts.begin(), parts.end(), [](const SweepPart& a, const SweepPart& b) { return a.begin < b.begin; });
  SweepPart joined;
  if (parts.empty()) return joined;
  joined.begin = parts.front().begin;
  joined.end = parts.back().end;
  joined.claims.resize(parts.front().claims.size());
  for (SweepPart& part : parts) {
    for (std::size_t c = 0; c < joined.claims.size(); ++c) {
      ClaimResult& into = joined.claims[c];
      ClaimResult& from = part.claims[c];
      into.cases += from.cases;
      into.holding += from.holding;
      for (const auto& [kind, n] : from.by_kind) into.by_kind[kind] += n;
      append_kept(into.counterexamples, std::move(from.counterexamples), options.keep);
    }
    joined.witness_disagreement_count += part.witness_disagreement_count;
    append_kept(joined.witness_disagreements, std::move(part.witness_disagreements), options.keep);
    joined.witnessed_cases += part.witnessed_cases;
    joined.model_compared += part.model_compared;
    joined.model_disagreement_count += part.model_disagreement_count;
    append_kept(joined.model_disagreements, std::move(part.model_disagreements), options.keep);
    joined.chunk_digests.insert(joined.chunk_digests.end(), part.chunk_digests.begin(), part.chunk_digests.end());
    joined.chunk_sums.insert(joined.chunk_sums.end(), part.chunk_sums.begin(), part.chunk_sums.end());
    joined.block_digests.insert(joined.block_digests.end(), part.block_digests.begin(), part.block_digests.end());
    joined.kept_chunk_sums.merge(part.kept_chunk_sums);
  }
  return joined;
}

ProofResult merge_parts(const Spec& spec, const EngineOptions& options, std::vector<SweepPart> parts) {
  SweepPart whole = join_parts(options, std::move(parts));
  ProofResult result;
  result.cases = spec.case_count();
  result.claims = std::move(whole.claims);
  result.claims.resize(spec.claims.size());
  result.witness_mode = witness_mode_for(result.cases);
  result.digest_mode = digest_mode_for(result.cases);
  result.witness_disagreement_count = whole.witness_disagreement_count;
  result.witness_disagreements = std::move(whole.witness_disagreements);
  result.witnessed_cases = whole.witnessed_cases;
  result.model_compared = whole.model_compared;
  result.model_disagreement_count = whole.model_disagreement_count;
  result.model_disagreements = std::move(whole.model_disagreements);
  if (result.digest_mode == DigestMode::kFull) {
    CaseTableDigest digest(result.cases, static_cast<std::uint32_t>(spec.inputs.size()),
                           static_cast<std::uint32_t>(spec.recipes().size()));
    digest.add_chunk_hashes(whole.chunk_digests);
    result.case_digest = digest.finish_hex();
  } else if (result.digest_mode == DigestMode::kChunkSums) {
    result.case_digest = chunk_sums_digest(spec, whole.chunk_sums);
  } else {
    whole.begin = 0;  // parts not folded yet fold here (the whole domain starts and ends where blocks do)
    whole.end = result.cases;
    fold_blocks(spec, whole);
    result.case_digest = block_sums_digest(spec, whole.block_digests);
  }
  return result;
}

std::vector<std::uint64_t> witness_sample(std::uint64_t cases) {
  std::vector<std::uint64_t> sample;
  for (std::uint64_t i = 0; i < std::min(cases, kChunkCases); ++i) sample.push_back(i);
  const std::uint64_t stride = cases / kWitnessStrata;
  if (stride > 0) {
    for (std::uint64_t k = 0; k < kWitnessStrata; ++k) sample.push_back(k * stride + splitmix64(k) % stride);
  }
  std::sort(sample.begin(), sample.end());
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  return sample;
}

void add_sampled_witness(const Spec& spec, const EngineOptions& options, ProofResult& result) {
  std::vector<std::uint64_t> sample = witness_sample(result.cases);
  for (const ClaimResult& c : result.claims) {
    for (const Counterexample& cx : c.counterexamples) sample.push_back(cx.case_index);
  }
  std::sort(sample.begin(), sample.end());
  sample.erase(std::unique(sample.begin(), sample.end()), sample.end());
  const CaseEvaluator eval(spec);
  const std::size_t slices = std::max<std::size_t>(1, resolve_threads(options.threads) * 4);
  const std::size_t per = (sample.size() + slices - 1) / slices;
  std::vector<SweepPart> parts(slices);
  parallel_for(slices, resolve_threads(options.threads), [&](std::size_t k) {
    SweepPart& part = parts[k];
    RangeState state{eval, spec, options, part, eval.recipes().size()};
    std::array<std::uint32_t, kMaxArity> codes{};
    std::vector<std::uint32_t> soft(eval.recipes().size());
    std::vector<std::uint32_t> witness(eval.recipes().size());
    for (std::size_t j = k * per; j < std::min(sample.size(), (k + 1) * per); ++j) {
      eval.codes_of(sample[j], codes.data());
      eval.soft_outputs(codes.data(), soft.data());
      witness_case(state, sample[j], codes.data(), soft.data(), witness.data());
    }
  });
  result.witness_mode = WitnessMode::kSampled;
  result.witnessed_cases = 0;
  for (SweepPart& part : parts) {
    result.witnessed_cases += part.witnessed_cases;
    result.witness_disagreement_count += part.witness_disagreement_count;
    append_kept(result.witness_disagreements, std::move(part.witness_disagreements), options.keep);
  }
}

SweepPart sweep_parts(const Spec& spec, const EngineOptions& options, const RangeSweeper& sweep, std::uint64_t begin,
                      std::uint64_t end, std::size_t pieces) {
  constexpr std::uint64_t kProgressCases = std::uint64_t{1} << 24;
  const unsigned threads = resolve_threads(options.threads);
  if (pieces == 0) pieces = std::max<std::size_t>(std::size_t{threads} * 4, (end - begin) / kProgressCases + 1);
  const auto ranges = split_ranges(begin, end, pieces, range_unit(spec.case_count()));
  std::vector<SweepPart> parts(ranges.size());
  std::atomic<std::uint64_t> done{0};
  parallel_for(ranges.size(), threads, [&](std::size_t k) {
    parts[k] = sweep(ranges[k].first, ranges[k].second);
    fold_blocks(spec, parts[k], options.kept_chunks);
    const std::uint64_t now = done += ranges[k].second - ranges[k].first;
    if (options.progress) options.progress(now, end - begin);
  });
  SweepPart joined = join_parts(options, std::move(parts));
  joined.begin = begin;
  joined.end = end;
  return joined;
}

ProofResult run_sweep(const Spec& spec, const EngineOptions& options, const RangeSweeper& sweep, std::size_t pieces) {
  std::vector<SweepPart> whole;
  whole.push_back(sweep_parts(spec, options, sweep, 0, spec.case_count(), pieces));
  ProofResult result = merge_parts(spec, options, std::move(whole));
  if (result.witness_mode == WitnessMode::kSampled) add_sampled_witness(spec, options, result);
  return result;
}

ProofResult run_proof(const Spec& spec, const EngineOptions& options) {
  const CaseEvaluator eval(spec);
  // Large domains of vector-capable recipes take the CPU vector sweep (same
  // result, tested bit for bit against this scalar one).
  const simd::SimdImpl* impl = nullptr;
  if (digest_mode_for(spec.case_count()) != DigestMode::kFull) {
    impl = simd::best_impl();
    if (impl != nullptr && simd::unsupported_reason(*impl, spec)) impl = nullptr;
  }
  return run_sweep(spec, options, [&](std::uint64_t begin, std::uint64_t end) {
    if (impl != nullptr) return simd::sweep_range_simd(*impl, eval, spec, options, begin, end);
    return sweep_range(eval, spec, options, begin, end);
  });
}

}  // namespace bitproof
