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

// A kernel-arm proof's lemma counterexample (docs/ptx-proof.md): one value per support leaf
// (raw bits; the report decodes them by `kind`) and each arm's table entry there.
struct LeafValue {
  std::string tensor;  // the spec input ("w")
  std::string kind;    // "f16", "e2m1x2" (a byte of two E2M1 codes, low nibble first), "ue8m0", "bits"
  std::string index;   // "[3][17]" in the input's own shape (codes: the byte's first element)
  std::uint64_t bits = 0;
};
struct LemmaCounterexample {
  std::vector<LeafValue> leaves;
  std::uint64_t result_a = 0, result_b = 0;
  unsigned width = 0;  // bits of the results (16: fp16, 32: fp32)
};

// A lemma a kernel-arm proof used: a subgraph over narrow leaves settled by exhaustion.
struct LemmaRecord {
  std::string pattern;               // the subgraph's shape, leaves as #0, #1, ...
  std::vector<std::string> leaves;   // each position's input and part ("w (codes)")
  std::vector<std::string> domains;  // each position's admitted values ("all 256", "113..128")
  std::string digest;                // SHA-256 of its value table
  std::uint64_t entries = 0;
  std::uint64_t uses = 0;
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
  bool lookup = false;     // kernel arms: equal graphs that hold a table lookup no lemma enumerates
  // Kernel arms: where each operation came from ("gemv.ptx:123 (gemv.cu:45)"), and where two
  // lemma tables over the same leaves differ, the first such leaf values.
  std::string line_a, line_b;
  std::optional<LemmaCounterexample> counterexample;
};

struct TraceResult {
  bool identical = false;
  std::uint64_t elements = 0;          // output and intermediate elements compared
  std::uint64_t nodes = 0;             // distinct graph nodes built (both arms, all columns)
  std::vector<std::string> compared;   // tensors compared, in order
  std::vector<bool> substitution_used; // per substitution
  std::optional<TraceDifference> difference;
  bool ptx = false;                  // kernel arms: traced from their PTX (kernel_prove.hpp)
  std::vector<LemmaRecord> lemmas;   // kernel arms: the lemmas used
  std::uint64_t exhausted = 0;       // kernel arms: elements whose nodes differ, equal on every leaf value
  bool refuted_by_exhaustion = false;  // kernel arms: the difference's counterexample is of the output itself
  // Kernel arms: the opaque nodes below the outputs (ex2.approx.f32, mma.sync...: bits the hardware
  // defines, assumed deterministic, never computed), and their mnemonics, sorted (the report's
  // "approx" object, named for the first kind there was).
  std::uint64_t approx_nodes = 0;
  std::vector<std::string> approx;
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
