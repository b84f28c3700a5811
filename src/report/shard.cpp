#include "report/shard.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <tuple>

#include "parallel.hpp"
#include "hash/digest.hpp"
#include "report/read.hpp"
#include "strict_json.hpp"
#include "user/user_recipes.hpp"
#include "version.hpp"

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
//
// Nothing a shard says is taken on trust. load_report has checked the shape
// (reports/schema.json); here every number is checked against the spec it
// records and against the others: the range against the chunk grid of its
// index and count, the counts against the range and each other, the kept
// cases against the claim (each is evaluated again), the witness and model
// records against the arithmetic, the chunk records against the range; then
// chunks are swept again on the CPU and compared with the shard's record
// (rederive_chunks). A shard that does not add up is refused (exit 2).

struct ShardView {
  std::string path;
  ShardId id;
  std::uint64_t begin;
  std::uint64_t end;
  const Json* part;
};

Error at(const std::string& path, const std::string& field, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

std::uint64_t u64(const Json& j) { return j.get<std::uint64_t>(); }

Expected<ShardView> view_of(const Json& shard, const std::string& path, std::uint64_t cases) {
  if (shard.value("kind", "") != "shard") return at(path, "kind", "not a shard report (bitproof prove --shard I/N --report)");
  const Json& range = shard["result"]["shard"];
  ShardView v{path, {u64(range["index"]) - 1, u64(range["count"])}, u64(range["begin"]), u64(range["end"]),
              &shard["result"]["part"]};
  if (v.id.index >= v.id.count) return at(path, "result.shard.index", "above result.shard.count");
  if (u64(range["cases"]) != cases) {
    return at(path, "result.shard.cases", fmt::format("{}, but the spec's domain has {} cases", u64(range["cases"]), cases));
  }
  const auto [begin, end] = shard_range(cases, v.id);
  if (v.begin != begin || v.end != end) {
    return at(path, "result.shard",
              fmt::format("cases {}..{}, but shard {}/{} of {} cases is {}..{}", v.begin, v.end, v.id.index + 1,
                          v.id.count, cases, begin, end));
  }
  return v;
}

const RecipeEntry* spec_recipe(const CaseEvaluator& eval, const Json& name) {
  for (const RecipeEntry* r : eval.recipes()) {
    if (r->card->name == name.get<std::string>()) return r;
  }
  return nullptr;
}

std::size_t slot_of(const CaseEvaluator& eval, const RecipeEntry* recipe) {
  return static_cast<std::size_t>(std::find(eval.recipes().begin(), eval.recipes().end(), recipe) - eval.recipes().begin());
}

// SHA-256 digests as the report writes them (64 hex digits each; the schema has checked them) and back.
void append_digests(const Json& hex_list, std::vector<std::uint8_t>& bytes) {
  for (const Json& h : hex_list) {
    const std::string& hex = h.get_ref<const std::string&>();
    for (std::size_t k = 0; k < 64; k += 2) bytes.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(k, 2), nullptr, 16)));
  }
}

Json hex_digests(const std::vector<std::uint8_t>& bytes) {
  Json list = Json::array();
  for (std::size_t k = 0; k + 32 <= bytes.size(); k += 32) list.push_back(to_hex(std::span<const std::uint8_t>(bytes.data() + k, 32)));
  return list;
}

struct PartReader {
  const Spec& spec;
  const CaseEvaluator& eval;
  const ShardView& v;
  std::size_t keep;
  std::array<std::uint32_t, kMaxArity> codes{};
  std::vector<std::uint32_t> soft, witness;

  PartReader(const Spec& s, const CaseEvaluator& e, const ShardView& view, std::size_t k)
      : spec(s), eval(e), v(view), keep(k), soft(e.recipes().size()), witness(e.recipes().size()) {}

  void evaluate(std::uint64_t i) {
    eval.codes_of(i, codes.data());
    eval.soft_outputs(codes.data(), soft.data());
    eval.witness_outputs(codes.data(), witness.data());
  }

  Expected<Ok> in_range(std::uint64_t i, const std::string& field) const {
    if (i < v.begin || i >= v.end) return at(v.path, field, fmt::format("case {} is outside the shard ({}..{})", i, v.begin, v.end));
    return Ok{};
  }

  // A witness or model record: its recipe must be the spec's and its case the
  // shard's; the case is evaluated again. Returns the recipe's slot.
  Expected<std::size_t> evaluate_record(const Json& record, const std::string& field) {
    const RecipeEntry* recipe = spec_recipe(eval, record["recipe"]);
    if (recipe == nullptr) return at(v.path, field + ".recipe", "not a recipe of the spec");
    if (auto ok = in_range(u64(record["case"]), field + ".case"); !ok) return ok.error();
    evaluate(u64(record["case"]));
    return slot_of(eval, recipe);
  }

  Expected<ClaimResult> claim(std::size_t c, const Json& j, bool hardware_differs) {
    const std::string field = fmt::format("result.part.claims[{}]", c);
    ClaimResult cr;
    cr.cases = u64(j["cases"]);
    cr.holding = u64(j["holding"]);
    if (cr.cases != v.end - v.begin) {
      return at(v.path, field + ".cases", fmt::format("{}, but the shard holds {} cases", cr.cases, v.end - v.begin));
    }
    if (cr.holding > cr.cases) return at(v.path, field + ".holding", fmt::format("{} is more than the {} cases", cr.holding, cr.cases));
    std::uint64_t failing = 0;
    for (const auto& [kind, n] : j["by_kind"].items()) {
      cr.by_kind[kind] = u64(n);
      failing += u64(n);
    }
    if (failing != cr.cases - cr.holding) {
      return at(v.path, field + ".by_kind",
                fmt::format("counts {} failing cases, but cases - holding = {}", failing, cr.cases - cr.holding));
    }
    const Json& kept = j["counterexample_cases"];
    if (kept.size() != std::min<std::uint64_t>(keep, failing)) {
      return at(v.path, field + ".counterexample_cases",
                fmt::format("{} kept, but keep = {} and {} cases fail", kept.size(), keep, failing));
    }
    std::uint64_t previous = 0;
    for (std::size_t k = 0; k < kept.size(); ++k) {
      const std::uint64_t i = u64(kept[k]);
      const std::string at_k = fmt::format("{}.counterexample_cases[{}]", field, k);
      if (auto ok = in_range(i, at_k); !ok) return ok.error();
      if (k > 0 && i <= previous) return at(v.path, at_k, "not in ascending order");
      previous = i;
      evaluate(i);
      std::string kind = eval.check(spec.claims[c], codes.data(), soft.data());
      if (kind.empty()) {
        // Only a hardware backend whose bits differed from the model can fail where the model holds.
        if (!hardware_differs) return at(v.path, at_k, fmt::format("the claim holds on case {}", i));
        kind = "hardware";
      }
      cr.counterexamples.push_back(eval.counterexample(spec.claims[c], i, codes.data(), soft.data(), kind));
    }
    return cr;
  }

  Expected<Ok> witness_records(SweepPart& part, const Json& d) {
    const bool full = witness_mode_for(spec.case_count()) == WitnessMode::kFull;
    const std::uint64_t want = full ? v.end - v.begin : 0;
    if (part.witnessed_cases != want) {
      return at(v.path, "result.part.witnessed_cases", fmt::format("{}, but this domain's parts witness {}", part.witnessed_cases, want));
    }
    part.witness_disagreement_count = u64(d["witness_count"]);
    if (d["witness"].size() > part.witness_disagreement_count || d["witness"].size() > keep) {
      return at(v.path, "result.part.disagreements.witness", "more records than witness_count or keep");
    }
    for (std::size_t k = 0; k < d["witness"].size(); ++k) {
      const Json& w = d["witness"][k];
      const std::string field = fmt::format("result.part.disagreements.witness[{}]", k);
      auto slot = evaluate_record(w, field);
      if (!slot) return slot.error();
      const std::size_t r = *slot;
      const RecipeEntry* recipe = eval.recipes()[r];
      if (soft[r] != w["soft"] || witness[r] != w["oracle"] || soft[r] == witness[r]) {
        return at(v.path, field, "does not reproduce: the soft and oracle arithmetic give other bits here");
      }
      part.witness_disagreements.push_back({u64(w["case"]), {codes.begin(), codes.begin() + spec.inputs.size()}, recipe,
                                            soft[r], witness[r]});
    }
    return Ok{};
  }

  Expected<Ok> model_records(SweepPart& part, const Json& d) {
    part.model_compared = u64(d["model_compared"]);
    part.model_disagreement_count = u64(d["model_count"]);
    if (part.model_disagreement_count > part.model_compared || d["model"].size() > part.model_disagreement_count) {
      return at(v.path, "result.part.disagreements.model_count", "inconsistent with model_compared or the records");
    }
    for (std::size_t k = 0; k < d["model"].size(); ++k) {
      const Json& m = d["model"][k];
      const std::string field = fmt::format("result.part.disagreements.model[{}]", k);
      auto slot = evaluate_record(m, field);
      if (!slot) return slot.error();
      const std::size_t r = *slot;
      const RecipeEntry* recipe = eval.recipes()[r];
      if (soft[r] != m["soft"] || m["hardware"] == m["soft"]) {
        return at(v.path, field, "does not reproduce: the soft model gives other bits here");
      }
      part.model_disagreements.push_back({u64(m["case"]), {codes.begin(), codes.begin() + spec.inputs.size()}, recipe,
                                          soft[r], recipe->is_user() ? soft[r] : recipe->oracle(codes.data()),
                                          m["hardware"].get<std::uint32_t>()});
    }
    return Ok{};
  }

  Expected<Ok> chunk_records(SweepPart& part, const Json& p) {
    const std::uint64_t chunks = (v.end - v.begin + kChunkCases - 1) / kChunkCases;
    const DigestMode mode = digest_mode_for(spec.case_count());
    if (mode == DigestMode::kBlockSums) return block_records(part, p);
    if (p.contains("block_digests") || p.contains("chunk_samples")) {
      return at(v.path, "result.part", "block digests or chunk samples, but this domain's digest is not kept per block");
    }
    const bool full = mode == DigestMode::kFull;
    const std::uint64_t digests = full ? chunks : 0, sums = full ? 0 : chunks * chunk_sum_words(spec);
    if (p["chunk_digests"].size() != digests || p["chunk_sums"].size() != sums) {
      return at(v.path, "result.part", fmt::format("{} chunk digests and {} chunk sums, but {} chunks need {} and {}",
                                                   p["chunk_digests"].size(), p["chunk_sums"].size(), chunks, digests, sums));
    }
    append_digests(p["chunk_digests"], part.chunk_digests);
    for (const Json& w : p["chunk_sums"]) part.chunk_sums.push_back(w.get<std::uint32_t>());
    // Chunk sums end with each claim's failing count in the chunk: they must add up to the claim's.
    const std::size_t words = chunk_sum_words(spec), first_claim = 2 * eval.recipes().size();
    for (std::size_t c = 0; !full && c < spec.claims.size(); ++c) {
      std::uint64_t failing = 0;
      for (std::uint64_t k = 0; k < chunks; ++k) failing += part.chunk_sums[k * words + first_claim + c];
      if (failing != part.claims[c].cases - part.claims[c].holding) {
        return at(v.path, fmt::format("result.part.claims[{}]", c),
                  fmt::format("{} failing cases, but its chunk sums count {}", part.claims[c].cases - part.claims[c].holding,
                              failing));
      }
    }
    return Ok{};
  }

  // Block-sum mode: one digest per block of the range, and the words of the
  // shard's spot-check chunks (shard_spot_chunks), each swept again by the merge.
  Expected<Ok> block_records(SweepPart& part, const Json& p) {
    const std::uint64_t blocks = (v.end - v.begin + kBlockCases - 1) / kBlockCases;
    if (!p["chunk_digests"].empty() || !p["chunk_sums"].empty()) {
      return at(v.path, "result.part", "chunk digests or sums, but this domain's digest is kept per 2^32-case block");
    }
    const Json none = Json::array();
    const Json& digests = p.contains("block_digests") ? p["block_digests"] : none;
    if (digests.size() != blocks) {
      return at(v.path, "result.part.block_digests", fmt::format("{} digests, but the shard holds {} blocks", digests.size(), blocks));
    }
    append_digests(digests, part.block_digests);
    const std::vector<std::uint64_t> want = shard_spot_chunks(spec.case_count(), v.id);
    const Json& samples = p.contains("chunk_samples") ? p["chunk_samples"] : none;
    const std::size_t words = chunk_sum_words(spec);
    bool same = samples.size() == want.size();
    for (std::size_t k = 0; same && k < want.size(); ++k) {
      same = u64(samples[k]["chunk"]) == want[k] && samples[k]["sums"].size() == words;
    }
    if (!same) {
      return at(v.path, "result.part.chunk_samples",
                fmt::format("not the words of chunks {} ({} each), the spot checks of shard {}/{}", fmt::join(want, ", "),
                            words, v.id.index + 1, v.id.count));
    }
    for (const Json& sample : samples) {
      part.kept_chunk_sums[u64(sample["chunk"])] = sample["sums"].get<std::vector<std::uint32_t>>();
    }
    return Ok{};
  }

  Expected<SweepPart> read() {
    const Json& p = *v.part;
    SweepPart part;
    part.begin = v.begin;
    part.end = v.end;
    if (p["claims"].size() != spec.claims.size()) {
      return at(v.path, "result.part.claims", fmt::format("{} claims, but the spec has {}", p["claims"].size(), spec.claims.size()));
    }
    const Json& d = p["disagreements"];
    const bool hardware_differs = u64(d["model_count"]) > 0;
    for (std::size_t c = 0; c < spec.claims.size(); ++c) {
      auto cr = claim(c, p["claims"][c], hardware_differs);
      if (!cr) return cr.error();
      part.claims.push_back(std::move(*cr));
    }
    part.witnessed_cases = u64(p["witnessed_cases"]);
    if (auto ok = witness_records(part, d); !ok) return ok.error();
    if (auto ok = model_records(part, d); !ok) return ok.error();
    if (auto ok = chunk_records(part, p); !ok) return ok.error();
    return part;
  }
};

// The chunks of a part swept again: all of them when the whole domain is
// within the full-witness limit (a small proof: merge then re-derives every
// count), else the first, the last, one picked by the shard's index and every
// chunk holding a kept counterexample.
std::vector<std::uint64_t> chunks_to_rederive(const Spec& spec, const SweepPart& part, const ShardView& v) {
  const std::uint64_t first = part.begin / kChunkCases;
  const std::uint64_t chunks = (part.end - part.begin + kChunkCases - 1) / kChunkCases;
  std::vector<std::uint64_t> picked;
  if (chunks == 0) return picked;
  if (spec.case_count() <= kFullWitnessLimit) {
    for (std::uint64_t k = 0; k < chunks; ++k) picked.push_back(first + k);
    return picked;
  }
  picked = {first, first + chunks - 1, first + splitmix64(v.id.index) % chunks};
  for (const ClaimResult& c : part.claims) {
    for (const Counterexample& cx : c.counterexamples) picked.push_back(cx.case_index / kChunkCases);
  }
  std::sort(picked.begin(), picked.end());
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  return picked;
}

// Sweeps the picked chunks on the CPU and compares them with the shard's
// record: the chunk digest or chunk sums (which cover every output bit and,
// for sums, each claim's failing count), and when every chunk is swept the
// claim counts, kinds and kept cases. Skipped when the shard's hardware
// differed from the model (its records hold hardware bits; the merged result
// fails on that disagreement anyway).
Expected<Ok> rederive_chunks(const Spec& spec, const CaseEvaluator& eval, const SweepPart& part, const ShardView& v,
                             std::size_t keep) {
  if (part.model_disagreement_count > 0) return Ok{};
  EngineOptions options;
  options.keep = keep;
  if (digest_mode_for(spec.case_count()) == DigestMode::kBlockSums) {
    // A block is 2^32 cases: its digest is not swept again here, its spot-check chunks are.
    for (const auto& [chunk, sums] : part.kept_chunk_sums) {
      const std::uint64_t begin = chunk * kChunkCases, end = std::min(part.end, begin + kChunkCases);
      if (sweep_range(eval, spec, options, begin, end).chunk_sums != sums) {
        return at(v.path, "result.part.chunk_samples",
                  fmt::format("cases {}..{} swept again here give other outputs or counts than the shard records", begin, end));
      }
    }
    return Ok{};
  }
  const std::vector<std::uint64_t> picked = chunks_to_rederive(spec, part, v);
  const std::size_t words = chunk_sum_words(spec);
  const std::uint64_t first = part.begin / kChunkCases;
  std::vector<SweepPart> swept;
  for (const std::uint64_t chunk : picked) {
    const std::uint64_t begin = chunk * kChunkCases, end = std::min(part.end, begin + kChunkCases);
    SweepPart again = sweep_range(eval, spec, options, begin, end);
    const std::size_t k = chunk - first;
    const bool same = again.chunk_sums.empty()
                          ? std::equal(again.chunk_digests.begin(), again.chunk_digests.end(), part.chunk_digests.begin() + 32 * k)
                          : std::equal(again.chunk_sums.begin(), again.chunk_sums.end(), part.chunk_sums.begin() + words * k);
    if (!same) {
      return at(v.path, "result.part",
                fmt::format("cases {}..{} swept again here give other outputs or counts than the shard records", begin, end));
    }
    swept.push_back(std::move(again));
  }
  // Counts are re-derived only from a whole part; an empty part has none to check (its zeros are checked above).
  if (picked.empty() || picked.size() * kChunkCases < part.end - part.begin) return Ok{};
  const SweepPart whole = join_parts(options, std::move(swept));
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    const ClaimResult& a = whole.claims[c];
    const ClaimResult& b = part.claims[c];
    bool same = a.holding == b.holding && a.by_kind == b.by_kind && a.counterexamples.size() == b.counterexamples.size();
    for (std::size_t k = 0; same && k < a.counterexamples.size(); ++k) {
      same = a.counterexamples[k].case_index == b.counterexamples[k].case_index && a.counterexamples[k].kind == b.counterexamples[k].kind;
    }
    if (!same) {
      return at(v.path, fmt::format("result.part.claims[{}]", c),
                fmt::format("swept again here: {}/{} hold, the shard says {}/{}", a.holding, a.cases, b.holding, b.cases));
    }
  }
  if (whole.witness_disagreement_count != part.witness_disagreement_count) {
    return at(v.path, "result.part.disagreements.witness_count",
              fmt::format("{}, but swept again here: {}", part.witness_disagreement_count, whole.witness_disagreement_count));
  }
  return Ok{};
}

// The shards, sorted, must tile [0, cases) exactly, each index of one N once.
Expected<Ok> check_coverage(std::vector<ShardView>& views, std::uint64_t cases) {
  // Empty shards (N above the chunk count) sort before the shard that starts where they sit.
  std::sort(views.begin(), views.end(), [](const ShardView& a, const ShardView& b) {
    return std::tuple(a.begin, a.end, a.id.index) < std::tuple(b.begin, b.end, b.id.index);
  });
  std::uint64_t next = 0;
  for (std::size_t k = 0; k < views.size(); ++k) {
    const ShardView& v = views[k];
    if (v.id.count != views.front().id.count) {
      return at(v.path, "result.shard.count", fmt::format("{}, but {} is a shard of {}", v.id.count, views.front().path, views.front().id.count));
    }
    if (k > 0 && v.id.index == views[k - 1].id.index) {
      return at(v.path, "result.shard", fmt::format("cases {}..{} overlap another shard (shard {}/{} given twice)", v.begin, v.end, v.id.index + 1, v.id.count));
    }
    if (v.begin < next) return at(v.path, "result.shard", fmt::format("cases {}..{} overlap another shard", v.begin, v.end));
    if (v.begin > next) return at(v.path, "result.shard", fmt::format("cases {}..{} are missing: no shard covers them", next, v.begin));
    next = v.end;
  }
  if (next != cases) return at(views.back().path, "result.shard", fmt::format("cases {}..{} are missing: no shard covers them", next, cases));
  return Ok{};
}

// "bitproof 0.3.0 (a1b2c3d4e5f6)", as environment_json records a build.
std::string version_text(const std::string& version, const std::string& commit) {
  return fmt::format("bitproof {} ({})", version, commit);
}

// A shard must come from this bitproof (its version and commit): the merge
// sweeps only some chunks again, and takes the others' bits as the shard's
// build computed them.
Expected<Ok> same_version(const Json& environment, const std::string& path) {
  const std::string version = environment["version"].get<std::string>();
  const std::string commit = environment["git_commit"].get<std::string>();
  if (version == tool_version() && commit == tool_git_commit()) return Ok{};
  return at(path, "environment.version",
            fmt::format("a shard of {}, but this is {}: merge shards with the bitproof that swept them",
                        printable(version_text(version, commit)), version_text(tool_version(), tool_git_commit())));
}

// A shard's result.user_sources (`recorded`, null when absent) must be the
// merge's own (`here`): the first file that differs is named with both digests.
Expected<Ok> same_sources(const Json& recorded, const Json& here, const std::string& path) {
  if (recorded == here) return Ok{};
  const auto digest_in = [](const Json& list, const std::string& file) -> std::string {
    if (!list.is_array()) return "none";
    for (const Json& s : list) {
      if (s["path"] == file) return s["sha256"].get<std::string>();
    }
    return "none";
  };
  std::vector<std::string> files;
  for (const Json* list : {&recorded, &here}) {
    if (!list->is_array()) continue;
    for (const Json& s : *list) files.push_back(s["path"].get<std::string>());
  }
  for (const std::string& file : files) {
    const std::string theirs = digest_in(recorded, file), ours = digest_in(here, file);
    if (theirs != ours) {
      return at(path, "result.user_sources",
                fmt::format("{}: SHA-256 {} in the shard, {} here: the shard's user code was built from other "
                            "sources than this merge's",
                            printable(file), theirs, ours));
    }
  }
  return at(
      path, "result.user_sources",
      fmt::format("{}, but this merge builds the user code from {}", recorded.is_null() ? "missing" : "other files",
                  here.is_null() ? "nothing (the spec has no function recipe)" : here.dump()));
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
  const std::uint64_t unit = range_unit(cases);
  const std::uint64_t units = (cases + unit - 1) / unit;
  const auto unit_at = [&](std::uint64_t k) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(k) * units) / shard.count);
  };
  return {std::min(cases, unit_at(shard.index) * unit), std::min(cases, unit_at(shard.index + 1) * unit)};
}

std::vector<std::uint64_t> shard_spot_chunks(std::uint64_t cases, ShardId shard) {
  const auto [begin, end] = shard_range(cases, shard);
  if (digest_mode_for(cases) != DigestMode::kBlockSums || begin == end) return {};
  const std::uint64_t first = begin / kChunkCases, chunks = (end - begin + kChunkCases - 1) / kChunkCases;
  std::vector<std::uint64_t> picked{first, first + splitmix64(shard.index) % chunks, first + chunks - 1};
  std::sort(picked.begin(), picked.end());
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  return picked;
}

Json shard_report(const Spec& spec, const SweepPart& part, ShardId shard, std::size_t keep, const Json& backend_info) {
  const Json spec_json = spec_to_json(spec);
  Json p{{"claims", part_claims_json(part)},
         {"witnessed_cases", part.witnessed_cases},
         {"disagreements", disagreements_json(part)},
         {"chunk_digests", hex_digests(part.chunk_digests)},
         {"chunk_sums", part.chunk_sums}};
  if (digest_mode_for(spec.case_count()) == DigestMode::kBlockSums) {
    Json samples = Json::array();
    for (const auto& [chunk, sums] : part.kept_chunk_sums) samples.push_back({{"chunk", chunk}, {"sums", sums}});
    p["block_digests"] = hex_digests(part.block_digests);
    p["chunk_samples"] = samples;
  }
  Json result{{"spec", spec_json},
              {"spec_sha256", sha256_hex(spec_json.dump())},
              {"keep", keep},
              {"shard", {{"index", shard.index + 1}, {"count", shard.count}, {"begin", part.begin}, {"end", part.end},
                         {"cases", spec.case_count()}}},
              {"part", p}};
  if (Json sources = user_sources_json(spec); !sources.is_null()) result["user_sources"] = sources;
  if (Json tables = user_tables_json(spec); !tables.is_null()) result["user_tables"] = tables;
  return Json{{"bitproof_report", kReportVersion}, {"kind", "shard"}, {"result", result},
              {"backends", Json::array({backend_info})}, {"environment", environment_json()}};
}

Expected<Json> merge_shards(const std::vector<Json>& shards, const std::vector<std::string>& paths) {
  if (shards.empty()) return Error{"report merge: no shards given"};
  for (std::size_t k = 0; k < shards.size(); ++k) {
    if (auto ok = validate_report(shards[k], paths[k]); !ok) return ok.error();
    if (shards[k]["kind"] != "shard") return at(paths[k], "kind", "not a shard report (bitproof prove --shard I/N --report)");
    if (auto ok = same_version(shards[k]["environment"], paths[k]); !ok) return ok.error();
    if (shards[k]["result"]["spec_sha256"] != shards[0]["result"]["spec_sha256"] ||
        shards[k]["result"]["keep"] != shards[0]["result"]["keep"]) {
      return at(paths[k], "result.spec", fmt::format("a shard of another spec (or --keep) than {}", paths[0]));
    }
  }
  auto spec = parse_spec(shards[0]["result"]["spec"].dump(), paths[0] + ": result.spec");
  if (!spec) return spec.error();
  if (spec->user) spec->user->no_cache = true;  // the chunks swept again here take nothing from the cache
  if (auto ok = check_sweepable(*spec); !ok) return ok.error();
  // Every shard's user code must have been built from the files this merge
  // builds it from: a chunk not swept again would otherwise carry the bits of
  // another kernel header under this one's digest.
  const Json sources = user_sources_json(*spec);
  for (std::size_t k = 0; k < shards.size(); ++k) {
    if (auto ok = same_sources(shards[k]["result"].value("user_sources", Json()), sources, paths[k]); !ok)
      return ok.error();
  }
  // Every shard must have read the output tables this merge reads: a chunk not
  // swept again would otherwise carry another table's bits under this one's digest.
  const Json tables = user_tables_json(*spec);
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const Json recorded = shards[k]["result"].value("user_tables", Json());
    if (recorded != tables) {
      return at(paths[k], "result.user_tables",
                fmt::format("the shard read other output tables ({}) than are here now ({})", recorded.dump(),
                            tables.dump()));
    }
  }
  std::vector<ShardView> views;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    auto v = view_of(shards[k], paths[k], spec->case_count());
    if (!v) return v.error();
    views.push_back(*v);
  }
  if (auto ok = check_coverage(views, spec->case_count()); !ok) return ok.error();
  const auto keep = shards[0]["result"]["keep"].get<std::size_t>();
  const CaseEvaluator eval(*spec);
  std::vector<SweepPart> parts;
  for (const ShardView& v : views) {
    auto part = PartReader(*spec, eval, v, keep).read();
    if (!part) return part.error();
    if (auto ok = rederive_chunks(*spec, eval, *part, v, keep); !ok) return ok.error();
    parts.push_back(std::move(*part));
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
