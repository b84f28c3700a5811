// The proof over every input: each arm's output elements traced as graphs of
// operations (the operator templates run with the Recorder policy instead of
// bits), hash-consed into one table shared by both arms, so two elements are
// computed the same way exactly when they are the same node. A dequant recipe
// is one node, not expanded; two recipes that an element proof shows bitwise
// equal on the scale codes a weight holds become one node (a substitution), and
// nothing else does.
//
// Soundness. Every operation is a deterministic function of its operands'
// bits (IEEE binary32 ops with one rounding mode, exact conversions, the silu
// model, catalogue recipes), so equal graphs over the same leaves give equal
// bits for every value of the leaves: every activation, every weight code, and
// every scale byte inside the set each substitution was proven on. An
// intermediate tensor both arms compute (by name) is compared first, element by
// element; where equal, later stages read it as a shared leaf.
//
// Size. Elements are traced one output column at a time (all M rows together,
// so the dequant nodes are shared), in a table cleared between columns, on all
// cores: memory stays at one column's graph, however large N·K is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"
#include "operator/tensors.hpp"

namespace bitproof::op {

// A substitution an element proof offers: these recipes (registry entries) are
// bitwise equal for every E2M1 code and every scale byte in `scales` — when
// `holds`, i.e. the proof's sweep found no case where they differ.
struct Substitution {
  std::vector<const RecipeEntry*> recipes;
  CodeRange scales{0, 0};
  std::string proof;  // names the element proof for messages ("dsv4-mxfp4-fp16-fold claim 0 on 113..128")
  bool holds = true;
};

// The first place two traced elements part.
struct TraceDifference {
  std::string tensor;      // the compared tensor (an output or a shared intermediate)
  std::uint64_t row = 0;   // its element
  std::uint64_t col = 0;
  std::string position;    // "reduction step k = 512 (depth 3585 below the output)"
  std::string operation_a; // the first differing operation of each arm, operands shown
  std::string operation_b;
  std::string why;         // what would have made them equal, if anything
};

struct TraceResult {
  bool identical = false;
  std::uint64_t elements = 0;          // output and intermediate elements compared
  std::uint64_t nodes = 0;             // distinct graph nodes built (both arms, all columns)
  std::vector<std::string> compared;   // tensors compared, in order
  std::vector<bool> substitution_used; // per substitution
  std::optional<TraceDifference> difference;
};

struct TraceOptions {
  unsigned threads = 0;  // 0: every core
};

// Scale sets per mxfp4 input: what the proof quantifies over (synthetic ranges,
// the checkpoint's bytes, or an audit's intervals).
[[nodiscard]] Expected<TraceResult> prove_by_trace(const AbSpec& spec, const std::map<std::string, ScaleSet>& scales,
                                                   const std::vector<Substitution>& substitutions,
                                                   const TraceOptions& options);

}  // namespace bitproof::op
