#include "proof/ab_proof.hpp"

#include <fmt/format.h>

#include <chrono>

#include "operator/kernel_prove.hpp"
#include "ptx/module.hpp"

namespace bitproof {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

op::ScaleSet range_set(std::uint32_t lo, std::uint32_t hi, std::string origin) {
  op::ScaleSet set;
  for (std::uint32_t b = lo; b <= hi && b < 256; ++b) set.present[b] = true;
  set.origin = std::move(origin);
  return set;
}

}  // namespace

bool AbOutcome::passes(const op::AbSpec& spec) const {
  if (cases.backend_disagreement_count != 0) return false;
  if (spec.expect_differ)
    return (!cases.arms_equal() || (proved && trace.refuted_by_exhaustion)) && (!proved || !trace.identical);
  return cases.arms_equal() && (!proved || trace.identical);
}

std::string AbOutcome::proof_verdict() const {
  if (!proved) return "";
  if (trace.identical) return cases.arms_equal() ? "proven" : "contradicted";
  return cases.arms_equal() && !trace.refuted_by_exhaustion ? "not_proven" : "refuted";
}

Expected<std::map<std::string, op::ScaleSet>> trace_scale_sets(const op::AbSpec& spec, const op::Weights& weights,
                                                             const std::string& audit, const AuditReader& read_audit) {
  std::optional<AuditedScales> report;
  if (!audit.empty()) {
    if (!read_audit) return Error{fmt::format("{}: no audit reader was given for it (a caller's error)", audit)};
    auto loaded = read_audit(audit);
    if (!loaded) return loaded.error();
    report = std::move(*loaded);
  }
  std::map<std::string, op::ScaleSet> sets;
  for (const op::InputSpec& in : spec.inputs) {
    if (in.dtype != op::DType::kMxfp4) continue;
    if (in.tensor.empty()) {
      sets[in.name] = range_set(in.scales.lo, in.scales.hi, fmt::format("synthetic scales {}..{}", in.scales.lo, in.scales.hi));
      continue;
    }
    const op::ScaleSet& bytes = weights.scale_sets.at(in.name);
    if (!report) {
      sets[in.name] = bytes;
      continue;
    }
    const std::string name = in.tensor + ".scale";
    const auto t = report->range_by_tensor.find(name);
    if (t == report->range_by_tensor.end() || !t->second)
      return Error{fmt::format("{}: result.tensors: the audit has no tensor \"{}\" (inputs \"{}\" of {})", audit, name,
                               in.name, spec.path)};
    const std::uint32_t lo = t->second->lo, hi = t->second->hi;
    op::ScaleSet stated = range_set(lo, hi, fmt::format("audit {}: {} holds {}..{}", audit, name, lo, hi));
    if (!bytes.within({lo, hi}))
      return Error{
          fmt::format("{}: {}: the audit says {}..{}, but the checkpoint's tensor holds byte {}: the audit is "
                      "not of this checkpoint",
                      audit, name, lo, hi, bytes.first_outside({lo, hi}))};
    sets[in.name] = std::move(stated);
  }
  return sets;
}

Expected<AbOutcome> run_ab_spec(const op::AbSpec& spec, const op::Weights& weights, const AbOptions& options,
                                const std::vector<op::ArmRunner*>& runners) {
  AbOutcome out;
  out.keep = options.keep;
  for (const op::ArmRunner* r : runners) out.backends.push_back(r->name());
  if (options.prove) {
    // Inputs first: a bad element proof or audit, or kernel arms beside a built-in arm, is exit 2
    // before any case runs.
    if (spec.kernels) {
      if (auto ok = op::check_kernel_provable(spec); !ok) return ok.error();
    }
    auto scales = trace_scale_sets(spec, weights, options.audit, options.read_audit);
    if (!scales) return scales.error();
    out.scales = std::move(*scales);
    out.audit = options.audit;
    auto runs = run_element_proofs(spec, options.threads);
    if (!runs) return runs.error();
    out.element_proofs = std::move(*runs);
  }
  const auto cases_start = std::chrono::steady_clock::now();
  auto cases = op::run_ab(spec, runners, options.keep, options.progress);
  if (!cases) {
    // An approximate instruction stops the CPU executor where it runs (its bits are the GPU's).
    // A PTX proof can still be made through it (opaque nodes): the cases are left out, said so.
    const bool gpu_only =
        options.prove && spec.kernels && cases.error().message.find(ptx::kGpuOnly) != std::string::npos;
    if (!gpu_only) return cases.error();
    // Without the spec's path (the report's result must not depend on where the spec lies).
    const std::string& m = cases.error().message;
    const std::string prefix = spec.path + ": ";
    out.cases_gpu_only = m.starts_with(prefix) ? m.substr(prefix.size()) : m;
    op::AbSpec none = spec;  // the result of no case: outputs, shapes and empty digests as run_ab writes them
    none.cases = 0;
    auto empty = op::run_ab(none, runners, options.keep, {});
    if (!empty) return empty.error();
    out.cases = std::move(*empty);
  } else {
    out.cases = std::move(*cases);
  }
  out.cases_seconds = seconds_since(cases_start);
  if (!options.prove) return out;
  const auto trace_start = std::chrono::steady_clock::now();
  Expected<op::TraceResult> trace = Error{""};
  if (spec.kernels) {
    if (options.kernel_modules == nullptr)
      return Error{fmt::format("{}: --prove: the kernel modules were not built (a caller's error)", spec.path)};
    trace = op::prove_kernel_arms(spec, *options.kernel_modules, out.scales);
  } else {
    trace = op::prove_by_trace(spec, out.scales, substitutions_of(out.element_proofs), {options.threads});
  }
  if (!trace) return trace.error();
  out.trace = std::move(*trace);
  out.proved = true;
  out.trace_seconds = seconds_since(trace_start);
  return out;
}

}  // namespace bitproof
