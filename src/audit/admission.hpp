// Admission: joins a checkpoint audit (bitproof audit --report) with a domain
// discovery (bitproof domain SPEC --report) over a scale input of the same
// format, and says, for every scale tensor and layer, how many of its codes
// lie outside the proven interval (the maximal interval of the chosen claim,
// by default the intersection over all claims), below and above, with the
// first few offending codes decoded. Also the observed codes of an audit, for
// `prove --scales-from`.
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
#include <string_view>
#include <vector>

#include "audit/audit.hpp"
#include "error.hpp"
#include "proof/audited_scales.hpp"
#include "proof/spec.hpp"

namespace bitproof::audit {

struct AuditedTensor {
  std::string name;
  std::string file;
  std::optional<std::uint32_t> layer;
  checkpoint::DType dtype = checkpoint::DType::kF8E8M0;
  FormatId format = FormatId::ue8m0;
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;
  CodeStats stats;
  CodeCounts histogram;
  std::string sha256;  // of its bytes, as the audit read them
};

struct AuditReport {
  std::string path;
  std::string checkpoint;
  std::vector<std::string> summary;
  std::vector<AuditedTensor> tensors;
  std::uint64_t left_out = 0;  // scale tensors the audit did not read
  std::string select;          // the audit's --select, if any
  // What the audit read, for check_checkpoint: the index file, each file's
  // size and header digest, and the audit's selection and views.
  std::optional<std::string> index;
  std::vector<FileSummary> files;
  Selection selection;
  std::vector<const ScaleView*> views;
  // Fails (exit 2) on a partial audit unless `allow_partial`.
  [[nodiscard]] Expected<Ok> check_whole(bool allow_partial) const;
  // The formats of its tensors, ascending, as "ue8m0, fp16".
  [[nodiscard]] std::string format_names() const;
};

// Reads an audit report: the schema, then every tensor's counts, ranges and
// specials against its histogram, then the whole result against the one its
// tensors give again (formats, layers, views and summary lines re-derived).
[[nodiscard]] Expected<AuditReport> load_audit_report(const std::string& path);
// The same for report text already in memory; `path` names it in messages.
[[nodiscard]] Expected<AuditReport> parse_audit_report_text(const std::string& text, const std::string& path);

// load_audit_report, as the A/B trace proof reads an audit (--audit): each
// tensor's lowest and highest code (proof/audited_scales.hpp).
[[nodiscard]] Expected<AuditedScales> read_audited_scales(const std::string& path);

// The checkpoint an audit names (result.checkpoint.path), as it is on disk
// now, must be the bytes the audit read: the same files (and index), each of
// the recorded size and header SHA-256, every audited scale tensor's bytes of
// the recorded SHA-256, and the codes the audit records for each tensor. The
// checkpoint is audited again here (every core), its tensors hashed as they
// are read. Fails (exit 2) naming the report, the file and what differs; a
// checkpoint that cannot be opened is bad input too.
[[nodiscard]] Expected<Ok> check_checkpoint(const AuditReport& audit);
// load_audit_report, then check_checkpoint: how admit, prove --scales-from
// and report verify of an admission read an audit.
[[nodiscard]] Expected<AuditReport> load_checked_audit(const std::string& path);

// report verify of an audit: the report (parsed from `path`), checked as
// load_audit_report checks it, then its checkpoint (result.checkpoint.path)
// audited again here with the recorded selection and views on `threads`
// threads (0: every core). Returns nothing when the result part this run
// gives is the recorded one (as text, else as JSON values), else that result;
// a checkpoint that cannot be read is bad input (exit 2).
[[nodiscard]] Expected<std::optional<Json>> reaudit_result(const Json& report, const std::string& path,
                                                           unsigned threads = 0);

// What `report verify` prints of an audit that reproduces.
struct AuditReproduced {
  std::string checkpoint;            // result.checkpoint.path
  std::vector<std::string> summary;  // result.overall.summary
};

// report verify of an audit report as bitproof writes it, the fast way: its
// tensors' histograms read apart from the document, the report checked as
// load_audit_report checks it, and its checkpoint audited again.
struct FastReaudit {
  // The result part this run gives is the recorded text byte for byte: what to print.
  std::optional<AuditReproduced> reproduced;
  // Else, where the report read the fast way and its checkpoint was audited:
  // the first line where the result parts differ (first_difference, as
  // reaudit_result on the whole document would give it).
  std::string difference;
};
// Neither (a report written otherwise, one that fails a check, a checkpoint
// that cannot be read): reaudit_result on the whole document decides and
// names why.
[[nodiscard]] FastReaudit reaudit_fast(std::string_view text, const std::string& path, unsigned threads = 0);

// Every code the audit saw in tensors of `format`, with its count; fails
// (exit 2) when the audit holds no tensor of that format.
[[nodiscard]] Expected<CodeCounts> observed_codes(const AuditReport& audit, FormatId format);

// `prove --scales-from A.json` sweeps the set of codes the audit observed in
// tensors of the format of the spec's input "scale" (a list: codes no tensor
// holds are not swept); `--scales-from-range A.json` the interval from their
// least to their greatest. The proven spec records which (codes "list" or
// "range"). A partial audit only with `allow_partial` (--allow-partial);
// codes that are no code of the format (a UE4M3 byte with the sign bit set)
// cannot be swept and are bad input.
enum class ScalesFrom : std::uint8_t { kSet, kRange };
[[nodiscard]] Expected<Ok> apply_scales_from(Spec& spec, const std::string& audit_path, bool allow_partial,
                                             ScalesFrom mode = ScalesFrom::kSet);

struct DomainClaim {
  std::size_t index = 0;
  std::string claim;
  std::vector<std::string> recipes;
  std::optional<CodeRange> maximal;
};

struct ProvenInterval {
  std::string path;
  FormatId format = FormatId::ue8m0;  // the swept input's format
  std::string spec_name;
  std::string spec_sha256;
  std::vector<DomainClaim> claims;  // the claims used
  std::optional<CodeRange> range;   // their intersection; nullopt: nothing proven
};

// `claim`: one claim's index, or every claim when absent.
[[nodiscard]] Expected<ProvenInterval> load_domain_report(const std::string& path, std::optional<std::size_t> claim);

// The first codes outside the proven set each tensor lists (with counts and decoded values).
inline constexpr std::size_t kFirstOutside = 4;

struct TensorAdmission {
  const AuditedTensor* tensor;
  std::uint64_t below = 0;  // codes below the proven interval
  std::uint64_t above = 0;  // codes above it (NaN codes of UE8M0 and FP16 among them)
  CodeCounts first_outside;  // the first kFirstOutside codes outside, ascending
  [[nodiscard]] bool inside() const { return below == 0 && above == 0; }
};

struct LayerAdmission {
  std::optional<std::uint32_t> layer;
  std::size_t tensors = 0;
  std::size_t outside = 0;  // tensors with a code outside
  std::uint64_t below = 0, above = 0;
  std::optional<std::uint32_t> min, max;
};

struct Admission {
  std::string select;
  std::uint64_t max_outside = 0;         // --max-outside: codes outside tolerated in all
  std::vector<TensorAdmission> tensors;  // the selected ones, in audit order
  std::vector<LayerAdmission> layers;    // ascending, tensors outside any layer first
  std::size_t outside = 0;               // tensors with a code outside
  std::uint64_t below = 0, above = 0;    // codes outside, over the selected tensors
  std::uint64_t partial_audit = 0;  // scale tensors of the checkpoint the audit left out (--allow-partial)
  [[nodiscard]] std::uint64_t codes_outside() const { return below + above; }
  [[nodiscard]] bool admitted() const { return codes_outside() <= max_outside; }
};

// `select`: a regular expression (RE2, name_filter.hpp) searched in tensor
// names; empty selects all. Fails (exit 2) when it selects nothing, when a
// selected tensor is in another format than the domain report sweeps, and on
// a partial audit unless `allow_partial`. Admitted when at most `max_outside`
// codes of the selected tensors lie outside the proven interval.
[[nodiscard]] Expected<Admission> admit(const AuditReport& audit, const ProvenInterval& proven,
                                        const std::string& select, bool allow_partial, std::uint64_t max_outside = 0);

// "0xFF [11111111] nan", or "0x80 (no ue4m3 code)" for a code past the format's.
[[nodiscard]] std::string describe_scale_code(FormatId format, std::uint32_t code);

[[nodiscard]] std::vector<std::string> admission_lines(const AuditReport& audit, const ProvenInterval& proven,
                                                       const Admission& admission, std::size_t max_listed);
[[nodiscard]] Json admission_report(const AuditReport& audit, const ProvenInterval& proven, const Admission& admission);

// report verify of an admission (`report`, valid against the schema, read from
// `path`): the admission made again here from the audit and domain reports it
// names (result.audit.file, result.domain.file: the audit re-derived, the
// domain swept again), with its recorded --claim, --select, --max-outside and
// partial-audit consent. Returns the result part this run gives; an input
// that is missing or fails its checks is bad input (exit 2) naming the field.
[[nodiscard]] Expected<Json> readmit_result(const Json& report, const std::string& path);

}  // namespace bitproof::audit
