// The proof engine: sweeps every case of a spec's domain, evaluates each recipe
// with the soft arithmetic and, as an independent witness, with the oracle
// arithmetic, and checks every claim. A case where the two witnesses disagree
// is a failure in its own right; so is a case where a hardware backend's bits
// differ from the soft model's.
//
// Sweeps are split into contiguous case ranges that start on a chunk boundary
// (kChunkCases, hash/digest.hpp). Each range is checked on its own
// (sweep_range, or a backend's own RangeSweeper) and the parts are merged in
// case order, so the result is the same whatever the split, the thread count or
// the backend (`--shard I/N` builds on this).
//
// Size policy. The result records which modes were used: in sampled mode the
// witness part carries "mode", "rule" and "cases" (in full mode it reads
// "every case", as always); the case digest's "algorithm" names its mode.
//   witness  cases <= kFullWitnessLimit (2^20): "full", every recipe on every
//            case also runs with the oracle arithmetic.
//            above: "sampled", a deterministic sample: every case of the first
//            chunk; one case in each of kWitnessStrata equal strata of the
//            domain (stratum k = [k·s, (k+1)·s), s = ⌊cases / kWitnessStrata⌋,
//            offset splitmix64(k) mod s); and every kept counterexample's case.
//   digest   cases <= kFullDigestLimit (2^24): "full", bitproof-cases-v1, the
//            SHA-256 of the whole case table (hash/digest.hpp).
//            above: "chunk-sums", bitproof-chunksums-v1: for every chunk, each
//            recipe's output sums A = Σ out_k and B = Σ (G - ⌊k/16⌋)·out_k
//            (mod 2^32; k the case's offset in the chunk, G = ⌈chunk length / 16⌉)
//            followed by each claim's failing count in the chunk, as u32 LE
//            words; the digest is SHA-256 over "bitproof-chunksums-v1", the case
//            count (u64 LE), the input, recipe and claim counts (u32 LE) and
//            those words in chunk order. It covers every output bit of every case
//            (a sum, not a cryptographic hash, inside a chunk) and costs two adds
//            a recipe a case, on the CPU and on the GPU alike.
//            above kBlockCases (2^32): "block-sums", bitproof-blocksums-v1: the
//            same chunk words, hashed per block of 2^32 cases (65,536 chunks; the
//            last block may be shorter): SHA-256 of the block's words in chunk
//            order, no header; the digest is SHA-256 over "bitproof-blocksums-v1",
//            the same header and the block digests in order. A part keeps 32 bytes
//            a block (2 MB for 2^48 cases), not the chunk words (~400 GB), and
//            such domains are split on block boundaries (range_unit).
//   claims   `correctly_rounded` and `exact` consult the oracle on every case:
//            allowed up to kFullDigestLimit cases (check_sweepable); larger
//            domains take `equal` claims only, except claims whose recipes all
//            mean an FMA of FP16/BF16 inputs into FP16/BF16 (Intent::kFma): the
//            fast exact oracle (oracle/fma_exact.hpp) rounds those on every case,
//            on the CPU (a GPU states them as `equal` with exact.fma_fp16/bf16).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "error.hpp"
#include "oracle/exact.hpp"
#include "parallel.hpp"  // resolve_threads, for the engine's callers
#include "proof/spec.hpp"
#include "hash/digest.hpp"  // kChunkCases
#include "splitmix.hpp"  // splitmix64: witness strata, merge's chunk picks

namespace bitproof {

inline constexpr std::uint64_t kFullWitnessLimit = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kFullDigestLimit = std::uint64_t{1} << 24;
inline constexpr std::uint64_t kWitnessStrata = 65536;
inline constexpr std::uint64_t kBlockCases = kChunkCases << 16;  // 2^32: the block-sums digest's block

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

// A hardware backend's bits differ from the soft model's for one recipe: the
// three-way record (soft model, oracle arithmetic, hardware).
struct ModelDisagreement {
  std::uint64_t case_index;
  std::vector<std::uint32_t> inputs;
  const RecipeEntry* recipe;
  std::uint32_t soft;
  std::uint32_t oracle;
  std::uint32_t hardware;
};

enum class WitnessMode : std::uint8_t { kFull, kSampled };
enum class DigestMode : std::uint8_t { kFull, kChunkSums, kBlockSums };

struct ProofResult {
  std::uint64_t cases = 0;
  std::vector<ClaimResult> claims;  // per spec claim
  std::uint64_t witness_disagreement_count = 0;
  std::vector<WitnessDisagreement> witness_disagreements;  // the first `keep`
  std::string case_digest;                                 // see hash/digest.hpp and above
  WitnessMode witness_mode = WitnessMode::kFull;
  std::uint64_t witnessed_cases = 0;  // cases the oracle witness evaluated
  DigestMode digest_mode = DigestMode::kFull;
  // Hardware backends only: every case's hardware bits against the soft model.
  std::uint64_t model_compared = 0;  // recipe evaluations compared
  std::uint64_t model_disagreement_count = 0;
  std::vector<ModelDisagreement> model_disagreements;  // the first `keep`, in case order
  [[nodiscard]] bool holds() const;
  // No witness or model disagreement and every claim holds or is refuted as its
  // spec expects (a finding): what exit 0 means.
  [[nodiscard]] bool passes(const Spec& spec) const;
  [[nodiscard]] bool has_findings(const Spec& spec) const;
};

[[nodiscard]] ClaimCounts counts_of(const ClaimResult& r);
[[nodiscard]] ClaimVerdict claim_verdict(const Claim& claim, const ClaimResult& r);

// Called from sweep threads as ranges finish: cases done so far, cases in all
// (of the range being swept). Must be thread-safe; never changes a result.
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct EngineOptions {
  std::size_t keep = 8;      // counterexamples kept per claim
  unsigned threads = 1;      // CPU threads for a sweep; 0: every core
  ProgressFn progress = {};  // optional
  // Block-sum mode: chunks (indices in the domain) whose words a part keeps
  // when its blocks are folded (SweepPart::kept_chunk_sums), sorted: the spot
  // checks a shard of such a domain carries (report/shard.hpp).
  std::vector<std::uint64_t> kept_chunks = {};
};

// Evaluates single cases of a spec; run_proof and discovery sweep with it.
// A user recipe's bits are read from its table over this spec's domain
// (UserRecipes::evaluate must have run for it); the oracle arithmetic cannot
// run a user's code, so its witness is its own bits.
class CaseEvaluator {
 public:
  explicit CaseEvaluator(const Spec& spec);

  [[nodiscard]] std::uint64_t case_count() const { return spec_.case_count(); }
  [[nodiscard]] const std::vector<const RecipeEntry*>& recipes() const { return recipes_; }

  // Input codes of case `index` (first input fastest).
  void codes_of(std::uint64_t index, std::uint32_t* codes) const;
  // Soft outputs of every spec recipe; the oracle witness fills `witness`.
  void outputs(const std::uint32_t* codes, std::uint32_t* soft, std::uint32_t* witness) const;
  void soft_outputs(const std::uint32_t* codes, std::uint32_t* soft) const;
  // Whether recipe slot `slot` has CPU bits (false: a user recipe only a GPU ran).
  [[nodiscard]] bool witnessed(std::size_t slot) const;
  void witness_outputs(const std::uint32_t* codes, std::uint32_t* witness) const;
  // Empty when the claim holds on this case, else the counterexample kind.
  [[nodiscard]] std::string check(const Claim& claim, const std::uint32_t* codes, const std::uint32_t* soft) const;
  [[nodiscard]] Counterexample counterexample(const Claim& claim, std::uint64_t index, const std::uint32_t* codes,
                                              const std::uint32_t* soft, std::string kind) const;

 private:
  [[nodiscard]] std::size_t slot(const RecipeEntry* r) const;
  // The case index of input codes (the inverse of codes_of), for the tables.
  [[nodiscard]] std::uint64_t index_of(const std::uint32_t* codes) const;
  const Spec& spec_;
  std::vector<const RecipeEntry*> recipes_;
  std::vector<const std::vector<std::uint32_t>*> tables_;  // per recipe slot; null for catalogue recipes
  std::vector<std::unordered_map<std::uint32_t, std::uint64_t>> list_positions_;  // list inputs, when tables are read
};

[[nodiscard]] ProofResult run_proof(const Spec& spec, const EngineOptions& options);

// The exact value of a recipe's intent on input codes.
[[nodiscard]] oracle::Exact intent_value(const RecipeCard& card, const std::uint32_t* codes);

// Whether the fast exact FMA oracle (oracle/fma_exact.hpp) rounds this card's
// intent into `output` (an FMA of three FP16 or BF16 inputs, into FP16 or BF16),
// and whether it serves every recipe of a claim (equal claims need no oracle).
[[nodiscard]] bool fast_oracle_applies(const RecipeCard& card, FormatId output);
[[nodiscard]] bool fast_oracle_applies(const Claim& claim, FormatId output);
// The correct rounding of a recipe's intent on input codes: the fast oracle where it
// applies, the Boost.Multiprecision oracle (round_to(intent_value)) otherwise.
[[nodiscard]] oracle::Rounded intent_rounded(const RecipeCard& card, FormatId output, const std::uint32_t* codes,
                                             oracle::Rounding mode);

// How two codes of one format differ (see Counterexample::kind); "" if equal.
[[nodiscard]] std::string difference_kind(FormatId format, std::uint32_t a, std::uint32_t b);

// ---- sweeps in parts ----

[[nodiscard]] WitnessMode witness_mode_for(std::uint64_t cases);
[[nodiscard]] DigestMode digest_mode_for(std::uint64_t cases);
[[nodiscard]] std::string_view witness_mode_name(WitnessMode mode);
[[nodiscard]] std::string_view digest_mode_name(DigestMode mode);
// The digest algorithm and the witness sample, described for the report.
[[nodiscard]] std::string digest_algorithm(DigestMode mode);
[[nodiscard]] std::string witness_rule(WitnessMode mode);

// Fails (exit 2) when a claim needs the oracle on more cases than the policy
// allows. Also makes the tables of the spec's user recipes over its domain
// (compiling them once): every sweep of a spec is preceded by this call.
// `hardware`: the caller sweeps with a GPU's bits, so a user recipe the CPU
// cannot run (UserRecipes::gpu_runs) may go without its table.
[[nodiscard]] Expected<Ok> check_sweepable(const Spec& spec, bool hardware = false);
// Its claims' part alone (no user code evaluated): spec check.
[[nodiscard]] Expected<Ok> check_claims_sweepable(const Spec& spec, bool hardware = false);

// Words per chunk in chunk-sum mode: A and B per recipe, then one per claim.
[[nodiscard]] std::size_t chunk_sum_words(const Spec& spec);

// What one chunk-aligned case range [begin, end) contributes to a proof.
struct SweepPart {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::vector<ClaimResult> claims;               // counts; counterexamples: the first `keep` of the range
  std::uint64_t witness_disagreement_count = 0;  // full witness mode only
  std::vector<WitnessDisagreement> witness_disagreements;
  std::uint64_t witnessed_cases = 0;
  std::uint64_t model_compared = 0;
  std::uint64_t model_disagreement_count = 0;
  std::vector<ModelDisagreement> model_disagreements;
  std::vector<std::uint8_t> chunk_digests;  // full digest mode: 32 bytes per chunk
  std::vector<std::uint32_t> chunk_sums;    // chunk-sum mode: chunk_sum_words() per chunk
  std::vector<std::uint8_t> block_digests;  // block-sum mode, once folded: 32 bytes per block
  // Block-sum mode, once folded: the words of the part's chunks that
  // EngineOptions::kept_chunks names, by chunk index.
  std::map<std::uint64_t, std::vector<std::uint32_t>> kept_chunk_sums;
};

// The unit sweeps of a domain are split on: a chunk, or a block in block-sum mode.
[[nodiscard]] std::uint64_t range_unit(std::uint64_t cases);
// Block-sum mode: replaces a part's chunk words by its blocks' digests. The part
// must start on a block and end on one or at the domain's end (ranges split on
// range_unit do); another part, or another mode, is left as it is. The words
// of the chunks in `kept` (sorted chunk indices) are kept in kept_chunk_sums.
void fold_blocks(const Spec& spec, SweepPart& part, const std::vector<std::uint64_t>& kept = {});

// Checks one range. `hardware`, when given, holds a hardware backend's outputs
// of the range's cases (recipes().size() words per case, spec recipe order):
// claims and digest then use those bits, each compared against the soft model.
[[nodiscard]] SweepPart sweep_range(const CaseEvaluator& eval, const Spec& spec, const EngineOptions& options,
                                    std::uint64_t begin, std::uint64_t end, const std::uint32_t* hardware = nullptr);

using RangeSweeper = std::function<SweepPart(std::uint64_t begin, std::uint64_t end)>;

// Ranges aligned on `unit` cases covering [begin, end) (begin aligned), about
// `pieces` of them (fewer for small domains); an empty slice gives one empty range.
[[nodiscard]] std::vector<std::pair<std::uint64_t, std::uint64_t>> split_ranges(std::uint64_t begin, std::uint64_t end,
                                                                                std::size_t pieces,
                                                                                std::uint64_t unit = kChunkCases);
// Runs `sweep` over ranges of [begin, end) aligned on range_unit() on
// options.threads threads (0 pieces: enough for the threads and for progress
// every 2^24 cases), folds each part's blocks in block-sum mode, reports
// progress, and joins the parts into one part of [begin, end).
[[nodiscard]] SweepPart sweep_parts(const Spec& spec, const EngineOptions& options, const RangeSweeper& sweep,
                                    std::uint64_t begin, std::uint64_t end, std::size_t pieces = 0);
// The whole domain: sweep_parts over [0, cases), merged; adds the sampled
// witness when the domain is above the full-witness limit.
[[nodiscard]] ProofResult run_sweep(const Spec& spec, const EngineOptions& options, const RangeSweeper& sweep,
                                    std::size_t pieces = 0);
// Joins parts that tile one range, in case order, into one part.
[[nodiscard]] SweepPart join_parts(const EngineOptions& options, std::vector<SweepPart> parts);
// Merges parts that cover [0, cases) in order (the last step of run_sweep).
[[nodiscard]] ProofResult merge_parts(const Spec& spec, const EngineOptions& options, std::vector<SweepPart> parts);
// The sampled witness (see above), computed on options.threads threads.
void add_sampled_witness(const Spec& spec, const EngineOptions& options, ProofResult& result);
// The sampled witness's case indices, ascending (counterexample cases not included).
[[nodiscard]] std::vector<std::uint64_t> witness_sample(std::uint64_t cases);
// The chunk-sum digest of a whole domain's chunk words (chunk order).
[[nodiscard]] std::string chunk_sums_digest(const Spec& spec, const std::vector<std::uint32_t>& words);
// The block-sum digest of a whole domain's block digests (32 bytes a block, block order).
[[nodiscard]] std::string block_sums_digest(const Spec& spec, const std::vector<std::uint8_t>& blocks);

}  // namespace bitproof
