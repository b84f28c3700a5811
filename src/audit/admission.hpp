// Admission: joins a checkpoint audit (bitproof audit --report) with a domain
// discovery (bitproof domain SPEC --report) and says, for every scale tensor
// and layer, whether all its bytes lie inside the proven interval: the maximal
// interval of the chosen claim (by default the intersection over all claims).
// Also the observed interval of an audit, for `prove --scales-from`.
//
// Both inputs are untrusted files and are checked: their kind, every field
// used, and their internal consistency (an audit's min/max must match its
// histogram; a domain report must pass the report schema, record a spec with
// its own digest, have per-code runs that tile the format's codes with the
// domain's cases per code, a maximal interval that holds on every code by
// those runs, inputs not swept that cover all their codes, and it must
// reproduce when its spec is swept again here). Any mismatch is bad input
// (exit 2). A partial audit (--select or --dtype left scale tensors unread) is
// refused unless the caller allows it; then the admission says so.
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
  std::uint64_t left_out = 0;  // scale tensors the audit did not read
  std::string select;          // the audit's --select, if any
  // Fails (exit 2) on a partial audit unless `allow_partial`.
  [[nodiscard]] Expected<Ok> check_whole(bool allow_partial) const;
};

[[nodiscard]] Expected<AuditReport> load_audit_report(const std::string& path);

// The audit's observed interval, [overall min, overall max], NaN bytes included.
[[nodiscard]] Expected<CodeRange> observed_interval(const AuditReport& audit);

// `prove --scales-from AUDIT.json`: replaces the codes of the spec's input
// "scale" (which must be ue8m0) by the audit's observed interval; a partial
// audit only with `allow_partial` (--allow-partial).
[[nodiscard]] Expected<Ok> apply_scales_from(Spec& spec, const std::string& audit_path, bool allow_partial);

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
  std::uint64_t partial_audit = 0;  // scale tensors of the checkpoint the audit left out (--allow-partial)
  [[nodiscard]] bool admitted() const { return outside == 0; }
};

// `select`: a regular expression (RE2, name_filter.hpp) searched in tensor
// names; empty selects all. Fails (exit 2) when it selects nothing, and on a
// partial audit unless `allow_partial`.
[[nodiscard]] Expected<Admission> admit(const AuditReport& audit, const ProvenInterval& proven,
                                        const std::string& select, bool allow_partial);

[[nodiscard]] std::vector<std::string> admission_lines(const AuditReport& audit, const ProvenInterval& proven,
                                                       const Admission& admission, std::size_t max_listed);
[[nodiscard]] Json admission_report(const AuditReport& audit, const ProvenInterval& proven, const Admission& admission);

}  // namespace bitproof::audit
