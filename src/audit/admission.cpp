#include "audit/admission.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <map>

#include "name_filter.hpp"
#include "report/compare.hpp"
#include "report/kind_domain.hpp"
#include "report/report.hpp"
#include "report/schema.hpp"
#include "strict_json.hpp"

namespace bitproof::audit {
namespace {

using json = Json;  // keys in file order: the recorded spec's digest is of its text as written

struct SpecWhere {
  const std::string& file;
  [[nodiscard]] Error at(const std::string& field, const std::string& what) const {
    return Error{fmt::format("{}: {}: {}", file, printable(field), what)};
  }
};

// The value at `key` of object `j`, which must have the given type.
Expected<const json*> field(const json& j, const std::string& key, json::value_t type, const SpecWhere& w,
                            const std::string& where) {
  if (!j.is_object() || !j.contains(key)) return w.at(where, "missing");
  const json& v = j[key];
  const bool ok = type == json::value_t::number_unsigned ? v.is_number_unsigned() : v.type() == type;
  if (!ok) return w.at(where, fmt::format("wrong type {}", v.type_name()));
  return &v;
}

// null, or an integer code below 2^bits.
Expected<std::optional<std::uint32_t>> code_or_null(const json& j, int bits, const SpecWhere& w, const std::string& where) {
  if (j.is_null()) return std::optional<std::uint32_t>{};
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() >> bits != 0) {
    return w.at(where, fmt::format("must be null or a code below 2^{}", bits));
  }
  return std::optional<std::uint32_t>{j.get<std::uint32_t>()};
}

Expected<Ok> check_report_kind(const json& j, const std::string& kind, const SpecWhere& w, const std::string& hint) {
  if (!j.is_object()) return w.at("report", fmt::format("must be a JSON object, found {}", j.type_name()));
  if (!j.contains("bitproof_report") || j["bitproof_report"] != kReportVersion) {
    return w.at("bitproof_report", fmt::format("not a bitproof report of version {}", kReportVersion));
  }
  if (!j.contains("kind") || j["kind"] != kind) {
    const std::string found = j.contains("kind") ? printable(j["kind"].dump()) : "nothing";
    return w.at("kind", fmt::format("a report of kind \"{}\" is needed ({}), found {}", kind, hint, found));
  }
  if (!j.contains("result") || !j["result"].is_object()) return w.at("result", "missing");
  return Ok{};
}

// The scale format row a tensor names: its dtype and format must be a row of kScaleFormats.
Expected<Ok> parse_tensor_format(const json& j, const SpecWhere& w, const std::string& at, AuditedTensor& t) {
  auto dtype = field(j, "dtype", json::value_t::string, w, at + ".dtype");
  if (!dtype) return dtype.error();
  auto format = field(j, "format", json::value_t::string, w, at + ".format");
  if (!format) return format.error();
  for (const ScaleFormat& r : kScaleFormats) {
    if (checkpoint::dtype_name(r.dtype) == (*dtype)->get<std::string>() && r.name() == (*format)->get<std::string>()) {
      t.dtype = r.dtype;
      t.format = r.format;
      return Ok{};
    }
  }
  return w.at(at + ".format", fmt::format("{} read as {} is not a scale format of the audit",
                                          printable((*dtype)->get<std::string>()),
                                          printable((*format)->get<std::string>())));
}

using Pairs = PairList;

// The [code, count] pairs of a histogram as the document holds them.
std::optional<Pairs> pairs_of(const json& histogram) {
  Pairs pairs;
  pairs.reserve(histogram.size());
  for (const json& pair : histogram) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() || !pair[1].is_number_unsigned()) {
      return std::nullopt;
    }
    pairs.push_back({pair[0].get<std::uint64_t>(), pair[1].get<std::uint64_t>()});
  }
  return pairs;
}

// A tensor entry of an audit report; its counts, min/max and specials must
// agree with its histogram: the entry's own, or `read_apart` where the parse
// kept the histograms out of the document (read_lean).
Expected<AuditedTensor> parse_audited(const json& j, const SpecWhere& w, const std::string& where,
                                      const Pairs* read_apart = nullptr) {
  AuditedTensor t;
  auto name = field(j, "name", json::value_t::string, w, where + ".name");
  if (!name) return name.error();
  t.name = (*name)->get<std::string>();
  const std::string at = "tensor " + t.name;
  auto file = field(j, "file", json::value_t::string, w, at + ".file");
  if (!file) return file.error();
  t.file = (*file)->get<std::string>();
  if (auto ok = parse_tensor_format(j, w, at, t); !ok) return ok.error();
  const int bits = code_bits(t.dtype);
  for (const json& d : j["shape"]) t.shape.push_back(d.get<std::uint64_t>());  // the schema checked the type
  if (!j.contains("layer")) return w.at(at + ".layer", "missing");
  if (!j["layer"].is_null() && (!j["layer"].is_number_unsigned() || j["layer"].get<std::uint64_t>() > UINT32_MAX)) {
    return w.at(at + ".layer", "must be null or a layer");
  }
  if (!j["layer"].is_null()) t.layer = j["layer"].get<std::uint32_t>();
  auto bytes = field(j, "bytes", json::value_t::number_unsigned, w, at + ".bytes");
  if (!bytes) return bytes.error();
  t.bytes = (*bytes)->get<std::uint64_t>();
  auto sha = field(j, "sha256", json::value_t::string, w, at + ".sha256");  // its form: the schema
  if (!sha) return sha.error();
  t.sha256 = (*sha)->get<std::string>();
  auto hist = field(j, "histogram", json::value_t::array, w, at + ".histogram");
  if (!hist) return hist.error();
  const std::optional<Pairs> in_document = read_apart ? std::nullopt : pairs_of(**hist);
  const Pairs* pairs = read_apart ? read_apart : in_document ? &*in_document : nullptr;
  const auto bad = [&] {
    return w.at(at + ".histogram", fmt::format("must hold [code, count] pairs, codes ascending below 2^{}", bits));
  };
  if (pairs == nullptr) return bad();
  t.histogram.reserve(pairs->size());
  for (const auto& [code, count] : *pairs) {
    if (code >> bits != 0 || count == 0 || (!t.histogram.empty() && code <= t.histogram.back().first)) return bad();
    t.histogram.emplace_back(static_cast<std::uint32_t>(code), count);
  }
  t.stats = stats_of(t.format, t.histogram);
  CodeStats recorded;
  auto codes = field(j, "codes", json::value_t::number_unsigned, w, at + ".codes");
  if (!codes) return codes.error();
  recorded.codes = (*codes)->get<std::uint64_t>();
  for (auto [key, out] : {std::pair{"min", &recorded.min}, std::pair{"max", &recorded.max},
                          std::pair{"finite_min", &recorded.finite_min}, std::pair{"finite_max", &recorded.finite_max}}) {
    if (!j.contains(key)) return w.at(at + "." + key, "missing");
    auto v = code_or_null(j[key], bits, w, at + "." + key);
    if (!v) return v.error();
    *out = *v;
  }
  const json expected_specials = specials_json(t.format, t.stats, bits);
  if (recorded.codes * static_cast<std::uint64_t>(bits) != t.bytes * 8 || !j.contains("specials") ||
      j["specials"] != expected_specials || recorded.codes != t.stats.codes || recorded.min != t.stats.min ||
      recorded.max != t.stats.max || recorded.finite_min != t.stats.finite_min ||
      recorded.finite_max != t.stats.finite_max) {
    return w.at(at, "bytes, codes, min, max or specials disagree with the histogram");
  }
  return t;
}

Expected<json> load_ordered(const std::string& path) {
  auto text = read_input_file(path, "the report", kMaxReportBytes);
  if (!text) return text.error();
  return parse_ordered_json_strict(*text, path, "report");
}

// What the audit left unread: its --select and the scale tensors outside it.
Expected<Ok> parse_selection(const json& result, const SpecWhere& w, AuditReport& a) {
  auto selection = field(result, "selection", json::value_t::object, w, "result.selection");
  if (!selection) return selection.error();
  auto left_out = field(**selection, "left_out", json::value_t::number_unsigned, w, "result.selection.left_out");
  if (!left_out) return left_out.error();
  a.left_out = (*left_out)->get<std::uint64_t>();
  if (!(*selection)->contains("select")) return w.at("result.selection.select", "missing");
  const json& select = (**selection)["select"];
  if (!select.is_null() && !select.is_string()) return w.at("result.selection.select", "must be null or a pattern");
  if (select.is_string()) a.select = select.get<std::string>();
  return Ok{};
}

// The audit the result records, rebuilt from its checkpoint, selection, views
// and tensors (for `a`, whose selection and tensors parse_selection and
// parse_audited read).
Expected<AuditResult> recorded_audit(const json& result, const AuditReport& a, const SpecWhere& w) {
  AuditResult again;
  const json& ck = result["checkpoint"];
  again.root = ck["path"].get<std::string>();
  if (ck["index"].is_string()) again.index = ck["index"].get<std::string>();
  for (const json& f : ck["files"]) {
    if (!f.is_object() || !f.contains("file") || !f["file"].is_string() || !f.contains("bytes") ||
        !f["bytes"].is_number_unsigned() || !f.contains("tensors") || !f["tensors"].is_number_unsigned() ||
        !f.contains("header_sha256") || !f["header_sha256"].is_string()) {
      return w.at("result.checkpoint.files", "must hold {file, bytes, header_sha256, tensors} entries");
    }
    again.files.push_back({f["file"].get<std::string>(), f["bytes"].get<std::uint64_t>(),
                           f["tensors"].get<std::size_t>(), f["header_sha256"].get<std::string>()});
  }
  again.tensors_seen = ck["tensors"].get<std::size_t>();
  const json& sel = result["selection"];
  again.selection.dtypes.clear();
  for (const json& d : sel["dtypes"]) {
    const auto dtype = checkpoint::dtype_from_name(d.get<std::string>());
    if (!dtype || !is_scale_dtype(*dtype)) return w.at("result.selection.dtypes", "must hold scale dtypes");
    again.selection.dtypes.push_back(*dtype);
  }
  for (const json& f : sel["formats"]) {
    if (!f.is_object() || !f.contains("dtype") || !f.contains("format")) {
      return w.at("result.selection.formats", "must hold {dtype, format} entries");
    }
    for (const ScaleFormat& r : kScaleFormats) {
      if (!r.is_default && checkpoint::dtype_name(r.dtype) == f["dtype"] && r.name() == f["format"]) again.selection.formats.push_back(r);
    }
  }
  again.selection.select = a.select;
  again.left_out = a.left_out;
  for (const json& v : result["views"]) {
    const ScaleView* view = v.contains("view") && v["view"].is_string() ? scale_view_by_name(v["view"].get<std::string>())
                                                                          : nullptr;
    if (!view) return w.at("result.views", "must name views bitproof has");
    again.views.push_back(view);
  }
  for (const AuditedTensor& t : a.tensors) {
    again.tensors.push_back(
        {t.name, t.file, t.dtype, t.format, t.shape, t.bytes, layer_of(t.name), CompactCounts(t.histogram), t.sha256});
  }
  if (auto ok = check_views(again); !ok) return w.at("result.views", ok.error().message);
  return again;
}

// Moves into `a` what check_checkpoint compares with the checkpoint on disk.
void keep_what_was_read(AuditReport& a, AuditResult& recorded) {
  a.index = recorded.index;
  a.files = std::move(recorded.files);
  a.selection = recorded.selection;
  a.views = recorded.views;
}

// The result part `audit` gives, where it differs from `recorded` (whose text,
// as dump() writes it, is `recorded_text`): compared as text, and as JSON
// values only when the texts differ (a GPTQ checkpoint's audit holds millions
// of pairs; the document is built only to compare values and name a difference).
std::optional<json> result_difference(const AuditResult& audit, const json& recorded,
                                      const std::string& recorded_text) {
  if (audit_result_text_is(audit, recorded_text)) return std::nullopt;
  json ours = audit_result_json(audit);
  if (ours == recorded) return std::nullopt;
  return ours;
}

// The audit's result as run_audit would give it for these tensors, checkpoint,
// selection and views: every aggregate (formats, layers, views, summary lines)
// must be what its tensors' histograms give. Returns the result part's text
// as dump() writes it.
Expected<std::string> check_rederived(const json& result, AuditReport& a, const SpecWhere& w) {
  auto again = recorded_audit(result, a, w);
  if (!again) return again.error();
  std::string recorded = result.dump();
  if (const auto derived = result_difference(*again, result, recorded)) {
    return w.at("result",
                fmt::format("does not follow from its tensors' histograms: {}", first_difference(result, *derived)));
  }
  keep_what_was_read(a, *again);
  return recorded;
}

}  // namespace

Expected<Ok> AuditReport::check_whole(bool allow_partial) const {
  if (left_out == 0 || allow_partial) return Ok{};
  return Error{fmt::format("{}: result.selection: a partial audit ({} scale tensors left out{}): it says nothing of "
                           "them; audit the whole checkpoint, or pass --allow-partial",
                           path, left_out, select.empty() ? "" : fmt::format(" by --select {}", printable(select)))};
}

std::string AuditReport::format_names() const {
  std::vector<FormatId> formats;
  for (const AuditedTensor& t : tensors) {
    if (std::find(formats.begin(), formats.end(), t.format) == formats.end()) formats.push_back(t.format);
  }
  std::sort(formats.begin(), formats.end());
  std::string out;
  for (FormatId f : formats) out += (out.empty() ? "" : ", ") + std::string(spec_of(f).name);
  return out;
}

namespace {

// load_audit_report on the report text already read as `j`.
// `result_text`, when given, receives the result part's text (as dump() writes it).
// With `apart` (read_lean), the tensors' histograms are its lists, not the
// document's (each emptied once read), and checking the result part against
// its tensors is the caller's.
Expected<AuditReport> parse_audit_report(const json& j, const std::string& path, std::string* result_text = nullptr,
                                         std::vector<Pairs>* apart = nullptr) {
  const SpecWhere w{path};
  if (auto ok = check_report_kind(j, "audit", w, "bitproof audit CHECKPOINT --report"); !ok) return ok.error();
  if (auto ok = validate_json(j, report_schema(), path); !ok) return ok.error();
  const json& result = j["result"];
  AuditReport a;
  a.path = path;
  a.checkpoint = result["checkpoint"]["path"].get<std::string>();
  for (const json& line : result["overall"]["summary"]) a.summary.push_back(line.get<std::string>());
  if (auto ok = parse_selection(result, w, a); !ok) return ok.error();
  const json& tensors = result["tensors"];
  if (apart && apart->size() != tensors.size()) return w.at("result.tensors", "a histogram missing");
  std::uint64_t codes = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    auto t = parse_audited(tensors[i], w, fmt::format("result.tensors[{}]", i), apart ? &(*apart)[i] : nullptr);
    if (!t) return t.error();
    if (apart) (*apart)[i] = {};
    codes += t->stats.codes;
    a.tensors.push_back(std::move(*t));
  }
  if (a.tensors.empty()) return w.at("result.tensors", "no scale tensor: nothing to admit");
  if (result["overall"]["tensors"] != a.tensors.size() || result["overall"]["codes"] != codes) {
    return w.at("result.overall", "tensors or codes disagree with the tensors");
  }
  if (apart) return a;
  auto text = check_rederived(result, a, w);
  if (!text) return text.error();
  if (result_text) *result_text = std::move(*text);
  return a;
}

// How bitproof writes an audit report, up to its result part.
constexpr std::string_view kAuditReportHead = R"({"bitproof_report":1,"kind":"audit","result":)";
static_assert(kReportVersion == 1, "kAuditReportHead names the report version");

// Reads the pairs of a histogram as `audit` writes it, [[code,count],...]
// (decimal, no leading zeros, no spaces), at text[i] into `out`: the index
// past it, or npos where the text is written otherwise.
std::size_t read_written_pairs(std::string_view text, std::size_t i, Pairs& out) {
  const auto expect = [&](char c) {
    if (i >= text.size() || text[i] != c) return false;
    ++i;
    return true;
  };
  const auto number = [&](std::uint64_t& value) {
    const char* first = text.data() + i;
    const char* last = text.data() + text.size();
    if (first < last && *first == '0' && first + 1 < last && first[1] >= '0' && first[1] <= '9') return false;
    const auto [end, error] = std::from_chars(first, last, value);
    i = static_cast<std::size_t>(end - text.data());
    return error == std::errc{};
  };
  if (!expect('[')) return std::string_view::npos;
  if (expect(']')) return i;
  do {
    std::array<std::uint64_t, 2> pair{};
    if (!expect('[') || !number(pair[0]) || !expect(',') || !number(pair[1]) || !expect(']')) {
      return std::string_view::npos;
    }
    out.push_back(pair);
  } while (expect(','));
  return expect(']') ? i : std::string_view::npos;
}

// The text of a report as `audit` writes it with each tensor's histogram (the
// "histogram" members after result's "tensors" key, before `result_end`) cut
// out into `histograms` and left as []; nothing where one is written
// otherwise. The cut needs no proof that it found the tensors' histograms and
// nothing else: read_lean parses what is left strictly and then compares the
// whole result part, as the file holds it, with the text its tensors give.
std::optional<std::string> cut_histograms(std::string_view text, std::size_t result_end,
                                          std::vector<Pairs>& histograms) {
  constexpr std::string_view kTensors = R"(,"tensors":[)";
  constexpr std::string_view kHistogram = R"("histogram":)";
  std::size_t at = text.find(kTensors);
  if (at >= result_end) return std::nullopt;
  std::string kept;
  std::size_t copied = 0;
  while ((at = text.find(kHistogram, at)) < result_end) {
    const std::size_t open = at + kHistogram.size();
    const std::size_t close = read_written_pairs(text, open, add_pair_list(histograms));
    if (close > result_end) return std::nullopt;
    kept.append(text.substr(copied, open - copied)).append("[]");
    copied = at = close;
  }
  kept.append(text.substr(copied));
  return kept;
}

// An audit report read the lean way (a GPTQ checkpoint's holds millions of
// pairs): its tensors' histograms kept out of the document (cut_histograms),
// and its result part compared as text with the one its tensors give.
struct LeanAudit {
  json document;  // the report, each tensor's histogram an empty array
  std::string_view result_text;
  AuditReport report;
  Selection selection;
  std::vector<const ScaleView*> views;
};

// Everything load_audit_report checks, for a report whose text is as bitproof
// writes it (compact, keys in bitproof's order): nothing otherwise, or when a
// check fails; the full read then decides and names what is wrong.
std::optional<LeanAudit> read_lean(std::string_view text, const std::string& path) {
  if (!text.starts_with(kAuditReportHead)) return std::nullopt;
  // The result part ends where the environment, the last member, begins; the
  // comparison of the result part's text below settles that it does.
  const std::size_t begin = kAuditReportHead.size();
  const std::size_t result_end = text.rfind(R"(,"environment":)");
  if (result_end == std::string_view::npos || result_end < begin) return std::nullopt;
  std::vector<Pairs> histograms;
  const auto kept = cut_histograms(text, result_end, histograms);
  if (!kept) return std::nullopt;
  auto j = parse_ordered_json_strict(*kept, path, "report");
  if (!j) return std::nullopt;
  LeanAudit lean;
  lean.document = std::move(*j);
  lean.result_text = text.substr(begin, result_end - begin);
  auto a = parse_audit_report(lean.document, path, nullptr, &histograms);
  if (!a) return std::nullopt;
  auto again = recorded_audit(lean.document["result"], *a, SpecWhere{path});
  if (!again || !audit_result_text_is(*again, lean.result_text)) return std::nullopt;
  lean.selection = again->selection;
  lean.views = again->views;
  keep_what_was_read(*a, *again);
  lean.report = std::move(*a);
  return lean;
}

}  // namespace

Expected<AuditReport> load_audit_report(const std::string& path) {
  auto text = read_input_file(path, "the report", kMaxReportBytes);
  if (!text) return text.error();
  return parse_audit_report_text(*text, path);
}

Expected<AuditedScales> read_audited_scales(const std::string& path) {
  auto report = load_audit_report(path);
  if (!report) return report.error();
  AuditedScales scales;
  for (const AuditedTensor& t : report->tensors) {
    std::optional<CodeRange> range;
    if (t.stats.min && t.stats.max) range = CodeRange{*t.stats.min, *t.stats.max};
    scales.range_by_tensor.emplace(t.name, range);  // the first of a name, as the report lists them
  }
  return scales;
}

Expected<AuditReport> parse_audit_report_text(const std::string& text, const std::string& path) {
  if (auto lean = read_lean(text, path)) return std::move(lean->report);
  auto j = parse_ordered_json_strict(text, path, "report");
  if (!j) return j.error();
  return parse_audit_report(*j, path);
}

namespace {
// The first line where `now`'s result part differs from the recorded one of
// `lean`, without either document's histograms as JSON values. read_lean made
// one AuditedTensor a tensor entry, audit_result_json one entry a tensor.
std::string lean_difference(const LeanAudit& lean, const AuditResult& now) {
  const json& recorded = lean.document["result"];
  const json fresh = audit_result_json(now, false);
  const json& recorded_tensors = recorded["tensors"];
  const json& fresh_tensors = fresh["tensors"];
  PairsApart recorded_apart, fresh_apart;
  for (std::size_t i = 0; i < recorded_tensors.size(); ++i) {
    recorded_apart[&recorded_tensors[i]["histogram"]] = lean.report.tensors[i].histogram;
  }
  std::vector<CodeCounts> fresh_histograms;
  fresh_histograms.reserve(now.tensors.size());
  for (std::size_t i = 0; i < fresh_tensors.size(); ++i) {
    fresh_apart[&fresh_tensors[i]["histogram"]] = fresh_histograms.emplace_back(now.tensors[i].histogram.pairs());
  }
  return first_difference(recorded, fresh, recorded_apart, fresh_apart);
}
}  // namespace

FastReaudit reaudit_fast(std::string_view text, const std::string& path, unsigned threads) {
  auto lean = read_lean(text, path);
  if (!lean) return {};
  auto checkpoint = checkpoint::open_checkpoint(lean->report.checkpoint);
  if (!checkpoint) return {};
  auto now = run_audit(*checkpoint, {lean->selection, threads, lean->views});
  if (!now) return {};
  if (!audit_result_text_is(*now, lean->result_text)) return {std::nullopt, lean_difference(*lean, *now)};
  return {AuditReproduced{std::move(lean->report.checkpoint), std::move(lean->report.summary)}, {}};
}

Expected<std::optional<Json>> reaudit_result(const json& report, const std::string& path, unsigned threads) {
  std::string recorded;
  auto a = parse_audit_report(report, path, &recorded);
  if (!a) return a.error();
  const SpecWhere w{path};
  auto again = recorded_audit(report["result"], *a, w);
  if (!again) return again.error();
  auto checkpoint = checkpoint::open_checkpoint(a->checkpoint);
  if (!checkpoint) return w.at("result.checkpoint.path", checkpoint.error().message);
  auto now = run_audit(*checkpoint, {again->selection, threads, again->views});
  if (!now) return w.at("result.checkpoint.path", now.error().message);
  return result_difference(*now, report["result"], recorded);
}

namespace {

std::string short_digest(const std::string& hex) { return hex.substr(0, 16); }

// The first file where `now` (the checkpoint on disk) is not what `audit` read.
std::optional<std::string> file_difference(const AuditReport& audit, const AuditResult& now) {
  if (now.index != audit.index) {
    return fmt::format("index {} on disk, the audit read {}", now.index.value_or("none"), audit.index.value_or("none"));
  }
  for (const FileSummary& read : audit.files) {
    const auto it =
        std::find_if(now.files.begin(), now.files.end(), [&](const FileSummary& f) { return f.name == read.name; });
    if (it == now.files.end()) return fmt::format("{}: not in the checkpoint on disk, the audit read it", read.name);
    if (it->bytes != read.bytes) {
      return fmt::format("{}: {} bytes on disk, the audit read {}", read.name, it->bytes, read.bytes);
    }
    if (it->header_sha256 != read.header_sha256) {
      return fmt::format("{}: header SHA-256 {}... on disk, the audit read {}...", read.name,
                         short_digest(it->header_sha256), short_digest(read.header_sha256));
    }
  }
  for (const FileSummary& f : now.files) {
    const bool read =
        std::any_of(audit.files.begin(), audit.files.end(), [&](const FileSummary& r) { return r.name == f.name; });
    if (!read) return fmt::format("{}: on disk, but not among the files the audit read", f.name);
  }
  return std::nullopt;
}

// The first scale tensor whose bytes or codes on disk are not what `audit` records.
std::optional<std::string> tensor_difference(const AuditReport& audit, const AuditResult& now) {
  if (now.tensors.size() != audit.tensors.size()) {
    return fmt::format("{} selected scale tensors on disk, the audit read {}", now.tensors.size(),
                       audit.tensors.size());
  }
  for (std::size_t i = 0; i < now.tensors.size(); ++i) {  // both sorted by name
    const TensorAudit& disk = now.tensors[i];
    const AuditedTensor& read = audit.tensors[i];
    if (disk.name != read.name || disk.file != read.file) {
      return fmt::format("{}: tensor {} on disk where the audit read {} ({})", disk.file, disk.name, read.name,
                         read.file);
    }
    if (disk.sha256 != read.sha256) {
      return fmt::format("{}: tensor {}: SHA-256 {}... on disk, the audit read {}...", disk.file, disk.name,
                         short_digest(disk.sha256), short_digest(read.sha256));
    }
    if (!(disk.histogram == read.histogram)) {
      return fmt::format(
          "{}: tensor {}: its bytes are the ones the audit read, but it records other codes than they "
          "hold",
          disk.file, disk.name);
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<Ok> check_checkpoint(const AuditReport& audit) {
  const SpecWhere w{audit.path};
  const std::string where = "result.checkpoint";
  auto checkpoint = checkpoint::open_checkpoint(audit.checkpoint);
  if (!checkpoint) {
    return w.at(where,
                fmt::format("the checkpoint the audit read cannot be read again: {}", checkpoint.error().message));
  }
  auto now = run_audit(*checkpoint, {audit.selection, 0, audit.views});
  if (!now)
    return w.at(where, fmt::format("the checkpoint the audit read cannot be audited again: {}", now.error().message));
  auto differs = file_difference(audit, *now);
  if (!differs) differs = tensor_difference(audit, *now);
  if (differs) {
    return w.at(where, fmt::format("{} is not the checkpoint this audit read: {}", printable(audit.checkpoint),
                                   printable(*differs)));
  }
  return Ok{};
}

Expected<AuditReport> load_checked_audit(const std::string& path) {
  auto audit = load_audit_report(path);
  if (!audit) return audit.error();
  if (auto ok = check_checkpoint(*audit); !ok) return ok.error();
  return audit;
}

Expected<CodeCounts> observed_codes(const AuditReport& audit, FormatId format) {
  CodeCounts codes;
  bool any = false;
  for (const AuditedTensor& t : audit.tensors) {
    if (t.format != format) continue;
    any = true;
    merge_counts(codes, t.histogram);
  }
  if (!any) {
    return Error{fmt::format("{}: result.tensors: no {} scale tensor (the audit holds {})", audit.path,
                             spec_of(format).name, audit.format_names())};
  }
  if (codes.empty()) return Error{fmt::format("{}: result.tensors: the audit saw no {} code", audit.path, spec_of(format).name)};
  return codes;
}

Expected<Ok> apply_scales_from(Spec& spec, const std::string& audit_path, bool allow_partial, ScalesFrom mode) {
  auto audit = load_checked_audit(audit_path);
  if (!audit) return audit.error();
  if (auto ok = audit->check_whole(allow_partial); !ok) return ok.error();
  const auto index = spec.input_index("scale");
  if (!index) return Error{fmt::format("{}: scale: the spec has no input named \"scale\"", spec.path)};
  const FormatId format = spec.inputs[*index].format;
  auto codes = observed_codes(*audit, format);
  if (!codes) return codes.error();
  const std::uint64_t count = spec_of(format).code_count();
  std::uint64_t not_codes = 0;
  std::vector<std::uint32_t> list;
  for (const auto& [code, n] : *codes) {
    if (code >= count) not_codes += n;
    list.push_back(code);
  }
  if (not_codes) {
    return Error{fmt::format("{}: result.tensors: {} codes are no {} code (0x{:X} and up): they cannot be swept",
                             audit_path, not_codes, spec_of(format).name, count)};
  }
  if (mode == ScalesFrom::kRange) return override_range(spec, "scale", {list.front(), list.back()}, audit_path);
  return override_codes(spec, "scale", std::move(list), audit_path);
}

namespace {

Expected<std::optional<CodeRange>> parse_maximal(const json& claim, std::uint64_t code_count, const SpecWhere& w,
                                                 const std::string& at) {
  if (!claim.contains("maximal")) return w.at(at + ".maximal", "missing");
  const json& m = claim["maximal"];
  if (m.is_null()) return std::optional<CodeRange>{};
  if (!m.is_array() || m.size() != 2 || !m[0].is_number_unsigned() || !m[1].is_number_unsigned() ||
      m[0].get<std::uint64_t>() > m[1].get<std::uint64_t>() || m[1].get<std::uint64_t>() >= code_count) {
    return w.at(at + ".maximal", fmt::format("must be null or [lo, hi] with 0 <= lo <= hi <= {}", code_count - 1));
  }
  return std::optional<CodeRange>{CodeRange{m[0].get<std::uint32_t>(), m[1].get<std::uint32_t>()}};
}

// A claim's per-code runs must tile the swept format's codes 0..count-1 in
// order, each code with the domain's cases per code, and every code of
// `maximal` must hold by them.
Expected<Ok> check_code_runs(const json& claim, const std::optional<CodeRange>& maximal, std::uint64_t cases_per_code,
                             std::uint64_t code_count, const SpecWhere& w, const std::string& at) {
  if (!claim.contains("codes") || !claim["codes"].is_array()) return w.at(at + ".codes", "missing");
  std::vector<bool> holds;
  for (std::size_t k = 0; k < claim["codes"].size(); ++k) {
    const json& run = claim["codes"][k];
    const std::string here = fmt::format("{}.codes[{}]", at, k);
    const auto is_count = [&](const char* key) { return run.contains(key) && run[key].is_number_unsigned(); };
    if (!run.is_object() || !is_count("from") || !is_count("to") || !is_count("cases") || !is_count("holding")) {
      return w.at(here, "must be a {from, to, cases, holding} run");
    }
    const std::uint64_t from = run["from"], to = run["to"], cases = run["cases"], holding = run["holding"];
    if (from != holds.size() || to < from || to >= code_count) {
      return w.at(here, fmt::format("codes {}..{}, but the runs must tile 0..{} in order and this one starts at {}",
                                    from, to, code_count - 1, holds.size()));
    }
    if (cases != cases_per_code || holding > cases) {
      return w.at(here, fmt::format("{} of {} cases hold per code, but the domain has {} cases per code", holding,
                                    cases, cases_per_code));
    }
    holds.resize(to + 1, cases == holding);
  }
  if (holds.size() != code_count) {
    return w.at(at + ".codes", fmt::format("the runs end at {}, not at {}", static_cast<std::int64_t>(holds.size()) - 1,
                                           code_count - 1));
  }
  for (std::uint32_t code = maximal ? maximal->lo : 1; maximal && code <= maximal->hi; ++code) {
    if (!holds[code]) {
      return w.at(at + ".maximal",
                  fmt::format("code {} is in the interval but does not hold per the report's codes", code));
    }
  }
  return Ok{};
}

// The inputs not swept must cover every code: the checkpoint may hold any of them.
Expected<Ok> check_other_inputs_all(const json& result, const std::string& over, const SpecWhere& w) {
  if (!result.contains("spec") || !result["spec"].is_object() || !result["spec"].contains("inputs") ||
      !result["spec"]["inputs"].is_array()) {
    return w.at("result.spec.inputs", "missing");
  }
  const json& inputs = result["spec"]["inputs"];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const json& in = inputs[i];
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string()) {
      return w.at(fmt::format("result.spec.inputs[{}]", i), "malformed");
    }
    if (in["name"] == over) continue;
    if (!in.contains("codes") || in["codes"] != "all") {
      return w.at(fmt::format("result.spec.inputs[{}].codes", i),
                  fmt::format("input {} covers only some codes; admission needs a proof over all of them",
                              printable(in["name"].get<std::string>())));
    }
  }
  return Ok{};
}

Expected<DomainClaim> parse_domain_claim(const json& claims, std::size_t i, std::uint64_t cases_per_code,
                                         std::uint64_t code_count, const SpecWhere& w) {
  const std::string at = fmt::format("result.claims[{}]", i);
  const json& c = claims[i];
  DomainClaim d;
  d.index = i;
  auto kind = field(c, "claim", json::value_t::string, w, at + ".claim");
  if (!kind) return kind.error();
  d.claim = (*kind)->get<std::string>();
  auto recipes = field(c, "recipes", json::value_t::array, w, at + ".recipes");
  if (!recipes) return recipes.error();
  for (const json& r : **recipes) {
    if (!r.is_string()) return w.at(at + ".recipes", "must hold recipe names");
    d.recipes.push_back(r.get<std::string>());
  }
  auto maximal = parse_maximal(c, code_count, w, at);
  if (!maximal) return maximal.error();
  d.maximal = *maximal;
  if (auto ok = check_code_runs(c, d.maximal, cases_per_code, code_count, w, at); !ok) return ok.error();
  return d;
}

std::optional<CodeRange> intersect(const std::vector<DomainClaim>& claims, std::uint64_t code_count) {
  std::optional<CodeRange> range = CodeRange{0, static_cast<std::uint32_t>(code_count - 1)};
  for (const DomainClaim& c : claims) {
    if (!c.maximal || !range) return std::nullopt;
    range->lo = std::max(range->lo, c.maximal->lo);
    range->hi = std::min(range->hi, c.maximal->hi);
    if (range->lo > range->hi) return std::nullopt;
  }
  return range;
}

Expected<Ok> check_domain_over(const json& result, const SpecWhere& w, std::string& over, FormatId& swept) {
  auto over_obj = field(result, "over", json::value_t::object, w, "result.over");
  if (!over_obj) return over_obj.error();
  auto input = field(**over_obj, "input", json::value_t::string, w, "result.over.input");
  if (!input) return input.error();
  auto format = field(**over_obj, "format", json::value_t::string, w, "result.over.format");
  if (!format) return format.error();
  const std::string name = (*format)->get<std::string>();
  const auto row = std::find_if(kScaleFormats.begin(), kScaleFormats.end(),
                                [&](const ScaleFormat& r) { return r.name() == name; });
  if (row == kScaleFormats.end()) {
    return w.at("result.over.format", fmt::format("the swept input {} is {}, which is no scale format the audit reads",
                                                  printable((*input)->get<std::string>()), printable(name)));
  }
  swept = row->format;
  over = (*input)->get<std::string>();
  return check_other_inputs_all(result, over, w);
}

Expected<Ok> check_witness(const json& result, const SpecWhere& w) {
  auto witness = field(result, "witness", json::value_t::object, w, "result.witness");
  if (!witness) return witness.error();
  auto n = field(**witness, "disagreements", json::value_t::number_unsigned, w, "result.witness.disagreements");
  if (!n) return n.error();
  if ((*n)->get<std::uint64_t>() != 0) {
    // Bad input (exit 2), not a refusal: the domain report proves nothing to admit against.
    return w.at("result.witness",
                fmt::format("{} witness disagreements: the domain report proves nothing", (*n)->get<std::uint64_t>()));
  }
  return Ok{};
}

}  // namespace

Expected<ProvenInterval> load_domain_report(const std::string& path, std::optional<std::size_t> claim) {
  auto j = load_ordered(path);
  if (!j) return j.error();
  const SpecWhere w{path};
  if (auto ok = check_report_kind(*j, "domain", w, "bitproof domain SPEC --report"); !ok) return ok.error();
  // The domain kind's reader alone: the schema, the recorded spec, its digest and strings.
  if (auto ok = validate_domain_report(*j, path); !ok) return ok.error();
  const json& result = (*j)["result"];
  std::string over;
  ProvenInterval p;
  if (auto ok = check_domain_over(result, w, over, p.format); !ok) return ok.error();
  if (auto ok = check_witness(result, w); !ok) return ok.error();
  p.path = path;
  auto name = field(result["spec"], "name", json::value_t::string, w, "result.spec.name");
  if (!name) return name.error();
  p.spec_name = (*name)->get<std::string>();
  auto sha = field(result, "spec_sha256", json::value_t::string, w, "result.spec_sha256");
  if (!sha) return sha.error();
  p.spec_sha256 = (*sha)->get<std::string>();
  auto claims = field(result, "claims", json::value_t::array, w, "result.claims");
  if (!claims) return claims.error();
  if ((*claims)->empty()) return w.at("result.claims", "no claim");
  if (claim && *claim >= (*claims)->size()) {
    return w.at("result.claims", fmt::format("--claim {}: the report has {} claims", *claim, (*claims)->size()));
  }
  const std::uint64_t code_count = spec_of(p.format).code_count();
  const std::uint64_t cases_per_code = result["cases"].get<std::uint64_t>() / code_count;
  for (std::size_t i = 0; i < (*claims)->size(); ++i) {
    if (claim && *claim != i) continue;
    auto d = parse_domain_claim(**claims, i, cases_per_code, code_count, w);
    if (!d) return d.error();
    p.claims.push_back(std::move(*d));
  }
  // What adds up may still be forged consistently: the discovery is run again
  // here (domain sweeps at most 2^24 cases) and must give the recorded result.
  auto again = rerun_domain_result(*j, path);
  if (!again) return again.error();
  if (*again != result) {
    return w.at("result", fmt::format("does not reproduce here (the recorded spec swept again): {}",
                                      first_difference(result, *again)));
  }
  p.range = intersect(p.claims, code_count);
  return p;
}

std::string describe_scale_code(FormatId format, std::uint32_t code) {
  if (classify_code(format, code).kind == CodeClass::kNotACode) {
    return fmt::format("0x{:02X} (no {} code)", code, spec_of(format).name);
  }
  return describe_code(format, code);
}

namespace {

// The selected tensors must all be in the format the domain report sweeps.
Expected<Ok> check_formats(const AuditReport& audit, const ProvenInterval& proven, const NameFilter& filter) {
  bool any = false;
  const AuditedTensor* other = nullptr;
  for (const AuditedTensor& t : audit.tensors) {
    if (!filter.selects(t.name)) continue;
    if (t.format == proven.format) {
      any = true;
    } else if (!other) {
      other = &t;
    }
  }
  if (!any && other) {
    return Error{fmt::format("{}: result.over.format: the domain report sweeps {} codes, but the audit {} holds {} "
                             "scales: a domain report of another format",
                             proven.path, spec_of(proven.format).name, audit.path, audit.format_names())};
  }
  if (other) {
    return Error{fmt::format("{}: tensor {}: {} scales, but the domain report {} sweeps {} codes: select the {} "
                             "tensors with --select",
                             audit.path, other->name, spec_of(other->format).name, proven.path,
                             spec_of(proven.format).name, spec_of(proven.format).name)};
  }
  return Ok{};
}

TensorAdmission admit_tensor(const AuditedTensor& t, const std::optional<CodeRange>& range) {
  TensorAdmission a{&t, 0, 0, {}};
  for (const auto& [code, count] : t.histogram) {
    const bool below = !range || code < range->lo;
    const bool above = range && code > range->hi;
    if (!below && !above) continue;
    (below ? a.below : a.above) += count;
    if (a.first_outside.size() < kFirstOutside) a.first_outside.emplace_back(code, count);
  }
  return a;
}

}  // namespace

Expected<Admission> admit(const AuditReport& audit, const ProvenInterval& proven, const std::string& select,
                          bool allow_partial, std::uint64_t max_outside) {
  if (auto ok = audit.check_whole(allow_partial); !ok) return ok.error();
  auto filter = NameFilter::make(select, "--select");
  if (!filter) return filter.error();
  Admission a;
  a.select = select;
  a.max_outside = max_outside;
  a.partial_audit = audit.left_out;
  std::map<std::optional<std::uint32_t>, LayerAdmission> layers;
  for (const AuditedTensor& t : audit.tensors) {
    if (!filter->selects(t.name)) continue;
    const TensorAdmission ta = admit_tensor(t, proven.range);
    a.tensors.push_back(ta);
    a.outside += !ta.inside();
    a.below += ta.below;
    a.above += ta.above;
    LayerAdmission& l = layers[t.layer];
    l.layer = t.layer;
    ++l.tensors;
    l.outside += !ta.inside();
    l.below += ta.below;
    l.above += ta.above;
    if (t.stats.min) l.min = l.min ? std::min(*l.min, *t.stats.min) : *t.stats.min;
    if (t.stats.max) l.max = l.max ? std::max(*l.max, *t.stats.max) : *t.stats.max;
  }
  if (a.tensors.empty()) {
    return Error{fmt::format("--select: {}: selects none of the {} tensors of {}", printable(select),
                             audit.tensors.size(), audit.path)};
  }
  if (auto ok = check_formats(audit, proven, *filter); !ok) return ok.error();
  for (auto& [key, l] : layers) a.layers.push_back(l);
  return a;
}

namespace {

std::string interval_text(const std::optional<CodeRange>& r) {
  return r ? fmt::format("{}..{}", r->lo, r->hi) : std::string("none");
}

std::string codes_text(const std::optional<std::uint32_t>& lo, const std::optional<std::uint32_t>& hi) {
  return lo ? fmt::format("{}..{}", *lo, *hi) : std::string("no codes");
}

std::string layer_text(const std::optional<std::uint32_t>& layer) {
  return layer ? fmt::format("layer {}", *layer) : std::string("no layer");
}


std::string claims_text(const ProvenInterval& p) {
  std::string out;
  for (const DomainClaim& c : p.claims) {
    out += fmt::format("{}claims[{}] {} {}", out.empty() ? "" : ", ", c.index, c.claim, interval_text(c.maximal));
  }
  return out;
}

std::string first_outside_text(FormatId format, const CodeCounts& first, std::uint64_t outside) {
  std::string out;
  std::uint64_t listed = 0;
  for (const auto& [code, count] : first) {
    out += fmt::format("{}{} ×{}", out.empty() ? "" : ", ", describe_scale_code(format, code), count);
    listed += count;
  }
  return listed < outside ? out + ", …" : out;
}

}  // namespace

std::vector<std::string> admission_lines(const AuditReport& audit, const ProvenInterval& proven, const Admission& a,
                                         std::size_t max_listed) {
  std::size_t layers_out = 0;
  for (const LayerAdmission& l : a.layers) layers_out += l.outside != 0;
  std::vector<std::string> lines;
  lines.push_back(fmt::format("proven interval {} of {} ({} codes; {})", interval_text(proven.range), proven.spec_name,
                              spec_of(proven.format).name, claims_text(proven)));
  const std::string tolerance =
      a.max_outside ? fmt::format(", at most {} tolerated (--max-outside)", a.max_outside) : std::string();
  lines.push_back(fmt::format("{}: {}/{} selected tensors inside, {} outside ({} codes outside: {} below, {} above{}); "
                              "{}/{} layers inside",
                              a.admitted() ? "ADMITTED" : "REFUSED", a.tensors.size() - a.outside, a.tensors.size(),
                              a.outside, a.codes_outside(), a.below, a.above, tolerance,
                              a.layers.size() - layers_out, a.layers.size()));
  if (a.partial_audit > 0) {
    lines.push_back(fmt::format("  PARTIAL AUDIT: {} scale tensors of the checkpoint were not read (--allow-partial): "
                                "this admission says nothing of them",
                                a.partial_audit));
  }
  std::size_t listed = 0;
  for (const TensorAdmission& t : a.tensors) {
    if (t.inside()) continue;
    if (listed++ == max_listed) {
      lines.push_back(fmt::format("  ... and {} more outside (see --report)", a.outside - max_listed));
      break;
    }
    lines.push_back(fmt::format("  outside: {} ({}, {}): codes {}: {} below, {} above: {}", t.tensor->name,
                                t.tensor->file, layer_text(t.tensor->layer),
                                codes_text(t.tensor->stats.min, t.tensor->stats.max), t.below, t.above,
                                first_outside_text(t.tensor->format, t.first_outside, t.below + t.above)));
  }
  (void)audit;
  return lines;
}

Json admission_report(const AuditReport& audit, const ProvenInterval& proven, const Admission& a) {
  Json claims = Json::array();
  for (const DomainClaim& c : proven.claims) {
    claims.push_back({{"index", c.index},
                      {"claim", c.claim},
                      {"recipes", c.recipes},
                      {"maximal", c.maximal ? Json::array({c.maximal->lo, c.maximal->hi}) : Json(nullptr)}});
  }
  Json tensors = Json::array();
  for (const TensorAdmission& t : a.tensors) {
    Json first = Json::array();
    for (const auto& [code, count] : t.first_outside) {
      first.push_back({{"code", code}, {"count", count}, {"described", describe_scale_code(t.tensor->format, code)}});
    }
    tensors.push_back({{"name", t.tensor->name},
                       {"file", t.tensor->file},
                       {"layer", optional_json(t.tensor->layer)},
                       {"format", spec_of(t.tensor->format).name},
                       {"codes", t.tensor->stats.codes},
                       {"min", optional_json(t.tensor->stats.min)},
                       {"max", optional_json(t.tensor->stats.max)},
                       {"nan", t.tensor->stats.nan},
                       {"below", t.below},
                       {"above", t.above},
                       {"first_outside", first},
                       {"inside", t.inside()}});
  }
  Json layers = Json::array();
  std::size_t layers_out = 0;
  for (const LayerAdmission& l : a.layers) {
    layers_out += l.outside != 0;
    layers.push_back({{"layer", optional_json(l.layer)},
                      {"tensors", l.tensors},
                      {"outside", l.outside},
                      {"below", l.below},
                      {"above", l.above},
                      {"min", optional_json(l.min)},
                      {"max", optional_json(l.max)},
                      {"inside", l.outside == 0}});
  }
  Json result{
      {"audit", {{"file", audit.path}, {"checkpoint", audit.checkpoint}, {"summary", audit.summary}}},
      {"domain",
       {{"file", proven.path}, {"spec", proven.spec_name}, {"spec_sha256", proven.spec_sha256}, {"claims", claims}}},
      {"format", spec_of(proven.format).name},
      {"proven", proven.range ? Json::array({proven.range->lo, proven.range->hi}) : Json(nullptr)},
      {"select", a.select.empty() ? Json(nullptr) : Json(a.select)},
      {"partial_audit",
       {{"left_out", a.partial_audit}, {"audit_select", audit.select.empty() ? Json(nullptr) : Json(audit.select)}}},
      {"max_outside", a.max_outside},
      {"verdict", a.admitted() ? "admitted" : "refused"},
      {"counts",
       {{"tensors", a.tensors.size()},
        {"inside", a.tensors.size() - a.outside},
        {"outside", a.outside},
        {"codes_below", a.below},
        {"codes_above", a.above},
        {"layers", a.layers.size()},
        {"layers_outside", layers_out}}},
      {"layers", layers},
      {"tensors", tensors}};
  return Json{{"bitproof_report", kReportVersion},
              {"kind", "admission"},
              {"result", result},
              {"environment", environment_json()}};
}

Expected<Json> readmit_result(const Json& report, const std::string& path) {
  const SpecWhere w{path};
  const json& r = report["result"];
  const json& claims = r["domain"]["claims"];
  // One claim recorded: --claim chose it, or the domain has only that one (the same admission).
  const std::optional<std::size_t> claim =
      claims.size() == 1 ? std::optional<std::size_t>(claims[0]["index"].get<std::size_t>()) : std::nullopt;
  auto proven = load_domain_report(r["domain"]["file"].get<std::string>(), claim);
  if (!proven) return w.at("result.domain.file", proven.error().message);
  auto audited = load_checked_audit(r["audit"]["file"].get<std::string>());
  if (!audited) return w.at("result.audit.file", audited.error().message);
  const std::string select = r["select"].is_string() ? r["select"].get<std::string>() : "";
  const bool allow_partial = r["partial_audit"]["left_out"].get<std::uint64_t>() != 0;
  auto admission = admit(*audited, *proven, select, allow_partial, r["max_outside"].get<std::uint64_t>());
  if (!admission) return w.at("result", admission.error().message);
  return admission_report(*audited, *proven, *admission)["result"];
}

}  // namespace bitproof::audit
