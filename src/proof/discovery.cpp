#include "proof/discovery.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "report/digest.hpp"
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
  if (d.maximal->lo > 0) d.below = d.maximal->lo - 1;
  if (d.maximal->hi + std::uint64_t{1} < d.codes.size()) d.above = d.maximal->hi + 1;
}

}  // namespace

Expected<Ok> check_discovery(const Spec& spec, const std::string& over) {
  const auto over_index = spec.input_index(over);
  if (!over_index) return Error{fmt::format("{}: inputs: no input named \"{}\" to sweep", spec.path, over)};
  // Discovery consults the oracle on every case: the same ceiling as the
  // oracle-checked claims (engine.hpp), so a slip costs an error, not days.
  const InputDomain& in = spec.inputs[*over_index];
  const std::uint64_t code_count = spec_of(in.format).code_count();
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

Expected<Discovery> discover(const Spec& spec, const std::string& over, const EngineOptions& options) {
  if (auto ok = check_discovery(spec, over); !ok) return ok.error();
  const std::size_t over_index = *spec.input_index(over);
  Discovery out;
  out.over = over;
  out.over_index = over_index;
  const InputDomain& spec_in = spec.inputs[over_index];
  if (spec_in.range) {
    out.spec_interval = *spec_in.range;
  } else {
    out.spec_interval = {*std::min_element(spec_in.codes.begin(), spec_in.codes.end()),
                         *std::max_element(spec_in.codes.begin(), spec_in.codes.end())};
  }

  Spec widened = spec;
  InputDomain& swept = widened.inputs[over_index];
  const auto code_count = static_cast<std::uint32_t>(spec_of(swept.format).code_count());  // <= 2^24: checked
  swept.all = true;
  swept.range = CodeRange{0, code_count - 1};
  swept.codes.clear();
  if (widened.user) {
    if (auto ok = widened.user->evaluate(widened); !ok) return ok.error();
  }
  out.claims.resize(spec.claims.size());
  for (ClaimDiscovery& d : out.claims) {
    d.codes.resize(code_count);
    for (std::uint32_t c = 0; c < code_count; ++c) d.codes[c].code = c;
  }
  const CaseEvaluator eval(widened);
  const std::size_t n = eval.recipes().size();
  std::array<std::uint32_t, kMaxArity> codes{};
  std::vector<std::uint32_t> soft(n);
  std::vector<std::uint32_t> witness(n);
  out.cases = eval.case_count();
  const bool keep_map = out.cases / code_count <= kDiscoveryMapLimit;
  for (std::uint64_t i = 0; i < out.cases; ++i) {
    if (options.progress && i % kChunkCases == 0 && i > 0) options.progress(i, out.cases);
    eval.codes_of(i, codes.data());
    eval.outputs(codes.data(), soft.data(), witness.data());
    for (std::size_t r = 0; r < n; ++r) {
      if (soft[r] == witness[r]) continue;
      if (out.witness_disagreements.size() < options.keep) {
        out.witness_disagreements.push_back(
            {i, {codes.begin(), codes.begin() + spec.inputs.size()}, eval.recipes()[r], soft[r], witness[r]});
      }
      ++out.witness_disagreement_count;
    }
    for (std::size_t c = 0; c < spec.claims.size(); ++c) {
      CodeVerdict& v = out.claims[c].codes[codes[over_index]];
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
  for (ClaimDiscovery& d : out.claims) locate_edges(d, out.spec_interval);
  return out;
}

}  // namespace bitproof
