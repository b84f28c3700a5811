// Shards of a block-sum domain (above 2^32 cases, report/shard.hpp): slices on
// 2^32-case block boundaries, block digests and spot-check chunk words in the
// shard report, and a merge whose case digest is the whole domain's whatever N;
// every hand-edited field is refused. No block is swept: the block digests are
// made up (the digest is what is under test) and the spot-check chunks are
// swept for real, since the merge sweeps them again.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "report/report.hpp"
#include "report/shard.hpp"

using namespace bitproof;

namespace {

// fp16 × fp16 × three addends: 3 · 2^32 cases, three blocks.
Spec three_blocks() {
  auto spec = parse_spec(R"({"bitproof_spec": 1, "name": "t", "inputs": [
      {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": "all"},
      {"name": "c", "format": "fp16", "codes": {"range": [0, 2]}}],
      "output": "fp16", "claims": [{"claim": "equal", "recipes": ["fp16fma.hfma", "fp16fma.fp64_fma"]}]})",
                         "test");
  REQUIRE(spec.ok());
  return *spec;
}

// A made-up digest for block k (what a sweep of the block would have hashed).
std::vector<std::uint8_t> block_digest(std::uint64_t k) {
  std::vector<std::uint8_t> d(32);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint8_t>(splitmix64(k * 32 + i));
  return d;
}

// Shard `id`'s report as `prove --shard` writes it, the claim holding on every case.
Json shard_of(const Spec& spec, ShardId id) {
  const auto [begin, end] = shard_range(spec.case_count(), id);
  SweepPart part;
  part.begin = begin;
  part.end = end;
  part.claims.resize(1);
  part.claims[0].cases = part.claims[0].holding = end - begin;
  for (std::uint64_t block = begin / kBlockCases; block * kBlockCases < end; ++block) {
    const auto d = block_digest(block);
    part.block_digests.insert(part.block_digests.end(), d.begin(), d.end());
  }
  const CaseEvaluator eval(spec);
  for (std::uint64_t chunk : shard_spot_chunks(spec.case_count(), id)) {
    part.kept_chunk_sums[chunk] = sweep_range(eval, spec, EngineOptions{}, chunk * kChunkCases, (chunk + 1) * kChunkCases).chunk_sums;
  }
  return shard_report(spec, part, id, 8, Json{{"name", "test"}, {"threads", 1}});
}

std::vector<Json> shards_of(const Spec& spec, std::uint64_t n) {
  std::vector<Json> shards;
  for (std::uint64_t i = 0; i < n; ++i) shards.push_back(shard_of(spec, {i, n}));
  return shards;
}

Expected<Json> merge(const std::vector<Json>& shards) {
  std::vector<std::string> paths;
  for (std::size_t k = 0; k < shards.size(); ++k) paths.push_back(fmt::format("shard-{}.json", k + 1));
  return merge_shards(shards, paths);
}

std::string merge_error(const std::vector<Json>& shards) {
  auto merged = merge(shards);
  REQUIRE_FALSE(merged.ok());
  return merged.error().message;
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("block-sum shards: block-aligned slices, their spot-check chunks, a merge equal whatever N") {
    const Spec spec = three_blocks();
    REQUIRE(digest_mode_for(spec.case_count()) == DigestMode::kBlockSums);
    CHECK(shard_range(spec.case_count(), {0, 2}) == std::pair<std::uint64_t, std::uint64_t>{0, kBlockCases});
    CHECK(shard_range(spec.case_count(), {1, 2}) == std::pair<std::uint64_t, std::uint64_t>{kBlockCases, 3 * kBlockCases});
    CHECK(shard_range(spec.case_count(), {3, 4}) == std::pair<std::uint64_t, std::uint64_t>{2 * kBlockCases, 3 * kBlockCases});
    CHECK(shard_range(spec.case_count(), {0, 4}).first == shard_range(spec.case_count(), {0, 4}).second);  // empty
    CHECK(shard_spot_chunks(spec.case_count(), {0, 4}).empty());
    const auto spots = shard_spot_chunks(spec.case_count(), {1, 2});
    REQUIRE(spots.size() == 3);
    CHECK(spots.front() == kBlockCases / kChunkCases);
    CHECK(spots.back() == 3 * kBlockCases / kChunkCases - 1);
    // Below 2^32 cases shards stay chunk-aligned and carry no spot checks.
    CHECK(shard_range(kBlockCases, {1, 3}).first % kChunkCases == 0);
    CHECK(shard_spot_chunks(kBlockCases, {1, 3}).empty());

    std::vector<std::uint8_t> all;
    for (std::uint64_t k = 0; k < 3; ++k) {
      const auto d = block_digest(k);
      all.insert(all.end(), d.begin(), d.end());
    }
    const std::string want = block_sums_digest(spec, all);
    std::string first_result;
    for (std::uint64_t n : {1, 2, 3, 4}) {
      CAPTURE(n);
      auto merged = merge(shards_of(spec, n));
      REQUIRE_MESSAGE(merged.ok(), (merged.ok() ? "" : merged.error().message));
      const Json& result = (*merged)["result"];
      CHECK(result["case_digest"]["sha256"] == want);
      CHECK(result["claims"][0]["holds"] == true);
      if (first_result.empty()) first_result = result.dump();
      CHECK(result.dump() == first_result);
    }
  }

  TEST_CASE("block-sum shards: edited block digests, spot checks and chunk words are refused") {
    const Spec spec = three_blocks();
    const std::vector<Json> good = shards_of(spec, 2);
    REQUIRE(merge(good).ok());
    auto edited = [&](auto&& edit) {
      std::vector<Json> shards = good;
      edit(shards[1]["result"]["part"]);
      return merge_error(shards);
    };
    // A spot-check chunk's words changed: the merge's sweep of that chunk gives other words.
    CHECK(edited([](Json& p) { p["chunk_samples"][1]["sums"][0] = p["chunk_samples"][1]["sums"][0].get<std::uint32_t>() ^ 1u; })
              .find("swept again here give other outputs") != std::string::npos);
    // A failing count slipped into a spot check (the last word of a chunk).
    CHECK(edited([](Json& p) { p["chunk_samples"][0]["sums"].back() = 1; }).find("swept again here") != std::string::npos);
    // Another chunk than the shard's spot checks, and a spot check left out.
    CHECK(edited([](Json& p) { p["chunk_samples"][0]["chunk"] = p["chunk_samples"][0]["chunk"].get<std::uint64_t>() + 1; })
              .find("the spot checks of shard 2/2") != std::string::npos);
    CHECK(edited([](Json& p) { p["chunk_samples"].erase(p["chunk_samples"].begin()); }).find("chunk_samples") !=
          std::string::npos);
    // A block digest dropped, or the block digests left out altogether.
    CHECK(edited([](Json& p) { p["block_digests"].erase(p["block_digests"].begin()); })
              .find("1 digests, but the shard holds 2 blocks") != std::string::npos);
    CHECK(edited([](Json& p) { p.erase("block_digests"); }).find("0 digests, but the shard holds 2 blocks") !=
          std::string::npos);
    // Chunk words where only block digests belong.
    CHECK(edited([](Json& p) { p["chunk_sums"] = Json::array({1, 2, 3}); }).find("kept per 2^32-case block") !=
          std::string::npos);
    // A digest that is not SHA-256 hex: the schema refuses it.
    CHECK(edited([](Json& p) { p["block_digests"][0] = "not hex"; }).find("block_digests") != std::string::npos);
    // A block digest changed is taken (a block is not swept again), but it changes the whole digest.
    std::vector<Json> changed = good;
    changed[0]["result"]["part"]["block_digests"][0] = std::string(64, 'a');
    auto merged = merge(changed);
    REQUIRE(merged.ok());
    CHECK((*merged)["result"]["case_digest"] != (*merge(good))["result"]["case_digest"]);
  }

  TEST_CASE("shards of a smaller domain carry no block digests or spot checks") {
    auto spec = parse_spec(R"({"bitproof_spec": 1, "name": "t", "inputs": [
        {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": {"range": [0, 3]}}],
        "output": "fp16", "claims": [{"claim": "equal", "recipes": ["fp16.hmul", "fp16.fp32_round"]}]})",
                           "test");
    REQUIRE(spec.ok());
    REQUIRE(digest_mode_for(spec->case_count()) == DigestMode::kFull);
    const CaseEvaluator eval(*spec);
    std::vector<Json> shards;
    for (std::uint64_t i = 0; i < 2; ++i) {
      const auto [begin, end] = shard_range(spec->case_count(), {i, 2});
      shards.push_back(shard_report(*spec, sweep_range(eval, *spec, EngineOptions{}, begin, end), {i, 2}, 8,
                                    Json{{"name", "test"}, {"threads", 1}}));
      CHECK_FALSE(shards.back()["result"]["part"].contains("block_digests"));
    }
    REQUIRE(merge(shards).ok());
    shards[0]["result"]["part"]["block_digests"] = Json::array();
    CHECK(merge_error(shards).find("not kept per block") != std::string::npos);
  }
}
