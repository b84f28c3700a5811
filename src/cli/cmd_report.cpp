// bitproof report render|verify|diff|merge: what a reviewer and a CI system do
// with a report. Every kind is handled through its row (report/kind.hpp); the
// audit room's verifiers are registered into the audit and admission rows here.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "audit/admission.hpp"
#include "backend/kernel_modules.hpp"
#include "cli/cli.hpp"
#include "cli/cuda_twin.hpp"
#include "report/compare.hpp"
#include "report/kind.hpp"
#include "report/kind_proof.hpp"
#include "report/read.hpp"
#include "report/shard.hpp"
#include "strict_json.hpp"

namespace bitproof::cli {
namespace {

struct RenderArgs {
  std::string report;
  Outputs out;
};

// A report (its text read as `text`) whole, as its kind's row says (a shard is
// not); without an audit's tensors' histograms (parse_report_without_histograms)
// unless `histograms`.
Expected<Json> whole_report(const std::string& text, const std::string& path, bool histograms = true) {
  auto report = histograms ? parse_report(text, path) : parse_report_without_histograms(text, path);
  if (!report) return report;
  if (const ReportKind* kind = report_kind_of(*report); kind != nullptr && !kind->refused_alone.empty()) {
    return Error{fmt::format("{}: kind: {}", path, kind->refused_alone)};
  }
  return report;
}

Expected<Json> load_whole_report(const std::string& path, bool histograms = true) {
  auto text = read_input_file(path, "the report", kMaxReportBytes);
  if (!text) return text.error();
  return whole_report(*text, path, histograms);
}

// The row of a report whole_report accepted (the schema admits the table's kinds only).
const ReportKind& kind_of(const Json& report) { return *report_kind_of(report); }

// A report diff can compare: its kind records a result to compare.
Expected<Json> load_comparable(const std::string& path) {
  auto report = load_whole_report(path);
  if (report && kind_of(*report).diff == nullptr) {
    return Error{
        fmt::format("{}: kind: an {} report records no spec to compare (bitproof report verify re-derives "
                    "it; report render shows it)",
                    path, (*report)["kind"].get<std::string>())};
  }
  return report;
}

// What verify found, printed: the headline painted by the verdict, the notes below it.
int print_verification(const Verification& v) {
  std::printf("%s\n", painted(v.headline, v.passes).c_str());
  for (const std::string& note : v.notes) {
    std::printf("  %s\n", v.notes_are_problems ? painted(note, false).c_str() : note.c_str());
  }
  return v.passes ? kExitHolds : kExitRefuted;
}

// ---- the audit room's verifiers, registered into the audit and admission rows ----

Verification audit_verified(const audit::AuditReproduced& audit) {
  return {true, fmt::format("verified: audit of {}: the result part reproduces byte for byte", audit.checkpoint),
          audit.summary};
}

// An audit or admission that this machine gives otherwise: where first.
Verification not_verified(const std::string& path, bool audit, const std::string& first) {
  return {false,
          fmt::format("NOT VERIFIED: {}: this machine's {} differs from the recorded one", path,
                      audit ? "audit of the checkpoint" : "admission"),
          {first}};
}

// An audit report as bitproof writes it, checked without its histograms as JSON
// values (audit::reaudit_fast); nullopt leaves it to verify_audit.
std::optional<Verification> verify_audit_text(const std::string& text, const std::string& path) {
  const audit::FastReaudit fast = audit::reaudit_fast(text, path);
  if (fast.reproduced) return audit_verified(*fast.reproduced);
  if (!fast.difference.empty()) return not_verified(path, true, fast.difference);
  return std::nullopt;
}

// The checkpoint read again: exit 0 when the result part reproduces, 1 when it differs.
Expected<Verification> verify_audit(const Json& report, const std::string& path, const VerifyOptions&) {
  const Json& recorded = report["result"];
  auto now = audit::reaudit_result(report, path);
  if (!now) return now.error();
  if (*now) return not_verified(path, true, first_difference(recorded, **now));
  std::vector<std::string> summary;
  for (const Json& line : recorded["overall"]["summary"]) summary.push_back(line.get<std::string>());
  return audit_verified({recorded["checkpoint"]["path"].get<std::string>(), summary});
}

// The admission made again from the audit and domain reports it names: exit 0
// when the result part reproduces and it admits, 1 when it differs or refuses.
Expected<Verification> verify_admission(const Json& report, const std::string& path, const VerifyOptions&) {
  const Json& recorded = report["result"];
  auto now = audit::readmit_result(report, path);
  if (!now) return now.error();
  if (*now != recorded) return not_verified(path, false, first_difference(recorded, *now));
  const bool admitted = recorded["verdict"] == "admitted";
  return Verification{admitted,
                      fmt::format("verified: {}: admission of {} against {}: the result part reproduces byte "
                                  "for byte",
                                  admitted ? "ADMITTED" : "REFUSED", recorded["audit"]["file"].get<std::string>(),
                                  recorded["domain"]["file"].get<std::string>()),
                      {}};
}

void register_audit_verifiers() {
  set_report_verifier("audit", verify_audit, verify_audit_text);
  set_report_verifier("admission", verify_admission);
}

// ---- the subcommands ----

int run_render(const RenderArgs& a) {
  if (a.out.markdown.empty() && a.out.junit.empty() && a.out.svg.empty()) {
    return fail({"report render: nothing to write: give --markdown, --junit or --svg"});
  }
  auto report = load_whole_report(a.report, false);  // the renderings show no tensor's histogram
  if (!report) return fail(report.error());
  auto files = a.out.open({a.report});
  if (!files) return fail(files.error());
  if (auto e = a.out.write(*files, *report)) return fail(*e);
  std::string written;
  for (const std::string& path : {a.out.markdown, a.out.junit, a.out.svg}) {
    if (!path.empty()) written += (written.empty() ? "" : ", ") + path;
  }
  std::printf("wrote %s\n", written.c_str());
  return kExitHolds;
}

struct VerifyArgs {
  std::string report;
  std::string spec_dir;  // where a user recipe's sources are (default: the report's directory)
};

int run_verify(const VerifyArgs& a) {
  const std::string& path = a.report;
  auto text = read_input_file(path, "the report", kMaxReportBytes);
  if (!text) return fail(text.error());
  // A kind that verifies from the text (an audit: its histograms read apart) goes first.
  if (const auto named = peek_report_kind(*text)) {
    const ReportKind* kind = find_report_kind(*named);
    if (kind != nullptr && kind->verify_text) {
      if (auto done = kind->verify_text(*text, path)) return print_verification(*done);
    }
  }
  auto report = whole_report(*text, path);
  if (!report) return fail(report.error());
  // An A/B report with kernel arms from CUDA files: NVRTC compiles them again, in the CUDA twin
  // (the static command cannot load NVRTC).
  const Json* kernels = report->contains("result") && (*report)["result"].is_object() &&
                                (*report)["result"].contains("spec") && (*report)["result"]["spec"].is_object() &&
                                (*report)["result"]["spec"].contains("kernels")
                            ? &(*report)["result"]["spec"]["kernels"]
                            : nullptr;
  if (kernels != nullptr && kernels->is_object() && kernels->contains("files")) {
    if (auto e = hand_off_for_cuda("cuda")) return fail(*e);
  }
  const ReportKind& kind = kind_of(*report);
  if (!kind.verify) return fail({fmt::format("{}: kind: this bitproof cannot verify an {} report", path, kind.name)});
  // Kernel arms' modules are built as `bitproof ab` builds them (NVRTC's default time limit).
  const auto build_kernels = [](const op::AbSpec& spec) { return build_kernel_modules(spec, user::kDefaultCompileTimeout); };
  auto verified = kind.verify(*report, path, {a.spec_dir, audit::read_audited_scales, build_kernels});
  if (!verified) return fail(verified.error());
  return print_verification(*verified);
}

int run_diff(const std::string& a_path, const std::string& b_path) {
  auto a = load_comparable(a_path);
  if (!a) return fail(a.error());
  auto b = load_comparable(b_path);
  if (!b) return fail(b.error());
  if ((*a)["kind"] != (*b)["kind"]) {
    return fail({fmt::format("{}: kind: a {} report cannot be compared with the {} report {}", b_path,
                             (*b)["kind"].get<std::string>(), (*a)["kind"].get<std::string>(), a_path)});
  }
  const std::vector<std::string> differences = kind_of(*a).diff((*a)["result"], (*b)["result"]);
  if (differences.empty()) {
    std::printf("no differences: the result parts are identical\n");
    return kExitHolds;
  }
  std::printf("%zu difference(s) between A = %s and B = %s:\n", differences.size(), a_path.c_str(), b_path.c_str());
  for (const std::string& d : differences) std::printf("  %s\n", d.c_str());
  return kExitRefuted;
}

struct MergeArgs {
  std::vector<std::string> shards;
  Outputs out;
  Gate gate;  // --expect only: the merged counts gated as prove gates a whole proof's
};

int run_merge(const MergeArgs& a) {
  if (a.out.report.empty()) return fail({"report merge: give -o/--report for the merged report"});
  if (auto e = a.gate.check_syntax(std::max<std::size_t>(a.gate.expect.size(), 1))) return fail(*e);
  std::vector<Json> shards;
  for (const std::string& path : a.shards) {
    auto shard = load_report(path);
    if (!shard) return fail(shard.error());
    shards.push_back(std::move(*shard));
  }
  auto files = a.out.open(a.shards);
  if (!files) return fail(files.error());
  auto merged = merge_shards(shards, a.shards);
  if (!merged) return fail(merged.error());
  const Json& claims = (*merged)["result"]["claims"];
  if (auto e = a.gate.check_syntax(claims.size())) return fail(*e);
  if (auto e = a.out.write(*files, *merged)) return fail(*e);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> counts;
  for (const Json& claim : claims) {
    std::printf("%s (%zu shards)\n", claim["summary"].get<std::string>().c_str(), shards.size());
    counts.emplace_back(claim["holding"].get<std::uint64_t>(), claim["cases"].get<std::uint64_t>());
  }
  const std::vector<std::string> unexpected = a.gate.mismatches(counts);
  for (const std::string& line : unexpected) std::printf("%s\n", painted(line, false).c_str());
  const ReportJudgement judged = judge_proof_report(*merged);  // a merge makes a proof report
  for (const std::string& problem : judged.problems) std::printf("%s\n", painted(problem, false).c_str());
  return judged.passes && unexpected.empty() ? kExitHolds : kExitRefuted;
}

}  // namespace

void add_report_commands(CLI::App& app, Commands& commands) {
  register_audit_verifiers();
  auto* report = app.add_subcommand("report", "render, verify or compare reports");
  report->require_subcommand(1);

  auto render = std::make_shared<RenderArgs>();
  auto* r = report->add_subcommand("render", "write the Markdown, JUnit XML or SVG of a report");
  r->add_option("report", render->report, "a report (JSON)")->required();
  render->out.add_flags(*r, false);
  add_no_user_code_flag(*r);  // --svg of a proof report sweeps the recorded spec again
  commands.push_back({r, [render] { return run_render(*render); }});

  auto verify = std::make_shared<VerifyArgs>();
  auto* v = report->add_subcommand(
      "verify", "re-run the recorded spec (or audit, or admission) here and confirm the result part");
  v->add_option("report", verify->report, "a report (JSON)")->required();
  add_path_option(*v, "--spec-dir", verify->spec_dir,
                  "the directory a recorded spec's user-recipe sources are relative to (default: the report's)");
  add_no_user_code_flag(*v);
  commands.push_back({v, [verify] { return run_verify(*verify); }});

  auto diff_paths = std::make_shared<std::vector<std::string>>();
  auto* d = report->add_subcommand("diff", "list every difference between two reports; exit 1 if any");
  d->add_option("reports", *diff_paths, "A.json B.json")->required()->expected(2);
  commands.push_back({d, [diff_paths] { return run_diff((*diff_paths)[0], (*diff_paths)[1]); }});

  auto merge = std::make_shared<MergeArgs>();
  auto* m = report->add_subcommand("merge", "rebuild the whole report from shard reports (prove --shard I/N)");
  m->add_option("shards", merge->shards, "shard reports (JSON)")->required();
  merge->out.add_flags(*m);
  add_no_user_code_flag(*m);  // the merge sweeps chunks of the recorded spec again
  m->add_option("--expect", merge->gate.expect,
                "fail (exit 1) unless each merged claim's holding/total is exactly H/N, e.g. 208/208 (repeat it: one "
                "per claim)")
      ->allow_extra_args(false);
  commands.push_back({m, [merge] { return run_merge(*merge); }});
}

}  // namespace bitproof::cli
