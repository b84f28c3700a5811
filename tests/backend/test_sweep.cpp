// Sweeps in parts (engine.hpp) and the CPU backend: results independent of the
// split and the thread count; a hardware table compared with the soft model
// case by case (and a corrupted one caught, with the three-way record); the
// vector sweep bit for bit equal to the scalar one on slices of the 2^32 FP16
// domain; the difference classifier against a decode()-based rewrite.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <random>

#include "backend/backend.hpp"
#include "proof/cpu_simd.hpp"
#include "format/diff_kind.hpp"
#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "hash/digest.hpp"
#include "report/report.hpp"
#include "sweep_stride.hpp"
#include "support.hpp"

using namespace bitproof;

namespace {

Spec parse(const std::string& text) {
  auto spec = parse_spec(text, "test");
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

// fp16 × fp16 (a: all codes, b: the given range), one `equal` claim per pair.
Spec fp16_pairs(const std::string& claims, std::uint32_t b_lo, std::uint32_t b_hi) {
  return parse(fmt::format(R"({{"bitproof_spec": 1, "name": "t", "inputs": [
      {{"name": "a", "format": "fp16", "codes": "all"}},
      {{"name": "b", "format": "fp16", "codes": {{"range": [{}, {}]}}}}],
      "output": "fp16", "claims": [{}]}})",
                           b_lo, b_hi, claims));
}

const char* kHmulClaim = R"({"claim": "equal", "recipes": ["fp16.hmul", "fp16.fp32_round"]})";
const char* kControlClaims =
    R"({"claim": "equal", "recipes": ["fp16.fp32_round", "fp16.control.fp32_round_rz"]},
       {"claim": "equal", "recipes": ["fp16.hmul", "fp16.control.hmul_ftz", "fp16.control.hmul_rz"]})";

// Every vector sweep this CPU runs (AVX-512 and AVX2 on an AVX-512 CPU).
std::vector<const simd::SimdImpl*> sweep_impls() {
  auto impls = simd::usable_impls();
  if (impls.empty()) MESSAGE("skipped: no vector sweep on this CPU (AVX-512, or AVX2 with FMA and F16C)");
  return impls;
}

std::string result_text(const Spec& spec, const ProofResult& r) { return proof_result_json(spec, r, 8).dump(); }

// decode()-based classification, written again from Counterexample::kind's rules.
std::string kind_by_decode(FormatId format, std::uint32_t a, std::uint32_t b) {
  if (a == b) return "";
  const FormatSpec& f = spec_of(format);
  const Decoded x = decode(f, a);
  const Decoded y = decode(f, b);
  if (x.kind == Kind::kNaN && y.kind == Kind::kNaN) return "nan-bits";
  if (x.kind == Kind::kNaN || y.kind == Kind::kNaN) return "nan";
  if ((a & ~f.sign_mask()) == (b & ~f.sign_mask())) return "sign";
  if (x.kind == Kind::kInf || y.kind == Kind::kInf) return "inf";
  if (x.kind == Kind::kZero || y.kind == Kind::kZero) return "zero";
  return "value";
}

void check_parts_equal(const SweepPart& x, const SweepPart& y) {
  REQUIRE(x.claims.size() == y.claims.size());
  for (std::size_t c = 0; c < x.claims.size(); ++c) {
    CHECK(x.claims[c].cases == y.claims[c].cases);
    CHECK(x.claims[c].holding == y.claims[c].holding);
    CHECK(x.claims[c].by_kind == y.claims[c].by_kind);
    REQUIRE(x.claims[c].counterexamples.size() == y.claims[c].counterexamples.size());
    for (std::size_t k = 0; k < x.claims[c].counterexamples.size(); ++k) {
      CHECK(x.claims[c].counterexamples[k].case_index == y.claims[c].counterexamples[k].case_index);
      CHECK(x.claims[c].counterexamples[k].outputs == y.claims[c].counterexamples[k].outputs);
      CHECK(x.claims[c].counterexamples[k].kind == y.claims[c].counterexamples[k].kind);
    }
  }
  CHECK(x.chunk_sums == y.chunk_sums);
}

}  // namespace

TEST_SUITE("backend") {
  TEST_CASE("split_ranges: chunk-aligned, contiguous, covering") {
    for (std::uint64_t cases : {1ull, 208ull, 65536ull, 65537ull, 1000000ull, 4294967296ull}) {
      for (std::size_t pieces : {1u, 2u, 3u, 8u, 100u}) {
        const auto ranges = split_ranges(0, cases, pieces);
        REQUIRE_FALSE(ranges.empty());
        CHECK(ranges.front().first == 0);
        CHECK(ranges.back().second == cases);
        for (std::size_t i = 0; i < ranges.size(); ++i) {
          CHECK(ranges[i].first % kChunkCases == 0);
          CHECK(ranges[i].first < ranges[i].second);
          if (i > 0) CHECK(ranges[i].first == ranges[i - 1].second);
        }
      }
    }
  }

  TEST_CASE("split_ranges of a slice [begin, end) stays inside it") {
    const auto ranges = split_ranges(3 * kChunkCases, 10 * kChunkCases + 5, 4);
    REQUIRE_FALSE(ranges.empty());
    CHECK(ranges.front().first == 3 * kChunkCases);
    CHECK(ranges.back().second == 10 * kChunkCases + 5);
    for (std::size_t i = 1; i < ranges.size(); ++i) CHECK(ranges[i].first == ranges[i - 1].second);
  }

  TEST_CASE("block sums above 2^32 cases: the digest written again by hand; folded parts equal the whole; controls") {
    // fp16 × fp16 × two addends: 2^33 cases, two blocks of 65,536 chunks. No sweep:
    // chunk words are made up, the digest is what is under test.
    const Spec spec = parse(R"({"bitproof_spec": 1, "name": "t", "inputs": [
        {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": "all"},
        {"name": "c", "format": "fp16", "codes": {"range": [0, 1]}}],
        "output": "fp16", "claims": [{"claim": "equal", "recipes": ["fp16fma.hfma", "fp16fma.fp64_fma"]}]})");
    REQUIRE(spec.case_count() == (std::uint64_t{1} << 33));
    CHECK(digest_mode_for(spec.case_count()) == DigestMode::kBlockSums);
    CHECK(digest_mode_for(kBlockCases) == DigestMode::kChunkSums);
    CHECK(range_unit(spec.case_count()) == kBlockCases);
    const std::size_t words = chunk_sum_words(spec);  // A, B per recipe, one failing count
    REQUIRE(words == 5);
    const std::size_t per_block = (kBlockCases / kChunkCases) * words;
    std::vector<std::uint32_t> all(2 * per_block);
    std::mt19937 rng(7);
    for (std::uint32_t& w : all) w = rng();
    const auto whole_part = [&](const std::vector<std::uint32_t>& sums) {
      SweepPart part;
      part.begin = 0;
      part.end = spec.case_count();
      part.claims.resize(1);
      part.chunk_sums = sums;
      return part;
    };
    const auto digest_of = [&](std::vector<SweepPart> parts) {
      return merge_parts(spec, EngineOptions{}, std::move(parts)).case_digest;
    };
    // By hand: SHA-256 over the tag, the header and each block's SHA-256 of its words (u32 LE).
    const auto sha = [](const void* data, std::size_t size) {
      Sha256 h;
      h.update(data, size);
      return h.finish();
    };
    std::string text = "bitproof-blocksums-v1";
    const auto le = [&](std::uint64_t v, int bytes) {
      for (int k = 0; k < bytes; ++k) text.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
    };
    le(spec.case_count(), 8);
    for (std::uint64_t count : {3, 2, 1}) le(count, 4);  // inputs, recipes, claims
    for (int block = 0; block < 2; ++block) {
      std::vector<std::uint8_t> bytes;
      for (std::size_t k = 0; k < per_block; ++k) {
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<std::uint8_t>(all[block * per_block + k] >> (8 * b)));
      }
      const auto d = sha(bytes.data(), bytes.size());
      text.append(reinterpret_cast<const char*>(d.data()), d.size());
    }
    const std::string expected = to_hex(sha(text.data(), text.size()));
    std::vector<SweepPart> whole;
    whole.push_back(whole_part(all));
    CHECK(digest_of(std::move(whole)) == expected);
    // Two parts of one block each, folded as sweep_parts folds them: the same digest, 64 bytes kept.
    std::vector<SweepPart> halves(2);
    for (int block = 0; block < 2; ++block) {
      SweepPart& h = halves[block];
      h.begin = block * kBlockCases;
      h.end = (block + 1) * kBlockCases;
      h.claims.resize(1);
      h.chunk_sums.assign(all.begin() + block * per_block, all.begin() + (block + 1) * per_block);
      fold_blocks(spec, h);
      CHECK(h.chunk_sums.empty());
      CHECK(h.block_digests.size() == 32);
    }
    std::swap(halves[0], halves[1]);  // merge puts parts in case order
    CHECK(digest_of(std::move(halves)) == expected);
    // A part that does not start on a block is not folded.
    SweepPart odd;
    odd.begin = kChunkCases;
    odd.end = kBlockCases;
    odd.chunk_sums.assign(per_block - words, 0);
    fold_blocks(spec, odd);
    CHECK(odd.block_digests.empty());
    // Negative controls: one word of the second block changed; the blocks' words exchanged.
    std::vector<std::uint32_t> changed = all;
    changed[per_block + 12345] ^= 1;
    std::vector<SweepPart> one;
    one.push_back(whole_part(changed));
    CHECK(digest_of(std::move(one)) != expected);
    std::vector<std::uint32_t> swapped(all.begin() + per_block, all.end());
    swapped.insert(swapped.end(), all.begin(), all.begin() + per_block);
    std::vector<SweepPart> other;
    other.push_back(whole_part(swapped));
    CHECK(digest_of(std::move(other)) != expected);
    // Sweeps of the domain split on blocks.
    for (const auto& [b, e] : split_ranges(0, spec.case_count(), 8, range_unit(spec.case_count()))) {
      CHECK(b % kBlockCases == 0);
      CHECK((e % kBlockCases == 0 || e == spec.case_count()));
    }
    CHECK(digest_algorithm(DigestMode::kBlockSums).starts_with("bitproof-blocksums-v1"));
  }

  TEST_CASE("sweep_parts: progress reaches the total; two joined halves equal the whole") {
    const Spec spec = fp16_pairs(kHmulClaim, 0x3C00, 0x3C1F);  // 2^21 cases, 32 chunks
    const CaseEvaluator eval(spec);
    std::mutex mutex;
    std::vector<std::uint64_t> seen;
    EngineOptions options{8, 2};
    options.progress = [&](std::uint64_t done, std::uint64_t total) {
      const std::lock_guard<std::mutex> lock(mutex);
      CHECK(total == spec.case_count());
      seen.push_back(done);
    };
    const RangeSweeper sweep = [&](std::uint64_t b, std::uint64_t e) { return sweep_range(eval, spec, options, b, e); };
    const SweepPart whole = sweep_parts(spec, options, sweep, 0, spec.case_count(), 8);
    REQUIRE(seen.size() == 8);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
    CHECK(seen.back() == spec.case_count());
    options.progress = nullptr;
    const std::uint64_t mid = 13 * kChunkCases;
    std::vector<SweepPart> halves;
    halves.push_back(sweep_parts(spec, options, sweep, mid, spec.case_count()));
    halves.push_back(sweep_parts(spec, options, sweep, 0, mid));
    const SweepPart empty = sweep_parts(spec, options, sweep, mid, mid);  // a shard of N > chunks
    REQUIRE(empty.claims.size() == 1);
    CHECK(empty.claims[0].cases == 0);
    const SweepPart joined = join_parts(options, std::move(halves));
    CHECK(joined.begin == 0);
    CHECK(joined.end == spec.case_count());
    CHECK(joined.chunk_digests == whole.chunk_digests);
    CHECK(joined.claims[0].holding == whole.claims[0].holding);
    CHECK(joined.claims[0].cases == spec.case_count());
  }

  TEST_CASE("the result is the same whatever the thread count and the split (full and sampled witness)") {
    // 65536 × 32 = 2^21 cases: above the full-witness limit, so the sample runs too.
    const Spec big = fp16_pairs(std::string(kHmulClaim) + "," + kControlClaims, 0x3C00, 0x3C1F);
    for (const Spec& spec : {test::dsv4_spec(), big}) {
      const std::string one = result_text(spec, run_proof(spec, {8, 1}));
      for (unsigned threads : {2u, 3u, 7u}) {
        CHECK(result_text(spec, run_proof(spec, {8, threads})) == one);
      }
      const CaseEvaluator eval(spec);
      const EngineOptions options{8, 2};
      for (std::size_t pieces : {1u, 5u, 64u}) {
        const ProofResult r = run_sweep(spec, options, [&](std::uint64_t b, std::uint64_t e) {
          return sweep_range(eval, spec, options, b, e);
        }, pieces);
        CHECK(result_text(spec, r) == one);
      }
    }
    const ProofResult r = run_proof(big, {8, 2});
    CHECK(r.witness_mode == WitnessMode::kSampled);
    CHECK(r.witnessed_cases >= 65536);
    CHECK(r.digest_mode == DigestMode::kFull);
    CHECK(r.claims[0].holds());
    CHECK_FALSE(r.claims[1].holds());
    CHECK_FALSE(r.claims[2].holds());
  }

  TEST_CASE("a hardware table is checked case by case against the soft model; a corrupted bit is caught") {
    const Spec spec = test::dsv4_spec();
    const CaseEvaluator eval(spec);
    const std::size_t recipes = eval.recipes().size();
    std::vector<std::uint32_t> table(spec.case_count() * recipes);
    std::array<std::uint32_t, kMaxArity> codes{};
    for (std::uint64_t i = 0; i < spec.case_count(); ++i) {
      eval.codes_of(i, codes.data());
      eval.soft_outputs(codes.data(), table.data() + i * recipes);
    }
    const EngineOptions options{8, 2};
    auto with_table = [&](const std::vector<std::uint32_t>& t) {
      return run_sweep(spec, options, [&](std::uint64_t b, std::uint64_t e) {
        return sweep_range(eval, spec, options, b, e, t.data() + b * recipes);
      });
    };
    const ProofResult same = with_table(table);
    CHECK(same.model_compared == spec.case_count() * recipes);
    CHECK(same.model_disagreement_count == 0);
    CHECK(result_text(spec, same) == result_text(spec, run_proof(spec, options)));
    // Negative control: one flipped mantissa bit in one recipe's output of case 37.
    std::vector<std::uint32_t> corrupt = table;
    corrupt[37 * recipes + 1] ^= 1;
    const ProofResult bad = with_table(corrupt);
    CHECK(bad.model_disagreement_count == 1);
    CHECK_FALSE(bad.holds());
    REQUIRE(bad.model_disagreements.size() == 1);
    const ModelDisagreement& m = bad.model_disagreements[0];
    CHECK(m.case_index == 37);
    CHECK(m.hardware == (m.soft ^ 1));
    CHECK(m.oracle == m.soft);
    const auto lines = model_lines(spec, "cuda sm_90", m);
    REQUIRE(lines.size() == 4);
    CHECK(lines[1].find("soft model") != std::string::npos);
    CHECK(lines[3].find("cuda sm_90 hardware") != std::string::npos);
    MESSAGE(fmt::format("{}\n{}\n{}\n{}", lines[0], lines[1], lines[2], lines[3]));
  }

  TEST_CASE("the vector sweep equals the scalar sweep chunk for chunk on slices of the 2^32 FP16 domain") {
    for (const simd::SimdImpl* impl : sweep_impls()) {
      INFO("vector sweep: " << std::string(impl->name));
      const Spec spec = parse(fmt::format(R"({{"bitproof_spec": 1, "name": "t", "inputs": [
        {{"name": "a", "format": "fp16", "codes": "all"}}, {{"name": "b", "format": "fp16", "codes": "all"}}],
        "output": "fp16", "claims": [{}, {}]}})",
                                          kHmulClaim, kControlClaims));
      REQUIRE_FALSE(simd::unsupported_reason(*impl, spec).has_value());
      const CaseEvaluator eval(spec);
      const EngineOptions options{5, 1};
      // Chunks k hold b = k: zero, subnormals, 1.0, large, max, Inf, NaNs, negatives.
      for (std::uint64_t b : {0x0000ull, 0x0001ull, 0x03FFull, 0x0400ull, 0x3C00ull, 0x5BFFull, 0x7BFFull, 0x7C00ull,
                              0x7C01ull, 0x7E00ull, 0x8001ull, 0xBC00ull, 0xFBFFull, 0xFC00ull, 0xFFFFull}) {
        const std::uint64_t begin = b * kChunkCases;
        const SweepPart scalar = sweep_range(eval, spec, options, begin, begin + kChunkCases);
        const SweepPart vector = simd::sweep_range_simd(*impl, eval, spec, options, begin, begin + kChunkCases);
        INFO("b = " << b);
        check_parts_equal(scalar, vector);
        CHECK(scalar.claims[0].holds());
      }
      // Negative control: the comparison sees a different recipe's chunk.
      const SweepPart one =
          simd::sweep_range_simd(*impl, eval, spec, options, 0x3C00 * kChunkCases, 0x3C01 * kChunkCases);
      const SweepPart other =
          simd::sweep_range_simd(*impl, eval, spec, options, 0x3C01 * kChunkCases, 0x3C02 * kChunkCases);
      CHECK(one.chunk_sums != other.chunk_sums);
    }
  }

  TEST_CASE("the vector sweep equals the scalar sweep on FP16 FMA triples (three inputs, the oracle's run form)") {
    for (const simd::SimdImpl* impl : sweep_impls()) {
      INFO("vector sweep: " << std::string(impl->name));
      const auto fma_spec = [](const std::string& a_codes, const std::string& b_codes,
                               const std::string& c_codes = R"("all")") {
        return parse(fmt::format(R"({{"bitproof_spec": 1, "name": "t", "inputs": [
          {{"name": "a", "format": "fp16", "codes": {}}}, {{"name": "b", "format": "fp16", "codes": {}}},
          {{"name": "c", "format": "fp16", "codes": {}}}], "output": "fp16", "claims": [
          {{"claim": "equal", "recipes": ["fp16fma.hfma", "exact.fma_fp16"]}},
          {{"claim": "equal", "recipes": ["fp16fma.hfma", "fp16fma.fp32_fma"]}}]}})",
                                 a_codes, b_codes, c_codes));
      };
      const Spec spec = fma_spec(R"("all")", R"("all")");
      REQUIRE_FALSE(simd::unsupported_reason(*impl, spec).has_value());
      const CaseEvaluator eval(spec);
      const EngineOptions options{5, 1};
      // A chunk is one (b, c): the LLVM issue 98389 pair, zero, subnormal, NaN and ∞ operands, cancellation.
      const std::pair<std::uint64_t, std::uint64_t> pairs[] = {
          {0x00e9, 0x2ff6}, {0x0000, 0x3C00}, {0x8000, 0x8000}, {0x0001, 0x0001}, {0x3C00, 0xBC00},
          {0x7C00, 0xFC00}, {0x7E00, 0x0000}, {0x3555, 0x7BFF}, {0xC321, 0x0400}, {0x1234, 0x9ABC}};
      for (const auto& pair : pairs) {
        const std::uint64_t b = pair.first, c = pair.second;  // (no structured binding: INFO captures it)
        const std::uint64_t begin = (c * 65536 + b) * kChunkCases;
        const SweepPart scalar = sweep_range(eval, spec, options, begin, begin + kChunkCases);
        const SweepPart vector = simd::sweep_range_simd(*impl, eval, spec, options, begin, begin + kChunkCases);
        INFO("b = " << b << ", c = " << c);
        check_parts_equal(scalar, vector);
        CHECK(vector.claims[0].holds());
      }
      // Negative control: the FP32 route's known double rounding (a = 0x520b) is found.
      const Spec llvm =
          fma_spec(R"({"range": [20992, 21007]})", R"({"range": [233, 233]})", R"({"range": [12278, 12278]})");
      const SweepPart found = simd::sweep_range_simd(*impl, CaseEvaluator(llvm), llvm, options, 0, 16);
      CHECK(found.claims[0].holds());
      REQUIRE(found.claims[1].counterexamples.size() == 1);
      CHECK(found.claims[1].counterexamples[0].inputs == std::vector<std::uint32_t>{0x520b, 0x00e9, 0x2ff6});
      CHECK(found.claims[1].counterexamples[0].outputs == std::vector<std::uint32_t>{0x3001, 0x3000});
      // Lanes that are not one run (a list first input; a range whose rows end inside a vector) go case by case.
      for (const Spec& other :
           {fma_spec(R"({"list": [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 20999, 21003]})",
                     R"({"range": [0, 40]})"),
            fma_spec(R"({"range": [3, 65535]})", R"({"range": [224, 239]})")}) {
        const CaseEvaluator e(other);
        const std::uint64_t end = std::min<std::uint64_t>(other.case_count(), 3 * kChunkCases);
        check_parts_equal(sweep_range(e, other, options, 0, end),
                          simd::sweep_range_simd(*impl, e, other, options, 0, end));
      }
    }
  }

  TEST_CASE("the vector sweep handles partial chunks and list inputs like the scalar one") {
    for (const simd::SimdImpl* impl : sweep_impls()) {
      INFO("vector sweep: " << std::string(impl->name));
      // 65533 × 300 (a list) = 19659900 cases: chunk-sum mode, rows that wrap inside
      // a vector, a list input, a partial last chunk.
      std::string list;
      for (int i = 0; i < 300; ++i) list += fmt::format("{}{}", i ? "," : "", i * 211);
      const Spec spec = parse(fmt::format(R"({{"bitproof_spec": 1, "name": "t", "inputs": [
        {{"name": "a", "format": "fp16", "codes": {{"range": [3, 65535]}}}},
        {{"name": "b", "format": "fp16", "codes": {{"list": [{}]}}}}],
        "output": "fp16", "claims": [{}]}})",
                                          list, kControlClaims));
      REQUIRE(spec.case_count() > kFullDigestLimit);
      const CaseEvaluator eval(spec);
      const EngineOptions options{4, 1};
      const std::uint64_t last = (spec.case_count() - 1) / kChunkCases * kChunkCases;
      for (std::uint64_t begin : {std::uint64_t{0}, 77 * kChunkCases, last}) {
        const std::uint64_t end = std::min(spec.case_count(), begin + 2 * kChunkCases);
        check_parts_equal(sweep_range(eval, spec, options, begin, end),
                          simd::sweep_range_simd(*impl, eval, spec, options, begin, end));
      }
    }
  }

  TEST_CASE("CPU backend: the 2^32 claim's first and last chunks hold, the controls fail, result as run_proof's") {
    const Spec small = fp16_pairs(std::string(kHmulClaim) + "," + kControlClaims, 0x3BF0, 0x3C0F);
    BackendOptions options;
    options.engine = {8, 2};
    auto cpu = make_cpu_backend();
    auto run = cpu->prove(small, options);
    REQUIRE(run.ok());
    CHECK(run->name == "cpu");
    CHECK(run->info.contains("threads"));
    CHECK(result_text(small, run->result) == result_text(small, run_proof(small, {8, 1})));
    CHECK(run->result.claims[0].holds());
    CHECK_FALSE(run->result.claims[1].holds());
  }

  TEST_CASE("CPU backend on a large domain: the vector sweep and the scalar sweep give one result") {
    // 65536 × 512 = 2^25 cases: chunk-sum digest, sampled witness. The sanitizer build
    // (stride > 1, tests/sweep_stride.hpp) takes 65536 × 257, the fewest above 2^24.
    const std::uint32_t b_lo = bitproof::test::sweep_stride() > 1 ? 0x3AFF : 0x3A00;
    const Spec spec = fp16_pairs(std::string(kHmulClaim) + "," + kControlClaims, b_lo, 0x3BFF);
    REQUIRE(digest_mode_for(spec.case_count()) == DigestMode::kChunkSums);
    BackendOptions vec, scalar;
    vec.engine = scalar.engine = {6, 2};
    scalar.vector = false;
    auto cpu = make_cpu_backend();
    auto a = cpu->prove(spec, vec);
    auto b = cpu->prove(spec, scalar);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(result_text(spec, a->result) == result_text(spec, b->result));
    CHECK(a->result.claims[0].holds());
    CHECK(a->result.claims[1].by_kind.count("value") == 1);
    MESSAGE(fmt::format("vector: {}; scalar: {}", a->info.dump(), b->info.dump()));
  }

  TEST_CASE("BITPROOF_SIMD picks a vector sweep or none, and an unknown value is named in the reason") {
    const auto impls = simd::usable_impls();
    struct Unset {
      ~Unset() { unsetenv("BITPROOF_SIMD"); }  // also when a check below stops the case
    } unset;
    setenv("BITPROOF_SIMD", "bogus", 1);
    CHECK(simd::best_impl() == nullptr);
    CHECK(simd::no_vector_reason().find("BITPROOF_SIMD=bogus") != std::string::npos);
    setenv("BITPROOF_SIMD", "off", 1);
    CHECK(simd::best_impl() == nullptr);
    for (const simd::SimdImpl* impl : impls) {
      setenv("BITPROOF_SIMD", impl->name, 1);
      REQUIRE(simd::best_impl() != nullptr);
      CHECK(std::string(simd::best_impl()->name) == impl->name);
    }
    unsetenv("BITPROOF_SIMD");
    CHECK(simd::best_impl() == (impls.empty() ? nullptr : impls.front()));
    if (impls.empty()) CHECK(simd::no_vector_reason().find("on this CPU") != std::string::npos);
  }

  TEST_CASE("claims needing the oracle on every case are limited to 2^24 cases") {
    const Spec spec = parse(R"({"bitproof_spec": 1, "name": "t", "inputs": [
        {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": "all"}],
        "output": "fp16", "claims": [{"claim": "correctly_rounded", "recipes": ["fp16.hmul"]}]})");
    auto ok = check_sweepable(spec);
    REQUIRE_FALSE(ok.ok());
    CHECK(ok.error().exit_code == kExitBadInput);
    CHECK(ok.error().message.find("claims[0]") != std::string::npos);
    CHECK(check_sweepable(test::dsv4_spec()).ok());
  }

  TEST_CASE("classify_difference agrees with decode() on every pair of 8-bit codes of every 8-bit format") {
    int formats = 0;
    for (std::size_t id = 0; id < kFormats.size(); ++id) {
      const auto format = static_cast<FormatId>(id);
      const FormatSpec& f = spec_of(format);
      if (f.bits > 8) continue;
      ++formats;
      const KindFormat kf = kind_format(f);
      int mismatches = 0;
      for (std::uint32_t a = 0; a < f.code_count(); ++a) {
        for (std::uint32_t b = 0; b < f.code_count(); ++b) {
          const std::string want = kind_by_decode(format, a, b);
          const std::string got(diff_kind_name(classify_difference(kf, a, b)));
          if (got != want && ++mismatches <= 4) FAIL_CHECK(fmt::format("{} 0x{:X} 0x{:X}: {} vs {}", f.name, a, b, got, want));
        }
      }
      CHECK_MESSAGE(mismatches == 0, f.name);
    }
    CHECK(formats >= 5);
    // fp16 and fp32 on their special codes.
    for (FormatId format : {FormatId::fp16, FormatId::bf16, FormatId::fp32}) {
      const FormatSpec& f = spec_of(format);
      const std::uint32_t inf = f.exp_field_max() << f.man_bits;
      std::vector<std::uint32_t> codes{0, f.sign_mask(), 1, inf, inf | 1, inf | f.man_mask(), f.max_finite_code(),
                                       inf | f.sign_mask(), 1u << f.man_bits};
      for (std::uint32_t a : codes) {
        for (std::uint32_t b : codes) {
          CHECK(std::string(diff_kind_name(classify_difference(kind_format(f), a, b))) == kind_by_decode(format, a, b));
        }
      }
    }
    // Negative control: the classifier is not the identity of two codes.
    CHECK(classify_difference(kind_format(spec_of(FormatId::fp16)), 0x3C00, 0xBC00) == DiffKind::kSign);
  }
}
