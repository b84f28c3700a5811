#include "proof/discovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "parallel.hpp"
#include "hash/digest.hpp"
#include "user/user_recipes.hpp"

namespace bitproof {
namespace {

std::vector<CodeRange> holding_runs(const std::vector<CodeVerdict>& codes) {
  std::vector<CodeRange> runs;
  for (const CodeVerdict& v : codes) {
    if (!v.holds()) continue;
    if (!runs.empty() && runs.back().hi + 1 == v.code) {
      runs.back().hi = v.code;
    } else {
      runs.push_back({v.code, v.code});
    }
  }
  return runs;
}

void locate_edges(ClaimDiscovery& d, CodeRange interval) {
  d.holding = holding_runs(d.codes);
  for (const CodeRange& run : d.holding) {
    if (run.lo <= interval.lo && interval.hi <= run.hi) d.maximal = run;
  }
  d.spec_interval_holds = d.maximal.has_value();
  if (!d.maximal) return;
  if (d.maximal->lo > d.codes.front().code) d.below = d.maximal->lo - 1;
  if (d.maximal->hi < d.codes.back().code) d.above = d.maximal->hi + 1;
}

// The case indices of one code of the swept input: case n has digit k at the
// swept input; the others run in case order (first input fastest).
struct CaseWalk {
  std::uint64_t stride = 1;  // product of the counts of the inputs before the swept one
  std::uint64_t count = 1;   // codes of the swept input
  [[nodiscard]] std::uint64_t index(std::uint64_t k, std::uint64_t m) const {
    return (m / stride) * stride * count + k * stride + m % stride;
  }
};

// Everything found at one code of the swept input, for every claim.
struct CodeSweep {
  std::vector<CodeVerdict> claims;
  std::uint64_t witness_count = 0;
  std::vector<WitnessDisagreement> witness;
};

// `witness`: run the oracle arithmetic beside the soft one on every case (a
// proof's own map skips it: the proof has witnessed those cases).
CodeSweep sweep_code(const Spec& widened, const CaseEvaluator& eval, const CaseWalk& walk, std::size_t over_index,
                     std::uint64_t k, bool keep_map, std::size_t keep, bool witness_every_case) {
  const std::size_t n = eval.recipes().size();
  const std::uint64_t others = eval.case_count() / walk.count;
  std::array<std::uint32_t, kMaxArity> codes{};
  std::vector<std::uint32_t> soft(n), witness(n);
  CodeSweep out;
  out.claims.resize(widened.claims.size());
  for (CodeVerdict& v : out.claims) v.code = widened.inputs[over_index].code(k);
  for (std::uint64_t m = 0; m < others; ++m) {
    const std::uint64_t i = walk.index(k, m);
    eval.codes_of(i, codes.data());
    if (witness_every_case) {
      eval.outputs(codes.data(), soft.data(), witness.data());
    } else {
      eval.soft_outputs(codes.data(), soft.data());
    }
    for (std::size_t r = 0; r < n && witness_every_case; ++r) {
      if (soft[r] == witness[r]) continue;
      if (out.witness.size() < keep) {
        out.witness.push_back(
            {i, {codes.begin(), codes.begin() + widened.inputs.size()}, eval.recipes()[r], soft[r], witness[r]});
      }
      ++out.witness_count;
    }
    for (std::size_t c = 0; c < widened.claims.size(); ++c) {
      CodeVerdict& v = out.claims[c];
      ++v.cases;
      std::string kind = eval.check(widened.claims[c], codes.data(), soft.data());
      if (keep_map) v.failing.push_back(!kind.empty());
      if (kind.empty()) {
        ++v.holding;
      } else if (!v.first) {
        v.first = eval.counterexample(widened.claims[c], i, codes.data(), soft.data(), std::move(kind));
      }
    }
  }
  return out;
}

CodeRange spec_interval_of(const InputDomain& in) {
  if (in.range) return *in.range;
  return {*std::min_element(in.codes.begin(), in.codes.end()), *std::max_element(in.codes.begin(), in.codes.end())};
}

}  // namespace

Expected<Ok> check_discovery(const Spec& spec, const std::string& over, DiscoveryScope scope) {
  const auto over_index = spec.input_index(over);
  if (!over_index) return Error{fmt::format("{}: inputs: no input named \"{}\" to sweep", spec.path, over)};
  // Discovery consults the oracle on every case: the same ceiling as the
  // oracle-checked claims (engine.hpp), so a slip costs an error, not days.
  const InputDomain& in = spec.inputs[*over_index];
  const CodeRange interval = spec_interval_of(in);
  const std::uint64_t code_count =
      scope == DiscoveryScope::kWholeFormat ? spec_of(in.format).code_count() : interval.hi - std::uint64_t{interval.lo} + 1;
  const std::uint64_t others = spec.case_count() / in.count();
  if (code_count > kFullDigestLimit) {
    return Error{fmt::format("{}: --over {}: a {} input has {} codes, more than the 2^24 cases that discovery checks "
                             "with the oracle; sweep another input",
                             spec.path, over, spec_of(in.format).name, code_count)};
  }
  if (others > kFullDigestLimit / code_count) {
    return Error{fmt::format("{}: --over {}: sweeping every {} code gives {} x {} cases, more than the 2^24 that "
                             "discovery checks with the oracle; narrow the other inputs",
                             spec.path, over, spec_of(in.format).name, code_count, others)};
  }
  return Ok{};
}

Expected<Discovery> discover(const Spec& spec, const std::string& over, const EngineOptions& options,
                             DiscoveryScope scope) {
  if (auto ok = check_discovery(spec, over, scope); !ok) return ok.error();
  const std::size_t over_index = *spec.input_index(over);
  Discovery out;
  out.over = over;
  out.over_index = over_index;
  out.spec_interval = spec_interval_of(spec.inputs[over_index]);
  out.whole_format = scope == DiscoveryScope::kWholeFormat;

  Spec widened = spec;
  InputDomain& swept = widened.inputs[over_index];
  const auto code_count = static_cast<std::uint32_t>(spec_of(swept.format).code_count());  // <= 2^24: checked
  const CodeRange codes = scope == DiscoveryScope::kWholeFormat ? CodeRange{0, code_count - 1} : out.spec_interval;
  swept.all = scope == DiscoveryScope::kWholeFormat;
  swept.range = codes;
  swept.codes.clear();
  swept.span.reset();
  swept.excluded.clear();
  if (widened.user) {
    if (auto ok = widened.user->evaluate(widened.inputs); !ok) return ok.error();
  }
  const CaseEvaluator eval(widened);
  CaseWalk walk{1, swept.count()};
  for (std::size_t i = 0; i < over_index; ++i) walk.stride *= widened.inputs[i].count();
  out.cases = eval.case_count();
  const bool keep_map = out.cases / walk.count <= kDiscoveryMapLimit;
  // One task per code of the swept input, on every thread asked for; merged in code order.
  std::vector<CodeSweep> sweeps(walk.count);
  std::atomic<std::uint64_t> done{0};
  const std::uint64_t per_code = out.cases / walk.count;
  parallel_for(walk.count, resolve_threads(options.threads), [&](std::size_t k) {
    sweeps[k] = sweep_code(widened, eval, walk, over_index, k, keep_map, options.keep, out.whole_format);
    const std::uint64_t now = done.fetch_add(per_code) + per_code;
    if (options.progress && now / kChunkCases != (now - per_code) / kChunkCases) options.progress(now, out.cases);
  });
  out.claims.resize(spec.claims.size());
  for (CodeSweep& s : sweeps) {
    for (std::size_t c = 0; c < s.claims.size(); ++c) out.claims[c].codes.push_back(std::move(s.claims[c]));
    out.witness_disagreement_count += s.witness_count;
    for (WitnessDisagreement& w : s.witness) out.witness_disagreements.push_back(std::move(w));
  }
  std::stable_sort(out.witness_disagreements.begin(), out.witness_disagreements.end(),
                   [](const auto& a, const auto& b) { return a.case_index < b.case_index; });
  if (out.witness_disagreements.size() > options.keep) out.witness_disagreements.resize(options.keep);
  for (ClaimDiscovery& d : out.claims) locate_edges(d, out.spec_interval);
  return out;
}

}  // namespace bitproof
