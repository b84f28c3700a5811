#include "audit/audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "audit/scale_transform.hpp"
#include "name_filter.hpp"
#include "parallel.hpp"
#include "report/report.hpp"
#include "strict_json.hpp"

namespace bitproof::audit {
namespace {

// Work is handed out in pieces of this many bytes (large tensors are split).
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
constexpr std::size_t kLockStripes = 64;

bool ends_with_scale(std::string_view name) { return name.ends_with("scale"); }

bool is_listed(const Selection& s, DType d) { return std::find(s.dtypes.begin(), s.dtypes.end(), d) != s.dtypes.end(); }

// A scale tensor by its dtype and name: F8_E8M0, or a one-byte dtype named *scale.
bool looks_like_scales(const TensorInfo& t) {
  return t.dtype == DType::kF8E8M0 || (dtype_bits(t.dtype) == 8 && ends_with_scale(t.name));
}

bool is_scale_tensor(const TensorInfo& t, const Selection& s, const NameFilter& filter) {
  return is_listed(s, t.dtype) && looks_like_scales(t) && filter.selects(t.name);
}

std::string with_commas(std::uint64_t v) {
  std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

struct Chunk {
  std::size_t tensor;
  std::span<const unsigned char> bytes;
};

void histogram_chunks(const std::vector<Chunk>& chunks, std::vector<TensorAudit>& tensors, unsigned threads) {
  std::vector<std::mutex> stripes(kLockStripes);
  parallel_for(chunks.size(), threads, [&](std::size_t i) {
    Histogram local{};
    prefault(chunks[i].bytes);
    add_histogram(chunks[i].bytes, local);
    const std::lock_guard lock(stripes[chunks[i].tensor % kLockStripes]);
    merge_histogram(tensors[chunks[i].tensor].histogram, local);
  });
}

Json histogram_json(const Histogram& h) {
  Json pairs = Json::array();
  for (std::uint32_t b = 0; b < 256; ++b) {
    if (h[b] != 0) pairs.push_back(Json::array({b, h[b]}));
  }
  return pairs;
}

Json optional_json(const std::optional<std::uint32_t>& v) { return v ? Json(*v) : Json(nullptr); }

Json stats_json(const Histogram& h) {
  const ByteStats s = stats_of(h);
  return Json{{"bytes", s.bytes},
              {"min", optional_json(s.min)},
              {"max", optional_json(s.max)},
              {"nan_bytes", s.nan_bytes},
              {"histogram", histogram_json(h)}};
}

Json tensor_json(const TensorAudit& t) {
  Json j{{"name", t.name},
         {"file", t.file},
         {"dtype", dtype_name(t.dtype)},
         {"shape", t.shape},
         {"layer", optional_json(t.layer)}};
  j.update(stats_json(t.histogram));
  return j;
}

struct Group {
  std::size_t tensors = 0;
  std::size_t nan_tensors = 0;
  Histogram histogram{};
};

// Layers in ascending order, tensors outside any layer (key nullopt) first.
std::map<std::optional<std::uint32_t>, Group> by_layer(const AuditResult& audit) {
  std::map<std::optional<std::uint32_t>, Group> layers;
  for (const TensorAudit& t : audit.tensors) {
    Group& g = layers[t.layer];
    ++g.tensors;
    g.nan_tensors += t.histogram[kE8m0Nan] != 0;
    merge_histogram(g.histogram, t.histogram);
  }
  return layers;
}

Group overall(const AuditResult& audit) {
  Group g;
  for (const TensorAudit& t : audit.tensors) {
    ++g.tensors;
    g.nan_tensors += t.histogram[kE8m0Nan] != 0;
    merge_histogram(g.histogram, t.histogram);
  }
  return g;
}

// [f(lo), f(hi)] over the finite bytes present, f applied to each byte.
template <class F>
Json transformed_range(const Histogram& h, F f) {
  std::optional<std::uint32_t> lo, hi;
  for (std::uint32_t b = 0; b < 256; ++b) {
    if (h[b] == 0 || b == kE8m0Nan) continue;
    const std::uint32_t v = f(b);
    lo = lo ? std::min(*lo, v) : v;
    hi = hi ? std::max(*hi, v) : v;
  }
  return lo ? Json::array({*lo, *hi}) : Json(nullptr);
}

std::string range_text(const Json& range) {
  return range.is_null() ? "none" : fmt::format("{}–{}", range[0].get<std::uint32_t>(), range[1].get<std::uint32_t>());
}

Json selection_json(const Selection& s, std::size_t left_out) {
  Json dtypes = Json::array();
  for (DType d : s.dtypes) dtypes.push_back(dtype_name(d));
  return Json{{"dtypes", dtypes},
              {"rule", "dtype listed, and dtype F8_E8M0 or name ending in \"scale\""},
              {"select", s.select.empty() ? Json(nullptr) : Json(s.select)},
              {"left_out", left_out}};
}

Json checkpoint_json(const AuditResult& audit) {
  Json files = Json::array();
  for (const FileSummary& f : audit.files)
    files.push_back({{"file", f.name}, {"bytes", f.bytes}, {"tensors", f.tensors}});
  return Json{{"path", audit.root},
              {"index", audit.index ? Json(*audit.index) : Json(nullptr)},
              {"files", files},
              {"tensors", audit.tensors_seen}};
}

Json interpretation_json() {
  return Json{{"codes", "ue8m0"},
              {"nan_code", kE8m0Nan},
              {"adjusted", "turbomind::adjust_scale(byte) = clamp(byte - 112, 0, 30), the FP16 exponent field"},
              {"folded", fmt::format("adjusted + {} (log2 of turbomind::kTwoPow14)", kFoldShift)},
              {"min_max", "over every byte, NaN (0xFF) included"}};
}

}  // namespace

Expected<Selection> make_selection(const std::string& dtype_list, const std::string& select) {
  Selection s;
  s.select = select;
  if (!dtype_list.empty()) {
    s.dtypes.clear();
    std::stringstream in(dtype_list);
    std::string name;
    while (std::getline(in, name, ',')) {
      const auto d = dtype_from_name(name);
      if (!d) return Error{fmt::format("--dtype: {}: unknown dtype", printable(name))};
      if (dtype_bits(*d) != 8) return Error{fmt::format("--dtype: {}: not a one-byte dtype", name)};
      if (!is_listed(s, *d)) s.dtypes.push_back(*d);
    }
    if (s.dtypes.empty()) return Error{"--dtype: no dtype given"};
  }
  if (auto filter = NameFilter::make(select, "--select"); !filter) return filter.error();
  return s;
}

std::optional<std::uint32_t> layer_of(std::string_view name) {
  constexpr std::string_view kLayers = "layers.";
  for (std::size_t at = name.find(kLayers); at != std::string_view::npos; at = name.find(kLayers, at + 1)) {
    if (at != 0 && name[at - 1] != '.') continue;
    std::size_t i = at + kLayers.size();
    std::uint64_t value = 0;
    const std::size_t digits_begin = i;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && i - digits_begin < 9) {
      value = value * 10 + static_cast<std::uint64_t>(name[i] - '0');
      ++i;
    }
    if (i > digits_begin && i < name.size() && name[i] == '.') return static_cast<std::uint32_t>(value);
  }
  return std::nullopt;
}

ByteStats stats_of(const Histogram& h) {
  ByteStats s;
  for (std::uint32_t b = 0; b < 256; ++b) {
    if (h[b] == 0) continue;
    s.bytes += h[b];
    if (!s.min) s.min = b;
    s.max = b;
    if (b == kE8m0Nan) continue;
    if (!s.finite_min) s.finite_min = b;
    s.finite_max = b;
  }
  s.nan_bytes = h[kE8m0Nan];
  return s;
}

Expected<AuditResult> run_audit(const Checkpoint& checkpoint, const AuditOptions& options) {
  AuditResult audit;
  audit.root = checkpoint.root;
  audit.index = checkpoint.index;
  audit.selection = options.selection;
  auto filter = NameFilter::make(options.selection.select, "--select");
  if (!filter) return filter.error();
  std::vector<std::span<const unsigned char>> data;
  for (const CheckpointFile& f : checkpoint.files) {
    audit.files.push_back({f.name, f.map.bytes().size(), f.header.tensors.size()});
    audit.tensors_seen += f.header.tensors.size();
    for (const TensorInfo& t : f.header.tensors) {
      if (!is_scale_tensor(t, options.selection, *filter)) {
        audit.left_out += looks_like_scales(t) ? 1 : 0;
        continue;
      }
      audit.tensors.push_back({t.name, f.name, t.dtype, t.shape, t.bytes(), layer_of(t.name), {}});
      data.push_back(f.tensor_bytes(t));
    }
  }
  if (audit.tensors.empty()) {
    return Error{
        fmt::format("{}: selection: no scale tensor among {} tensors (dtypes listed, F8_E8M0 or named *scale{})",
                    checkpoint.root, audit.tensors_seen, options.selection.select.empty() ? "" : ", --select")};
  }
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (std::size_t off = 0; off < data[i].size(); off += kChunkBytes) {
      chunks.push_back({i, data[i].subspan(off, std::min(kChunkBytes, data[i].size() - off))});
    }
  }
  histogram_chunks(chunks, audit.tensors, resolve_threads(options.threads));
  std::sort(audit.tensors.begin(), audit.tensors.end(),
            [](const TensorAudit& a, const TensorAudit& b) { return a.name < b.name; });
  return audit;
}

std::string summary_line(const AuditResult& audit) {
  const Group all = overall(audit);
  const ByteStats s = stats_of(all.histogram);
  const Json raw = transformed_range(all.histogram, [](std::uint32_t b) { return b; });
  const Json adjusted = transformed_range(all.histogram, adjusted_exponent);
  const Json folded = transformed_range(all.histogram, folded_exponent);
  return fmt::format(
      "{} scale tensors, {} bytes; raw E8M0 {}, adjusted half exponents {}, folded exponents {}; {} NaN bytes (0xFF){}{}",
      with_commas(all.tensors), with_commas(s.bytes), range_text(raw), range_text(adjusted), range_text(folded),
      with_commas(s.nan_bytes), s.nan_bytes ? fmt::format(" in {} tensors", with_commas(all.nan_tensors)) : "",
      audit.left_out ? fmt::format("; PARTIAL: {} scale tensors left out by --select or --dtype", audit.left_out) : "");
}

Json audit_result_json(const AuditResult& audit) {
  const Group all = overall(audit);
  const ByteStats s = stats_of(all.histogram);
  Json summary{{"summary", summary_line(audit)}, {"tensors", all.tensors}, {"nan_tensors", all.nan_tensors}};
  summary.update(stats_json(all.histogram));
  summary["finite_min"] = optional_json(s.finite_min);
  summary["finite_max"] = optional_json(s.finite_max);
  summary["raw"] = transformed_range(all.histogram, [](std::uint32_t b) { return b; });
  summary["adjusted"] = transformed_range(all.histogram, adjusted_exponent);
  summary["folded"] = transformed_range(all.histogram, folded_exponent);
  Json layers = Json::array();
  for (const auto& [layer, g] : by_layer(audit)) {
    Json l{{"layer", optional_json(layer)}, {"tensors", g.tensors}, {"nan_tensors", g.nan_tensors}};
    l.update(stats_json(g.histogram));
    layers.push_back(l);
  }
  Json tensors = Json::array();
  for (const TensorAudit& t : audit.tensors) tensors.push_back(tensor_json(t));
  return Json{{"checkpoint", checkpoint_json(audit)},
              {"selection", selection_json(audit.selection, audit.left_out)},
              {"interpretation", interpretation_json()},
              {"overall", summary},
              {"layers", layers},
              {"tensors", tensors}};
}

Json audit_report(const AuditResult& audit, const Json& run) {
  Json env = environment_json();
  env["run"] = run;
  return Json{{"bitproof_report", kReportVersion},
              {"kind", "audit"},
              {"result", audit_result_json(audit)},
              {"environment", env}};
}

}  // namespace bitproof::audit
