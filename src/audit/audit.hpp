// The checkpoint audit: every byte of every scale tensor, histogrammed per
// tensor, per layer and overall, read through memory maps on all cores.
//
// A tensor is a scale tensor when its dtype is in the selection's list and it
// is F8_E8M0 or its name ends in "scale" (by default: F8_E8M0 tensors, and U8
// tensors named *scale), and, when --select is given, the regular expression
// (ECMAScript, searched anywhere in the name) matches its name. Bytes are read
// as UE8M0 codes: 0xFF is NaN and is counted apart.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "audit/histogram.hpp"
#include "audit/safetensors.hpp"
#include "error.hpp"

namespace bitproof::audit {

using Json = nlohmann::ordered_json;

struct Selection {
  std::vector<DType> dtypes{DType::kF8E8M0, DType::kU8};
  std::string select;  // regular expression over names; empty selects all
};

// "F8_E8M0,U8" -> dtypes (each must be a known 8-bit dtype); checks the regex.
[[nodiscard]] Expected<Selection> make_selection(const std::string& dtype_list, const std::string& select);

struct TensorAudit {
  std::string name;
  std::string file;
  DType dtype = DType::kF8E8M0;
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;
  std::optional<std::uint32_t> layer;
  Histogram histogram{};
};

struct FileSummary {
  std::string name;
  std::uint64_t bytes = 0;
  std::size_t tensors = 0;
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
};

struct AuditOptions {
  Selection selection;
  unsigned threads = 0;  // 0: one per hardware thread
};

// Fails (exit 2) when no tensor is selected: an empty audit would admit anything.
[[nodiscard]] Expected<AuditResult> run_audit(const Checkpoint& checkpoint, const AuditOptions& options);

// The layer L of a name containing "layers.L." (at the start or after a dot).
[[nodiscard]] std::optional<std::uint32_t> layer_of(std::string_view name);

struct ByteStats {
  std::uint64_t bytes = 0;
  std::uint64_t nan_bytes = 0;
  std::optional<std::uint32_t> min, max;                // over every byte, NaN included
  std::optional<std::uint32_t> finite_min, finite_max;  // over every byte but 0xFF
};
[[nodiscard]] ByteStats stats_of(const Histogram& h);

// "N scale tensors, B bytes; raw E8M0 LO–HI, adjusted half exponents a–b,
//  folded exponents f–g; K NaN bytes (0xFF) in T tensors"
[[nodiscard]] std::string summary_line(const AuditResult& audit);

// The deterministic part of the report.
[[nodiscard]] Json audit_result_json(const AuditResult& audit);
// {bitproof_report, kind: "audit", result, environment}; `run` (threads, time) goes into environment.
[[nodiscard]] Json audit_report(const AuditResult& audit, const Json& run);

}  // namespace bitproof::audit
