#include "report/ab_report.hpp"

#include "report/markup.hpp"

#include <fmt/format.h>

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
  } else {
    t["difference"] = nullptr;
  }
  return t;
}

std::string verdict_of(const op::AbSpec& spec, const AbOutcome& o) {
  const bool differ = !o.cases.arms_equal() || (o.proved && !o.trace.identical);
  if (o.cases.backend_disagreement_count != 0) return "backends disagree";
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
  if (differing == 0)
    return fmt::format("{}: {}/{} changing-input cases bitwise equal, {} output elements each ({})", pair, cases,
                       cases, elements_per_case(r), backends_label(report));
  return fmt::format("{}: {}/{} changing-input cases differ, {} output elements in all ({})", pair, differing, cases,
                     r["differing_elements"].get<std::uint64_t>(), backends_label(report));
}

std::vector<std::string> trace_lines(const Json& t, const Json& spec) {
  std::vector<std::string> lines;
  if (t.is_null()) return lines;
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
  if (expect_differ) return cases_differ && (!proved || graphs_differ);
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
  const std::string found = cases_differ || graphs_differ ? "the arms differ"
                            : proved                      ? "the arms agree on every input"
                                                          : "the arms agree on every case run";
  md += fmt::format("**{}**: {}{}\n\n", passes ? "PASS" : "FAIL", found,
                    spec["expect"] == "differ" ? " (a negative control: the spec expects them to differ)" : "");
  for (const std::string& line : ab_summary_lines(report)) {
    md += (line.starts_with("  ") ? "  - " + md_text(line.substr(2)) : "- " + md_text(line)) + "\n";
  }
  md += "\n| output | shape | " + md_cell(arm(spec, 0)) + " digest | " + md_cell(arm(spec, 1)) +
        " digest | differing elements |\n";
  md += "|---|---|---|---|---|\n";
  for (const Json& o : r["outputs"]) {
    md += fmt::format("| {} | {}×{} | {} | {} | {} |\n", md_code(o["name"].get<std::string>(), true),
                      o["shape"][0].get<std::uint64_t>(), o["shape"][1].get<std::uint64_t>(),
                      md_code(o["digest"][arm(spec, 0)].get<std::string>().substr(0, 16), true),
                      md_code(o["digest"][arm(spec, 1)].get<std::string>().substr(0, 16), true),
                      o["differing_elements"].get<std::uint64_t>());
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
  for (const Json& o : r["outputs"]) {
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
