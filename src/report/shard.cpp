#include "report/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "parallel.hpp"
#include "report/digest.hpp"

namespace bitproof {
namespace {

Json part_claims_json(const SweepPart& part) {
  Json claims = Json::array();
  for (const ClaimResult& c : part.claims) {
    Json by_kind = Json::object();
    for (const auto& [kind, n] : c.by_kind) by_kind[kind] = n;
    Json cases = Json::array();
    for (const Counterexample& cx : c.counterexamples) cases.push_back(cx.case_index);
    claims.push_back({{"cases", c.cases}, {"holding", c.holding}, {"by_kind", by_kind}, {"counterexample_cases", cases}});
  }
  return claims;
}

Json disagreements_json(const SweepPart& part) {
  Json witness = Json::array();
  for (const WitnessDisagreement& w : part.witness_disagreements) {
    witness.push_back({{"case", w.case_index}, {"recipe", w.recipe->card->name}, {"soft", w.soft}, {"oracle", w.oracle}});
  }
  Json model = Json::array();
  for (const ModelDisagreement& m : part.model_disagreements) {
    model.push_back({{"case", m.case_index}, {"recipe", m.recipe->card->name}, {"soft", m.soft}, {"oracle", m.oracle},
                     {"hardware", m.hardware}});
  }
  return Json{{"witness_count", part.witness_disagreement_count}, {"witness", witness},
              {"model_compared", part.model_compared}, {"model_count", part.model_disagreement_count},
              {"model", model}};
}

// ---- reading a shard back ----

struct ShardView {
  std::string path;
  std::uint64_t begin;
  std::uint64_t end;
  const Json* part;
};

Error at(const std::string& path, const std::string& field, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

Expected<ShardView> view_of(const Json& shard, const std::string& path) {
  if (!shard.is_object() || shard.value("kind", "") != "shard") return at(path, "kind", "not a shard report (bitproof prove --shard I/N --report)");
  const Json& result = shard["result"];
  const Json& range = result.value("shard", Json());
  if (!range.is_object() || !range.value("begin", Json()).is_number_unsigned() || !range.value("end", Json()).is_number_unsigned() ||
      !result.value("part", Json()).is_object()) {
    return at(path, "result.shard", "expected begin, end and a part");
  }
  return ShardView{path, range["begin"].get<std::uint64_t>(), range["end"].get<std::uint64_t>(), &result["part"]};
}

const RecipeEntry* recipe_named(const Json& j) { return recipe_by_name(j.get<std::string>()); }

Expected<SweepPart> part_of(const Spec& spec, const CaseEvaluator& eval, const ShardView& v, std::size_t keep) {
  const Json& p = *v.part;
  SweepPart part;
  part.begin = v.begin;
  part.end = v.end;
  std::array<std::uint32_t, kMaxArity> codes{};
  std::vector<std::uint32_t> soft(eval.recipes().size());
  if (!p.value("claims", Json()).is_array() || p["claims"].size() != spec.claims.size()) {
    return at(v.path, "result.part.claims", "does not match the spec's claims");
  }
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    const Json& j = p["claims"][c];
    ClaimResult cr;
    cr.cases = j.at("cases").get<std::uint64_t>();
    cr.holding = j.at("holding").get<std::uint64_t>();
    for (const auto& [kind, n] : j.at("by_kind").items()) cr.by_kind[kind] = n.get<std::uint64_t>();
    for (const Json& index : j.at("counterexample_cases")) {
      const auto i = index.get<std::uint64_t>();
      if (i < v.begin || i >= v.end) return at(v.path, "result.part.claims", fmt::format("case {} outside the shard", i));
      eval.codes_of(i, codes.data());
      eval.soft_outputs(codes.data(), soft.data());
      std::string kind = eval.check(spec.claims[c], codes.data(), soft.data());
      if (kind.empty()) kind = "hardware";  // failed on hardware bits that the soft model does not reproduce
      cr.counterexamples.push_back(eval.counterexample(spec.claims[c], i, codes.data(), soft.data(), kind));
    }
    if (cr.counterexamples.size() > keep) cr.counterexamples.resize(keep);
    part.claims.push_back(std::move(cr));
  }
  const Json& d = p.at("disagreements");
  part.witness_disagreement_count = d.at("witness_count").get<std::uint64_t>();
  for (const Json& w : d.at("witness")) {
    const auto i = w.at("case").get<std::uint64_t>();
    eval.codes_of(i, codes.data());
    part.witness_disagreements.push_back({i, {codes.begin(), codes.begin() + spec.inputs.size()}, recipe_named(w.at("recipe")),
                                          w.at("soft").get<std::uint32_t>(), w.at("oracle").get<std::uint32_t>()});
  }
  part.model_compared = d.at("model_compared").get<std::uint64_t>();
  part.model_disagreement_count = d.at("model_count").get<std::uint64_t>();
  for (const Json& m : d.at("model")) {
    const auto i = m.at("case").get<std::uint64_t>();
    eval.codes_of(i, codes.data());
    part.model_disagreements.push_back({i, {codes.begin(), codes.begin() + spec.inputs.size()}, recipe_named(m.at("recipe")),
                                        m.at("soft").get<std::uint32_t>(), m.at("oracle").get<std::uint32_t>(),
                                        m.at("hardware").get<std::uint32_t>()});
  }
  part.witnessed_cases = p.at("witnessed_cases").get<std::uint64_t>();
  for (const Json& h : p.at("chunk_digests")) {
    const std::string hex = h.get<std::string>();
    if (hex.size() != 64) return at(v.path, "result.part.chunk_digests", "expected 64 hex digits each");
    for (std::size_t k = 0; k < 64; k += 2) part.chunk_digests.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(k, 2), nullptr, 16)));
  }
  for (const Json& w : p.at("chunk_sums")) part.chunk_sums.push_back(w.get<std::uint32_t>());
  return part;
}

// The shards, sorted, must tile [0, cases) exactly.
Expected<Ok> check_coverage(std::vector<ShardView>& views, std::uint64_t cases) {
  // Empty shards (N above the chunk count) sort before the shard that starts where they sit.
  std::sort(views.begin(), views.end(),
            [](const ShardView& a, const ShardView& b) { return std::pair(a.begin, a.end) < std::pair(b.begin, b.end); });
  std::uint64_t next = 0;
  for (const ShardView& v : views) {
    if (v.begin < next) return at(v.path, "result.shard", fmt::format("cases {}..{} overlap another shard", v.begin, v.end));
    if (v.begin > next) return at(v.path, "result.shard", fmt::format("cases {}..{} are missing: no shard covers them", next, v.begin));
    next = v.end;
  }
  if (next != cases) return at(views.back().path, "result.shard", fmt::format("cases {}..{} are missing: no shard covers them", next, cases));
  return Ok{};
}

}  // namespace

Expected<ShardId> parse_shard_flag(const std::string& text, const std::string& flag) {
  const auto slash = text.find('/');
  std::uint64_t i = 0, n = 0;
  const char* end = text.data() + text.size();
  const bool ok = slash != std::string::npos &&
                  std::from_chars(text.data(), text.data() + slash, i).ptr == text.data() + slash &&
                  std::from_chars(text.data() + slash + 1, end, n).ptr == end && slash > 0 && slash + 1 < text.size();
  if (!ok || n == 0 || i == 0 || i > n) return Error{fmt::format("{}: expected I/N with 1 <= I <= N, got \"{}\"", flag, text)};
  return ShardId{i - 1, n};
}

std::pair<std::uint64_t, std::uint64_t> shard_range(std::uint64_t cases, ShardId shard) {
  const std::uint64_t chunks = (cases + kChunkCases - 1) / kChunkCases;
  const auto chunk_at = [&](std::uint64_t k) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(k) * chunks) / shard.count);
  };
  return {std::min(cases, chunk_at(shard.index) * kChunkCases), std::min(cases, chunk_at(shard.index + 1) * kChunkCases)};
}

Json shard_report(const Spec& spec, const SweepPart& part, ShardId shard, std::size_t keep, const Json& backend_info) {
  const Json spec_json = spec_to_json(spec);
  Json digests = Json::array();
  for (std::size_t k = 0; k + 32 <= part.chunk_digests.size(); k += 32) {
    digests.push_back(to_hex(std::span<const std::uint8_t>(part.chunk_digests.data() + k, 32)));
  }
  Json p{{"claims", part_claims_json(part)},
         {"witnessed_cases", part.witnessed_cases},
         {"disagreements", disagreements_json(part)},
         {"chunk_digests", digests},
         {"chunk_sums", part.chunk_sums}};
  Json result{{"spec", spec_json},
              {"spec_sha256", sha256_hex(spec_json.dump())},
              {"keep", keep},
              {"shard", {{"index", shard.index + 1}, {"count", shard.count}, {"begin", part.begin}, {"end", part.end},
                         {"cases", spec.case_count()}}},
              {"part", p}};
  return Json{{"bitproof_report", kReportVersion}, {"kind", "shard"}, {"result", result},
              {"backends", Json::array({backend_info})}, {"environment", environment_json()}};
}

Expected<Json> merge_shards(const std::vector<Json>& shards, const std::vector<std::string>& paths) {
  std::vector<ShardView> views;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    auto v = view_of(shards[k], paths[k]);
    if (!v) return v.error();
    if (shards[k]["result"]["spec_sha256"] != shards[0]["result"]["spec_sha256"] ||
        shards[k]["result"]["keep"] != shards[0]["result"]["keep"]) {
      return at(paths[k], "result.spec", fmt::format("a shard of another spec (or --keep) than {}", paths[0]));
    }
    views.push_back(*v);
  }
  auto spec = parse_spec(shards[0]["result"]["spec"].dump(), paths[0] + ": result.spec");
  if (!spec) return spec.error();
  if (auto ok = check_coverage(views, spec->case_count()); !ok) return ok.error();
  const auto keep = shards[0]["result"]["keep"].get<std::size_t>();
  const CaseEvaluator eval(*spec);
  std::vector<SweepPart> parts;
  try {
    for (const ShardView& v : views) {
      auto part = part_of(*spec, eval, v, keep);
      if (!part) return part.error();
      parts.push_back(std::move(*part));
    }
  } catch (const std::exception& e) {
    return Error{fmt::format("{}: result.part: malformed ({})", views.front().path, e.what())};
  }
  EngineOptions options;
  options.keep = keep;
  options.threads = resolve_threads(0);
  ProofResult merged = merge_parts(*spec, options, std::move(parts));
  if (merged.witness_mode == WitnessMode::kSampled) add_sampled_witness(*spec, options, merged);
  BackendRun run{"merged", fmt::format("{} shards", shards.size()), std::move(merged)};
  run.info = Json::array();
  for (const Json& s : shards) run.info.push_back(s["backends"]);
  return proof_report(*spec, {run}, keep);
}

}  // namespace bitproof
