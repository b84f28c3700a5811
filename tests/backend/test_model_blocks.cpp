// Which blocks of a large GPU sweep the soft model checks (src/backend/model_blocks.hpp):
// every block of a small domain; above 2^36 cases the sampled ones and the edge-code blocks.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "backend/model_blocks.hpp"
#include "proof/engine.hpp"
#include "proof/spec.hpp"

using namespace bitproof;

namespace {

Spec triples(const std::string& format, const std::string& c_codes) {
  auto spec = parse_spec(fmt::format(R"({{"bitproof_spec": 1, "name": "t", "inputs": [
      {{"name": "a", "format": "{0}", "codes": "all"}}, {{"name": "b", "format": "{0}", "codes": "all"}},
      {{"name": "c", "format": "{0}", "codes": {1}}}],
      "output": "{0}", "claims": [{{"claim": "equal", "recipes": ["{0}fma.fp32_fma", "{0}fma.fp64_fma"]}}]}})",
                                     format, c_codes),
                         "test");
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

std::vector<std::uint64_t> checked_blocks(const ModelBlocks& blocks, std::uint64_t count) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t b = 0; b < count; ++b) {
    if (blocks.checked(b)) out.push_back(b);
  }
  return out;
}

}  // namespace

TEST_SUITE("backend") {
  TEST_CASE("model blocks: every block up to 2^36 cases, then the sampled and the edge-code blocks") {
    // 16 blocks (c = 0x7C00..0x7C0F): every one.
    const ModelBlocks small(triples("fp16", R"({"range": [31744, 31759]})"));
    CHECK(small.every_block());
    CHECK(checked_blocks(small, 16).size() == 16);

    // All 2^48 FP16 triples: block k holds c = k. One in 256 (65536 / 256), and the edges.
    const ModelBlocks fp16(triples("fp16", R"("all")"));
    CHECK_FALSE(fp16.every_block());
    CHECK(fp16.stride() == 256);
    const std::vector<std::uint64_t> want_edges{0x0000, 0x0001, 0x7BFF, 0x7C00, 0x7C01, 0x7DFF, 0x7E00, 0x7FFF};
    for (std::uint64_t sign : {0x0000u, 0x8000u}) {
      for (std::uint64_t c : want_edges) CHECK_MESSAGE(fp16.checked(sign | c), fmt::format("c = {:#06x}", sign | c));
    }
    // Negative controls: a block neither sampled nor an edge; a NaN inside the NaN range.
    CHECK_FALSE(fp16.checked(0x0101));
    CHECK_FALSE(fp16.checked(0x7E01));
    CHECK_FALSE(fp16.checked(0x3C01));
    // Exactly the 256 sampled blocks and the 16 edge codes (6 of them multiples of 256).
    std::set<std::uint64_t> want;
    for (std::uint64_t k = 0; k < 256; ++k) want.insert(k * 256);
    for (std::uint64_t sign : {0x0000u, 0x8000u}) {
      for (std::uint64_t c : want_edges) want.insert(sign | c);
    }
    CHECK(want.size() == 266);
    CHECK(checked_blocks(fp16, 65536) == std::vector<std::uint64_t>(want.begin(), want.end()));

    // BF16: the NaN-c blocks where the FP64 route's NaN payload depended on the kernel.
    const ModelBlocks bf16(triples("bf16", R"("all")"));
    for (std::uint64_t c : {0x7F80u, 0x7F81u, 0x7FBFu, 0x7FC0u, 0x7FFFu, 0xFF81u, 0xFFFFu, 0x7F7Fu, 0x0001u}) {
      CHECK_MESSAGE(bf16.checked(c), fmt::format("c = {:#06x}", c));
    }
    CHECK_FALSE(bf16.checked(0x7FC1));
  }

  TEST_CASE("model blocks: a shard checks the blocks the whole run checks (the choice is the block's)") {
    const Spec spec = triples("bf16", R"("all")");
    const ModelBlocks whole(spec), again(spec);
    CHECK(checked_blocks(whole, 65536) == checked_blocks(again, 65536));
    // A domain whose c is a list (17 blocks, above 2^36 cases): the block's c is the list's k-th code.
    const ModelBlocks listed(triples("bf16", R"({"list": [16256, 16257, 16258, 16259, 16260, 16261, 16262, 16263,
        16264, 16265, 16266, 16267, 16268, 16269, 16270, 32641, 32767]})"));
    CHECK_FALSE(listed.every_block());
    CHECK(listed.checked(0));         // sampled (the first)
    CHECK_FALSE(listed.checked(1));   // 0x3F81
    CHECK_FALSE(listed.checked(14));  // 0x3F8E
    CHECK(listed.checked(15));        // 0x7F81
    CHECK(listed.checked(16));        // 0x7FFF
  }

  TEST_CASE("edge codes: ±0, the smallest subnormal, the largest finite and the specials after it") {
    CHECK(edge_code(FormatId::e4m3, 0x7E));        // +448
    CHECK(edge_code(FormatId::e4m3, 0x7F));        // NaN
    CHECK(edge_code(FormatId::e4m3, 0xFF));        // −NaN
    CHECK_FALSE(edge_code(FormatId::e4m3, 0x38));  // +1.0
    CHECK(edge_code(FormatId::fp32, 0x7F800000));
    CHECK(edge_code(FormatId::fp32, 0xFFC00000));
    CHECK_FALSE(edge_code(FormatId::fp32, 0x3F800000));
  }
}

// The host's reading of the device's model-check words (bp_sweep_check): counts
// added, each chunk's first case decoded with the CPU model, and words that do
// not add up refused.
TEST_SUITE("backend") {
  TEST_CASE("model check words: counted, the first case decoded, inconsistent words refused") {
    auto parsed = parse_spec(R"({"bitproof_spec": 1, "name": "w", "inputs": [
        {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": "all"}],
        "output": "fp16", "claims": [{"claim": "equal", "recipes": ["fp16.hmul", "fp16.fp32_round"]}]})",
                             "test");
    REQUIRE(parsed.ok());
    const Spec& spec = *parsed;
    const CaseEvaluator evaluator(spec);
    // Chunk 3, slot 1 (fp16.fp32_round): case offset 5 with made-up hardware bits.
    const std::uint64_t at = 3 * kChunkCases + 5;
    std::uint32_t codes[2];
    evaluator.codes_of(at, codes);
    std::uint32_t soft[2];
    evaluator.soft_outputs(codes, soft);
    const std::uint32_t hardware = soft[1] ^ 0x0001;
    abi::ModelWords clean{};
    clean.first = abi::kNoModelRecord;
    abi::ModelWords differs = clean;
    differs.differing[1] = 7;
    differs.first = abi::first_model_record(5, 1, hardware);

    SweepPart part;
    REQUIRE(count_model_words(spec, evaluator, {clean, differs, clean}, 2, 8, part).ok());
    CHECK(part.model_disagreement_count == 7);
    REQUIRE(part.model_disagreements.size() == 1);
    const ModelDisagreement& m = part.model_disagreements[0];
    CHECK(m.case_index == at);
    CHECK(m.inputs == std::vector<std::uint32_t>{codes[0], codes[1]});
    CHECK(std::string(m.recipe->card->name) == "fp16.fp32_round");
    CHECK(m.soft == soft[1]);
    CHECK(m.hardware == hardware);

    SweepPart none;  // keep = 0: counted, none kept
    REQUIRE(count_model_words(spec, evaluator, {differs}, 3, 0, none).ok());
    CHECK(none.model_disagreement_count == 7);
    CHECK(none.model_disagreements.empty());

    // Negative controls: each inconsistency alone is refused.
    abi::ModelWords no_record = differs;
    no_record.first = abi::kNoModelRecord;
    abi::ModelWords no_count = clean;
    no_count.first = differs.first;
    abi::ModelWords past_chunk = differs;
    past_chunk.differing[0] = static_cast<std::uint32_t>(kChunkCases) + 1;
    abi::ModelWords padded_slot = differs;
    padded_slot.differing[2] = 1;
    abi::ModelWords slot_past = differs;
    slot_past.first = abi::first_model_record(5, 2, hardware);
    abi::ModelWords agrees = differs;  // the "differing" case's bits are the CPU model's
    agrees.first = abi::first_model_record(5, 1, soft[1]);
    for (const abi::ModelWords& bad : {no_record, no_count, past_chunk, padded_slot, slot_past, agrees}) {
      SweepPart p;
      const auto r = count_model_words(spec, evaluator, {bad}, 3, 8, p);
      REQUIRE_FALSE(r.ok());
      MESSAGE(r.error().message);
    }
    // A record past the domain's last case (the last chunk is whole here: ask for one past it).
    SweepPart p;
    CHECK_FALSE(count_model_words(spec, evaluator, {differs}, spec.case_count() / kChunkCases, 8, p).ok());
  }
}
