#include "report/report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "hash/digest.hpp"
#include "report/kind_domain.hpp"
#include "report/kind_proof.hpp"
#include "report/markup.hpp"
#include "strict_json.hpp"
#include "user/user_recipes.hpp"
#include "version.hpp"

namespace bitproof {
namespace {

// The files a spec's user recipes were built from, by content: a changed
// kernel header changes the result, and `report verify` sees it.
// How the user recipes were built on this machine (not part of the result).
Json user_environment(const Spec& spec, Json environment) {
  if (!spec.user || spec.user->build() == nullptr) return environment;
  const user::BuildInfo& b = *spec.user->build();
  environment["user_recipes"] = {{"compiler", b.compiler}, {"flags", b.flags}, {"cache_key", b.key},
                                 {"cached", b.cached}, {"seconds", b.seconds}};
  return environment;
}

std::string bits_string(std::uint32_t value, int width) {
  std::string s;
  for (int i = width - 1; i >= 0; --i) s += ((value >> i) & 1) ? '1' : '0';
  return s;
}

std::string fields_of(FormatId format, std::uint32_t code) {
  const FormatSpec& f = spec_of(format);
  std::string out;
  if (f.is_signed) out = bits_string(code >> (f.bits - 1), 1) + "|";
  out += bits_string((code >> f.man_bits) & f.exp_field_max(), f.exp_bits);
  if (f.man_bits > 0) {
    out += '|';
    out += bits_string(code & f.man_mask(), f.man_bits);
  }
  return out;
}

std::string hex_code(FormatId format, std::uint32_t code) {
  return fmt::format("0x{:0{}X}", code, (spec_of(format).bits + 3) / 4);
}

std::string value_of(FormatId format, std::uint32_t code) { return oracle::to_string(oracle::exact_of(format, code)); }

Json code_json(FormatId format, std::uint32_t code) {
  return Json{{"bits", hex_code(format, code)}, {"fields", fields_of(format, code)}, {"value", value_of(format, code)}};
}

std::string codes_label(const InputDomain& in) {
  if (in.all) return "";
  if (in.span) {  // "[0..255 ∖ nan]"
    std::string excluded;
    for (const std::string& e : in.excluded) excluded += (excluded.empty() ? "" : ",") + e;
    return fmt::format("[{}..{} ∖ {}]", in.span->lo, in.span->hi, excluded);
  }
  if (in.range) return fmt::format("[{}..{}]", in.range->lo, in.range->hi);
  std::string out = "{";
  for (std::size_t i = 0; i < in.codes.size() && i < 6; ++i) {
    if (i > 0) out += ',';
    out += std::to_string(in.codes[i]);
  }
  return out + (in.codes.size() > 6 ? fmt::format(",… {} codes}}", in.codes.size()) : "}");
}

std::string recipe_labels(const Claim& claim, std::string_view joiner) {
  std::string out;
  for (std::size_t i = 0; i < claim.recipes.size(); ++i) {
    out += (i ? std::string(joiner) : "") + std::string(claim.recipes[i]->card->label);
  }
  return out;
}

Json counterexample_json(const Spec& spec, const Counterexample& cx) {
  Json inputs = Json::array();
  for (std::size_t i = 0; i < cx.inputs.size(); ++i) {
    Json in = code_json(spec.inputs[i].format, cx.inputs[i]);
    in["input"] = spec.inputs[i].name;
    inputs.push_back(in);
  }
  Json outputs = Json::array();
  for (std::size_t r = 0; r < cx.recipes.size(); ++r) {
    Json out = code_json(spec.output, cx.outputs[r]);
    out["recipe"] = cx.recipes[r]->card->name;
    out["correctly_rounded"] = static_cast<bool>(cx.correctly_rounded[r]);
    outputs.push_back(out);
  }
  Json oracle{{"exact", oracle::to_string(cx.intent)}, {"inexact", cx.intent_inexact}};
  oracle["rounded"] = cx.intent_code ? code_json(spec.output, *cx.intent_code) : Json(nullptr);
  return Json{{"case", cx.case_index}, {"kind", cx.kind}, {"inputs", inputs}, {"outputs", outputs}, {"oracle", oracle}};
}

Json witness_json(const Spec& spec, const ProofResult& r) {
  Json first = Json::array();
  for (const WitnessDisagreement& w : r.witness_disagreements) {
    Json inputs = Json::array();
    for (std::size_t i = 0; i < w.inputs.size(); ++i) inputs.push_back(hex_code(spec.inputs[i].format, w.inputs[i]));
    first.push_back({{"case", w.case_index},
                     {"inputs", inputs},
                     {"recipe", w.recipe->card->name},
                     {"soft", code_json(spec.output, w.soft)},
                     {"oracle_arithmetic", code_json(spec.output, w.oracle)}});
  }
  // A user recipe is the user's code, not a template over the arithmetic: the oracle cannot run it.
  const std::string recipes =
      !spec.user ? "every recipe"
      : spec.user->has_tables()
          ? "every catalogue recipe (not the user recipes: their code runs once, their tables are read as written)"
          : "every catalogue recipe (not the user recipes: their code runs once)";
  if (r.witness_mode == WitnessMode::kFull) {
    return Json{{"compared", fmt::format("soft arithmetic vs oracle arithmetic, {}, every case", recipes)},
                {"disagreements", r.witness_disagreement_count},
                {"first", first}};
  }
  // Above the full-witness limit (engine.hpp): which cases the sample took.
  return Json{{"compared", fmt::format("soft arithmetic vs oracle arithmetic, {}, sampled cases", recipes)},
              {"mode", witness_mode_name(r.witness_mode)},
              {"rule", witness_rule(r.witness_mode)},
              {"cases", r.witnessed_cases},
              {"disagreements", r.witness_disagreement_count},
              {"first", first}};
}

// A hardware backend against the soft model: the three-way records.
Json model_json(const Spec& spec, const ProofResult& r) {
  Json first = Json::array();
  for (const ModelDisagreement& m : r.model_disagreements) {
    Json inputs = Json::array();
    for (std::size_t i = 0; i < m.inputs.size(); ++i) inputs.push_back(code_json(spec.inputs[i].format, m.inputs[i]));
    first.push_back({{"case", m.case_index},
                     {"inputs", inputs},
                     {"recipe", m.recipe->card->name},
                     {"soft", code_json(spec.output, m.soft)},
                     {"oracle_arithmetic", code_json(spec.output, m.oracle)},
                     {"hardware", code_json(spec.output, m.hardware)}});
  }
  // Above 2^36 cases the GPU compares the first 2^32-case block and one in
  // sampled_block_stride(): say so where the evaluations do not cover every case.
  const auto recipes = spec.recipes();
  const auto catalogue =
      static_cast<std::uint64_t>(std::count_if(recipes.begin(), recipes.end(), [](const RecipeEntry* e) { return !e->is_user(); }));
  const bool every = r.model_compared >= r.cases * catalogue;
  return Json{{"compared", every ? "hardware bits vs soft model, every recipe, every case"
                                 : fmt::format("hardware bits vs soft model, every recipe, on sampled 2^32-case blocks "
                                               "({} of {} cases)",
                                               r.model_compared / std::max<std::uint64_t>(catalogue, 1), r.cases)},
              {"evaluations", r.model_compared},
              {"disagreements", r.model_disagreement_count},
              {"first", first}};
}

Json domain_json(const Spec& spec) {
  Json inputs = Json::array();
  for (const InputDomain& in : spec.inputs) {
    inputs.push_back({{"name", in.name}, {"format", spec_of(in.format).name}, {"codes", in.count()}});
  }
  return Json{{"label", domain_label(spec)},
              {"inputs", inputs},
              {"output", spec_of(spec.output).name},
              {"cases", spec.case_count()},
              {"order", "first input fastest"}};
}

// The per-case map of a discovery: every code's failing bits, as one hex string
// (column-major: code by code, each code's cases in case order, 4 bits a digit,
// most significant first, the last digit zero-padded).
std::optional<Json> failing_map_json(const ClaimDiscovery& cd) {
  const std::size_t rows = cd.codes.front().failing.size();
  if (rows == 0) return std::nullopt;
  std::string hex;
  int nibble = 0, filled = 0;
  for (const CodeVerdict& v : cd.codes) {
    for (bool bit : v.failing) {
      nibble = (nibble << 1) | (bit ? 1 : 0);
      if (++filled == 4) {
        hex += "0123456789abcdef"[nibble];
        nibble = filled = 0;
      }
    }
  }
  if (filled > 0) hex += "0123456789abcdef"[nibble << (4 - filled)];
  return Json{{"rows", rows}, {"columns", cd.codes.size()}, {"order", "column-major, 1 = fails"}, {"failing_hex", hex}};
}

Json pin_json(const Pin& pin) {
  Json j{{"kind", pin.kind == PinKind::kCode ? "code" : "prose"},
         {"repo", pin.repo},
         {"path", pin.path},
         {"revision", pin.revision},
         {"symbol", pin.symbol}};
  if (!pin.lines.empty()) j["lines"] = pin.lines;
  j["models"] = pin.models;
  return j;
}

Json claim_head(const Claim& claim) {
  Json recipes = Json::array();
  for (const RecipeEntry* r : claim.recipes) recipes.push_back(r->card->name);
  Json j{{"claim", claim_name(claim.kind)}, {"recipes", recipes}};
  if (claim.kind == ClaimKind::kCorrectlyRounded) j["rounding"] = rounding_name(claim.rounding);
  return j;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Json recipe_card_json(const RecipeCard& card) {
  Json j{{"name", card.name}, {"role", role_name(card.role)}, {"summary", card.summary}, {"source", card.source}};
  if (card.role == Role::kControl) j["control_of"] = card.control_of;
  Json pins = Json::array();
  for (int i = 0; i < card.pin_count(); ++i) pins.push_back(pin_json(*card.pins[i]));
  j["pins"] = pins;
  if (!card.caveat.empty()) j["caveat"] = card.caveat;
  return j;
}

Json recipe_cards_json(const Spec& spec) {
  Json cards = Json::array();
  for (const RecipeEntry* r : spec.recipes()) cards.push_back(recipe_card_json(*r->card));
  return cards;
}

std::string domain_label(const Spec& spec) {
  std::string out;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    if (i > 0) out += "×";
    out += spec_of(spec.inputs[i].format).name;
    out += codes_label(spec.inputs[i]);
  }
  return out + "→" + std::string(spec_of(spec.output).name);
}

namespace {

// "208/208 bit patterns equal", "206/208 cases without rounding": the claim's counts in its own words.
std::string counts_text(const Claim& claim, const ClaimResult& r) {
  switch (claim.kind) {
    case ClaimKind::kEqual: return fmt::format("{}/{} bit patterns equal", r.holding, r.cases);
    case ClaimKind::kCorrectlyRounded: return fmt::format("{}/{} cases", r.holding, r.cases);
    case ClaimKind::kExact: return fmt::format("{}/{} cases without rounding", r.holding, r.cases);
  }
  return "";
}

// "16 fail", "2050 fail: all nan", "16 fail: 12 value, 4 zero"
std::string fail_text(std::uint64_t failing, const std::map<std::string, std::uint64_t>& by_kind) {
  const std::string kinds = kinds_text(by_kind);
  if (kinds.empty()) return fmt::format("{} fail", failing);
  return fmt::format("{} fail: {}{}", failing, by_kind.size() == 1 ? "all " : "", kinds);
}

std::string claim_subject(const Claim& claim) {
  switch (claim.kind) {
    case ClaimKind::kEqual: return recipe_labels(claim, "≡");
    case ClaimKind::kCorrectlyRounded:
      return fmt::format("{} correctly rounded ({})", recipe_labels(claim, ", "), rounding_name(claim.rounding));
    case ClaimKind::kExact: return recipe_labels(claim, ", ") + " exact";
  }
  return "";
}

}  // namespace

std::string claim_summary(const Claim& claim, const ClaimResult& r) {
  const std::uint64_t failing = r.cases - r.holding;
  const std::string subject = claim_subject(claim);
  switch (claim_verdict(claim, r)) {
    case ClaimVerdict::kHolds: return fmt::format("{}: {}", subject, counts_text(claim, r));
    case ClaimVerdict::kRefuted:
      return fmt::format("{}: REFUTED, {} ({})", subject, counts_text(claim, r), fail_text(failing, r.by_kind));
    case ClaimVerdict::kRefutedAsExpected:
      return fmt::format("{}: refuted as expected ({} of {}{})", subject, failing, r.cases,
                         r.by_kind.empty() ? "" : ": " + kinds_text(r.by_kind));
    case ClaimVerdict::kExpectationMissed:
      if (failing == 0) {
        return fmt::format("{}: FINDING GONE, {} (expected refuted on {})", subject, counts_text(claim, r),
                           expectation_text(*claim.expect, r.cases));
      }
      return fmt::format("{}: REFUTED NOT AS EXPECTED, {} ({}; expected {})", subject, counts_text(claim, r),
                         fail_text(failing, r.by_kind), expectation_text(*claim.expect, r.cases));
  }
  return "";
}

std::string describe_code(FormatId format, std::uint32_t code) {
  return fmt::format("{} [{}] {}", hex_code(format, code), fields_of(format, code), value_of(format, code));
}

std::vector<std::string> counterexample_lines(const Spec& spec, const Counterexample& cx) {
  std::vector<std::string> lines;
  std::string head = fmt::format("  case {} (mismatch: {}):", cx.case_index, cx.kind);
  for (std::size_t i = 0; i < cx.inputs.size(); ++i) {
    head += fmt::format(" {}={} {}", spec.inputs[i].name, spec_of(spec.inputs[i].format).name,
                        describe_code(spec.inputs[i].format, cx.inputs[i]));
    if (i + 1 < cx.inputs.size()) head += ",";
  }
  lines.push_back(head);
  for (std::size_t r = 0; r < cx.recipes.size(); ++r) {
    lines.push_back(fmt::format("    {:<16} {}  {}", cx.recipes[r]->card->label,
                                describe_code(spec.output, cx.outputs[r]),
                                cx.correctly_rounded[r] ? "= oracle" : "!= oracle"));
  }
  const std::string rounded = cx.intent_code ? describe_code(spec.output, *cx.intent_code) : "not representable";
  lines.push_back(fmt::format("    {:<16} exact {} -> {}{}", "oracle", oracle::to_string(cx.intent), rounded,
                              cx.intent_inexact ? " (inexact)" : ""));
  return lines;
}

std::vector<std::string> model_lines(const Spec& spec, const std::string& backend, const ModelDisagreement& m) {
  std::string inputs;
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    inputs += fmt::format("{}{}={} {}", i ? ", " : "", spec.inputs[i].name, spec_of(spec.inputs[i].format).name,
                          describe_code(spec.inputs[i].format, m.inputs[i]));
  }
  const std::string& label =
      m.recipe->card->label.empty() ? std::string(m.recipe->card->name) : std::string(m.recipe->card->label);
  if (m.recipe->is_user()) {  // the user's own code on both sides: the CPU build (host header) and the GPU's
    return {fmt::format("  case {}: {}", m.case_index, inputs),
            fmt::format("    {} {:<17} {}", label, "cpu (host header)", describe_code(spec.output, m.soft)),
            fmt::format("    {} {:<17} {}", label, backend + " hardware", describe_code(spec.output, m.hardware))};
  }
  return {fmt::format("  case {}: {}", m.case_index, inputs),
          fmt::format("    {} soft model        {}", label, describe_code(spec.output, m.soft)),
          fmt::format("    {} oracle arithmetic {}", label, describe_code(spec.output, m.oracle)),
          fmt::format("    {} {:<17} {}", label, backend + " hardware", describe_code(spec.output, m.hardware))};
}

std::vector<std::string> witness_lines(const Spec& spec, const WitnessDisagreement& w) {
  std::string inputs;
  for (std::size_t i = 0; i < w.inputs.size(); ++i) {
    inputs +=
        fmt::format("{}{}={}", i ? ", " : "", spec.inputs[i].name, describe_code(spec.inputs[i].format, w.inputs[i]));
  }
  return {fmt::format("  case {}: {}", w.case_index, inputs),
          fmt::format("    {} soft arithmetic   {}", w.recipe->card->label, describe_code(spec.output, w.soft)),
          fmt::format("    {} oracle arithmetic {}", w.recipe->card->label, describe_code(spec.output, w.oracle))};
}

Json proof_result_json(const Spec& spec, const ProofResult& result, std::size_t keep) {
  const Json spec_json = spec_to_json(spec);
  Json claims = Json::array();
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    const ClaimResult& r = result.claims[c];
    Json claim = claim_head(spec.claims[c]);
    claim["summary"] = domain_label(spec) + " " + claim_summary(spec.claims[c], r);
    claim["holds"] = r.holds();
    claim["verdict"] = verdict_name(claim_verdict(spec.claims[c], r));
    if (spec.claims[c].expect) claim["expect"] = expectation_json(*spec.claims[c].expect);
    claim["cases"] = r.cases;
    claim["holding"] = r.holding;
    claim["failing"] = r.cases - r.holding;
    claim["by_kind"] = Json::object();
    for (const auto& [kind, n] : r.by_kind) claim["by_kind"][kind] = n;
    claim["counterexamples"] = Json::array();
    for (const Counterexample& cx : r.counterexamples)
      claim["counterexamples"].push_back(counterexample_json(spec, cx));
    claims.push_back(claim);
  }
  Json out{{"spec", spec_json},
           {"spec_sha256", sha256_hex(spec_json.dump())},
           {"domain", domain_json(spec)},
           {"keep", keep},
           {"verdict", proof_verdict_name(result.passes(spec), result.has_findings(spec))},
           {"claims", claims},
           {"recipes", recipe_cards_json(spec)},
           {"witness", witness_json(spec, result)},
           {"case_digest", {{"algorithm", digest_algorithm(result.digest_mode)}, {"sha256", result.case_digest}}}};
  if (Json sources = user_sources_json(spec); !sources.is_null()) out["user_sources"] = sources;
  if (Json tables = user_tables_json(spec); !tables.is_null()) out["user_tables"] = tables;
  return out;
}

// Every file the compiler read for the user's sources but the system's and
// bitproof's headers (the worker build's list, or the preprocessor's where the
// CPU path built none), by content.
Json user_sources_json(const Spec& spec) {
  if (!spec.user || spec.user->function_count() == 0) return nullptr;
  Json files = Json::array();
  if (auto sources = spec.user->source_digests()) {
    for (const user::SourceDigest& s : *sources) files.push_back({{"path", s.path}, {"sha256", s.sha256}});
  }
  return files;
}

Json user_tables_json(const Spec& spec) {
  if (!spec.user || !spec.user->has_tables()) return nullptr;
  Json tables = Json::array();
  for (const user::TableDigest& t : spec.user->table_digests()) {
    tables.push_back(
        {{"recipe", t.recipe}, {"path", t.path}, {"layout", t.layout}, {"bytes", t.bytes}, {"sha256", t.sha256}});
  }
  return tables;
}

namespace {

// The per-code verdicts as runs of consecutive codes with the same counts:
// {"from", "to", "cases", "holding"} where every code of from..to has `cases`
// cases and `holding` of them hold (a 16-bit scale sweep is a few runs, not
// 65,536 objects). The end points' values are given for the reader.
Json code_runs_json(FormatId over_format, const std::vector<CodeVerdict>& codes) {
  Json runs = Json::array();
  for (std::size_t i = 0; i < codes.size();) {
    std::size_t j = i;
    while (j + 1 < codes.size() && codes[j + 1].code == codes[j].code + 1 && codes[j + 1].cases == codes[i].cases &&
           codes[j + 1].holding == codes[i].holding) {
      ++j;
    }
    runs.push_back({{"from", codes[i].code},
                    {"to", codes[j].code},
                    {"from_value", value_of(over_format, codes[i].code)},
                    {"to_value", value_of(over_format, codes[j].code)},
                    {"cases", codes[i].cases},
                    {"holding", codes[i].holding}});
    i = j + 1;
  }
  return runs;
}

}  // namespace

namespace {

// The swept input; "swept" [lo, hi] only when it was not every code of the format.
Json over_json(const Spec& spec, const Discovery& d) {
  Json over{{"input", d.over},
            {"format", spec_of(spec.inputs[d.over_index].format).name},
            {"spec_interval", {d.spec_interval.lo, d.spec_interval.hi}}};
  if (!d.whole_format) over["swept"] = {d.claims.front().codes.front().code, d.claims.front().codes.back().code};
  return over;
}

}  // namespace

Json discovery_result_json(const Spec& spec, const Discovery& d) {
  const Json spec_json = spec_to_json(spec);
  const FormatId over_format = spec.inputs[d.over_index].format;
  Json claims = Json::array();
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    const ClaimDiscovery& cd = d.claims[c];
    Json claim = claim_head(spec.claims[c]);
    Json holding = Json::array();
    for (const CodeRange& run : cd.holding) holding.push_back({run.lo, run.hi});
    claim["spec_interval_holds"] = cd.spec_interval_holds;
    claim["maximal"] = cd.maximal ? Json{cd.maximal->lo, cd.maximal->hi} : Json(nullptr);
    claim["holding"] = holding;
    for (const auto& [side, code] : {std::pair{"below", cd.below}, std::pair{"above", cd.above}}) {
      claim[side] = code ? counterexample_json(spec, *cd.at(*code).first) : Json(nullptr);
    }
    claim["codes"] = code_runs_json(over_format, cd.codes);
    if (auto map = failing_map_json(cd)) claim["map"] = *map;
    claims.push_back(claim);
  }
  ProofResult witness_view;
  witness_view.witness_disagreement_count = d.witness_disagreement_count;
  witness_view.witness_disagreements = d.witness_disagreements;
  Json out{{"spec", spec_json},
              {"spec_sha256", sha256_hex(spec_json.dump())},
              {"over", over_json(spec, d)},
              {"cases", d.cases},
              {"claims", claims},
              {"recipes", recipe_cards_json(spec)},
              {"witness", witness_json(spec, witness_view)}};
  if (Json tables = user_tables_json(spec); !tables.is_null()) out["user_tables"] = tables;
  return out;
}

Json environment_json() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return Json{{"tool", "bitproof"},
              {"version", tool_version()},
              {"git_commit", tool_git_commit()},
              {"compiler", fmt::format("{} {}", "g++/clang", __VERSION__)},
              {"host", host},
              {"time_utc", utc_now()}};
}

Json proof_report(const Spec& spec, const std::vector<BackendRun>& runs, std::size_t keep) {
  Json backends = Json::array();
  const std::string first_result = proof_result_json(spec, runs.front().result, keep).dump();
  bool identical = true;
  std::uint64_t model_disagreements = 0;
  for (const BackendRun& run : runs) {
    Json claims = Json::array();
    for (const ClaimResult& c : run.result.claims) claims.push_back({{"holding", c.holding}, {"cases", c.cases}});
    Json entry{{"name", run.name},
               {"detail", run.detail},
               {"cases", run.result.cases},
               {"case_digest", run.result.case_digest},
               {"claims", claims}};
    const bool same = proof_result_json(spec, run.result, keep).dump() == first_result;
    identical = identical && same;
    entry["result_identical"] = same;
    if (run.result.model_compared > 0) entry["model"] = model_json(spec, run.result);
    model_disagreements += run.result.model_disagreement_count;
    entry["info"] = run.info;
    backends.push_back(entry);
  }
  Json names = Json::array();
  for (const BackendRun& run : runs) names.push_back(run.name);
  const Json agreement{{"backends", names},
                       {"results_identical", identical},
                       {"model_disagreements", model_disagreements},
                       {"holds", identical && model_disagreements == 0}};
  return Json{{"bitproof_report", kReportVersion},
              {"kind", "proof"},
              {"result", proof_result_json(spec, runs.front().result, keep)},
              {"backends", backends},
              {"agreement", agreement},
              {"environment", user_environment(spec, environment_json())}};
}

Json discovery_report(const Spec& spec, const Discovery& discovery) {
  return Json{{"bitproof_report", kReportVersion},
              {"kind", "domain"},
              {"result", discovery_result_json(spec, discovery)},
              {"environment", environment_json()}};
}

ClaimVerdict report_claim_verdict(const Json& result, std::size_t c) {
  const Json& claim = result["claims"][c];
  ClaimCounts counts;
  std::optional<Expectation> expect;
  try {
    counts.cases = claim.at("cases").get<std::uint64_t>();
    counts.holding = claim.at("holding").get<std::uint64_t>();
    if (counts.holding > counts.cases) return ClaimVerdict::kRefuted;
    for (const auto& [kind, n] : claim.at("by_kind").items()) counts.by_kind[kind] = n.get<std::uint64_t>();
    const Json& spec_claim = result.at("spec").at("claims").at(c);
    if (spec_claim.contains("expect")) {
      auto parsed = parse_expectation(nlohmann::json::parse(spec_claim.at("expect").dump()), "expect", counts.cases);
      if (!parsed) return ClaimVerdict::kRefuted;
      expect = *parsed;
    }
  } catch (const Json::exception&) {
    return ClaimVerdict::kRefuted;
  }
  return claim_verdict(expect, counts);
}

namespace {

Error bad_string(const std::string& path, const std::string& field, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

// A code object ({"bits", "fields", "value"}) must be a code of `format`, its fields and value the code's own.
Expected<std::uint32_t> check_code(FormatId format, const Json& code, const std::string& path, const std::string& field) {
  const std::string bits = code["bits"].get<std::string>();  // the schema: "0x" and upper-case hex digits
  const int width = spec_of(format).bits;
  std::uint64_t value = 0;
  for (std::size_t i = 2; i < bits.size() && i < 20; ++i) {
    value = value * 16 + static_cast<std::uint64_t>(bits[i] <= '9' ? bits[i] - '0' : bits[i] - 'A' + 10);
  }
  if (bits.size() > 20 || (width < 64 && value >> width) != 0) {
    return bad_string(path, field + ".bits", fmt::format("{} is not a {} code", printable(bits), spec_of(format).name));
  }
  const Json expected = code_json(format, static_cast<std::uint32_t>(value));
  for (const char* key : {"bits", "fields", "value"}) {
    if (code[key] != expected[key]) {
      return bad_string(path, fmt::format("{}.{}", field, key),
                        fmt::format("\"{}\" is not what {} code {} has (\"{}\")", printable(code[key].get<std::string>()),
                                    spec_of(format).name, expected["bits"].get<std::string>(),
                                    expected[key].get<std::string>()));
    }
  }
  return static_cast<std::uint32_t>(value);
}

// The oracle's exact value as oracle::to_string writes it: a decimal, "M*2^E", or nan, inf, -inf.
bool exact_text(const std::string& text) {
  if (text == "nan" || text == "inf" || text == "-inf") return true;
  return !text.empty() && text.size() < 4096 &&
         text.find_first_not_of("0123456789.e+-*^") == std::string::npos;
}

// A counterexample of claim c: its kind, its inputs (the spec's, in order; for a
// proof, the codes of its case), its outputs (the claim's recipes) and the oracle's.
Expected<Ok> check_counterexample(const Spec& spec, const Claim& claim, const Json& cx, const std::string& path,
                                  const std::string& field, bool proof_case) {
  if (!is_counterexample_kind(cx["kind"].get<std::string>())) {
    return bad_string(path, field + ".kind", fmt::format("\"{}\" is no kind of difference", printable(cx["kind"].get<std::string>())));
  }
  const Json& inputs = cx["inputs"];
  if (inputs.size() != spec.inputs.size()) {
    return bad_string(path, field + ".inputs", fmt::format("{} inputs, but the recorded spec has {}", inputs.size(), spec.inputs.size()));
  }
  std::uint64_t rest = cx["case"].get<std::uint64_t>();
  if (proof_case && rest >= spec.case_count()) {
    return bad_string(path, field + ".case", fmt::format("{} is not a case of the recorded spec's {}", rest, spec.case_count()));
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string at = fmt::format("{}.inputs[{}]", field, i);
    const InputDomain& in = spec.inputs[i];
    if (inputs[i]["input"] != in.name) {
      return bad_string(path, at + ".input",
                        fmt::format("\"{}\" is not the recorded spec's input {} (\"{}\")",
                                    printable(inputs[i]["input"].get<std::string>()), i, in.name));
    }
    auto code = check_code(in.format, inputs[i], path, at);
    if (!code) return code.error();
    if (proof_case && *code != in.code(rest % in.count())) {
      return bad_string(path, at + ".bits", fmt::format("{} is not the code of case {}", inputs[i]["bits"].get<std::string>(),
                                                        cx["case"].get<std::uint64_t>()));
    }
    rest /= in.count();
  }
  for (std::size_t r = 0; r < cx["outputs"].size(); ++r) {
    const Json& out = cx["outputs"][r];
    const std::string at = fmt::format("{}.outputs[{}]", field, r);
    const bool of_claim = std::any_of(claim.recipes.begin(), claim.recipes.end(),
                                      [&](const RecipeEntry* e) { return out["recipe"] == e->card->name; });
    if (!of_claim) {
      return bad_string(path, at + ".recipe",
                        fmt::format("\"{}\" is not a recipe of the claim", printable(out["recipe"].get<std::string>())));
    }
    if (auto code = check_code(spec.output, out, path, at); !code) return code.error();
  }
  const Json& oracle = cx["oracle"];
  if (!exact_text(oracle["exact"].get<std::string>())) {
    return bad_string(path, field + ".oracle.exact", fmt::format("\"{}\" is not an exact value", printable(oracle["exact"].get<std::string>())));
  }
  if (!oracle["rounded"].is_null()) {
    if (auto code = check_code(spec.output, oracle["rounded"], path, field + ".oracle.rounded"); !code) return code.error();
  }
  return Ok{};
}

}  // namespace

Expected<Ok> check_report_strings(const Spec& spec, const Json& result, const std::string& path, bool proof) {
  if (result.contains("recipes") && result["recipes"] != recipe_cards_json(spec)) {
    return bad_string(path, "result.recipes", "are not the recorded spec's recipe cards");
  }
  if (proof && result["domain"]["label"] != domain_label(spec)) {
    return bad_string(path, "result.domain.label", "is not the recorded spec's domain");
  }
  if (!proof) {
    const auto over = spec.input_index(result["over"]["input"].get<std::string>());
    if (!over) return bad_string(path, "result.over.input", "is not an input of the recorded spec");
    if (result["over"]["format"] != spec_of(spec.inputs[*over].format).name) {
      return bad_string(path, "result.over.format", "is not the format of that input in the recorded spec");
    }
  }
  const Json& claims = result["claims"];
  if (claims.size() != spec.claims.size()) {
    return bad_string(path, "result.claims", fmt::format("{} claims, but the recorded spec has {}", claims.size(), spec.claims.size()));
  }
  for (std::size_t c = 0; c < claims.size(); ++c) {
    const std::string field = fmt::format("result.claims[{}]", c);
    const Json head = claim_head(spec.claims[c]);
    for (const auto& [key, value] : head.items()) {
      if (!claims[c].contains(key) || claims[c][key] != value) {
        return bad_string(path, field + "." + key, "is not the recorded spec's claim");
      }
    }
    if (proof) {
      for (const auto& [kind, n] : claims[c]["by_kind"].items()) {
        if (!is_counterexample_kind(kind)) {
          return bad_string(path, field + ".by_kind", fmt::format("\"{}\" is no kind of difference", printable(kind)));
        }
      }
      for (std::size_t k = 0; k < claims[c]["counterexamples"].size(); ++k) {
        if (auto ok = check_counterexample(spec, spec.claims[c], claims[c]["counterexamples"][k], path,
                                           fmt::format("{}.counterexamples[{}]", field, k), true);
            !ok)
          return ok;
      }
      continue;
    }
    for (const char* side : {"below", "above"}) {
      if (!claims[c].contains(side) || claims[c][side].is_null()) continue;
      if (auto ok = check_counterexample(spec, spec.claims[c], claims[c][side], path, field + "." + side, false); !ok)
        return ok;
    }
  }
  return Ok{};
}

std::string recorded_summary(const Json& result, std::size_t c) {
  auto spec = parse_spec(result["spec"].dump(), "result.spec");
  if (!spec || c >= spec->claims.size()) return "?";  // validate_report refuses such reports first
  const Json& claim = result["claims"][c];
  ClaimResult counts;
  counts.cases = claim["cases"].get<std::uint64_t>();
  counts.holding = std::min(claim["holding"].get<std::uint64_t>(), counts.cases);
  for (const auto& [kind, n] : claim["by_kind"].items()) counts.by_kind[kind] = n.get<std::uint64_t>();
  return domain_label(*spec) + " " + claim_summary(spec->claims[c], counts);
}

namespace {

std::string_view verdict_cell(ClaimVerdict v) {
  switch (v) {
    case ClaimVerdict::kHolds: return "holds";
    case ClaimVerdict::kRefuted: return "**refuted**";
    case ClaimVerdict::kRefutedAsExpected: return "refuted as expected (finding)";
    case ClaimVerdict::kExpectationMissed: return "**not as expected**";
  }
  return "?";
}

// Where each recipe comes from: its pins, folded away (a PR comment stays short).
void markdown_pins(std::string& md, const Json& result) {
  if (!result.contains("recipes") || !result["recipes"].is_array()) return;
  md += "\n<details><summary>Where the recipes come from (pinned upstream lines)</summary>\n\n";
  for (const Json& card : result["recipes"]) {
    md += fmt::format("- {} ({}): {}\n", md_code(card.value("name", "?")), md_text(card.value("role", "?")),
                      md_text(card.value("summary", "")));
    if (card.contains("control_of")) md += fmt::format("  - negative control of {}\n", md_code(card.value("control_of", "")));
    for (const Json& pin : card.value("pins", Json::array())) {
      if (pin.value("kind", "") == "code") {
        md += fmt::format("  - {} {} @ {}, {}, lines {}: {}\n", md_text(pin.value("repo", "")),
                          md_code(pin.value("path", "")), md_code(pin.value("revision", "").substr(0, 12)),
                          md_code(pin.value("symbol", "")), md_text(pin.value("lines", "")),
                          md_text(pin.value("models", "")));
      } else {
        md += fmt::format("  - {} {} ({}; prose, no code read): {}\n", md_text(pin.value("repo", "")),
                          md_text(pin.value("path", "")), md_text(pin.value("symbol", "")),
                          md_text(pin.value("models", "")));
      }
    }
    if (card.contains("caveat")) md += fmt::format("  - caveat: {}\n", md_text(card.value("caveat", "")));
  }
  md += "\n</details>\n";
}

// A counterexample as a Markdown list item, every line indented by `indent`
// spaces, its recipes and the oracle nested under it.
void markdown_counterexample(std::string& md, const Json& cx, int indent = 0) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  md += fmt::format("{}- case {} (mismatch: {}):", pad, cx["case"].get<std::uint64_t>(),
                    md_text(cx["kind"].get<std::string>()));
  bool first = true;  // "element `0x1` = 0.5, scale `0x70` = 3e-05": inputs joined by commas
  for (const Json& in : cx["inputs"]) {
    md += fmt::format("{} {} {} = {}", first ? "" : ",", md_text(in["input"].get<std::string>()),
                      md_code(in["bits"].get<std::string>()), md_text(in["value"].get<std::string>()));
    first = false;
  }
  md += "\n";
  for (const Json& out : cx["outputs"]) {
    md += fmt::format("{}  - {} → {} {} = {} ({})\n", pad, md_code(out["recipe"].get<std::string>()),
                      md_code(out["bits"].get<std::string>()), md_code(fmt::format("[{}]", out["fields"].get<std::string>())),
                      md_text(out["value"].get<std::string>()),
                      out["correctly_rounded"].get<bool>() ? "matches oracle" : "differs from oracle");
  }
  const Json& o = cx["oracle"];
  md += fmt::format("{}  - oracle: exact {} → {}\n", pad, md_text(o["exact"].get<std::string>()),
                    o["rounded"].is_null() ? std::string("not representable")
                                           : md_text(o["rounded"]["bits"].get<std::string>()));
}

// "**refuted** (16 fail: all nan)": the verdict and, for a refutation, what failed (a finding says so too).
std::string result_cell(const Json& result, std::size_t i) {
  const Json& c = result["claims"][i];
  const ClaimVerdict v = report_claim_verdict(result, i);
  const std::uint64_t failing = c["failing"].get<std::uint64_t>();
  if (v == ClaimVerdict::kHolds || failing == 0) return std::string(verdict_cell(v));
  std::map<std::string, std::uint64_t> kinds;
  for (const auto& [kind, n] : c["by_kind"].items()) kinds[kind] = n.get<std::uint64_t>();
  if (v == ClaimVerdict::kRefutedAsExpected)
    return fmt::format("refuted as expected (finding: {})", md_cell(fail_text(failing, kinds)));
  return fmt::format("{} ({})", verdict_cell(v), md_cell(fail_text(failing, kinds)));
}

void markdown_claims_table(std::string& md, const Json& result) {
  md += "| claim | recipes | holding | result |\n|---|---|---|---|\n";
  for (std::size_t i = 0; i < result["claims"].size(); ++i) {
    const Json& c = result["claims"][i];
    std::string recipes;
    for (const Json& r : c["recipes"])
      recipes += fmt::format("{}{}", recipes.empty() ? "" : ", ", md_code(r.get<std::string>(), true));
    md += fmt::format("| {} | {} | {}/{} | {} |\n", md_cell(c["claim"].get<std::string>()), recipes,
                      c["holding"].get<std::uint64_t>(), c["cases"].get<std::uint64_t>(), result_cell(result, i));
  }
}

void markdown_user_inputs(std::string& md, const Json& result) {
  if (result.contains("user_sources")) {
    md += "User recipes built from (SHA-256):\n";
    for (const Json& s : result["user_sources"]) {
      md += fmt::format("- {} {}\n", md_code(s["path"].get<std::string>()), md_code(s["sha256"].get<std::string>().substr(0, 16)));
    }
  }
  if (result.contains("user_tables")) {
    md += "Output tables read (SHA-256):\n";
    for (const Json& t : result["user_tables"]) {
      md += fmt::format("- {}: {} ({}, {} bytes) {}\n", md_code(t["recipe"].get<std::string>()),
                        md_code(t["path"].get<std::string>()), md_text(t["layout"].get<std::string>()),
                        t["bytes"].get<std::uint64_t>(), md_code(t["sha256"].get<std::string>().substr(0, 16)));
    }
  }
}

// The backends' agreement; the hardware-vs-model count only where hardware ran.
void markdown_backends(std::string& md, const Json& report) {
  if (!report.contains("agreement")) return;
  const Json& a = report["agreement"];
  std::string names;
  for (const Json& n : a["backends"]) names += (names.empty() ? "" : ", ") + md_text(n.get<std::string>());
  bool hardware = false;
  for (const Json& b : report["backends"]) hardware = hardware || b.contains("model");
  md += fmt::format("\nBackends ({}): results {}", names, a["results_identical"].get<bool>() ? "identical" : "**differ**");
  md += hardware ? fmt::format(", {} hardware-vs-model disagreements.\n", a["model_disagreements"].get<std::uint64_t>())
                 : std::string(" (no hardware ran: CPU models only).\n");
  for (const Json& b : report["backends"]) {
    if (!b.contains("info") || !b["info"].contains("vendor_conversion_paths")) continue;
    for (const auto& [recipe, path] : b["info"]["vendor_conversion_paths"].items()) {
      md += fmt::format("- {} on {}: {}\n", md_code(recipe), md_text(b.value("name", "?")), md_text(path.get<std::string>()));
    }
  }
}

void markdown_proof(std::string& md, const Json& report) {
  const Json& result = report["result"];
  const ReportJudgement judged = judge_proof_report(report);
  const char* verdict = !judged.passes ? "refuted"
                        : judged.findings ? "as expected (every finding refuted exactly as recorded)"
                                          : "holds";
  md += fmt::format("**Verdict: {}** — {} claim{} over {} cases ({})\n\n", verdict, result["claims"].size(),
                    result["claims"].size() == 1 ? "" : "s", result["domain"]["cases"].get<std::uint64_t>(),
                    md_text(result["domain"]["label"].get<std::string>()));
  for (const std::string& problem : judged.problems) md += fmt::format("- **{}**\n", md_text(problem));
  if (!judged.problems.empty()) md += "\n";
  markdown_claims_table(md, result);
  md += fmt::format("\nIndependent witness (soft vs oracle arithmetic{}): {} disagreements.\n",
                    result.contains("user_sources") || result.contains("user_tables")
                        ? ", catalogue recipes; a user recipe's code runs once"
                        : "",
                    result["witness"]["disagreements"].get<std::uint64_t>());
  markdown_user_inputs(md, result);
  if (result["witness"].contains("rule")) {
    md += fmt::format("The witness sampled {} cases: {}.\n", result["witness"]["cases"].get<std::uint64_t>(),
                      md_text(result["witness"]["rule"].get<std::string>()));
  }
  markdown_backends(md, report);
  for (std::size_t i = 0; i < result["claims"].size(); ++i) {
    const Json& c = result["claims"][i];
    if (c["counterexamples"].empty()) continue;
    md += fmt::format("\n<details><summary>Counterexamples: {}</summary>\n\n", html_text(recorded_summary(result, i)));
    for (const Json& cx : c["counterexamples"]) markdown_counterexample(md, cx);
    md += "\n</details>\n";
  }
}

std::string range_words(const Json& lo, const Json& hi) {
  return lo == hi ? lo.dump() : fmt::format("{}..{}", lo.get<std::uint64_t>(), hi.get<std::uint64_t>());
}

// A domain claim's runs of codes restricted to lo..hi: holding/cases, and the failing runs.
struct IntervalView {
  std::uint64_t holding = 0;
  std::uint64_t cases = 0;
  std::vector<std::string> failing;
};

IntervalView interval_view(const Json& claim, std::uint64_t lo, std::uint64_t hi) {
  IntervalView v;
  for (const Json& run : claim["codes"]) {
    const std::uint64_t from = std::max(run["from"].get<std::uint64_t>(), lo);
    const std::uint64_t to = std::min(run["to"].get<std::uint64_t>(), hi);
    if (from > to) continue;
    v.cases += (to - from + 1) * run["cases"].get<std::uint64_t>();
    v.holding += (to - from + 1) * run["holding"].get<std::uint64_t>();
    if (run["holding"] != run["cases"]) v.failing.push_back(range_words(Json(from), Json(to)));
  }
  return v;
}

// "113..128, 130, 140..150" (the first 12 runs, then how many more).
std::string runs_text(const std::vector<std::string>& runs, const char* none) {
  if (runs.empty()) return none;
  std::string out;
  for (std::size_t i = 0; i < runs.size() && i < 12; ++i) out += (i ? ", " : "") + runs[i];
  return runs.size() > 12 ? fmt::format("{} and {} more runs", out, runs.size() - 12) : out;
}

void markdown_domain_claim(std::string& md, const Json& result, std::size_t i) {
  const Json& c = result["claims"][i];
  const std::string over = md_text(result["over"]["input"].get<std::string>());
  const std::uint64_t lo = result["over"]["spec_interval"][0].get<std::uint64_t>();
  const std::uint64_t hi = result["over"]["spec_interval"][1].get<std::uint64_t>();
  std::string recipes;
  const std::string joiner = c["claim"] == "equal" ? " ≡ " : ", ";
  for (const Json& r : c["recipes"])
    recipes += fmt::format("{}{}", recipes.empty() ? "" : joiner, md_code(r.get<std::string>()));
  md += fmt::format("\n### Claim {}: {} — {}\n\n", i, md_text(c["claim"].get<std::string>()), recipes);
  const IntervalView spec_view = interval_view(c, lo, hi);
  md += fmt::format("- on the spec's interval {}..{}: {}/{} cases hold{}\n", lo, hi, spec_view.holding, spec_view.cases,
                    spec_view.failing.empty() ? "" : " — **refuted**");
  std::vector<std::string> holding;
  for (const Json& run : c["holding"]) holding.push_back(range_words(run[0], run[1]));
  md += fmt::format("- holds on {} codes: {}\n", over, runs_text(holding, "no code"));
  if (c["maximal"].is_null()) {
    md += fmt::format("- no maximal interval: the claim fails inside the spec's interval, on {} {}\n", over,
                      runs_text(spec_view.failing, "?"));
  } else {
    const std::uint64_t mlo = c["maximal"][0].get<std::uint64_t>(), mhi = c["maximal"][1].get<std::uint64_t>();
    md += fmt::format("- maximal interval around {}..{}: **{}..{}** ({} codes)\n", lo, hi, mlo, mhi, mhi - mlo + 1);
  }
  for (const char* side : {"below", "above"}) {
    if (c[side].is_null()) {
      if (!c["maximal"].is_null()) md += fmt::format("- nothing {}: the interval reaches the end of what was swept\n", side);
      continue;
    }
    std::string at;
    for (const Json& in : c[side]["inputs"]) {
      if (in["input"] == result["over"]["input"])
        at = fmt::format(", at {} {} = {}", over, md_code(in["bits"].get<std::string>()), md_text(in["value"].get<std::string>()));
    }
    md += fmt::format("- first counterexample {}{}:\n", side, at);
    markdown_counterexample(md, c[side], 2);
  }
}

void markdown_domain(std::string& md, const Json& report) {
  const Json& result = report["result"];
  const ReportJudgement judged = judge_domain_report(report);
  md += fmt::format("**Verdict on the spec's interval: {}** — domain discovery over `{}` ({}, {}), spec interval {}..{}\n",
                    judged.passes ? "holds" : "refuted", md_code(result["over"]["input"].get<std::string>()),
                    md_text(result["over"]["format"].get<std::string>()),
                    result["over"].contains("swept") ? "the spec's interval" : "every code",
                    result["over"]["spec_interval"][0].get<std::uint32_t>(),
                    result["over"]["spec_interval"][1].get<std::uint32_t>());
  for (std::size_t i = 0; i < result["claims"].size(); ++i) markdown_domain_claim(md, result, i);
  if (const auto w = result["witness"]["disagreements"].get<std::uint64_t>(); w > 0) {
    md += fmt::format("\n**Independent witness: soft and oracle arithmetic disagree on {} evaluations.**\n", w);
  }
}

}  // namespace

void markdown_reproduce(std::string& md, const Json& report) {
  const Json& env = report["environment"];
  if (env.contains("command")) {
    // The command as typed works where it ran: the repository's root, a directory in it, or (no
    // run_in) a directory of the machine that wrote the report.
    const std::string where = !env.contains("run_in") ? "the directory it was run in"
                              : env["run_in"] == "."  ? "the repository root"
                                                     : md_code(env["run_in"].get<std::string>()) + " in the repository";
    md += fmt::format("\nReproduce (from {}):\n\n", where) + md_fenced(env["command"].get<std::string>(), "sh");
  } else {
    md += "\nReproduce: `bitproof report verify REPORT.json` re-runs the recorded spec and compares.\n";
  }
}

namespace {

// The Markdown of a report that records a prove spec: its name, title and
// source, the kind's body, how to reproduce it, the recipes' pins, the footer.
std::string spec_markdown(const Json& report, void (*body)(std::string&, const Json&)) {
  const Json& result = report["result"];
  const Json& spec = result["spec"];
  std::string md = fmt::format("## bitproof: {}\n\n", md_text(spec["name"].get<std::string>()));
  if (spec.contains("title")) md += md_text(spec["title"].get<std::string>(), true) + "\n\n";
  if (spec.contains("source")) md += "Source: " + md_text(spec["source"].get<std::string>()) + "\n\n";
  body(md, report);
  markdown_reproduce(md, report);
  markdown_pins(md, result);
  const Json& env = report["environment"];
  std::string digest;
  if (result.contains("case_digest")) {
    digest = fmt::format(", case digest {}", md_code(result["case_digest"]["sha256"].get<std::string>().substr(0, 16)));
  }
  md += fmt::format("\n---\nbitproof {} ({}), {}, {}{}\n", md_text(env["version"].get<std::string>()),
                    md_text(env["git_commit"].get<std::string>()), md_text(env["host"].get<std::string>()),
                    md_text(env["time_utc"].get<std::string>()), digest);
  return md;
}

}  // namespace

std::string render_proof_markdown(const Json& report) { return spec_markdown(report, markdown_proof); }

std::string render_domain_markdown(const Json& report) { return spec_markdown(report, markdown_domain); }

}  // namespace bitproof
