#include "report/kind.hpp"

#include <fmt/format.h>

#include "report/compare.hpp"
#include "hash/digest.hpp"
#include "report/kind_ab.hpp"
#include "report/kind_admission.hpp"
#include "report/kind_audit.hpp"
#include "report/kind_domain.hpp"
#include "report/kind_proof.hpp"
#include "report/kind_shard.hpp"
#include "report/kind_time.hpp"
#include "report/schema.hpp"
#include "report/spec_report.hpp"

namespace bitproof {
namespace {

// The rows, built once; set_report_verifier fills verifiers in. The kernel A/B
// and the PTX proof go here, one row each (kind.hpp says how).
std::vector<ReportKind>& table() {
  static std::vector<ReportKind> rows{
      proof_report_kind(),      // report/kind_proof.cpp
      domain_report_kind(),     // report/kind_domain.cpp
      shard_report_kind(),      // report/kind_shard.cpp
      ab_report_kind(),         // report/kind_ab.cpp
      audit_report_kind(),      // report/kind_audit.cpp (its verifier registered by the CLI)
      admission_report_kind(),  // report/kind_admission.cpp (its verifier registered by the CLI)
      time_report_kind(),       // report/kind_time.cpp
  };
  return rows;
}

}  // namespace

const std::vector<ReportKind>& report_kinds() { return table(); }

const ReportKind* find_report_kind(std::string_view name) {
  for (const ReportKind& k : table()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const ReportKind* report_kind_of(const Json& report) {
  if (!report.is_object() || !report.contains("kind") || !report["kind"].is_string()) return nullptr;
  return find_report_kind(report["kind"].get<std::string>());
}

void set_report_verifier(std::string_view kind, ReportVerifier verify, ReportTextVerifier verify_text) {
  for (ReportKind& k : table()) {
    if (k.name != kind) continue;
    k.verify = std::move(verify);
    k.verify_text = std::move(verify_text);
  }
}

Error report_field_error(const std::string& path, const std::string& field, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

Expected<Ok> check_report_envelope(const Json& report, const std::string& path) {
  if (!report.is_object()) return report_field_error(path, "(top level)", "expected a JSON object");
  if (!report.contains("bitproof_report"))
    return report_field_error(path, "bitproof_report", "missing (this file is not a bitproof report)");
  if (report.at("bitproof_report") != kReportVersion) {
    return report_field_error(path, "bitproof_report",
                              fmt::format("version {} is not supported (this bitproof reads {})",
                                          report.at("bitproof_report").dump(), kReportVersion));
  }
  return validate_json(report, report_schema(), path);
}

Expected<Ok> check_spec_digest(const Json& result, const std::string& path) {
  if (sha256_hex(result["spec"].dump()) != result["spec_sha256"].get<std::string>())
    return report_field_error(path, "result.spec_sha256", "is not the digest of the recorded spec");
  return Ok{};
}

std::optional<Verification> result_differs(const std::string& name, const Json& recorded, const Json& now) {
  if (now == recorded) return std::nullopt;
  return Verification{false,
                      fmt::format("NOT VERIFIED: {}: this machine's result differs from the recorded one", name),
                      {first_difference(recorded, now)}};
}

Verification reproduced_result(const Json& recorded, const Json& now, const ReportJudgement& judged) {
  const std::string name = recorded["spec"]["name"].get<std::string>();
  if (auto differs = result_differs(name, recorded, now)) return *differs;
  const std::string digest =
      recorded.contains("case_digest") ? recorded["case_digest"]["sha256"].get<std::string>() : "";
  return Verification{
      judged.passes,
      fmt::format("verified: {}, {}/{} claims {}: {}: the result part reproduces byte for byte{}", judged.word(),
                  judged.claims_passing, judged.claims, judged.findings ? "pass" : "hold", name,
                  digest.empty() ? "" : fmt::format(" (case digest {})", digest)),
      judged.problems, true};
}

}  // namespace bitproof
