// `bitproof ab --prove` on kernel arms (issue 48; docs/ptx-proof.md): both arms' kernel stages
// run through the PTX executor under the symbolic value policy (src/ptx/symbolic.hpp) into one
// node table (src/ptx/graph.hpp), and each output element's node is compared across the arms.
//
// Leaves and their domains (what the proof quantifies over):
// - an f16 input: one leaf per element, every one of the 2^16 values (the spec's `values` only
//   shape the changing-input cases, never the proof);
// - an mxfp4 input's codes: one leaf per byte (two E2M1 codes), all 256 values;
// - its scales: one leaf per byte, the `scales` set (a synthetic input's declared interval, the
//   checkpoint's bytes, or an audit's interval: ab_proof.cpp's trace_scale_sets);
// - every declared output's contents before the first launch: a leaf per element, so an element no
//   stage writes, or one computed from the old contents, is seen (and refused, exit 2).
//
// Contract. identical == true only when, for every output element, both arms' nodes are the same
// node after the lemma pass (Graph::apply_lemmas over the differing elements): then the two arms
// write equal bits for every value of the leaves in their domains (graph.hpp's soundness
// argument). A difference names the first differing element (outputs in spec order, row-major),
// the first operation each arm computes that the other does not (the lowest node id reachable
// from one root only: node ids follow creation order), its PTX line and `.loc` source line, the
// leaves under it (the reduction position), and a lemma counterexample where two tables part.
// Approximate instructions (ex2.approx.f32, div.full.f32, ...; ptx/module.hpp's Approx) and mma
// (ptx/module.hpp's kMmaForms) are opaque nodes: equal nodes through them are "proven" on the assumption that the hardware is
// deterministic (TraceResult::approx_nodes and approx say how many and which); they are never
// evaluated, so an output pair whose nodes differ above one is not settled by exhaustion.
// Errors (exit 2): a branch, address or shuffle lane that depends on tensor data ("not provable by
// tracing", with the PTX line), an output element a stage never writes, an input a stage writes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"
#include "operator/kernel_cpu.hpp"
#include "operator/kernel_spec.hpp"
#include "operator/tensors.hpp"
#include "operator/trace.hpp"

namespace bitproof::op {

struct KernelProveOptions {
  std::uint64_t lemma_entries = std::uint64_t{1} << 24;  // the largest domain product a lemma enumerates
};

[[nodiscard]] Expected<TraceResult> prove_kernel_arms(const AbSpec& spec, const std::vector<KernelModule>& modules,
                                                      const std::map<std::string, ScaleSet>& scales,
                                                      const KernelProveOptions& options = {});

// Whether `spec` can be proven from its PTX: both arms kernel arms (a built-in arm has no PTX).
// Checked before any case runs. Error (exit 2): the arm that is not.
[[nodiscard]] Expected<Ok> check_kernel_provable(const AbSpec& spec);

// The `.loc` source line in force at PTX line `line` of `ptx` ("gemv.cu:45"), from its `.file`
// and `.loc` directives; "" where the PTX carries none before that line.
[[nodiscard]] std::string ptx_source_line(const std::string& ptx, std::uint32_t line);

}  // namespace bitproof::op
