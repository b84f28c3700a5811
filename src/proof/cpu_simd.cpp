#include "proof/cpu_simd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

#include "arith/soft_arith.hpp"
#include "cpu_features.hpp"
#include "format/diff_kind.hpp"

namespace bitproof::simd {

// The op the vector policy hands to the scalar soft model lane by lane.
std::uint32_t soft_hadd(std::uint32_t a, std::uint32_t b) {
  return SoftArith::hadd(static_cast<std::uint16_t>(a), static_cast<std::uint16_t>(b));
}

namespace {

bool cpu_has_avx512() {
  const CpuFeatures& f = cpu_features();
  return f.avx512f && f.avx512cd && f.avx512bw && f.avx512dq && f.avx512vl && f.f16c && f.fma;
}

bool cpu_has_avx2() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.f16c && f.fma;
}

// The unit's index of a registry recipe (matched by name), or -1.
int unit_index(const SimdImpl& impl, const RecipeEntry* recipe) {
  for (int i = 0; i < impl.recipe_count(); ++i) {
    if (recipe->card->name == std::string_view(impl.recipe_name(i))) return i;
  }
  return -1;
}

constexpr std::string_view kKindNames[kDiffKindCount] = {"", "value", "sign", "zero", "inf", "nan", "nan-bits"};

// The recipe's own vector form in the unit, else none (-1).
int vector_index(const SimdImpl& impl, const RecipeEntry* recipe) {
  const int index = unit_index(impl, recipe);
  return index >= 0 && impl.vector_capable(index) ? index : -1;
}

// An external batch (SimdJob::external) for recipes with a batch form: whole
// groups of 16 cases that continue one run (first inputs a0, a0 + 1, …, the
// others the same) go through RecipeEntry::run together, up to kRunMaxCases a
// call (one plan for them all); any other group case by case through soft.
void run_or_cases(const void* context, const std::uint32_t* const* codes, std::uint32_t* out, int cases) {
  static_assert(kRunCases == kCaseGroup, "a run is made of whole groups of the sweep's cases");
  const RecipeEntry& recipe = *static_cast<const RecipeEntry*>(context);
  const auto group_continues = [codes](int o, int n) {  // cases o + n … o + n + 15 continue the run from case o
    for (int t = n; t < n + kRunCases; ++t) {
      if (codes[0][o + t] != codes[0][o] + static_cast<std::uint32_t>(t) || codes[1][o + t] != codes[1][o] ||
          codes[2][o + t] != codes[2][o]) {
        return false;
      }
    }
    return true;
  };
  for (int o = 0; o < cases;) {
    int n = 0;
    while (n < kRunMaxCases && o + n < cases && group_continues(o, n)) n += kRunCases;
    if (n > 0) {
      recipe.run(codes[0][o], n, codes[1][o], codes[2][o], out + o);
      o += n;
      continue;
    }
    for (int t = 0; t < kRunCases; ++t) {
      const std::uint32_t lane[kMaxInputs] = {codes[0][o + t], codes[1][o + t], codes[2][o + t]};
      out[o + t] = recipe.soft(lane);
    }
    o += kRunCases;
  }
}

}  // namespace

std::vector<const SimdImpl*> usable_impls() {
  std::vector<const SimdImpl*> impls;
  if (cpu_has_avx512() && avx512_impl() != nullptr) impls.push_back(avx512_impl());
  if (cpu_has_avx2() && avx2_impl() != nullptr) impls.push_back(avx2_impl());
  return impls;
}

const SimdImpl* best_impl() {
  static const std::vector<const SimdImpl*> impls = usable_impls();
  const char* env = std::getenv("BITPROOF_SIMD");
  const std::string_view want = env != nullptr ? env : "";
  if (want == "off") return nullptr;
  for (const SimdImpl* impl : impls) {
    if (want.empty() || want == impl->name) return impl;
  }
  return nullptr;
}

std::string no_vector_reason() {
  const char* env = std::getenv("BITPROOF_SIMD");
  std::string names;
  for (const SimdImpl* impl : usable_impls()) names += fmt::format("{}{}", names.empty() ? "" : ", ", impl->name);
  if (env != nullptr && *env != '\0') {
    return fmt::format("BITPROOF_SIMD={}; this CPU's vector sweeps: {}", env, names.empty() ? "none" : names);
  }
  return "no AVX-512, and no AVX2 with FMA and F16C, on this CPU";
}

std::optional<std::string> unsupported_reason(const SimdImpl& impl, const Spec& spec) {
  const auto recipes = spec.recipes();
  if (recipes.size() > static_cast<std::size_t>(kMaxSlots)) return fmt::format("more than {} recipes", kMaxSlots);
  if (spec.claims.size() > static_cast<std::size_t>(kMaxClaims)) return fmt::format("more than {} claims", kMaxClaims);
  for (const Claim& c : spec.claims) {
    if (c.kind != ClaimKind::kEqual) return std::string("a claim other than `equal` needs the oracle per case");
  }
  for (const RecipeEntry* r : recipes) {
    if (vector_index(impl, r) < 0 && r->run == nullptr) {
      return fmt::format("recipe {} is not vector-capable", r->card->name);
    }
  }
  if (spec.inputs.size() > static_cast<std::size_t>(kMaxInputs)) return fmt::format("more than {} inputs", kMaxInputs);
  for (const InputDomain& in : spec.inputs) {
    if (in.count() > 0xFFFFFFFFu) return std::string("an input of 2^32 codes");
  }
  return std::nullopt;
}

namespace {

SimdJob make_job(const SimdImpl& impl, const Spec& spec, const CaseEvaluator& eval, std::uint64_t begin,
                 std::uint64_t end, std::size_t keep) {
  SimdJob job;
  job.cases = spec.case_count();
  job.begin = begin;
  job.end = end;
  job.inputs = static_cast<int>(spec.inputs.size());
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const InputDomain& in = spec.inputs[i];
    job.count[i] = static_cast<std::uint32_t>(in.count());
    if (in.range) {
      job.lo[i] = in.range->lo;
    } else {
      job.table[i] = in.codes.data();
    }
  }
  const auto& recipes = eval.recipes();
  job.recipes = static_cast<int>(recipes.size());
  for (std::size_t r = 0; r < recipes.size(); ++r) {
    job.recipe_index[r] = vector_index(impl, recipes[r]);
    if (job.recipe_index[r] < 0) {  // unsupported_reason: it has a batch form
      job.external[r] = &run_or_cases;
      job.external_context[r] = recipes[r];
    }
  }
  job.claims = static_cast<int>(spec.claims.size());
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    const Claim& claim = spec.claims[c];
    job.claim_size[c] = static_cast<int>(claim.recipes.size());
    for (std::size_t k = 0; k < claim.recipes.size(); ++k) {
      job.claim_slots[c][k] = static_cast<int>(std::find(recipes.begin(), recipes.end(), claim.recipes[k]) - recipes.begin());
    }
  }
  const KindFormat f = kind_format(spec_of(spec.output));
  job.sign_mask = f.sign_mask;
  job.exp_max = f.exp_max;
  job.man_mask = f.man_mask;
  job.man_bits = f.man_bits;
  job.specials = f.specials;
  job.int_zero = f.int_zero;
  job.keep = static_cast<std::uint32_t>(keep);
  return job;
}

}  // namespace

SweepPart sweep_range_simd(const SimdImpl& impl, const CaseEvaluator& eval, const Spec& spec,
                           const EngineOptions& options, std::uint64_t begin, std::uint64_t end) {
  SimdJob job = make_job(impl, spec, eval, begin, end, options.keep);
  const std::uint64_t chunks = (end - begin + 65535) / 65536;
  SweepPart part;
  part.begin = begin;
  part.end = end;
  part.chunk_sums.resize(chunks * chunk_sum_words(spec));
  std::vector<std::uint64_t> first(spec.claims.size() * options.keep + 1);
  job.chunk_sums = part.chunk_sums.data();
  job.first_failing = first.data();
  impl.sweep(job);
  part.claims.resize(spec.claims.size());
  std::array<std::uint32_t, kMaxArity> codes{};
  std::vector<std::uint32_t> soft(eval.recipes().size());
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    ClaimResult& cr = part.claims[c];
    cr.cases = end - begin;
    cr.holding = cr.cases - job.failing[c];
    for (int k = 1; k < kDiffKindCount; ++k) {
      if (job.kinds[c][k] != 0) cr.by_kind[std::string(kKindNames[k])] = job.kinds[c][k];
    }
    for (std::uint32_t j = 0; j < job.first_count[c]; ++j) {
      const std::uint64_t index = first[c * options.keep + j];
      eval.codes_of(index, codes.data());
      eval.soft_outputs(codes.data(), soft.data());
      std::string kind = eval.check(spec.claims[c], codes.data(), soft.data());
      // The scalar model holds here but the vector sweep counted a failure: a
      // vector-policy bug. Kept as a counterexample, so the claim stays refuted.
      if (kind.empty()) kind = "vector-model";
      cr.counterexamples.push_back(eval.counterexample(spec.claims[c], index, codes.data(), soft.data(), std::move(kind)));
    }
  }
  return part;
}

}  // namespace bitproof::simd
