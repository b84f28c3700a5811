// Markdown and JUnit renderings of audit and admission reports (read back
// from their JSON, validated against reports/schema.json first): the renderers
// of their rows (report/kind_audit.hpp, report/kind_admission.hpp), one file
// for the two since an admission's tables are an audit's with the proven
// interval beside them.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "format/format.hpp"
#include "report/junit.hpp"
#include "report/kind_admission.hpp"
#include "report/kind_audit.hpp"
#include "report/markup.hpp"

namespace bitproof {
namespace {

std::string layer_cell(const Json& layer) {
  return layer.is_null() ? std::string("—") : std::to_string(layer.get<std::uint64_t>());
}

// The code width of a format named in a report (8, a decimal cell, for a name
// the catalogue lacks: the schema admits any string).
int code_bits(const Json& format_name) {
  const auto format = format_by_name(format_name.get<std::string>());
  return format ? spec_of(*format).bits : 8;
}

// A code as the audit's summary lines print it (format/format.hpp's code_text).
std::string code_cell(const Json& code, int bits) {
  return code.is_null() ? std::string("—") : code_text(static_cast<std::uint32_t>(code.get<std::uint64_t>()), bits);
}

// "3 NaN, 1 zero": the nonzero specials.
std::string specials_cell(const Json& specials) {
  std::string out;
  for (const auto& [name, count] : specials.items()) {
    if (count.get<std::uint64_t>() == 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", count.get<std::uint64_t>(), name);
  }
  return out.empty() ? "none" : out;
}

// Specials no kernel scales by: NaN, Inf, and codes that are no code of the format.
std::uint64_t poisoned(const Json& specials) {
  std::uint64_t n = 0;
  for (const char* key : {"nan", "inf", "not_a_code"}) {
    if (specials.contains(key)) n += specials[key].get<std::uint64_t>();
  }
  return n;
}

std::string audit_markdown(const Json& report) {
  const Json& r = report["result"];
  std::string md = fmt::format("## bitproof audit: {}\n\n", md_code(r["checkpoint"]["path"].get<std::string>()));
  for (const Json& line : r["overall"]["summary"]) md += fmt::format("    {}\n", control_free(line.get<std::string>()));
  md += "\n";
  std::vector<const Json*> special;
  for (const Json& t : r["tensors"]) {
    if (poisoned(t["specials"]) != 0) special.push_back(&t);
  }
  if (!special.empty()) {
    md += fmt::format("**{} tensors hold NaN, Inf or non-codes:**\n\n| tensor | layer | format | specials |\n|---|---|---|---|\n",
                      special.size());
    for (const Json* t : special) {
      md += fmt::format("| {} | {} | {} | {} |\n", md_code((*t)["name"].get<std::string>(), true), layer_cell((*t)["layer"]),
                        md_cell((*t)["format"].get<std::string>()), md_cell(specials_cell((*t)["specials"])));
    }
    md += "\n";
  }
  md += "| layer | format | tensors | codes | min | max | finite min | finite max | specials |\n";
  md += "|---|---|---|---|---|---|---|---|---|\n";
  for (const Json& l : r["layers"]) {
    const int bits = code_bits(l["format"]);
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", layer_cell(l["layer"]),
                      md_cell(l["format"].get<std::string>()), l["tensors"].get<std::uint64_t>(), l["codes"].get<std::uint64_t>(),
                      code_cell(l["min"], bits), code_cell(l["max"], bits), code_cell(l["finite_min"], bits),
                      code_cell(l["finite_max"], bits),
                      md_cell(specials_cell(l["specials"])));
  }
  for (const Json& v : r["views"]) md += fmt::format("\n    {}\n", control_free(v["summary"].get<std::string>()));
  if (r["selection"]["left_out"].get<std::uint64_t>() != 0) {
    md += fmt::format("\n**Partial audit:** {} scale tensors were left out by --select, --dtype or --format.\n",
                      r["selection"]["left_out"].get<std::uint64_t>());
  }
  return md;
}

std::string first_outside_cell(const Json& first, std::uint64_t outside) {
  std::string out;
  std::uint64_t listed = 0;
  for (const Json& c : first) {
    out += fmt::format("{}{} ×{}", out.empty() ? "" : ", ", md_code(c["described"].get<std::string>(), true),
                       c["count"].get<std::uint64_t>());
    listed += c["count"].get<std::uint64_t>();
  }
  return listed < outside ? out + ", …" : out;
}

// Admission texts keep decimal codes, as `admit` and `domain` print intervals.
std::string proven_text(const Json& proven) {
  return proven.is_null() ? std::string("none")
                          : fmt::format("{}..{}", proven[0].get<std::uint64_t>(), proven[1].get<std::uint64_t>());
}

std::string admission_markdown(const Json& report) {
  const Json& r = report["result"];
  const Json& counts = r["counts"];
  const bool admitted = r["verdict"] == "admitted";
  std::string md = fmt::format("## bitproof admit: {}\n\n", md_code(r["audit"]["checkpoint"].get<std::string>()));
  md += fmt::format("**Verdict: {}** — {}/{} tensors inside the proven interval {} of {} ({} codes); {} codes "
                    "outside ({} below, {} above){}; {}/{} layers inside\n\n",
                    admitted ? "admitted" : "refused", counts["inside"].get<std::uint64_t>(),
                    counts["tensors"].get<std::uint64_t>(), proven_text(r["proven"]),
                    md_code(r["domain"]["spec"].get<std::string>()), md_text(r["format"].get<std::string>()),
                    counts["codes_below"].get<std::uint64_t>() + counts["codes_above"].get<std::uint64_t>(),
                    counts["codes_below"].get<std::uint64_t>(), counts["codes_above"].get<std::uint64_t>(),
                    r["max_outside"].get<std::uint64_t>() ? fmt::format(", at most {} tolerated",
                                                                        r["max_outside"].get<std::uint64_t>())
                                                          : std::string(),
                    counts["layers"].get<std::uint64_t>() - counts["layers_outside"].get<std::uint64_t>(),
                    counts["layers"].get<std::uint64_t>());
  if (r["partial_audit"]["left_out"].get<std::uint64_t>() != 0) {
    md += fmt::format("**Partial audit:** {} scale tensors of the checkpoint were not read; this admission says "
                      "nothing of them.\n\n",
                      r["partial_audit"]["left_out"].get<std::uint64_t>());
  }
  if (counts["outside"].get<std::uint64_t>() != 0) {
    md += "| tensor outside | layer | below | above | first codes outside |\n|---|---|---|---|---|\n";
    for (const Json& t : r["tensors"]) {
      if (t["inside"].get<bool>()) continue;
      const std::uint64_t below = t["below"].get<std::uint64_t>(), above = t["above"].get<std::uint64_t>();
      md += fmt::format("| {} | {} | {} | {} | {} |\n", md_code(t["name"].get<std::string>(), true), layer_cell(t["layer"]),
                        below, above, first_outside_cell(t["first_outside"], below + above));
    }
    md += "\n";
  }
  md += "| layer | tensors | outside | codes below | codes above | min | max |\n|---|---|---|---|---|---|---|\n";
  std::vector<const Json*> layers;
  for (const Json& l : r["layers"]) layers.push_back(&l);
  std::stable_partition(layers.begin(), layers.end(), [](const Json* l) { return !(*l)["inside"].get<bool>(); });
  for (const Json* l : layers) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", layer_cell((*l)["layer"]),
                      (*l)["tensors"].get<std::uint64_t>(), (*l)["outside"].get<std::uint64_t>(),
                      (*l)["below"].get<std::uint64_t>(), (*l)["above"].get<std::uint64_t>(),
                      code_cell((*l)["min"], 8), code_cell((*l)["max"], 8));  // decimal, as proven_text
  }
  md += fmt::format("\nDomain report {} (spec SHA-256 {}), audit {}.\n", md_code(r["domain"]["file"].get<std::string>()),
                    md_code(r["domain"]["spec_sha256"].get<std::string>().substr(0, 16)),
                    md_code(r["audit"]["file"].get<std::string>()));
  return md;
}

// A tensor's case fails when it holds NaN, Inf or non-codes.
std::vector<JUnitCase> audit_cases(const Json& r) {
  std::vector<JUnitCase> cases;
  for (const Json& t : r["tensors"]) {
    const int bits = code_bits(t["format"]);
    const std::uint64_t bad = poisoned(t["specials"]);
    const std::string failure = bad ? fmt::format("{} codes are NaN, Inf or no {} code: {}", bad,
                                                  t["format"].get<std::string>(), specials_cell(t["specials"]))
                                    : std::string();
    cases.push_back({"audit." + t["format"].get<std::string>(), t["name"].get<std::string>(), bad != 0, failure,
                     failure, "specials",
                     fmt::format("{} codes {}..{}; specials: {}", t["codes"].get<std::uint64_t>(), code_cell(t["min"], bits),
                                 code_cell(t["max"], bits), specials_cell(t["specials"]))});
  }
  return cases;
}

std::vector<JUnitCase> admission_cases(const Json& r) {
  std::vector<JUnitCase> cases;
  const bool admitted = r["verdict"] == "admitted";
  for (const Json& t : r["tensors"]) {
    const std::uint64_t below = t["below"].get<std::uint64_t>(), above = t["above"].get<std::uint64_t>();
    std::string detail;
    if (below + above != 0) {
      detail = fmt::format("{} codes outside the proven interval {}: {} below, {} above; first: {}", below + above,
                           proven_text(r["proven"]), below, above, first_outside_cell(t["first_outside"], below + above));
    }
    // Outside codes fail the case unless --max-outside tolerated them all.
    const bool failed = !admitted && !detail.empty();
    cases.push_back({"admit." + r["domain"]["spec"].get<std::string>(), t["name"].get<std::string>(), failed,
                     failed ? detail : "", failed ? detail : "", "outside",
                     admitted && !detail.empty() ? "tolerated: " + detail : ""});
  }
  return cases;
}

}  // namespace

std::string render_audit_markdown(const Json& report) { return audit_markdown(report); }

std::string render_admission_markdown(const Json& report) { return admission_markdown(report); }

std::string render_audit_junit(const Json& report) {
  const Json& r = report["result"];
  return junit_document("audit " + r["checkpoint"]["path"].get<std::string>(), audit_cases(r));
}

std::string render_admission_junit(const Json& report) {
  const Json& r = report["result"];
  return junit_document("admit " + r["audit"]["checkpoint"].get<std::string>(), admission_cases(r));
}

}  // namespace bitproof
