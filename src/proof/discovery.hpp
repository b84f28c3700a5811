// Domain discovery: for one input of a spec (by default "scale"), every code
// of its format is tried against every claim, with the other inputs as the
// spec gives them. The result says where each claim holds, the maximal
// interval of codes around the spec's interval on which it holds, and the
// first counterexample just outside that interval on each side.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proof/engine.hpp"

namespace bitproof {

// Discovery keeps a per-case map (for the SVG case map) when the other inputs
// span at most this many cases.
inline constexpr std::uint64_t kDiscoveryMapLimit = 4096;

struct CodeVerdict {
  std::uint32_t code = 0;
  std::uint64_t cases = 0;
  std::uint64_t holding = 0;
  std::optional<Counterexample> first;  // first counterexample at this code
  std::vector<bool> failing;            // per case at this code, in case order (see kDiscoveryMapLimit)
  [[nodiscard]] bool holds() const { return holding == cases; }
};

struct ClaimDiscovery {
  std::vector<CodeVerdict> codes;     // every code swept, ascending and consecutive (see DiscoveryScope)
  std::vector<CodeRange> holding;     // maximal runs of codes where the claim holds
  bool spec_interval_holds = false;   // the claim holds on every code of the spec's interval
  std::optional<CodeRange> maximal;   // the holding run that contains the spec's interval
  std::optional<std::uint32_t> below; // the failing code just below `maximal`
  std::optional<std::uint32_t> above; // the failing code just above `maximal`
  // The verdict at a code that was swept.
  [[nodiscard]] const CodeVerdict& at(std::uint32_t code) const { return codes[code - codes.front().code]; }
};

// What a discovery sweeps of its input: every code of the format (`domain`), or
// only the spec's own interval (the case map `prove --svg` draws: the proof's
// domain, no wider sweep, and no oracle witness: the proof witnessed those
// cases). Edges are found inside what was swept.
enum class DiscoveryScope : std::uint8_t { kWholeFormat, kSpecInterval };

struct Discovery {
  std::string over;           // the input swept
  std::size_t over_index = 0;
  CodeRange spec_interval{};  // min..max of the spec's codes for that input
  bool whole_format = true;   // every code swept (else the spec's interval: DiscoveryScope)
  std::uint64_t cases = 0;    // cases evaluated in all
  std::vector<ClaimDiscovery> claims;
  std::uint64_t witness_disagreement_count = 0;
  std::vector<WitnessDisagreement> witness_disagreements;
};

// Sweeps on options.threads threads (0: every core), one code of the input at a
// time; the result does not depend on the thread count.
[[nodiscard]] Expected<Discovery> discover(const Spec& spec, const std::string& over, const EngineOptions& options,
                                           DiscoveryScope scope = DiscoveryScope::kWholeFormat);

// Whether discover(spec, over, scope) can run: `over` names an input, and the
// codes swept times the other inputs' codes is at most 2^24 cases (the oracle
// checks each). Checked before anything is allocated or swept.
[[nodiscard]] Expected<Ok> check_discovery(const Spec& spec, const std::string& over,
                                          DiscoveryScope scope = DiscoveryScope::kWholeFormat);

}  // namespace bitproof
