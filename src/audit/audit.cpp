#include "audit/audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <mutex>
#include <sstream>

#include "name_filter.hpp"
#include "parallel.hpp"
#include "hash/digest.hpp"
#include "report/report.hpp"
#include "strict_json.hpp"

namespace bitproof::audit {
namespace {

constexpr std::uint32_t kClassTableCodes = std::uint32_t{1} << 16;

// classify_code for every code below 2^16, built once per format: it decodes
// the code, and the statistics classify every distinct code of every tensor.
using ClassTable = std::vector<ClassifiedCode>;
const ClassTable& class_table(FormatId format) {
  static std::mutex lock;
  static std::map<FormatId, ClassTable> tables;
  const std::lock_guard guard(lock);
  ClassTable& t = tables[format];
  if (t.empty()) {
    t.reserve(kClassTableCodes);
    for (std::uint32_t code = 0; code < kClassTableCodes; ++code) t.push_back(classify_code(format, code));
  }
  return t;
}

// classify_code of one format, through its table.
struct Classifier {
  explicit Classifier(FormatId f) : format(f), table(class_table(f)) {}
  ClassifiedCode operator()(std::uint32_t code) const {
    return code < kClassTableCodes ? table[code] : classify_code(format, code);
  }
  FormatId format;
  const ClassTable& table;
};

bool is_listed(const Selection& s, checkpoint::DType d) { return std::find(s.dtypes.begin(), s.dtypes.end(), d) != s.dtypes.end(); }

bool looks_like_scales(const checkpoint::TensorInfo& t) { return is_scale_dtype(t.dtype) && named_like_scales(t.dtype, t.name); }

bool is_scale_tensor(const checkpoint::TensorInfo& t, const Selection& s, const NameFilter& filter) {
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

// A tensor's data is read in pieces of kReadBytes into a per-thread buffer (it
// stays in L2 while counted and hashed), at the file offset's place in a page.
// One thread reads a whole tensor, in order: its SHA-256 is of its bytes.
constexpr std::size_t kReadBytes = std::size_t{1} << 18;
static_assert(kReadBytes % 4 == 0);

struct TensorRead {
  std::size_t tensor;
  const checkpoint::CheckpointFile* file;
  std::uint64_t offset;  // in the file
  std::uint64_t bytes;
};

// Counts and hashes one tensor's bytes into `t`; the error names the file and tensor.
Expected<Ok> read_tensor(const TensorRead& r, TensorAudit& t) {
  thread_local checkpoint::PageOffsetBuffer buffer(kReadBytes);
  CodeCounter counter(code_bits(t.dtype));
  Sha256 sha;
  for (std::uint64_t done = 0; done < r.bytes; done += kReadBytes) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kReadBytes, r.bytes - done));
    const std::span<unsigned char> piece = buffer.room_for(r.offset + done, n);
    if (auto ok = r.file->map.read_at(r.offset + done, piece); !ok) {
      return Error{fmt::format("{}: {}: cannot read: {}", r.file->path, t.name, ok.error().message)};
    }
    counter.add(piece);
    sha.update(piece.data(), piece.size());
  }
  counter.take(t.histogram);
  const auto digest = sha.finish();
  t.sha256 = to_hex(digest);
  return Ok{};
}

// Reads every tensor on `threads` threads, the largest first (they take indices in order).
Expected<Ok> read_tensors(std::vector<TensorRead> reads, std::vector<TensorAudit>& tensors, unsigned threads) {
  std::stable_sort(reads.begin(), reads.end(),
                   [](const TensorRead& a, const TensorRead& b) { return a.bytes > b.bytes; });
  std::mutex failed_lock;
  std::optional<Error> failed;
  parallel_for(reads.size(), threads, [&](std::size_t i) {
    if (auto ok = read_tensor(reads[i], tensors[reads[i].tensor]); !ok) {
      const std::lock_guard lock(failed_lock);
      if (!failed) failed = ok.error();
    }
  });
  if (failed) return *failed;
  return Ok{};
}

// H: CodeCounts or CompactCounts.
template <class H>
Json histogram_json(const H& h) {
  Json pairs = Json::array();
  for (const auto& [code, count] : h) pairs.push_back(Json::array({code, count}));
  return pairs;
}

// The statistics of `h`, then (when `with_histogram`) its pairs as the last member.
template <class H>
Json stats_json(FormatId format, int bits, const H& h, bool with_histogram = true) {
  const CodeStats s = stats_of(format, h);
  Json j{{"codes", s.codes},
         {"min", optional_json(s.min)},
         {"max", optional_json(s.max)},
         {"finite_min", optional_json(s.finite_min)},
         {"finite_max", optional_json(s.finite_max)},
         {"specials", specials_json(format, s, bits)}};
  if (with_histogram) j["histogram"] = histogram_json(h);
  return j;
}

// Moves every member of the object `extra` into `j` (Json::update would copy
// them: a tensor's histogram is thousands of pairs, and a GPTQ checkpoint
// thousands of tensors).
void move_members(Json& j, Json&& extra) {
  for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = std::move(it.value());
}

// A tensor's entry; its histogram is the last member.
Json tensor_json(const TensorAudit& t, bool with_histogram = true) {
  Json j{{"name", t.name},
         {"file", t.file},
         {"dtype", checkpoint::dtype_name(t.dtype)},
         {"format", spec_of(t.format).name},
         {"shape", t.shape},
         {"layer", optional_json(t.layer)},
         {"bytes", t.bytes},
         {"sha256", t.sha256}};
  move_members(j, stats_json(t.format, code_bits(t.dtype), t.histogram, with_histogram));
  return j;
}

struct Group {
  std::size_t tensors = 0;
  std::size_t nan_tensors = 0;
  std::uint64_t bytes = 0;
  int bits = 8;
  std::vector<checkpoint::DType> dtypes;
  CodeCounts histogram;
  // While tensors are added: the counts of codes below 2^16 by code (a
  // tensor's few thousand codes then cost one add each, not a merge of the
  // whole group's histogram), and wider codes as they come; finish() makes
  // `histogram` of both.
  std::vector<std::uint64_t> dense;
  CodeCounts wide;
};

bool has_nan(FormatId format, const CompactCounts& h) {
  const Classifier classify(format);
  return h.any_code([&classify](std::uint32_t code) { return classify(code).kind == CodeClass::kNaN; });
}

void add_to(Group& g, const TensorAudit& t) {
  ++g.tensors;
  g.bytes += t.bytes;
  g.bits = code_bits(t.dtype);
  if (std::find(g.dtypes.begin(), g.dtypes.end(), t.dtype) == g.dtypes.end()) g.dtypes.push_back(t.dtype);
  g.nan_tensors += has_nan(t.format, t.histogram);
  t.histogram.add_into(g.dense, g.wide);
}

template <class Key>
std::map<Key, Group> finish(std::map<Key, Group> groups) {
  for (auto& [key, g] : groups) {
    for (std::uint32_t code = 0; code < g.dense.size(); ++code) {
      if (g.dense[code] != 0) g.histogram.emplace_back(code, g.dense[code]);
    }
    std::sort(g.wide.begin(), g.wide.end());
    for (const auto& [code, count] : g.wide) {
      if (!g.histogram.empty() && g.histogram.back().first == code) {
        g.histogram.back().second += count;
      } else {
        g.histogram.emplace_back(code, count);
      }
    }
    g.dense = {};
    g.wide = {};
  }
  return groups;
}

// Per format, in kFormats order.
std::map<FormatId, Group> by_format(const AuditResult& audit) {
  std::map<FormatId, Group> groups;
  for (const TensorAudit& t : audit.tensors) add_to(groups[t.format], t);
  return finish(std::move(groups));
}

// Layers in ascending order (tensors outside any layer, key nullopt, first), then formats.
std::map<std::pair<std::optional<std::uint32_t>, FormatId>, Group> by_layer(const AuditResult& audit) {
  std::map<std::pair<std::optional<std::uint32_t>, FormatId>, Group> layers;
  for (const TensorAudit& t : audit.tensors) add_to(layers[{t.layer, t.format}], t);
  return finish(std::move(layers));
}

std::string dtype_list(const std::vector<checkpoint::DType>& dtypes) {
  std::string out;
  for (checkpoint::DType d : dtypes) out += (out.empty() ? "" : ", ") + std::string(checkpoint::dtype_name(d));
  return out;
}

// "0.0001220703125": the value part of describe_code.
std::string value_text(FormatId format, std::uint32_t code) {
  const std::string described = describe_code(format, code);
  return described.substr(described.rfind(' ') + 1);
}

std::string specials_text(FormatId format, const CodeStats& s, int bits, std::size_t nan_tensors) {
  const FormatSpec& f = spec_of(format);
  std::string out;
  const auto add = [&](std::string text) { out += (out.empty() ? "" : ", ") + std::move(text); };
  if (f.has_nan()) {
    const bool one_nan = format == FormatId::ue8m0;  // UE8M0 has one NaN code
    add(fmt::format("{} NaN{}{}", with_commas(s.nan), one_nan ? " (0xFF)" : "",
                    s.nan ? fmt::format(" in {} tensors", with_commas(nan_tensors)) : ""));
  }
  if (f.has_inf()) add(fmt::format("{} Inf", with_commas(s.inf)));
  if (f.has_zero()) add(fmt::format("{} zero", with_commas(s.zero)));
  if (f.has_subnormals()) add(fmt::format("{} subnormal", with_commas(s.subnormal)));
  if (f.is_signed) add(fmt::format("{} negative", with_commas(s.negative)));
  if (f.bits < bits) add(fmt::format("{} not {} codes", with_commas(s.not_a_code), f.name));
  return out;
}

std::string format_line(FormatId format, const Group& g) {
  const CodeStats s = stats_of(format, g.histogram);
  const std::string range =
      s.finite_min ? fmt::format("{}–{} ({} … {})", code_text(*s.finite_min, g.bits), code_text(*s.finite_max, g.bits),
                                 value_text(format, *s.finite_min), value_text(format, *s.finite_max))
                   : std::string("no finite code");
  return fmt::format("{} {} scale tensors ({}), {} codes: {}; {}", with_commas(g.tensors), spec_of(format).name,
                     dtype_list(g.dtypes), with_commas(s.codes), range,
                     specials_text(format, s, g.bits, g.nan_tensors));
}

struct ViewStepResult {
  std::optional<std::uint32_t> lo, hi;
  std::uint64_t flagged = 0;
  std::vector<std::uint32_t> flagged_codes;
};

// Each step over the codes present (NaN and non-codes are counted apart, not transformed).
std::vector<ViewStepResult> view_results(const ScaleView& v, const CodeCounts& h) {
  std::vector<ViewStepResult> out(v.steps.size());
  for (const auto& [code, count] : h) {
    const CodeClass kind = classify_code(v.format, code).kind;
    if (kind == CodeClass::kNaN || kind == CodeClass::kNotACode) continue;
    for (std::size_t i = 0; i < v.steps.size(); ++i) {
      const std::uint32_t r = v.steps[i].transform(code);
      out[i].lo = out[i].lo ? std::min(*out[i].lo, r) : r;
      out[i].hi = out[i].hi ? std::max(*out[i].hi, r) : r;
      if (v.steps[i].flagged(code)) {
        out[i].flagged += count;
        out[i].flagged_codes.push_back(code);
      }
    }
  }
  return out;
}

std::string range_text(const std::optional<std::uint32_t>& lo, const std::optional<std::uint32_t>& hi) {
  return lo ? fmt::format("{}–{}", *lo, *hi) : std::string("none");
}

std::string view_line(const ScaleView& v, const CodeCounts& h) {
  const std::vector<ViewStepResult> r = view_results(v, h);
  std::string ranges, flags;
  for (std::size_t i = 0; i < v.steps.size(); ++i) {
    ranges += fmt::format("{}{} {}", i ? ", " : "", v.steps[i].words, range_text(r[i].lo, r[i].hi));
    if (r[i].flagged) {
      std::string codes;
      for (std::size_t k = 0; k < r[i].flagged_codes.size() && k < 4; ++k)
        codes += (k ? ", " : "") + std::to_string(r[i].flagged_codes[k]);
      if (r[i].flagged_codes.size() > 4) codes += ", …";
      flags += fmt::format("; FLAGGED: {} codes {} (bytes {})", with_commas(r[i].flagged), v.steps[i].flag, codes);
    }
  }
  return fmt::format("{} view ({}): {}{}", v.name, spec_of(v.format).name, ranges, flags.empty() ? "; none flagged" : flags);
}

Json view_json(const ScaleView& v, const CodeCounts& h) {
  const std::vector<ViewStepResult> r = view_results(v, h);
  Json steps = Json::array();
  for (std::size_t i = 0; i < v.steps.size(); ++i) {
    steps.push_back({{"step", v.steps[i].words},
                     {"range", r[i].lo ? Json::array({*r[i].lo, *r[i].hi}) : Json(nullptr)},
                     {"flag", v.steps[i].flag},
                     {"flagged", r[i].flagged},
                     {"flagged_codes", r[i].flagged_codes}});
  }
  return Json{{"view", v.name}, {"recipes", v.recipes}, {"format", spec_of(v.format).name},
              {"summary", view_line(v, h)}, {"steps", steps}};
}

Json selection_json(const Selection& s, std::size_t left_out) {
  Json dtypes = Json::array();
  Json formats = Json::array();
  for (checkpoint::DType d : s.dtypes) {
    dtypes.push_back(checkpoint::dtype_name(d));
    formats.push_back({{"dtype", checkpoint::dtype_name(d)}, {"format", spec_of(s.format_of(d)).name}});
  }
  return Json{{"dtypes", dtypes},
              {"formats", formats},
              {"rule", "dtype listed and holding a scale format, and dtype F8_E8M0 or the name's last component "
                       "containing \"scale\""},
              {"select", s.select.empty() ? Json(nullptr) : Json(s.select)},
              {"left_out", left_out}};
}

Json checkpoint_json(const AuditResult& audit) {
  Json files = Json::array();
  for (const FileSummary& f : audit.files)
    files.push_back({{"file", f.name}, {"bytes", f.bytes}, {"header_sha256", f.header_sha256}, {"tensors", f.tensors}});
  return Json{{"path", audit.root},
              {"index", audit.index ? Json(*audit.index) : Json(nullptr)},
              {"files", files},
              {"tensors", audit.tensors_seen}};
}

std::string partial_line(std::size_t left_out) {
  return fmt::format("PARTIAL: {} scale tensors left out by --select, --dtype or --format", left_out);
}

}  // namespace

std::vector<checkpoint::DType> Selection::all_scale_dtypes() {
  std::vector<checkpoint::DType> out;
  for (const ScaleFormat& r : kScaleFormats) {
    if (r.is_default) out.push_back(r.dtype);
  }
  return out;
}

FormatId Selection::format_of(checkpoint::DType dtype) const {
  for (const ScaleFormat& r : formats) {
    if (r.dtype == dtype) return r.format;
  }
  return default_scale_format(dtype).value_or(ScaleFormat{FormatId::ue8m0, dtype, true, ""}).format;
}

bool named_like_scales(checkpoint::DType dtype, std::string_view name) {
  if (dtype == checkpoint::DType::kF8E8M0) return true;
  const std::size_t dot = name.rfind('.');
  return name.substr(dot == std::string_view::npos ? 0 : dot + 1).find("scale") != std::string_view::npos;
}

Expected<Selection> make_selection(const std::string& dtype_list_text, const std::string& select,
                                   const std::string& format_list) {
  Selection s;
  s.select = select;
  std::string known;
  for (checkpoint::DType d : Selection::all_scale_dtypes()) known += (known.empty() ? "" : ", ") + std::string(checkpoint::dtype_name(d));
  if (!dtype_list_text.empty()) {
    s.dtypes.clear();
    std::stringstream in(dtype_list_text);
    std::string name;
    while (std::getline(in, name, ',')) {
      const auto d = checkpoint::dtype_from_name(name);
      if (!d) return Error{fmt::format("--dtype: {}: unknown dtype", printable(name))};
      if (!is_scale_dtype(*d)) {
        return Error{fmt::format("--dtype: {}: not a scale format dtype (scale dtypes: {})", name, known)};
      }
      if (!is_listed(s, *d)) s.dtypes.push_back(*d);
    }
    if (s.dtypes.empty()) return Error{"--dtype: no dtype given"};
  }
  std::stringstream formats(format_list);
  std::string name;
  while (!format_list.empty() && std::getline(formats, name, ',')) {
    bool found = false;
    for (const ScaleFormat& r : kScaleFormats) {
      if (r.name() != name) continue;
      found = true;
      for (const ScaleFormat& other : s.formats) {
        if (other.dtype == r.dtype && other.format != r.format) {
          return Error{fmt::format("--format: {} and {} both read {}: give one", other.name(), r.name(),
                                   checkpoint::dtype_name(r.dtype))};
        }
      }
      s.formats.push_back(r);
    }
    if (!found) {
      std::string names;
      for (const ScaleFormat& r : kScaleFormats) {
        if (names.find(r.name()) == std::string::npos) names += (names.empty() ? "" : ", ") + std::string(r.name());
      }
      return Error{fmt::format("--format: {}: not a scale format (scale formats: {})", printable(name), names)};
    }
  }
  if (auto filter = NameFilter::make(select, "--select"); !filter) return filter.error();
  return s;
}

Expected<std::vector<const ScaleView*>> make_views(const std::vector<std::string>& names) {
  std::vector<const ScaleView*> views;
  for (const std::string& name : names) {
    const ScaleView* v = scale_view_by_name(name);
    if (!v) {
      std::string known;
      for (const ScaleView& k : kScaleViews) known += (known.empty() ? "" : ", ") + std::string(k.name);
      return Error{fmt::format("--view: {}: no such view (views: {})", printable(name), known)};
    }
    if (std::find(views.begin(), views.end(), v) == views.end()) views.push_back(v);
  }
  return views;
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

namespace {
template <class H>
CodeStats stats_over(FormatId format, const H& h) {
  const Classifier classify(format);
  CodeStats s;
  for (const auto& [code, count] : h) {
    s.codes += count;
    if (!s.min) s.min = code;
    s.max = code;
    const ClassifiedCode c = classify(code);
    s.negative += c.negative ? count : 0;
    switch (c.kind) {
      case CodeClass::kNaN: s.nan += count; continue;
      case CodeClass::kInf: s.inf += count; continue;
      case CodeClass::kNotACode: s.not_a_code += count; continue;
      case CodeClass::kZero: s.zero += count; break;
      case CodeClass::kSubnormal: s.subnormal += count; break;
      case CodeClass::kNormal: break;
    }
    if (!s.finite_min) s.finite_min = code;
    s.finite_max = code;
  }
  return s;
}
}  // namespace

CodeStats stats_of(FormatId format, const CodeCounts& h) { return stats_over(format, h); }

CodeStats stats_of(FormatId format, const CompactCounts& h) { return stats_over(format, h); }

Json specials_json(FormatId format, const CodeStats& s, int bits) {
  const FormatSpec& f = spec_of(format);
  Json j = Json::object();
  if (f.has_nan()) j["nan"] = s.nan;
  if (f.has_inf()) j["inf"] = s.inf;
  if (f.has_zero()) j["zero"] = s.zero;
  if (f.has_subnormals()) j["subnormal"] = s.subnormal;
  if (f.is_signed) j["negative"] = s.negative;
  if (f.bits < bits) j["not_a_code"] = s.not_a_code;
  return j;
}

std::vector<FormatId> AuditResult::formats() const {
  std::vector<FormatId> out;
  for (const TensorAudit& t : tensors) {
    if (std::find(out.begin(), out.end(), t.format) == out.end()) out.push_back(t.format);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Expected<AuditResult> run_audit(const checkpoint::Checkpoint& checkpoint, const AuditOptions& options) {
  AuditResult audit;
  audit.root = checkpoint.root;
  audit.index = checkpoint.index;
  audit.selection = options.selection;
  audit.views = options.views;
  auto filter = NameFilter::make(options.selection.select, "--select");
  if (!filter) return filter.error();
  std::vector<TensorRead> reads;
  for (const checkpoint::CheckpointFile& f : checkpoint.files) {
    Sha256 header;  // the length and the JSON text
    header.update(f.map.bytes().data(), static_cast<std::size_t>(f.header.data_start()));
    audit.files.push_back({f.name, f.map.bytes().size(), f.header.tensors.size(), to_hex(header.finish())});
    audit.tensors_seen += f.header.tensors.size();
    for (const checkpoint::TensorInfo& t : f.header.tensors) {
      if (!is_scale_tensor(t, options.selection, *filter)) {
        audit.left_out += looks_like_scales(t) ? 1 : 0;
        continue;
      }
      reads.push_back({audit.tensors.size(), &f, f.tensor_offset(t), t.bytes()});
      audit.tensors.push_back({t.name,
                               f.name,
                               t.dtype,
                               options.selection.format_of(t.dtype),
                               t.shape,
                               t.bytes(),
                               layer_of(t.name),
                               {},
                               {}});
    }
  }
  if (audit.tensors.empty()) {
    return Error{fmt::format(
        "{}: selection: no scale tensor among {} tensors (dtypes {}; F8_E8M0 or named *scale*{})", checkpoint.root,
        audit.tensors_seen, dtype_list(options.selection.dtypes), options.selection.select.empty() ? "" : ", --select")};
  }
  if (auto ok = check_views(audit); !ok) return ok.error();
  if (auto ok = read_tensors(std::move(reads), audit.tensors, resolve_threads(options.threads)); !ok) return ok.error();
  std::sort(audit.tensors.begin(), audit.tensors.end(),
            [](const TensorAudit& a, const TensorAudit& b) { return a.name < b.name; });
  return audit;
}

Expected<Ok> check_views(const AuditResult& audit) {
  const std::vector<FormatId> present = audit.formats();
  for (const ScaleView* v : audit.views) {
    if (std::find(present.begin(), present.end(), v->format) != present.end()) continue;
    std::string names;
    for (FormatId f : present) names += (names.empty() ? "" : ", ") + std::string(spec_of(f).name);
    return Error{fmt::format("--view: {} reads {} scales, but the selected tensors are {}", v->name,
                             spec_of(v->format).name, names)};
  }
  return Ok{};
}

std::vector<std::string> summary_lines(const AuditResult& audit) {
  std::vector<std::string> lines;
  const auto groups = by_format(audit);
  for (const auto& [format, g] : groups) lines.push_back(format_line(format, g));
  for (const ScaleView* v : audit.views) {
    if (const auto it = groups.find(v->format); it != groups.end()) lines.push_back(view_line(*v, it->second.histogram));
  }
  if (audit.left_out) lines.push_back(partial_line(audit.left_out));
  return lines;
}

namespace {

// The deterministic part of the report but its last member, the tensors.
Json result_without_tensors(const AuditResult& audit) {
  const auto groups = by_format(audit);
  Json formats = Json::array();
  std::uint64_t codes = 0, bytes = 0;
  for (const auto& [format, g] : groups) {
    Json dtypes = Json::array();
    for (checkpoint::DType d : g.dtypes) dtypes.push_back(checkpoint::dtype_name(d));
    Json f{{"format", spec_of(format).name},
           {"dtypes", dtypes},
           {"code_bits", g.bits},
           {"summary", format_line(format, g)},
           {"tensors", g.tensors},
           {"nan_tensors", g.nan_tensors},
           {"bytes", g.bytes}};
    move_members(f, stats_json(format, g.bits, g.histogram));
    codes += f["codes"].get<std::uint64_t>();
    bytes += g.bytes;
    formats.push_back(std::move(f));
  }
  Json views = Json::array();
  for (const ScaleView* v : audit.views) views.push_back(view_json(*v, groups.at(v->format).histogram));
  Json layers = Json::array();
  for (const auto& [key, g] : by_layer(audit)) {
    Json l{{"layer", optional_json(key.first)},
           {"format", spec_of(key.second).name},
           {"tensors", g.tensors},
           {"nan_tensors", g.nan_tensors}};
    move_members(l, stats_json(key.second, g.bits, g.histogram));
    layers.push_back(std::move(l));
  }
  return Json{
      {"checkpoint", checkpoint_json(audit)},
      {"selection", selection_json(audit.selection, audit.left_out)},
      {"overall",
       {{"summary", summary_lines(audit)}, {"tensors", audit.tensors.size()}, {"codes", codes}, {"bytes", bytes}}},
      {"formats", std::move(formats)},
      {"views", std::move(views)},
      {"layers", std::move(layers)}};
}

Json report_environment(const Json& run) {
  Json env = environment_json();
  env["run"] = run;
  return env;
}

// `object` (an object with members) as dump() writes it, without the closing brace.
std::string open_object(const Json& object) {
  std::string text = object.dump();
  text.pop_back();
  return text;
}

void append_decimal(std::string& out, std::uint64_t value) {
  char digits[20];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

// [[code,count],...] as dump() writes histogram_json(h).
void append_histogram(std::string& out, const CompactCounts& h) {
  out += '[';
  bool first = true;
  for (const auto& [code, count] : h) {
    out += first ? "[" : ",[";
    first = false;
    append_decimal(out, code);
    out += ',';
    append_decimal(out, count);
    out += ']';
  }
  out += ']';
}

}  // namespace

Json audit_result_json(const AuditResult& audit, bool tensor_histograms) {
  Json result = result_without_tensors(audit);
  Json tensors = Json::array();
  for (const TensorAudit& t : audit.tensors) {
    tensors.push_back(tensor_json(t, tensor_histograms));
    if (!tensor_histograms) tensors.back()["histogram"] = Json::array();
  }
  result["tensors"] = std::move(tensors);
  return result;
}

Json audit_report(const AuditResult& audit, const Json& run, bool tensor_histograms) {
  return Json{{"bitproof_report", kReportVersion},
              {"kind", "audit"},
              {"result", audit_result_json(audit, tensor_histograms)},
              {"environment", report_environment(run)}};
}

namespace {

// Writes audit_result_json(audit).dump() into `piece` a tensor at a time,
// handing it to `take` after each tensor and at the end (take may empty it);
// stops when take returns false. Returns whether every piece was taken.
template <class Take>
bool write_result_text(const AuditResult& audit, std::string& piece, Take take) {
  piece += open_object(result_without_tensors(audit)) + ",\"tensors\":[";
  for (std::size_t i = 0; i < audit.tensors.size(); ++i) {
    if (i > 0) piece += ',';
    piece += open_object(tensor_json(audit.tensors[i], false));
    piece += ",\"histogram\":";
    append_histogram(piece, audit.tensors[i].histogram);
    piece += '}';
    if (!take(piece)) return false;
  }
  piece += "]}";
  return take(piece);
}

// Appends the result part's text, audit_result_json(audit).dump(), to `out`, room made once.
void append_result_text(const AuditResult& audit, std::string& out) {
  std::size_t pairs = 0;
  for (const TensorAudit& t : audit.tensors) pairs += t.histogram.stored();
  out.reserve(out.size() + pairs * 16 + audit.tensors.size() * 512);  // "[65535,123456]," and a tensor's members
  write_result_text(audit, out, [](const std::string&) { return true; });
}

}  // namespace

bool audit_result_text_is(const AuditResult& audit, std::string_view text) {
  std::string piece;
  std::size_t at = 0;
  const bool whole = write_result_text(audit, piece, [&](std::string& p) {
    if (text.substr(at, p.size()) != p) return false;
    at += p.size();
    p.clear();
    return true;
  });
  return whole && at == text.size();
}

std::string audit_report_text(const AuditResult& audit, const Json& run) {
  std::string out = open_object(Json{{"bitproof_report", kReportVersion}, {"kind", "audit"}});
  out += ",\"result\":";
  append_result_text(audit, out);  // in place: 86 MB for a GPTQ checkpoint
  out += ",\"environment\":" + report_environment(run).dump() + '}';
  return out;
}

}  // namespace bitproof::audit
