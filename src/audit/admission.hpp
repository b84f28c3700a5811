// Admission: joins a checkpoint audit (bitproof audit --report) with a domain
// discovery (bitproof domain SPEC --report) and says, for every scale tensor
// and layer, whether all its bytes lie inside the proven interval: the maximal
// interval of the chosen claim (by default the intersection over all claims).
// Also the observed interval of an audit, for `prove --scales-from`.
//
// Both inputs are untrusted files and are checked: their kind, every field
// used, and their internal consistency (an audit's min/max must match its
// histogram; a domain's maximal interval must hold on every code per its own
// per-code counts; the inputs not swept must cover all their codes). Any
// mismatch is bad input (exit 2).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "audit/audit.hpp"
#include "error.hpp"
#include "proof/spec.hpp"

namespace bitproof::audit {

struct AuditedTensor {
  std::string name;
  std::string file;
  std::optional<std::uint32_t> layer;
  std::uint64_t bytes = 0;
  std::uint64_t nan_bytes = 0;
  std::optional<std::uint32_t> min, max;  // NaN bytes included
};

struct AuditReport {
  std::string path;
  std::string checkpoint;
  std::string summary;
  std::optional<std::uint32_t> min, max;
  std::vector<AuditedTensor> tensors;
};

[[nodiscard]] Expected<AuditReport> load_audit_report(const std::string& path);

// The audit's observed interval, [overall min, overall max], NaN bytes included.
[[nodiscard]] Expected<CodeRange> observed_interval(const AuditReport& audit);

// `prove --scales-from AUDIT.json`: replaces the codes of the spec's input
// "scale" (which must be ue8m0) by the audit's observed interval.
[[nodiscard]] Expected<Ok> apply_scales_from(Spec& spec, const std::string& audit_path);

struct DomainClaim {
  std::size_t index = 0;
  std::string claim;
  std::vector<std::string> recipes;
  std::optional<CodeRange> maximal;
};

struct ProvenInterval {
  std::string path;
  std::string spec_name;
  std::string spec_sha256;
  std::vector<DomainClaim> claims;  // the claims used
  std::optional<CodeRange> range;   // their intersection; nullopt: nothing proven
};

// `claim`: one claim's index, or every claim when absent.
[[nodiscard]] Expected<ProvenInterval> load_domain_report(const std::string& path, std::optional<std::size_t> claim);

struct TensorAdmission {
  const AuditedTensor* tensor;
  bool inside;
};

struct LayerAdmission {
  std::optional<std::uint32_t> layer;
  std::size_t tensors = 0;
  std::size_t outside = 0;
  std::optional<std::uint32_t> min, max;
};

struct Admission {
  std::string select;
  std::vector<TensorAdmission> tensors;  // the selected ones, in audit order
  std::vector<LayerAdmission> layers;    // ascending, tensors outside any layer first
  std::size_t outside = 0;
  [[nodiscard]] bool admitted() const { return outside == 0; }
};

// `select`: ECMAScript regular expression searched in tensor names; empty selects all.
// Fails (exit 2) when it selects nothing.
[[nodiscard]] Expected<Admission> admit(const AuditReport& audit, const ProvenInterval& proven,
                                        const std::string& select);

[[nodiscard]] std::vector<std::string> admission_lines(const AuditReport& audit, const ProvenInterval& proven,
                                                       const Admission& admission, std::size_t max_listed);
[[nodiscard]] Json admission_report(const AuditReport& audit, const ProvenInterval& proven, const Admission& admission);

}  // namespace bitproof::audit
