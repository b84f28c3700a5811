#include "audit/admission.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "name_filter.hpp"
#include "report/compare.hpp"
#include "report/render.hpp"
#include "report/report.hpp"
#include "strict_json.hpp"

namespace bitproof::audit {
namespace {

using json = Json;  // keys in file order: the recorded spec's digest is of its text as written

struct Where {
  const std::string& file;
  [[nodiscard]] Error at(const std::string& field, const std::string& what) const {
    return Error{fmt::format("{}: {}: {}", file, printable(field), what)};
  }
};

// The value at `key` of object `j`, which must have the given type.
Expected<const json*> field(const json& j, const std::string& key, json::value_t type, const Where& w,
                            const std::string& where) {
  if (!j.is_object() || !j.contains(key)) return w.at(where, "missing");
  const json& v = j[key];
  const bool ok = type == json::value_t::number_unsigned ? v.is_number_unsigned() : v.type() == type;
  if (!ok) return w.at(where, fmt::format("wrong type {}", v.type_name()));
  return &v;
}

// null, or an integer code 0..255.
Expected<std::optional<std::uint32_t>> byte_or_null(const json& j, const Where& w, const std::string& where) {
  if (j.is_null()) return std::optional<std::uint32_t>{};
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() > 255) return w.at(where, "must be null or a code 0..255");
  return std::optional<std::uint32_t>{j.get<std::uint32_t>()};
}

Expected<Ok> check_report_kind(const json& j, const std::string& kind, const Where& w, const std::string& hint) {
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

// A tensor entry of an audit report; its min/max/nan must agree with its histogram.
Expected<AuditedTensor> parse_audited(const json& j, const Where& w, const std::string& where) {
  AuditedTensor t;
  auto name = field(j, "name", json::value_t::string, w, where + ".name");
  if (!name) return name.error();
  t.name = (*name)->get<std::string>();
  const std::string at = "tensor " + t.name;
  auto file = field(j, "file", json::value_t::string, w, at + ".file");
  if (!file) return file.error();
  t.file = (*file)->get<std::string>();
  if (!j.contains("layer")) return w.at(at + ".layer", "missing");
  if (!j["layer"].is_null() && (!j["layer"].is_number_unsigned() || j["layer"].get<std::uint64_t>() > UINT32_MAX)) {
    return w.at(at + ".layer", "must be null or a layer");
  }
  if (!j["layer"].is_null()) t.layer = j["layer"].get<std::uint32_t>();
  for (auto [key, out] : {std::pair{"bytes", &t.bytes}, std::pair{"nan_bytes", &t.nan_bytes}}) {
    auto v = field(j, key, json::value_t::number_unsigned, w, at + "." + key);
    if (!v) return v.error();
    *out = (*v)->get<std::uint64_t>();
  }
  for (auto [key, out] : {std::pair{"min", &t.min}, std::pair{"max", &t.max}}) {
    if (!j.contains(key)) return w.at(at + "." + key, "missing");
    auto v = byte_or_null(j[key], w, at + "." + key);
    if (!v) return v.error();
    *out = *v;
  }
  auto hist = field(j, "histogram", json::value_t::array, w, at + ".histogram");
  if (!hist) return hist.error();
  Histogram h{};
  for (const json& pair : **hist) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_unsigned() || !pair[1].is_number_unsigned() ||
        pair[0].get<std::uint64_t>() > 255) {
      return w.at(at + ".histogram", "must hold [code, count] pairs");
    }
    h[pair[0].get<std::uint32_t>()] += pair[1].get<std::uint64_t>();
  }
  const ByteStats s = stats_of(h);
  if (s.bytes != t.bytes || s.min != t.min || s.max != t.max || s.nan_bytes != t.nan_bytes) {
    return w.at(at, "bytes, min, max or nan_bytes disagree with the histogram");
  }
  return t;
}

Expected<json> load_ordered(const std::string& path) {
  auto text = read_input_file(path, "the report");
  if (!text) return text.error();
  return parse_ordered_json_strict(*text, path, "report");
}

// What the audit left unread: its --select and the scale tensors outside it.
Expected<Ok> parse_selection(const json& result, const Where& w, AuditReport& a) {
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

}  // namespace

Expected<Ok> AuditReport::check_whole(bool allow_partial) const {
  if (left_out == 0 || allow_partial) return Ok{};
  return Error{fmt::format("{}: result.selection: a partial audit ({} scale tensors left out{}): it says nothing of "
                           "them; audit the whole checkpoint, or pass --allow-partial",
                           path, left_out, select.empty() ? "" : fmt::format(" by --select {}", printable(select)))};
}

Expected<AuditReport> load_audit_report(const std::string& path) {
  auto j = load_ordered(path);
  if (!j) return j.error();
  const Where w{path};
  if (auto ok = check_report_kind(*j, "audit", w, "bitproof audit CHECKPOINT --report"); !ok) return ok.error();
  const json& result = (*j)["result"];
  AuditReport a;
  a.path = path;
  auto ck = field(result, "checkpoint", json::value_t::object, w, "result.checkpoint");
  if (!ck) return ck.error();
  auto ck_path = field(**ck, "path", json::value_t::string, w, "result.checkpoint.path");
  if (!ck_path) return ck_path.error();
  a.checkpoint = (*ck_path)->get<std::string>();
  auto all = field(result, "overall", json::value_t::object, w, "result.overall");
  if (!all) return all.error();
  auto summary = field(**all, "summary", json::value_t::string, w, "result.overall.summary");
  if (!summary) return summary.error();
  a.summary = (*summary)->get<std::string>();
  if (auto ok = parse_selection(result, w, a); !ok) return ok.error();
  auto tensors = field(result, "tensors", json::value_t::array, w, "result.tensors");
  if (!tensors) return tensors.error();
  for (std::size_t i = 0; i < (*tensors)->size(); ++i) {
    auto t = parse_audited((**tensors)[i], w, fmt::format("result.tensors[{}]", i));
    if (!t) return t.error();
    if (t->min) a.min = a.min ? std::min(*a.min, *t->min) : *t->min;
    if (t->max) a.max = a.max ? std::max(*a.max, *t->max) : *t->max;
    a.tensors.push_back(std::move(*t));
  }
  if (a.tensors.empty()) return w.at("result.tensors", "no scale tensor: nothing to admit");
  for (const char* key : {"min", "max"}) {
    if (!(*all)->contains(key)) return w.at(fmt::format("result.overall.{}", key), "missing");
    auto v = byte_or_null((**all)[key], w, fmt::format("result.overall.{}", key));
    if (!v) return v.error();
    if (*v != (key == std::string("min") ? a.min : a.max)) {
      return w.at(fmt::format("result.overall.{}", key), "disagrees with the tensors");
    }
  }
  return a;
}

Expected<CodeRange> observed_interval(const AuditReport& audit) {
  if (!audit.min || !audit.max)
    return Error{fmt::format("{}: result.overall: the audit saw no scale byte", audit.path)};
  return CodeRange{*audit.min, *audit.max};
}

Expected<Ok> apply_scales_from(Spec& spec, const std::string& audit_path, bool allow_partial) {
  auto audit = load_audit_report(audit_path);
  if (!audit) return audit.error();
  if (auto ok = audit->check_whole(allow_partial); !ok) return ok.error();
  auto range = observed_interval(*audit);
  if (!range) return range.error();
  const auto index = spec.input_index("scale");
  if (index && spec.inputs[*index].format != FormatId::ue8m0) {
    return Error{fmt::format("{}: scale: the spec's input scale is {}, but audited bytes are ue8m0 codes", spec.path,
                             spec_of(spec.inputs[*index].format).name)};
  }
  return override_range(spec, "scale", *range, audit_path);
}

namespace {

Expected<std::optional<CodeRange>> parse_maximal(const json& claim, const Where& w, const std::string& at) {
  if (!claim.contains("maximal")) return w.at(at + ".maximal", "missing");
  const json& m = claim["maximal"];
  if (m.is_null()) return std::optional<CodeRange>{};
  if (!m.is_array() || m.size() != 2 || !m[0].is_number_unsigned() || !m[1].is_number_unsigned() ||
      m[0].get<std::uint64_t>() > m[1].get<std::uint64_t>() || m[1].get<std::uint64_t>() > 255) {
    return w.at(at + ".maximal", "must be null or [lo, hi] with 0 <= lo <= hi <= 255");
  }
  return std::optional<CodeRange>{CodeRange{m[0].get<std::uint32_t>(), m[1].get<std::uint32_t>()}};
}

// A claim's per-code runs must tile the swept format's codes 0..255 in order,
// each code with the domain's cases per code, and every code of `maximal`
// must hold by them.
Expected<Ok> check_code_runs(const json& claim, const std::optional<CodeRange>& maximal, std::uint64_t cases_per_code,
                             const Where& w, const std::string& at) {
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
    if (from != holds.size() || to < from || to > 255) {
      return w.at(here, fmt::format("codes {}..{}, but the runs must tile 0..255 in order and this one starts at {}",
                                    from, to, holds.size()));
    }
    if (cases != cases_per_code || holding > cases) {
      return w.at(here, fmt::format("{} of {} cases hold per code, but the domain has {} cases per code", holding,
                                    cases, cases_per_code));
    }
    holds.resize(to + 1, cases == holding);
  }
  if (holds.size() != 256) return w.at(at + ".codes", fmt::format("the runs end at {}, not at 255", holds.size() - 1));
  for (std::uint32_t code = maximal ? maximal->lo : 1; maximal && code <= maximal->hi; ++code) {
    if (!holds[code]) {
      return w.at(at + ".maximal",
                  fmt::format("code {} is in the interval but does not hold per the report's codes", code));
    }
  }
  return Ok{};
}

// The inputs not swept must cover every code: the checkpoint may hold any of them.
Expected<Ok> check_other_inputs_all(const json& result, const std::string& over, const Where& w) {
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
                                         const Where& w) {
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
  auto maximal = parse_maximal(c, w, at);
  if (!maximal) return maximal.error();
  d.maximal = *maximal;
  if (auto ok = check_code_runs(c, d.maximal, cases_per_code, w, at); !ok) return ok.error();
  return d;
}

std::optional<CodeRange> intersect(const std::vector<DomainClaim>& claims) {
  std::optional<CodeRange> range = CodeRange{0, 255};
  for (const DomainClaim& c : claims) {
    if (!c.maximal || !range) return std::nullopt;
    range->lo = std::max(range->lo, c.maximal->lo);
    range->hi = std::min(range->hi, c.maximal->hi);
    if (range->lo > range->hi) return std::nullopt;
  }
  return range;
}

Expected<Ok> check_domain_over(const json& result, const Where& w, std::string& over) {
  auto over_obj = field(result, "over", json::value_t::object, w, "result.over");
  if (!over_obj) return over_obj.error();
  auto input = field(**over_obj, "input", json::value_t::string, w, "result.over.input");
  if (!input) return input.error();
  auto format = field(**over_obj, "format", json::value_t::string, w, "result.over.format");
  if (!format) return format.error();
  if (**format != "ue8m0") {
    return w.at("result.over.format",
                fmt::format("the swept input {} is {}, but audited bytes are ue8m0 codes",
                            printable((*input)->get<std::string>()), printable((*format)->get<std::string>())));
  }
  over = (*input)->get<std::string>();
  return check_other_inputs_all(result, over, w);
}

Expected<Ok> check_witness(const json& result, const Where& w) {
  auto witness = field(result, "witness", json::value_t::object, w, "result.witness");
  if (!witness) return witness.error();
  auto n = field(**witness, "disagreements", json::value_t::number_unsigned, w, "result.witness.disagreements");
  if (!n) return n.error();
  if ((*n)->get<std::uint64_t>() != 0) {
    return Error{fmt::format("{}: result.witness: {} witness disagreements: the domain report proves nothing", w.file,
                             (*n)->get<std::uint64_t>()),
                 kExitRefuted};
  }
  return Ok{};
}

}  // namespace

Expected<ProvenInterval> load_domain_report(const std::string& path, std::optional<std::size_t> claim) {
  auto j = load_ordered(path);
  if (!j) return j.error();
  const Where w{path};
  if (auto ok = check_report_kind(*j, "domain", w, "bitproof domain SPEC --report"); !ok) return ok.error();
  if (auto ok = validate_report(*j, path); !ok) return ok.error();  // the schema, the recorded spec and its digest
  const json& result = (*j)["result"];
  std::string over;
  if (auto ok = check_domain_over(result, w, over); !ok) return ok.error();
  if (auto ok = check_witness(result, w); !ok) return ok.error();
  ProvenInterval p;
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
  const std::uint64_t cases_per_code = result["cases"].get<std::uint64_t>() / 256;
  for (std::size_t i = 0; i < (*claims)->size(); ++i) {
    if (claim && *claim != i) continue;
    auto d = parse_domain_claim(**claims, i, cases_per_code, w);
    if (!d) return d.error();
    p.claims.push_back(std::move(*d));
  }
  // What adds up may still be forged consistently: the discovery is run again
  // here (domain sweeps at most 2^24 cases) and must give the recorded result.
  auto again = rerun_result(*j, path);
  if (!again) return again.error();
  if (*again != result) {
    return w.at("result", fmt::format("does not reproduce here (the recorded spec swept again): {}",
                                      first_difference(result, *again)));
  }
  p.range = intersect(p.claims);
  return p;
}

Expected<Admission> admit(const AuditReport& audit, const ProvenInterval& proven, const std::string& select,
                          bool allow_partial) {
  if (auto ok = audit.check_whole(allow_partial); !ok) return ok.error();
  auto filter = NameFilter::make(select, "--select");
  if (!filter) return filter.error();
  Admission a;
  a.select = select;
  a.partial_audit = audit.left_out;
  std::map<std::optional<std::uint32_t>, LayerAdmission> layers;
  for (const AuditedTensor& t : audit.tensors) {
    if (!filter->selects(t.name)) continue;
    const bool inside = !t.min || (proven.range && proven.range->lo <= *t.min && *t.max <= proven.range->hi);
    a.tensors.push_back({&t, inside});
    a.outside += !inside;
    LayerAdmission& l = layers[t.layer];
    l.layer = t.layer;
    ++l.tensors;
    l.outside += !inside;
    if (t.min) l.min = l.min ? std::min(*l.min, *t.min) : *t.min;
    if (t.max) l.max = l.max ? std::max(*l.max, *t.max) : *t.max;
  }
  if (a.tensors.empty()) {
    return Error{fmt::format("--select: {}: selects none of the {} tensors of {}", printable(select),
                             audit.tensors.size(), audit.path)};
  }
  for (auto& [key, l] : layers) a.layers.push_back(l);
  return a;
}

namespace {

std::string interval_text(const std::optional<CodeRange>& r) {
  return r ? fmt::format("{}..{}", r->lo, r->hi) : std::string("none");
}

std::string bytes_text(const std::optional<std::uint32_t>& lo, const std::optional<std::uint32_t>& hi) {
  return lo ? fmt::format("{}..{}", *lo, *hi) : std::string("no bytes");
}

std::string layer_text(const std::optional<std::uint32_t>& layer) {
  return layer ? fmt::format("layer {}", *layer) : std::string("no layer");
}

Json optional_json(const std::optional<std::uint32_t>& v) { return v ? Json(*v) : Json(nullptr); }

std::string claims_text(const ProvenInterval& p) {
  std::string out;
  for (const DomainClaim& c : p.claims) {
    out += fmt::format("{}claims[{}] {} {}", out.empty() ? "" : ", ", c.index, c.claim, interval_text(c.maximal));
  }
  return out;
}

}  // namespace

std::vector<std::string> admission_lines(const AuditReport& audit, const ProvenInterval& proven, const Admission& a,
                                         std::size_t max_listed) {
  std::size_t layers_out = 0;
  for (const LayerAdmission& l : a.layers) layers_out += l.outside != 0;
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("proven interval {} of {} ({})", interval_text(proven.range), proven.spec_name, claims_text(proven)));
  lines.push_back(fmt::format("{}: {}/{} selected tensors inside, {} outside; {}/{} layers inside",
                              a.admitted() ? "ADMITTED" : "REFUSED", a.tensors.size() - a.outside, a.tensors.size(),
                              a.outside, a.layers.size() - layers_out, a.layers.size()));
  if (a.partial_audit > 0) {
    lines.push_back(fmt::format("  PARTIAL AUDIT: {} scale tensors of the checkpoint were not read (--allow-partial): "
                                "this admission says nothing of them",
                                a.partial_audit));
  }
  std::size_t listed = 0;
  for (const TensorAdmission& t : a.tensors) {
    if (t.inside) continue;
    if (listed++ == max_listed) {
      lines.push_back(fmt::format("  ... and {} more outside (see --report)", a.outside - max_listed));
      break;
    }
    lines.push_back(fmt::format("  outside: {} ({}, {}): bytes {}{}", t.tensor->name, t.tensor->file,
                                layer_text(t.tensor->layer), bytes_text(t.tensor->min, t.tensor->max),
                                t.tensor->nan_bytes ? fmt::format(", {} NaN bytes", t.tensor->nan_bytes) : ""));
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
    tensors.push_back({{"name", t.tensor->name},
                       {"file", t.tensor->file},
                       {"layer", optional_json(t.tensor->layer)},
                       {"min", optional_json(t.tensor->min)},
                       {"max", optional_json(t.tensor->max)},
                       {"nan_bytes", t.tensor->nan_bytes},
                       {"inside", t.inside}});
  }
  Json layers = Json::array();
  std::size_t layers_out = 0;
  for (const LayerAdmission& l : a.layers) {
    layers_out += l.outside != 0;
    layers.push_back({{"layer", optional_json(l.layer)},
                      {"tensors", l.tensors},
                      {"outside", l.outside},
                      {"min", optional_json(l.min)},
                      {"max", optional_json(l.max)},
                      {"inside", l.outside == 0}});
  }
  Json result{
      {"audit", {{"file", audit.path}, {"checkpoint", audit.checkpoint}, {"summary", audit.summary}}},
      {"domain",
       {{"file", proven.path}, {"spec", proven.spec_name}, {"spec_sha256", proven.spec_sha256}, {"claims", claims}}},
      {"proven", proven.range ? Json::array({proven.range->lo, proven.range->hi}) : Json(nullptr)},
      {"select", a.select.empty() ? Json(nullptr) : Json(a.select)},
      {"partial_audit", {{"left_out", a.partial_audit}, {"audit_select", audit.select.empty() ? Json(nullptr) : Json(audit.select)}}},
      {"verdict", a.admitted() ? "admitted" : "refused"},
      {"counts",
       {{"tensors", a.tensors.size()},
        {"inside", a.tensors.size() - a.outside},
        {"outside", a.outside},
        {"layers", a.layers.size()},
        {"layers_outside", layers_out}}},
      {"layers", layers},
      {"tensors", tensors}};
  return Json{{"bitproof_report", kReportVersion},
              {"kind", "admission"},
              {"result", result},
              {"environment", environment_json()}};
}

}  // namespace bitproof::audit
