// Reports: the JSON a proof or a discovery produces, its Markdown rendering,
// the one-line summaries the CLI prints (files are written with OutputFiles).
//
// A report has three parts. `result` is deterministic: byte-identical on every
// rerun, whatever the machine or the backends that ran (they must agree or the
// run fails). `backends` lists what each backend computed. `environment` holds
// the tool version, compiler, host and time, and is never compared.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "error.hpp"
#include "proof/discovery.hpp"
#include "proof/engine.hpp"

namespace bitproof {

inline constexpr int kReportVersion = 1;
// Counterexamples a report keeps per claim unless told (--keep); a proof's case map uses it too.
inline constexpr std::size_t kDefaultKeep = 8;

using Json = nlohmann::ordered_json;

// "e2m1×ue8m0[114..126]→fp16"
[[nodiscard]] std::string domain_label(const Spec& spec);
// "folded≡ordinary: 208/208 bit patterns equal" (without the domain label)
[[nodiscard]] std::string claim_summary(const Claim& claim, const ClaimResult& result);
// "0x3800 [0|01110|0000000000] 0.5"
[[nodiscard]] std::string describe_code(FormatId format, std::uint32_t code);
// A counterexample as indented text lines, every field shown.
[[nodiscard]] std::vector<std::string> counterexample_lines(const Spec& spec, const Counterexample& cx);
[[nodiscard]] std::vector<std::string> witness_lines(const Spec& spec, const WitnessDisagreement& w);
// A hardware backend's bits against the soft model and the oracle arithmetic, every field shown.
[[nodiscard]] std::vector<std::string> model_lines(const Spec& spec, const std::string& backend,
                                                   const ModelDisagreement& m);

struct BackendRun {
  std::string name;  // "cpu"
  std::string detail;
  ProofResult result;
  std::string label = {};      // how summary lines name it: "cpu", "cuda sm_90"
  Json info = Json::object();  // backend details (threads, GPU, driver, kernel image ...), never compared
};

// A recipe's card as reports record it: name, role, summary, source, pins, caveat.
[[nodiscard]] Json recipe_card_json(const RecipeCard& card);
[[nodiscard]] Json recipe_cards_json(const Spec& spec);
[[nodiscard]] Json proof_result_json(const Spec& spec, const ProofResult& result, std::size_t keep);
// The output tables a spec's user recipes read (src/user/table.hpp), for
// result.user_tables: recipe, path, layout, bytes and SHA-256 of each file, so a
// changed table changes the result. Null when the spec reads none.
[[nodiscard]] Json user_tables_json(const Spec& spec);
// The files a spec's user code was built from (the worker's build: path and
// SHA-256 of each), for result.user_sources of a whole report and of a shard;
// report merge compares every shard's with its own. Null when the spec has no
// function recipe; empty before the worker is built.
[[nodiscard]] Json user_sources_json(const Spec& spec);
[[nodiscard]] Json discovery_result_json(const Spec& spec, const Discovery& discovery);
[[nodiscard]] Json environment_json();
// The whole proof report: result (from the first backend; all must agree), backends, environment.
[[nodiscard]] Json proof_report(const Spec& spec, const std::vector<BackendRun>& runs, std::size_t keep);
[[nodiscard]] Json discovery_report(const Spec& spec, const Discovery& discovery);

// The Markdown of a proof report and of a domain report (the renderers of
// their kinds' rows: report/kind_proof.hpp, report/kind_domain.hpp).
[[nodiscard]] std::string render_proof_markdown(const Json& report);
[[nodiscard]] std::string render_domain_markdown(const Json& report);
// Appends how to get the report again: the command that wrote it (environment.command), or `report verify`.
void markdown_reproduce(std::string& md, const Json& report);

// A proof report's claim c judged again from its counts and its spec's
// expectation (the recorded "verdict" string is not trusted). A malformed
// expectation or count judges as refuted.
[[nodiscard]] ClaimVerdict report_claim_verdict(const Json& result, std::size_t c);
// The strings a proof report (`proof`) or a domain report carries, against its
// recorded spec: the recipe cards, the domain's label, the swept input, each
// claim's kind and recipes, the kinds of difference counted, and each
// counterexample's kind, input names, codes (bits, fields and value follow
// from the bits; a proof's input codes from the case), recipes and oracle
// value. One line naming the first field that differs (the proof and domain kinds' validators call it).
[[nodiscard]] Expected<Ok> check_report_strings(const Spec& spec, const Json& result, const std::string& path, bool proof);
// A proof report's claim c summarised again from its recorded spec and counts
// ("e2m1×ue8m0[114..126]→fp16 folded≡ordinary: 208/208 bit patterns equal"):
// what renderings print and name tests by, never the report's own "summary".
[[nodiscard]] std::string recorded_summary(const Json& result, std::size_t c);

}  // namespace bitproof
