#include "report/ab_report.hpp"

#include "report/markup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "hash/digest.hpp"
#include "operator/kernel_cpu.hpp"

namespace bitproof {
namespace {

std::string hex16(std::uint16_t bits) { return fmt::format("0x{:04X}", bits); }

// An output's 16-bit format: bf16 where a kernel arm's declaration says so, else fp16.
FormatId output_format(const op::AbSpec& spec, const std::string& output) {
  const op::OutputDecl* decl = spec.output_decl(output);
  return decl != nullptr && decl->dtype == op::OutputType::kBf16 ? FormatId::bf16 : FormatId::fp16;
}

Json code_json(std::uint16_t bits, FormatId format) {
  return Json{{"bits", hex16(bits)}, {"decoded", describe_code(format, bits)}};
}

Json differences_json(const op::AbSpec& spec, const op::AbResult& r) {
  Json list = Json::array();
  for (const op::Difference& d : r.first_differences) {
    list.push_back(Json{{"case", d.case_index},
                        {"case_seed", fmt::format("0x{:016X}", d.case_seed)},
                        {"output", d.output},
                        {"index", {d.row, d.col}},
                        {spec.arms[0].name, code_json(d.a, output_format(spec, d.output))},
                        {spec.arms[1].name, code_json(d.b, output_format(spec, d.output))}});
  }
  return list;
}

Json outputs_json(const op::AbSpec& spec, const op::AbResult& r) {
  Json list = Json::array();
  for (const op::OutputSummary& o : r.outputs) {
    list.push_back(Json{{"name", o.name},
                        {"shape", {o.rows, o.cols}},
                        {"digest", {{spec.arms[0].name, o.digest[0]}, {spec.arms[1].name, o.digest[1]}}},
                        {"differing_cases", o.differing_cases},
                        {"differing_elements", o.differing_elements}});
  }
  return list;
}

Json scales_json(const std::map<std::string, op::ScaleSet>& scales) {
  Json list = Json::array();
  for (const auto& [name, set] : scales)
    list.push_back(Json{{"input", name}, {"lo", set.lo()}, {"hi", set.hi()}, {"origin", set.origin}});
  return list;
}

Json element_proofs_json(const AbOutcome& o) {
  Json list = Json::array();
  for (std::size_t i = 0; i < o.element_proofs.size(); ++i) {
    const ElementProofRun& run = o.element_proofs[i];
    Json recipes = Json::array();
    for (const RecipeEntry* r : run.recipes) recipes.push_back(r->card->name);
    list.push_back(Json{{"spec", run.ref.spec},
                        {"name", run.spec_name},
                        {"spec_sha256", run.spec_sha256},
                        {"claim", run.ref.claim},
                        {"recipes", recipes},
                        {"scales", {run.ref.scales.lo, run.ref.scales.hi}},
                        {"cases", run.cases},
                        {"holding", run.holding},
                        {"case_digest", run.case_digest},
                        {"relied_on", i < o.trace.substitution_used.size() && o.trace.substitution_used[i]}});
  }
  return list;
}

std::string decode_leaf(const op::LeafValue& v) {
  if (v.kind == "f16") return describe_code(FormatId::fp16, static_cast<std::uint32_t>(v.bits));
  if (v.kind == "bf16") return describe_code(FormatId::bf16, static_cast<std::uint32_t>(v.bits));
  if (v.kind == "ue8m0") return describe_code(FormatId::ue8m0, static_cast<std::uint32_t>(v.bits));
  if (v.kind == "e2m1x2")
    return fmt::format("byte 0x{:02X}: low {}, high {}", v.bits, describe_code(FormatId::e2m1, v.bits & 0xF),
                       describe_code(FormatId::e2m1, v.bits >> 4 & 0xF));
  return fmt::format("0x{:X}", v.bits);
}

// The FP16 code whose value an FP32 code holds exactly (a lemma over cvt.f32.f16 of a dequant
// returns the FP16 result widened); NaN as the canonical 0x7FFF; nullopt where none is exact.
std::optional<std::uint16_t> exact_fp16(std::uint32_t f) {
  const std::uint32_t sign = f >> 31 << 15, exp = f >> 23 & 0xFF, man = f & 0x7FFFFF;
  if (exp == 0xFF) return static_cast<std::uint16_t>(man != 0 ? 0x7FFF : sign | 0x7C00);
  if (exp == 0 && man == 0) return static_cast<std::uint16_t>(sign);
  if (exp == 0) return std::nullopt;  // an FP32 subnormal is below FP16's range
  const int e = static_cast<int>(exp) - 127;
  if (e >= -14 && e <= 15) {
    if ((man & 0x1FFF) != 0) return std::nullopt;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(e + 15) << 10 | man >> 13);
  }
  if (e < -24 || e > 15) return std::nullopt;
  const int shift = 13 + (-14 - e);  // FP16 subnormal: 2^-24 units
  const std::uint32_t full = man | 0x800000;
  if ((full & ((std::uint32_t{1} << shift) - 1)) != 0) return std::nullopt;
  return static_cast<std::uint16_t>(sign | full >> shift);
}

Json result_json(std::uint64_t bits, unsigned width) {
  if (width == 16) return Json{{"bits", hex16(static_cast<std::uint16_t>(bits))}, {"decoded", describe_code(FormatId::fp16, static_cast<std::uint32_t>(bits))}};
  if (width == 32) {
    const auto f32 = static_cast<std::uint32_t>(bits);
    const auto h = exact_fp16(f32);
    return Json{{"bits", fmt::format("0x{:08X}", bits)},
                {"decoded", h ? fmt::format("fp16 {} (as fp32 {})", describe_code(FormatId::fp16, *h),
                                            describe_code(FormatId::fp32, f32))
                              : describe_code(FormatId::fp32, f32)}};
  }
  return Json{{"bits", fmt::format("0x{:X}", bits)}, {"decoded", fmt::format("{}-bit 0x{:X}", width, bits)}};
}

Json counterexample_json(const op::LemmaCounterexample& c) {
  Json leaves = Json::array();
  for (const op::LeafValue& v : c.leaves)
    leaves.push_back(Json{{"input", v.tensor}, {"kind", v.kind}, {"index", v.index}, {"bits", v.bits}, {"decoded", decode_leaf(v)}});
  return Json{{"leaves", leaves}, {"a", result_json(c.result_a, c.width)}, {"b", result_json(c.result_b, c.width)}};
}

Json lemmas_json(const op::TraceResult& t) {
  Json list = Json::array();
  for (const op::LemmaRecord& l : t.lemmas) {
    list.push_back(Json{{"pattern", l.pattern}, {"leaves", l.leaves}, {"domains", l.domains}, {"digest", l.digest},
                        {"entries", l.entries}, {"uses", l.uses}});
  }
  return list;
}

Json trace_json(const AbOutcome& o) {
  if (!o.proved) return nullptr;
  Json t{{"identical", o.trace.identical},
         {"audit", o.audit.empty() ? Json(nullptr) : Json(o.audit)},
         {"elements", o.trace.elements},
         {"compared", o.trace.compared},
         {"scales", scales_json(o.scales)},
         {"element_proofs", element_proofs_json(o)}};
  if (o.trace.difference) {
    const op::TraceDifference& d = *o.trace.difference;
    t["difference"] = Json{{"tensor", d.tensor},       {"index", {d.row, d.col}},    {"position", d.position},
                           {"operation_a", d.operation_a}, {"operation_b", d.operation_b}, {"why", d.why}};
    if (o.trace.ptx) {
      t["difference"]["line_a"] = d.line_a;
      t["difference"]["line_b"] = d.line_b;
      t["difference"]["counterexample"] = d.counterexample ? counterexample_json(*d.counterexample) : Json(nullptr);
      if (d.lookup) t["difference"]["lookup"] = true;
    }
  } else {
    t["difference"] = nullptr;
  }
  if (o.trace.ptx) {  // kernel arms only: operator arms' reports stay as they were
    t["method"] = "ptx";
    t["verdict"] = o.proof_verdict();
    t["nodes"] = o.trace.nodes;
    t["lemmas"] = lemmas_json(o.trace);
    t["exhausted"] = o.trace.exhausted;
    t["refuted_by_exhaustion"] = o.trace.refuted_by_exhaustion;
    if (o.trace.approx_nodes != 0)
      t["approx"] = Json{{"nodes", o.trace.approx_nodes}, {"instructions", o.trace.approx}};
    if (!o.cases_gpu_only.empty()) t["cases_gpu_only"] = o.cases_gpu_only;
  }
  return t;
}

std::string verdict_of(const op::AbSpec& spec, const AbOutcome& o) {
  const bool differ = !o.cases.arms_equal() || (o.proved && !o.trace.identical);
  if (o.cases.backend_disagreement_count != 0) return "backends disagree";
  if (o.proved && o.trace.ptx) {
    const std::string v = o.proof_verdict();
    if (v == "contradicted") return "proof contradicted by a case (a bug in bitproof)";
    if (v == "not_proven") return spec.expect_differ ? "not proven, no case differs" : "not proven";
    if (v == "refuted") return spec.expect_differ ? "refuted, as expected" : "refuted";
  }
  if (!differ) return o.proved ? "equal on every input" : "equal on every case";
  if (spec.expect_differ) return o.passes(spec) ? "differ, as expected" : "differ, but not shown by both checks";
  return "differ";
}

std::string arm(const Json& spec, std::size_t i) { return spec["arms"][i]["name"].get<std::string>(); }

// An arm's decoded value in a difference record ("?" where a report read back lacks it).
std::string decoded(const Json& d, const std::string& arm_name) {
  const auto it = d.find(arm_name);
  if (it == d.end() || !it->is_object() || !it->contains("decoded") || !(*it)["decoded"].is_string()) return "?";
  return (*it)["decoded"].get<std::string>();
}

std::string difference_line(const Json& spec, const Json& d) {
  const std::string a = arm(spec, 0), b = arm(spec, 1);
  return fmt::format("case {} (seed {}) {}[{}][{}]: {} {} vs {} {}", d["case"].get<std::uint64_t>(),
                     d["case_seed"].get<std::string>(), d["output"].get<std::string>(),
                     d["index"][0].get<std::uint64_t>(), d["index"][1].get<std::uint64_t>(), a, decoded(d, a), b,
                     decoded(d, b));
}

std::string backends_label(const Json& report) {
  std::string names;
  for (const Json& b : report["backends"]) names += (names.empty() ? "" : ", ") + b["name"].get<std::string>();
  return names;
}

std::uint64_t elements_per_case(const Json& result) {
  std::uint64_t n = 0;
  for (const Json& o : result["outputs"]) n += o["shape"][0].get<std::uint64_t>() * o["shape"][1].get<std::uint64_t>();
  return n;
}

std::string cases_line(const Json& report) {
  const Json& r = report["result"];
  const Json& spec = r["spec"];
  const std::uint64_t cases = r["cases"], differing = r["differing_cases"];
  const std::string pair = fmt::format("{}≡{}", arm(spec, 1), arm(spec, 0));
  if (r["trace_proof"].is_object() && r["trace_proof"].contains("cases_gpu_only"))
    return fmt::format(
        "{}: no changing-input case on the CPU: the arms run opaque instructions (approximate or "
        "tensor-core), whose bits only the GPU gives ({})",
        pair, backends_label(report));
  if (differing == 0)
    return fmt::format("{}: {}/{} changing-input cases bitwise equal, {} output elements each ({})", pair, cases,
                       cases, elements_per_case(r), backends_label(report));
  return fmt::format("{}: {}/{} changing-input cases differ, {} output elements in all ({})", pair, differing, cases,
                     r["differing_elements"].get<std::uint64_t>(), backends_label(report));
}

std::string millions(std::uint64_t n) {
  return n >= 100000 ? fmt::format("{:.1f} M", static_cast<double>(n) / 1e6) : fmt::format("{}", n);
}

std::string str(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// A lemma in a few words: its leaves and their domains ("w (codes) all 256 × w (scales) 113..128").
std::string lemma_label(const Json& l) {
  std::string s;
  for (std::size_t i = 0; i < l["leaves"].size(); ++i)
    s += fmt::format("{}{} ∈ {}", s.empty() ? "" : " × ", l["leaves"][i].get<std::string>(),
                     l["domains"][i].get<std::string>());
  return s;
}

// The lines of a kernel-arm (PTX) proof.
std::vector<std::string> ptx_trace_lines(const Json& t, const Json& spec) {
  std::vector<std::string> lines;
  const std::string verdict = t["verdict"].get<std::string>();
  const Json& lemmas = t["lemmas"];
  // Each kind of lemma once, in first-use order, with how many lemmas share its leaves and domains.
  std::vector<std::pair<std::string, int>> kinds;
  for (const Json& l : lemmas) {
    const std::string label = lemma_label(l);
    const auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == label; });
    if (it == kinds.end()) {
      kinds.emplace_back(label, 1);
    } else {
      ++it->second;
    }
  }
  std::string used;
  for (const auto& [label, n] : kinds) used += (used.empty() ? "" : "; ") + label + (n > 1 ? fmt::format(" (×{})", n) : "");
  const std::string lemma_text =
      fmt::format("{} lemma{}{}", lemmas.size(), lemmas.size() == 1 ? "" : "s", used.empty() ? "" : " (" + used + ")");
  std::string approx_text;  // ", 2 opaque nodes assumed deterministic (ex2.approx.f32)"
  if (t.contains("approx") && t["approx"].is_object()) {
    std::string names;
    for (const Json& n : t["approx"]["instructions"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    const std::uint64_t count = t["approx"]["nodes"].get<std::uint64_t>();
    approx_text =
        fmt::format(", {} opaque node{} assumed deterministic ({})", count, count == 1 ? "" : "s", names);
  }
  const std::uint64_t exhausted = t.value("exhausted", std::uint64_t{0});
  const std::string exhausted_text =
      exhausted == 0 ? "" : fmt::format(", {} elements equal on every value of their leaves (evaluated)", exhausted);
  if (t["identical"].get<bool>()) {
    lines.push_back(fmt::format("{}{}≡{} on every input: {} elements, {} nodes, {}{}{}",
                                verdict == "contradicted" ? "PROOF CONTRADICTED BY A CASE (a bug): " : "", arm(spec, 1),
                                arm(spec, 0), t["elements"].get<std::uint64_t>(),
                                millions(t["nodes"].get<std::uint64_t>()), lemma_text, exhausted_text, approx_text));
  } else if (t["difference"].value("lookup", false)) {
    const Json& d = t["difference"];
    lines.push_back(fmt::format("not proven: {}≡{} as traced, but {}[{}][{}] reads a table at an address no lemma "
                                "enumerates ({} elements, {} nodes, {})",
                                arm(spec, 1), arm(spec, 0), d["tensor"].get<std::string>(),
                                d["index"][0].get<std::uint64_t>(), d["index"][1].get<std::uint64_t>(),
                                t["elements"].get<std::uint64_t>(), millions(t["nodes"].get<std::uint64_t>()),
                                lemma_text));
    lines.push_back(fmt::format("  lookup: {}  [{}]", d["operation_a"].get<std::string>(), str(d, "line_a")));
    lines.push_back("  " + d["position"].get<std::string>());
    lines.push_back("  why: " + d["why"].get<std::string>());
  } else {
    const Json& d = t["difference"];
    lines.push_back(fmt::format("{}: {}≢{} as traced: the graphs differ at {}[{}][{}] ({} elements, {} nodes, {})",
                                verdict == "refuted" ? "refuted" : "not proven", arm(spec, 1), arm(spec, 0),
                                d["tensor"].get<std::string>(), d["index"][0].get<std::uint64_t>(),
                                d["index"][1].get<std::uint64_t>(), t["elements"].get<std::uint64_t>(),
                                millions(t["nodes"].get<std::uint64_t>()), lemma_text));
    const std::string la = str(d, "line_a"), lb = str(d, "line_b");
    lines.push_back(fmt::format("  first operation only {} computes: {}{}", arm(spec, 0), d["operation_a"].get<std::string>(),
                                la.empty() ? "" : "  [" + la + "]"));
    lines.push_back(fmt::format("  first operation only {} computes: {}{}", arm(spec, 1), d["operation_b"].get<std::string>(),
                                lb.empty() ? "" : "  [" + lb + "]"));
    lines.push_back("  reduction position: " + d["position"].get<std::string>());
    if (d.contains("counterexample") && d["counterexample"].is_object()) {
      const Json& c = d["counterexample"];
      std::string leaves;
      for (const Json& v : c["leaves"])
        leaves += fmt::format("{}{}{} = {}", leaves.empty() ? "" : ", ", v["input"].get<std::string>(),
                              v["index"].get<std::string>(), v["decoded"].get<std::string>());
      lines.push_back((t.value("refuted_by_exhaustion", false) ? "  counterexample (every leaf value evaluated): "
                                                                : "  lemma counterexample: ") +
                      leaves);
      lines.push_back(fmt::format("    {}: {}", arm(spec, 0), c["a"]["decoded"].get<std::string>()));
      lines.push_back(fmt::format("    {}: {}", arm(spec, 1), c["b"]["decoded"].get<std::string>()));
    }
    const bool exhaustion = t.value("refuted_by_exhaustion", false);
    lines.push_back(exhaustion
                        ? "  refuted by exhaustion: the counterexample above is an input where the outputs differ"
                    : verdict == "refuted" ? "  refuted: the changing-input cases above hold a differing case"
                    : t.contains("cases_gpu_only")
                        ? "  not refuted either: no case ran on the CPU (the graphs differ; the bits may still agree)"
                        : "  not refuted either: no case run differs (the graphs differ; the bits may still agree)");
    if (!approx_text.empty()) lines.push_back("  " + approx_text.substr(2));  // ", 2 opaque ..." -> "2 opaque ..."
  }
  if (t.contains("cases_gpu_only")) {
    lines.push_back("  the concrete A/B needs the GPU (--backend cuda): the CPU executor stopped at " +
                    t["cases_gpu_only"].get<std::string>());
  }
  for (const Json& l : lemmas) {
    std::string pattern = l["pattern"].get<std::string>();
    if (pattern.size() > 160) pattern = pattern.substr(0, 157) + "...";
    lines.push_back(fmt::format("  lemma {}: {} entries, used {} times, table sha256 {}: {}", lemma_label(l),
                                l["entries"].get<std::uint64_t>(), l["uses"].get<std::uint64_t>(),
                                l["digest"].get<std::string>().substr(0, 12), pattern));
  }
  return lines;
}

std::vector<std::string> trace_lines(const Json& t, const Json& spec) {
  std::vector<std::string> lines;
  if (t.is_null()) return lines;
  if (t.contains("method") && t["method"] == "ptx") return ptx_trace_lines(t, spec);
  std::string domain;
  for (const Json& s : t["scales"])
    domain += fmt::format("{}{} ∈ {}..{}", domain.empty() ? "" : ", ", s["input"].get<std::string>(),
                          s["lo"].get<std::uint64_t>(), s["hi"].get<std::uint64_t>());
  if (t["identical"].get<bool>()) {
    lines.push_back(fmt::format("trace proof: {} ≡ {} on every input{}: {} elements, identical graphs", arm(spec, 1),
                                arm(spec, 0), domain.empty() ? "" : " with scales " + domain,
                                t["elements"].get<std::uint64_t>()));
  } else {
    const Json& d = t["difference"];
    lines.push_back(fmt::format("trace proof: the graphs differ at {}[{}][{}], {}", d["tensor"].get<std::string>(),
                                d["index"][0].get<std::uint64_t>(), d["index"][1].get<std::uint64_t>(),
                                d["position"].get<std::string>()));
    lines.push_back(fmt::format("  {}: {}", arm(spec, 0), d["operation_a"].get<std::string>()));
    lines.push_back(fmt::format("  {}: {}", arm(spec, 1), d["operation_b"].get<std::string>()));
    if (!d["why"].get<std::string>().empty()) lines.push_back("  why: " + d["why"].get<std::string>());
  }
  for (const Json& e : t["element_proofs"]) {
    lines.push_back(fmt::format("  {} element proof {} claim {} on scales {}..{}: {}/{} (spec sha256 {}, case digest {})",
                                e["relied_on"].get<bool>() ? "relies on" : "unused:", e["name"].get<std::string>(),
                                e["claim"].get<std::uint64_t>(), e["scales"][0].get<std::uint64_t>(),
                                e["scales"][1].get<std::uint64_t>(), e["holding"].get<std::uint64_t>(),
                                e["cases"].get<std::uint64_t>(), e["spec_sha256"].get<std::string>().substr(0, 12),
                                e["case_digest"].get<std::string>().substr(0, 12)));
  }
  return lines;
}

}  // namespace

Json kernel_modules_json(const op::AbSpec& spec, const std::vector<op::KernelModule>& modules) {
  Json list = Json::array();
  auto set = op::parse_kernel_modules(spec, modules);  // checked when the modules were built
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const op::KernelModule& km = modules[m];
    Json reads = Json::array();
    for (const auto& [path, digest] : km.read_files) reads.push_back({{"path", path}, {"sha256", digest}});
    Json contractible = Json::array();
    for (const op::KernelSet::Used& u : set ? set->used : std::vector<op::KernelSet::Used>{}) {
      const auto& lines = set->kernel(u).contractible_lines;
      if (u.module == m && !lines.empty()) contractible.push_back({{"kernel", u.kernel}, {"lines", lines}});
    }
    list.push_back(Json{{"file", km.file},
                        {"options", km.options},
                        {"read_files", reads},
                        {"ptx_sha256", sha256_hex(km.ptx)},
                        {"contractible", contractible}});
  }
  return list;
}

Json ab_result_json(const op::AbSpec& spec, const op::Weights& weights, const AbOutcome& o,
                    const std::vector<op::KernelModule>* modules) {
  const nlohmann::ordered_json spec_json = op::ab_spec_to_json(spec);
  Json tensors = Json::array();
  for (const auto& [name, digest] : weights.checkpoint_digests) tensors.push_back({{"tensor", name}, {"sha256", digest}});
  Json result{{"spec", spec_json},
              {"spec_sha256", sha256_hex(spec_json.dump())},
              {"checkpoint_tensors", tensors},
              {"cases", o.cases.cases},
              {"keep", o.keep},
              {"differing_cases", o.cases.differing_cases},
              {"differing_elements", o.cases.differing_elements},
              {"outputs", outputs_json(spec, o.cases)},
              {"first_differences", differences_json(spec, o.cases)},
              {"trace_proof", trace_json(o)},
              {"verdict", verdict_of(spec, o)},
              {"passes", o.passes(spec)}};
  if (modules != nullptr) result["kernel_modules"] = kernel_modules_json(spec, *modules);
  return result;
}

Json ab_report(const op::AbSpec& spec, const op::Weights& weights, const AbOutcome& o,
               const std::vector<AbBackendInfo>& backends, const std::vector<op::KernelModule>* modules) {
  Json list = Json::array();
  for (std::size_t i = 0; i < backends.size(); ++i) {
    Json b{{"name", backends[i].name}, {"reference", i == 0}, {"info", backends[i].info}};
    if (i > 0) {
      Json first = Json::array();
      for (const op::BackendDisagreement& d : o.cases.backend_disagreements) {
        first.push_back(Json{{"backend", d.backend}, {"arm", d.arm}, {"output", d.output}, {"case", d.case_index},
                             {"index", d.index}, {"reference", code_json(d.reference, output_format(spec, d.output))},
                             {"other", code_json(d.other, output_format(spec, d.output))}});
      }
      b["disagreements"] = o.cases.backend_disagreement_count;
      b["first_disagreements"] = first;
    }
    list.push_back(b);
  }
  Json timing{{"cases_seconds", o.cases_seconds}, {"trace_seconds", o.trace_seconds}, {"trace_nodes", o.trace.nodes}};
  Json env = environment_json();
  env["timing"] = timing;
  return Json{{"bitproof_report", kReportVersion},
              {"kind", "ab"},
              {"result", ab_result_json(spec, weights, o, modules)},
              {"backends", list},
              {"environment", env}};
}

bool ab_report_passes(const Json& report) {
  const Json& r = report["result"];
  for (const Json& b : report["backends"]) {
    if (b.value("disagreements", std::uint64_t{0}) != 0) return false;
  }
  const bool expect_differ = r["spec"]["expect"] == "differ";
  const bool cases_differ = r["differing_cases"].get<std::uint64_t>() != 0;
  const bool proved = !r["trace_proof"].is_null();
  const bool graphs_differ = proved && !r["trace_proof"]["identical"].get<bool>();
  const bool exhaustion = proved && r["trace_proof"].value("refuted_by_exhaustion", false) && graphs_differ;
  if (expect_differ) return (cases_differ || exhaustion) && (!proved || graphs_differ);
  return !cases_differ && !graphs_differ;
}

std::vector<std::string> ab_summary_lines(const Json& report) {
  const Json& r = report["result"];
  std::vector<std::string> lines{cases_line(report)};
  if (!r["first_differences"].empty())
    lines.push_back("  first: " + difference_line(r["spec"], r["first_differences"][0]));
  for (const Json& b : report["backends"]) {
    if (b.value("disagreements", std::uint64_t{0}) == 0) continue;
    const Json& d = b["first_disagreements"][0];
    lines.push_back(fmt::format("BACKENDS DISAGREE: {} differs from {} on {} elements; first: arm {} {} case {} "
                                "element {}: {} vs {}",
                                b["name"].get<std::string>(), report["backends"][0]["name"].get<std::string>(),
                                b["disagreements"].get<std::uint64_t>(), d["arm"].get<std::string>(),
                                d["output"].get<std::string>(), d["case"].get<std::uint64_t>(),
                                d["index"].get<std::uint64_t>(), d["reference"]["decoded"].get<std::string>(),
                                d["other"]["decoded"].get<std::string>()));
  }
  for (const std::string& line : trace_lines(r["trace_proof"], r["spec"])) lines.push_back(line);
  for (const Json& m : r.contains("kernel_modules") ? r["kernel_modules"] : Json::array()) {
    for (const Json& c : m["contractible"]) {
      std::string numbers;
      for (const Json& l : c["lines"]) numbers += (numbers.empty() ? "" : ", ") + std::to_string(l.get<std::uint64_t>());
      lines.push_back(fmt::format("  note: the CPU executor computes kernel {}'s add/sub/mul without a rounding modifier "
                                  "unfused; ptxas may contract them into FMA on the GPU ({} PTX lines {})",
                                  c["kernel"].get<std::string>(), m["file"].get<std::string>(), numbers));
    }
  }
  if (r["spec"]["expect"] == "differ")
    lines.push_back(ab_report_passes(report) ? "negative control: the arms differ, as the spec expects"
                                             : "negative control NOT refuted: the spec expects the arms to differ");
  return lines;
}

std::string render_ab_markdown(const Json& report) {
  const Json& r = report["result"];
  const Json& spec = r["spec"];
  const bool passes = ab_report_passes(report);
  std::string md = fmt::format("## bitproof ab: {}\n\n", md_text(spec["name"].get<std::string>()));
  if (spec.contains("title")) md += md_text(spec["title"].get<std::string>(), true) + "\n\n";
  if (spec.contains("source")) md += "Source: " + md_text(spec["source"].get<std::string>()) + "\n\n";
  // The verdict from the counts, not from the recorded "verdict" text.
  const bool cases_differ = r["differing_cases"].get<std::uint64_t>() != 0;
  const bool proved = !r["trace_proof"].is_null();
  const bool graphs_differ = proved && !r["trace_proof"]["identical"].get<bool>();
  const std::string ptx_verdict = proved ? str(r["trace_proof"], "verdict") : std::string();
  const bool lookup = graphs_differ && r["trace_proof"]["difference"].is_object() &&
                      r["trace_proof"]["difference"].value("lookup", false);
  const std::string found = ptx_verdict == "not_proven" && lookup
                                ? "not proven: a table lookup no lemma enumerates, no case run differs"
                            : ptx_verdict == "not_proven" ? "not proven: the traced graphs differ, no case run differs"
                            : ptx_verdict == "contradicted" ? "the proof is contradicted by a case (a bug)"
                            : cases_differ || graphs_differ ? "the arms differ"
                            : proved                        ? "the arms agree on every input"
                                                            : "the arms agree on every case run";
  md += fmt::format("**{}**: {}{}\n\n", passes ? "PASS" : "FAIL", found,
                    spec["expect"] == "differ" ? " (a negative control: the spec expects them to differ)" : "");
  for (const std::string& line : ab_summary_lines(report)) {
    md += (line.starts_with("  ") ? "  - " + md_text(line.substr(2)) : "- " + md_text(line)) + "\n";
  }
  md += "\n| output | shape | " + md_cell(arm(spec, 0)) + " digest | " + md_cell(arm(spec, 1)) +
        " digest | differing elements |\n";
  md += "|---|---|---|---|---|\n";
  // No case ran (the arms' opaque instructions run on the GPU only): the digests are of nothing.
  const bool no_case = r["cases"].get<std::uint64_t>() == 0;
  for (const Json& o : r["outputs"]) {
    const auto digest = [&](int side) {
      return no_case ? std::string("no case ran")
                     : md_code(o["digest"][arm(spec, side)].get<std::string>().substr(0, 16), true);
    };
    md += fmt::format("| {} | {}×{} | {} | {} | {} |\n", md_code(o["name"].get<std::string>(), true),
                      o["shape"][0].get<std::uint64_t>(), o["shape"][1].get<std::uint64_t>(), digest(0), digest(1),
                      no_case ? std::string("—") : std::to_string(o["differing_elements"].get<std::uint64_t>()));
  }
  markdown_reproduce(md, report);
  return md;
}

std::vector<JUnitCase> ab_junit_cases(const Json& report) {
  const Json& r = report["result"];
  const Json& spec = r["spec"];
  const std::string classname = "bitproof.ab." + spec["name"].get<std::string>();
  const bool expect_differ = spec["expect"] == "differ";
  std::vector<JUnitCase> cases;
  // No case ran (opaque instructions: the cases need the GPU): no per-output case to report.
  static const Json kNoOutputs = Json::array();
  const Json& outputs = r["cases"].get<std::uint64_t>() != 0 ? r["outputs"] : kNoOutputs;
  for (const Json& o : outputs) {
    const bool differ = o["differing_elements"].get<std::uint64_t>() != 0;
    JUnitCase c = junit_case(classname, "cases: " + o["name"].get<std::string>(), differ != expect_differ, "", "");
    if (c.failed) {
      c.message = differ ? "the arms differ" : "the negative control's arms agree";
      for (const Json& d : r["first_differences"]) {
        if (d["output"] == o["name"]) c.body += difference_line(spec, d) + "\n";
      }
    }
    cases.push_back(c);
  }
  if (!r["trace_proof"].is_null()) {
    const Json& t = r["trace_proof"];
    const bool identical = t["identical"].get<bool>();
    JUnitCase c = junit_case(classname, "trace proof", identical == expect_differ, "", "");
    if (c.failed) {
      c.message = identical ? "the negative control's graphs are identical" : "the graphs differ";
      for (const std::string& line : trace_lines(t, spec)) c.body += line + "\n";
    }
    cases.push_back(c);
  }
  for (const Json& b : report["backends"]) {
    if (!b.contains("disagreements")) continue;
    const bool failed = b["disagreements"].get<std::uint64_t>() != 0;
    cases.push_back(junit_case(classname, "backend agreement: " + b["name"].get<std::string>(), failed,
                               failed ? "backends disagree" : "", ""));
  }
  return cases;
}

}  // namespace bitproof
