// The checkpoint audit: every code of every scale tensor, histogrammed per
// tensor, per layer and per scale format, read with pread into per-thread L2 buffers on all
// cores.
//
// A tensor is a scale tensor when its dtype holds a scale format
// (audit/scale_format.hpp: F8_E8M0, U8, F8_E4M3, F16, BF16, F32) and it is
// F8_E8M0 or the last component of its name contains "scale" (weight_scale,
// weight_scale_2, scales, scale). The selection narrows them: --dtype (a list
// of those dtypes; default all), --format (a dtype read in another row's
// format, e.g. F8_E4M3 as ue4m3) and --select (a regular expression searched
// in the name). Codes are the dtype's little-endian words, read in the
// format's terms: NaN, Inf, zero, subnormal, negative and codes that are no
// code of the format (a UE4M3 byte with the sign bit set) are counted apart
// and named. Recipe views (audit/scale_transform.hpp) only when asked for.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audit/histogram.hpp"
#include "checkpoint/safetensors.hpp"
#include "audit/scale_format.hpp"
#include "audit/scale_transform.hpp"
#include "error.hpp"

namespace bitproof::audit {

using Json = nlohmann::ordered_json;

// A code, or null where there is none (an empty histogram's min and max, a tensor without a layer).
inline Json optional_json(const std::optional<std::uint32_t>& v) { return v ? Json(*v) : Json(nullptr); }

struct Selection {
  std::vector<checkpoint::DType> dtypes = all_scale_dtypes();
  std::vector<ScaleFormat> formats;  // --format: rows that replace their dtype's default reading
  std::string select;                // regular expression over names; empty selects all
  [[nodiscard]] static std::vector<checkpoint::DType> all_scale_dtypes();
  // The format a tensor of this (scale) dtype is read in.
  [[nodiscard]] FormatId format_of(checkpoint::DType dtype) const;
};

// "F8_E8M0,F16" -> dtypes (each must hold a scale format; empty: all);
// "ue4m3" -> the rows of --format; checks the regex. Errors name the flag.
[[nodiscard]] Expected<Selection> make_selection(const std::string& dtype_list, const std::string& select,
                                                 const std::string& format_list = "");

// F8_E8M0, or the last component of the name contains "scale".
[[nodiscard]] bool named_like_scales(checkpoint::DType dtype, std::string_view name);

struct TensorAudit {
  std::string name;
  std::string file;
  checkpoint::DType dtype = checkpoint::DType::kF8E8M0;
  FormatId format = FormatId::ue8m0;
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;
  std::optional<std::uint32_t> layer;
  CompactCounts histogram;
  std::string sha256;  // of the tensor's bytes as the audit read them (hex)
};

// A file of the checkpoint as the audit read it: its size and the SHA-256 of
// its header (the 8-byte length and the JSON text), which names its tensors,
// their dtypes, shapes and offsets.
struct FileSummary {
  std::string name;
  std::uint64_t bytes = 0;
  std::size_t tensors = 0;
  std::string header_sha256;
};

struct AuditResult {
  std::string root;
  std::optional<std::string> index;
  std::vector<FileSummary> files;
  Selection selection;
  std::size_t tensors_seen = 0;
  // Scale tensors (F8_E8M0, or one-byte and named *scale) that --dtype or
  // --select left unread: an audit with any is partial.
  std::size_t left_out = 0;
  std::vector<TensorAudit> tensors;  // the scale tensors, sorted by name
  std::vector<const ScaleView*> views;
  // The formats of the tensors, in kFormats order.
  [[nodiscard]] std::vector<FormatId> formats() const;
};

struct AuditOptions {
  Selection selection;
  unsigned threads = 0;  // 0: one per hardware thread
  std::vector<const ScaleView*> views = {};  // --view: recipe views printed and reported
};

// "turbomind" -> the views (each must be in kScaleViews).
[[nodiscard]] Expected<std::vector<const ScaleView*>> make_views(const std::vector<std::string>& names);

// Fails (exit 2) when no tensor is selected: an empty audit would admit anything.
// Each selected tensor's bytes are hashed (SHA-256) as they are counted, by the
// one thread that reads the whole tensor; each file's header is hashed too.
[[nodiscard]] Expected<AuditResult> run_audit(const checkpoint::Checkpoint& checkpoint, const AuditOptions& options);

// The layer L of a name containing "layers.L." (at the start or after a dot).
[[nodiscard]] std::optional<std::uint32_t> layer_of(std::string_view name);

// What the codes of one format's histogram are.
struct CodeStats {
  std::uint64_t codes = 0;
  std::optional<std::uint32_t> min, max;                // over every code, specials included
  std::optional<std::uint32_t> finite_min, finite_max;  // over the normal, subnormal and zero codes
  std::uint64_t nan = 0, inf = 0, zero = 0, subnormal = 0, negative = 0, not_a_code = 0;
  friend bool operator==(const CodeStats&, const CodeStats&) = default;
};
[[nodiscard]] CodeStats stats_of(FormatId format, const CodeCounts& h);
[[nodiscard]] CodeStats stats_of(FormatId format, const CompactCounts& h);

// {"nan": K, ...}: the specials this format has, by name (nan, inf, zero,
// subnormal, negative, not_a_code), each counted.
[[nodiscard]] Json specials_json(FormatId format, const CodeStats& s, int code_bits);

// One line a format, in its own words:
//   "18 ue8m0 scale tensors (F8_E8M0), 144 codes: 114–126 (2^-13 … 2^-1); 0 NaN (0xFF)"
// then one line a requested view, then "PARTIAL: ..." when scale tensors were left out.
[[nodiscard]] std::vector<std::string> summary_lines(const AuditResult& audit);

// Fails (exit 2) when a view reads a format none of the tensors is in.
[[nodiscard]] Expected<Ok> check_views(const AuditResult& audit);

// The deterministic part of the report; without `tensor_histograms`, each
// tensor's histogram an empty array (as parse_report_without_histograms reads
// the report: what the renderings need).
[[nodiscard]] Json audit_result_json(const AuditResult& audit, bool tensor_histograms = true);
// Whether `text` is audit_result_json(audit).dump(), written without the JSON
// values and compared a tensor at a time (a GPTQ checkpoint's is ~86 MB).
[[nodiscard]] bool audit_result_text_is(const AuditResult& audit, std::string_view text);
// {bitproof_report, kind: "audit", result, environment}; `run` (threads, time) goes into environment.
[[nodiscard]] Json audit_report(const AuditResult& audit, const Json& run, bool tensor_histograms = true);
// The text of audit_report(audit, run).dump(), written without building the tensors' histograms
// as JSON values (a GPTQ checkpoint's thousands of FP16 scale tensors hold millions of pairs,
// ~1 GB as JSON values and seconds to build, for an 86 MB report).
[[nodiscard]] std::string audit_report_text(const AuditResult& audit, const Json& run);

}  // namespace bitproof::audit
