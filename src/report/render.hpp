// Renderings of a report read back from its JSON: JUnit XML for CI systems and
// the SVG case map for reviewers. Reading a report validates what the
// renderers rely on, so a report of another version or a damaged one is a
// one-line error (exit 2), never a crash or a half-drawn picture.
#pragma once

#include <string>
#include <vector>

#include "error.hpp"
#include "report/report.hpp"

namespace bitproof {

// Reads and checks a report file: JSON without duplicate keys, version 1, and
// valid against reports/schema.json (report/schema.hpp).
[[nodiscard]] Expected<Json> load_report(const std::string& path);
// The same for report text already in memory; `path` names it in messages.
[[nodiscard]] Expected<Json> parse_report(const std::string& text, const std::string& path);
// parse_report for readers that need no tensor's histogram (the renderers): an
// audit's result.tensors[].histogram arrays (millions of pairs in a GPTQ
// checkpoint's) are checked to hold [code, count] pairs of integers from 0 and
// stand as empty arrays.
[[nodiscard]] Expected<Json> parse_report_without_histograms(const std::string& text, const std::string& path);
// Checks an in-memory report the same way; `path` names it in messages.
[[nodiscard]] Expected<Ok> validate_report(const Json& report, const std::string& path);

// A report judged again from its parts (the recorded verdict strings are not
// trusted): each claim's counts against its spec's expectation, the oracle
// witness, and for a proof the backends' agreement (every backend's result
// identical, the hardware's bits equal to the model's) and the recorded
// verdict against the counts. What exit 0 means for a report read back.
// Expects a report that load_report accepted.
struct ReportJudgement {
  bool passes = false;
  std::size_t claims = 0;
  std::size_t claims_passing = 0;  // hold, or refuted exactly as their spec expects
  bool findings = false;           // some claim is refuted as expected
  std::vector<std::string> problems;  // beyond the claims: witness, agreement, verdict
  [[nodiscard]] std::string word() const;  // "HOLDS", "AS EXPECTED", "REFUTED"
};
[[nodiscard]] ReportJudgement judge_report(const Json& report);

// One <testcase> per claim and backend (proof), per claim (domain), or per
// tensor (audit, admission: render_audit_junit).
[[nodiscard]] std::string render_junit(const Json& report);

// Audit and admission reports (kind "audit" or "admission") record no spec.
[[nodiscard]] bool is_audit_kind(const Json& report);
// Markdown of an audit (summary lines, tensors holding NaN, Inf or non-codes,
// a per-layer table) or an admission (verdict, the tensors outside first with
// their codes below and above, a per-layer table, layers outside first).
[[nodiscard]] std::string render_audit_markdown(const Json& report);
// One <testcase> per tensor: an audit's fails when the tensor holds NaN, Inf
// or codes that are no code of its format; an admission's when it holds codes
// outside the proven interval and the verdict is refused.
[[nodiscard]] std::string render_audit_junit(const Json& report);

// The case map: rows are the cases of the other inputs (element codes), columns
// the swept input's codes (scale bytes); each cell equal / mismatch, inside or
// outside the claimed interval; the maximal exact interval marked. Needs a
// domain report whose claims carry a map (domains of ≤ kDiscoveryMapLimit rows).
[[nodiscard]] Expected<std::string> render_svg(const Json& report, const std::string& path);

}  // namespace bitproof
