// `bitproof ab`: the changing-input A/B run of an A/B spec on the CPU model and
// any other backends, and with `prove` the trace proof over every input, the
// element proofs it relies on swept here and the scale sets it quantifies over
// (synthetic intervals, the checkpoint's own bytes, or an audit's intervals).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab.hpp"
#include "operator/kernel_spec.hpp"
#include "operator/tensors.hpp"
#include "operator/trace.hpp"
#include "proof/audited_scales.hpp"
#include "proof/element_proofs.hpp"

namespace bitproof {

struct AbOptions {
  std::string audit;  // --audit: scale intervals of the checkpoint tensors (the trace proof's domain)
  AuditReader read_audit = {};  // reads `audit` (needed whenever it is set)
  bool prove = false;
  std::size_t keep = 8;
  unsigned threads = 0;
  op::AbProgress progress = {};
  // A spec with kernel arms: their built modules (the PTX proof traces them; required with prove).
  const std::vector<op::KernelModule>* kernel_modules = nullptr;
};

struct AbOutcome {
  op::AbResult cases;
  std::vector<std::string> backends;  // runner names, the first is the reference
  bool proved = false;                // the trace proof ran
  op::TraceResult trace;
  std::vector<ElementProofRun> element_proofs;
  std::map<std::string, op::ScaleSet> scales;  // per mxfp4 input: what the proof quantified over
  std::string audit;                           // the audit report they came from, as given ("" none)
  std::size_t keep = 8;                        // differences kept
  double cases_seconds = 0;
  double trace_seconds = 0;
  // Kernel arms with prove: the executor's Error where the CPU cases stopped at an approximate
  // instruction (ptx::kGpuOnly: its bits are the GPU's); "" when the cases ran. Then no case ran
  // (cases.cases == 0) and the verdict is the proof's alone: proven, or not proven (the concrete
  // A/B needs the GPU: --backend cuda).
  std::string cases_gpu_only;
  // The arms agree on every case and every backend agrees with the first; with
  // a trace proof, the graphs are identical. For an "expect": "differ" spec: a
  // differing case was found and (with a proof) the graphs differ.
  [[nodiscard]] bool passes(const op::AbSpec& spec) const;
  // The trace proof's verdict (only when `proved`): "proven" (identical graphs, no case differs),
  // "not_proven" (the graphs differ, no case run differs), "refuted" (the graphs differ and a case
  // differs, or evaluating a differing output on every value of its few narrow leaves found an
  // input where the bits differ), "contradicted" (identical graphs, yet a case differs: a bug in
  // the proof, never a pass).
  [[nodiscard]] std::string proof_verdict() const;
};

// The scale set of every mxfp4 input for the trace proof: a synthetic input's
// declared interval; a checkpoint input's bytes, or with `audit` the audit's
// interval for "<tensor>.scale" (which must contain the checkpoint's bytes),
// read by `read_audit`.
[[nodiscard]] Expected<std::map<std::string, op::ScaleSet>> trace_scale_sets(const op::AbSpec& spec,
                                                                           const op::Weights& weights,
                                                                           const std::string& audit,
                                                                           const AuditReader& read_audit);

// Runs the cases on `runners` (the CPU model first, then any other backend) and,
// with options.prove, the trace proof.
[[nodiscard]] Expected<AbOutcome> run_ab_spec(const op::AbSpec& spec, const op::Weights& weights,
                                              const AbOptions& options, const std::vector<op::ArmRunner*>& runners);

}  // namespace bitproof
