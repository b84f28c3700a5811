// Report kinds: one row per kind of report bitproof writes and reads back
// (the JSON's "kind"), naming each kind's validator, renderers, verifier and
// diff. Code that reads a report of any kind (report render, verify, diff, the
// renderers behind --markdown/--junit/--svg) looks its row up here; nothing
// asks `kind == "..."`. Each kind's reader, validator and verifier live in a
// file of its own (report/kind_NAME.cpp), its renderings beside its writer; a
// report of one kind is never read through another kind's code.
//
// Adding a kind (the kernel A/B and the PTX proof to come):
//  1. its schema in reports/schema.json: the name in properties.kind.enum and
//     an if/then naming its result's $defs (every report passes the schema
//     before its row's validator runs);
//  2. report/kind_NAME.{hpp,cpp}: `ReportKind NAME_report_kind()` filling the
//     slots that apply (validate: what its renderers and verifier rely on
//     beyond the schema; markdown/junit/svg; verify; diff), its checks and its
//     verifier; its writer and renderings in files of their own;
//  3. one line in report_kinds() (kind.cpp).
// tests/report/test_kinds.cpp checks that the schema's kinds and the table's
// rows are the same names, so neither can be added alone.
//
// A kind whose verifier needs a room above report (audit re-reads a
// checkpoint) leaves `verify` empty here; that room's code registers it
// (set_report_verifier) before `report verify` runs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"
#include "proof/audited_scales.hpp"
#include "report/report.hpp"

namespace bitproof {

// What `report verify` found, for the CLI to print: the headline (green when
// `passes`, red otherwise), each note on a line of its own indented below it
// (red when `notes_are_problems`, plain otherwise); exit 0 when `passes`, else 1.
struct Verification {
  bool passes = false;
  std::string headline;
  std::vector<std::string> notes;
  bool notes_are_problems = false;
};

struct VerifyOptions {
  std::string spec_dir;  // where a recorded spec's user-recipe sources are (default: the report's directory)
  // Reads an audit an A/B trace proof names (the audit room's reader, handed
  // down by the command: proof/audited_scales.hpp).
  AuditReader read_audit = {};
  // Builds a recorded spec's kernel modules (the backend room's build_kernel_modules, handed
  // down by the command): an A/B report with kernel arms is re-run through the PTX executor.
  std::function<Expected<std::vector<op::KernelModule>>(const op::AbSpec&)> build_kernels = {};
};

// Checks beyond the envelope and the schema (check_report_envelope): what this
// kind's renderers and verifier rely on. One line naming the file and field.
using ReportValidator = Expected<Ok> (*)(const Json& report, const std::string& path);
// A rendering of a report its kind's validator accepted.
using ReportRenderer = std::string (*)(const Json& report);
// A picture that may be refused (a map too large); `path` names it in messages.
using ReportPicture = Expected<std::string> (*)(const Json& report, const std::string& path);
// The result re-derived here and compared with the recorded one (errors: exit 2).
using ReportVerifier =
    std::function<Expected<Verification>(const Json& report, const std::string& path, const VerifyOptions& options)>;
// The same from the report's text, before the whole document is built (an
// audit's histograms read apart); nullopt leaves it to `verify`.
using ReportTextVerifier = std::function<std::optional<Verification>(const std::string& text, const std::string& path)>;
// Every difference between the results of two reports of this kind, one line each.
using ReportDiff = std::vector<std::string> (*)(const Json& a, const Json& b);

struct ReportKind {
  std::string_view name;  // the report's "kind"
  // How messages name it ("an A/B report"); empty: `name`.
  std::string_view noun = {};
  // Null: the schema is the kind's whole contract.
  ReportValidator validate = nullptr;
  // Why `report render`, `verify` and `diff` refuse a report of this kind alone
  // ("a shard: merge the shards first ..."); empty for a whole report.
  std::string_view refused_alone = {};
  ReportRenderer markdown = nullptr;
  ReportRenderer junit = nullptr;
  // Null: the kind has no picture (render_svg says so).
  ReportPicture svg = nullptr;
  ReportVerifier verify = {};
  ReportTextVerifier verify_text = {};
  // Null: `report diff` refuses the kind (it records no spec to compare).
  ReportDiff diff = nullptr;
};

// The table: one row per kind, in the schema's order.
[[nodiscard]] const std::vector<ReportKind>& report_kinds();
// The row of `name`, or null.
[[nodiscard]] const ReportKind* find_report_kind(std::string_view name);
// The row of a report that check_report_envelope accepted (the schema admits
// only the table's kinds), or null for one it did not.
[[nodiscard]] const ReportKind* report_kind_of(const Json& report);
// Fills a row's verifiers from a room above report (see the top of this file).
void set_report_verifier(std::string_view kind, ReportVerifier verify, ReportTextVerifier verify_text = {});

// ---- for the kinds' code ----

// "PATH: FIELD: WHAT", the one line a bad report is refused with.
[[nodiscard]] Error report_field_error(const std::string& path, const std::string& field, const std::string& what);
// What every report passes before its kind's validator: a JSON object, a
// bitproof report of the version this bitproof reads, valid against
// reports/schema.json (report/schema.hpp).
[[nodiscard]] Expected<Ok> check_report_envelope(const Json& report, const std::string& path);
// result.spec_sha256 is the digest of result.spec as recorded.
[[nodiscard]] Expected<Ok> check_spec_digest(const Json& result, const std::string& path);
// The Verification of a result this machine gives otherwise ("NOT VERIFIED:
// NAME: ...", the first line where they differ), or nullopt when `now` is the
// recorded result.
[[nodiscard]] std::optional<Verification> result_differs(const std::string& name, const Json& recorded,
                                                         const Json& now);
struct ReportJudgement;
// The Verification of a proof or domain report whose result part this machine
// derived again (`now`): result_differs' when the two differ; else the verdict
// `judged` (of the report) gives, naming the recorded case digest.
[[nodiscard]] Verification reproduced_result(const Json& recorded, const Json& now, const ReportJudgement& judged);

}  // namespace bitproof
