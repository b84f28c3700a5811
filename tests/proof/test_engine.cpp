// The engine and domain discovery on the DeepSeek V4 fold, with the facts
// derived by hand in the comments, and the failures the engine must report.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>

#include "proof/discovery.hpp"
#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "report/report.hpp"
#include "support.hpp"
#include "compiler_half.hpp"

using namespace bitproof;

namespace {

Spec with_scales(CodeRange r) {
  Spec spec = test::dsv4_spec();
  for (Claim& c : spec.claims) c.expected_cases.reset();
  REQUIRE(override_range(spec, "scale", r, "test").ok());
  return spec;
}

Spec single_claim(const std::string& a, const std::string& b, CodeRange scales) {
  Spec spec = with_scales(scales);
  spec.claims.resize(1);
  spec.claims[0].recipes = {recipe_by_name(a), recipe_by_name(b)};
  REQUIRE(spec.claims[0].recipes[0]);
  REQUIRE(spec.claims[0].recipes[1]);
  return spec;
}

}  // namespace

TEST_SUITE("proof") {
  TEST_CASE("DeepSeek V4 fold: 208/208 equal and exact, no witness disagreement") {
    const ProofResult r = run_proof(test::dsv4_spec(), {8});
    CHECK(r.cases == 208);
    REQUIRE(r.claims.size() == 2);
    CHECK(r.claims[0].holding == 208);
    CHECK(r.claims[1].holding == 208);
    CHECK(r.witness_disagreement_count == 0);
    CHECK(r.holds());
    CHECK(r.case_digest.size() == 64);
    CHECK(run_proof(test::dsv4_spec(), {8}).case_digest == r.case_digest);  // deterministic
  }

  TEST_CASE("the digest covers the outputs: a different recipe pair over the same domain digests differently") {
    const ProofResult fold =
        run_proof(single_claim("turbomind.mxfp4_fp16.folded", "turbomind.mxfp4_fp16.ordinary", {114, 126}), {1});
    const ProofResult ftz =
        run_proof(single_claim("turbomind.mxfp4_fp16.control.ftz", "turbomind.mxfp4_fp16.ordinary", {114, 126}), {1});
    CHECK(fold.case_digest != ftz.case_digest);
  }

  TEST_CASE("outside the interval the fold is refuted; counterexamples carry every field") {
    // Scale 112: a = 0, the ordinary scale half_bits(0) is +0, the folded one 2^-1.
    const ProofResult r = run_proof(with_scales({112, 112}), {3});
    CHECK_FALSE(r.holds());
    const ClaimResult& eq = r.claims[0];
    CHECK(eq.holding == 2);  // only ±0 elements agree (codes 0 and 8)
    REQUIRE(eq.counterexamples.size() == 3);
    const Counterexample& cx = eq.counterexamples[0];
    CHECK(cx.inputs == std::vector<std::uint32_t>{1, 112});
    CHECK(cx.outputs[0] == 0x0100);  // folded: 0.5 * 2^-15 = 2^-16, a subnormal
    CHECK(cx.outputs[1] == 0x0000);  // ordinary: times +0
    CHECK(cx.correctly_rounded == std::vector<bool>{true, false});
    CHECK(cx.intent_code == 0x0100u);
    CHECK(cx.kind == "zero");
    CHECK(eq.by_kind.at("zero") == 14);
  }

  TEST_CASE("which negative controls the spec's own interval 114..126 catches") {
    const std::vector<std::pair<std::string, bool>> controls = {
        {"turbomind.mxfp4_fp16.control.fold_plus13", true},
        {"turbomind.mxfp4_fp16.control.fold_plus15", true},
        {"turbomind.mxfp4_fp16.control.ftz", true},
        {"turbomind.mxfp4_fp16.control.signless", true},
        // No product rounds inside 114..126, so truncation cannot show there; the full domain refutes it
        // (tests/recipes): at overflow, round-to-nearest gives Inf and truncation 65504.
        {"turbomind.mxfp4_fp16.control.truncating", false},
    };
    for (const auto& entry : controls) {
      const std::string& name = entry.first;  // not a structured binding: clang 14 cannot capture one (CAPTURE)
      const bool refuted_here = entry.second;
      CAPTURE(name);
      const RecipeEntry* control = recipe_by_name(name);
      REQUIRE(control);
      const ProofResult r = run_proof(single_claim(name, std::string(control->card->control_of), {114, 126}), {1});
      CHECK(r.holds() == !refuted_here);
    }
  }

  TEST_CASE("correctly_rounded: the ordinary path is wrong where its load-time clamp bites") {
    Spec spec = with_scales({0, 255});
    spec.claims = {Claim{ClaimKind::kCorrectlyRounded, {recipe_by_name("turbomind.mxfp4_fp16.ordinary")}, {}, {}}};
    const Discovery d = *discover(spec, "scale", {4});
    // a = s - 112 in 1..30 is unclamped, and products overflow to Inf exactly as correct rounding does.
    // Below, the clamped scale +0 is right only while 6 * 2^(s-127) <= 2^-25 (half the least subnormal
    // rounds to 0): s <= 99. Above 142 the clamp keeps 2^15 while the intent grows.
    REQUIRE(d.claims[0].holding.size() == 2);
    CHECK(d.claims[0].holding[0].lo == 0);
    CHECK(d.claims[0].holding[0].hi == 99);
    CHECK(d.claims[0].holding[1].lo == 113);
    CHECK(d.claims[0].holding[1].hi == 142);
    CHECK_FALSE(d.claims[0].spec_interval_holds);  // the spec's interval here is the whole byte range
  }

  TEST_CASE("domain discovery: folded == ordinary exactly on scale bytes 113..128") {
    const Discovery d = *discover(test::dsv4_spec(), "scale", {8});
    CHECK(d.cases == 16 * 256);
    const ClaimDiscovery& eq = d.claims[0];
    CHECK(eq.spec_interval_holds);
    REQUIRE(eq.maximal.has_value());
    // a = s - 112: a = 0 zeroes the ordinary scale; a + 14 = 31 (s = 129) makes the folded scale Inf.
    CHECK(eq.maximal->lo == 113);
    CHECK(eq.maximal->hi == 128);
    CHECK(eq.below == 112u);
    CHECK(eq.above == 129u);
    REQUIRE(eq.codes[129].first.has_value());
    CHECK(eq.codes[129].first->outputs[0] == 0x7FFF);  // 0 * Inf: NaN
    CHECK(eq.codes[129].first->kind == "nan");
    CHECK(d.witness_disagreement_count == 0);
  }

  TEST_CASE("discovery: the same result on 1 and 4 threads; the spec-interval scope sweeps the spec's codes alone") {
    const Spec spec = test::dsv4_spec();
    const Discovery one = *discover(spec, "scale", {8, 1});
    const Discovery four = *discover(spec, "scale", {8, 4});
    CHECK(discovery_result_json(spec, one).dump() == discovery_result_json(spec, four).dump());
    const Discovery own = *discover(spec, "scale", {8, 2}, DiscoveryScope::kSpecInterval);
    CHECK(own.cases == 16 * 13);
    CHECK_FALSE(own.whole_format);
    REQUIRE(own.claims[0].codes.size() == 13);
    CHECK(own.claims[0].codes.front().code == 114);
    REQUIRE(own.claims[0].maximal.has_value());
    CHECK(own.claims[0].maximal->lo == 114);
    CHECK(own.claims[0].maximal->hi == 126);
    CHECK_FALSE(own.claims[0].below.has_value());  // nothing was swept below the spec's interval
    CHECK(own.claims[0].at(120).holds());
    CHECK(own.claims[0].at(120).failing.size() == 16);
  }

  TEST_CASE("discovery of a claim that fails inside the spec's interval") {
    Spec spec = single_claim("turbomind.mxfp4_fp16.control.fold_plus13", "turbomind.mxfp4_fp16.folded", {114, 126});
    const Discovery d = *discover(spec, "scale", {2});
    CHECK_FALSE(d.claims[0].spec_interval_holds);
    CHECK_FALSE(d.claims[0].maximal.has_value());
    CHECK_FALSE(discover(spec, "nonexistent", {2}).ok());
  }

  TEST_CASE("a disagreement between the soft and oracle witnesses is a failure in its own right") {
    // A recipe whose two CPU witnesses differ on one case: exactly what the check is for.
    static constexpr RecipeCard card{"test.split_witness",
                                     "split",
                                     "soft and oracle differ at x=3",
                                     "test",
                                     2,
                                     {FormatId::e2m1, FormatId::ue8m0},
                                     FormatId::fp16,
                                     Intent::kProduct};
    static const RecipeEntry split{&card, [](const std::uint32_t*) -> std::uint32_t { return 0; },
                                   [](const std::uint32_t* c) -> std::uint32_t { return c[0] == 3 ? 1 : 0; }};
    Spec spec = with_scales({114, 114});
    spec.claims = {Claim{ClaimKind::kEqual, {&split, &split}, {}, {}}};
    const ProofResult r = run_proof(spec, {8});
    CHECK(r.claims[0].holds());  // the claim itself holds
    CHECK(r.witness_disagreement_count == 1);
    CHECK_FALSE(r.holds());  // but the proof does not
    REQUIRE(r.witness_disagreements.size() == 1);
    CHECK(r.witness_disagreements[0].inputs == std::vector<std::uint32_t>{3, 114});
  }

  TEST_CASE("three inputs: the (in0 - in1) x in2 intent, cases in order (first input fastest), a refuted twin") {
    // (q - z) x s with q, z uint4 and s an FP16 scale: soft computes it in _Float16
    // (exact here: |q - z| <= 15 and s in {0.5, 1, 3}), the oracle from the intent.
    static constexpr RecipeCard card{"test.zero_point",
                                     "zp",
                                     "(q - z) * s",
                                     "test",
                                     3,
                                     {FormatId::uint4, FormatId::uint4, FormatId::fp16},
                                     FormatId::fp16,
                                     Intent::kZeroPointProduct};
    static const auto plain = [](const std::uint32_t* c) -> std::uint32_t {
      const std::uint16_t s = static_cast<std::uint16_t>(c[2]);
      const float scale = s == 0x3800 ? 0.5f : (s == 0x3C00 ? 1.0f : 3.0f);
      const auto h = static_cast<CompilerHalf>(static_cast<float>(static_cast<int>(c[0]) - static_cast<int>(c[1])) * scale);
      std::uint16_t bits;
      std::memcpy(&bits, &h, 2);
      return bits;
    };
    static const RecipeEntry entry{&card, plain, plain};
    // The twin subtracts the zero point the wrong way round: wrong wherever q != z.
    static const RecipeEntry reversed{&card,
                                      [](const std::uint32_t* c) -> std::uint32_t {
                                        const std::uint32_t swapped[] = {c[1], c[0], c[2]};
                                        return plain(swapped);
                                      },
                                      [](const std::uint32_t* c) -> std::uint32_t {
                                        const std::uint32_t swapped[] = {c[1], c[0], c[2]};
                                        return plain(swapped);
                                      }};
    Spec spec;
    spec.path = "test";
    spec.output = FormatId::fp16;
    const auto range = [](std::string name, FormatId f, std::uint32_t lo, std::uint32_t hi) {
      return InputDomain{std::move(name), f, CodeRange{lo, hi}, false, {}, std::nullopt, {}};
    };
    spec.inputs = {range("q", FormatId::uint4, 0, 15), range("z", FormatId::uint4, 0, 15),
                   InputDomain{"scale", FormatId::fp16, std::nullopt, false, {0x3800, 0x3C00, 0x4200}, std::nullopt, {}}};
    spec.claims = {Claim{ClaimKind::kCorrectlyRounded, {&entry}, {}, {}}, Claim{ClaimKind::kExact, {&entry}, {}, {}},
                   Claim{ClaimKind::kEqual, {&reversed, &entry}, {}, {}}};
    const ProofResult r = run_proof(spec, {4});
    CHECK(r.cases == 16 * 16 * 3);
    CHECK(r.claims[0].holds());
    CHECK(r.claims[1].holds());
    CHECK(r.witness_disagreement_count == 0);
    CHECK(r.claims[2].holding == 16 * 3);  // q == z only
    REQUIRE_FALSE(r.claims[2].counterexamples.empty());
    const Counterexample& cx = r.claims[2].counterexamples[0];
    CHECK(cx.case_index == 1);  // q = 1, z = 0, scale 0.5: the first input runs fastest
    CHECK(cx.inputs == std::vector<std::uint32_t>{1, 0, 0x3800});
    CHECK(oracle::to_string(cx.intent) == "0.5");
    std::uint32_t codes[3];
    CaseEvaluator(spec).codes_of(16 * 16 * 2 + 16 * 3 + 5, codes);
    CHECK(codes[0] == 5);
    CHECK(codes[1] == 3);
    CHECK(codes[2] == 0x4200);
  }

  TEST_CASE("findings: refuted as expected passes; a finding that holds or fails otherwise does not") {
    // Scale 112 alone: folded vs ordinary differ on the 14 non-zero elements (kind "zero": ordinary gives +-0).
    Spec spec = single_claim("turbomind.mxfp4_fp16.folded", "turbomind.mxfp4_fp16.ordinary", {112, 112});
    const ProofResult plain = run_proof(spec, {1});
    const ClaimResult& r = plain.claims[0];
    REQUIRE(r.cases - r.holding == 14);
    CHECK(claim_verdict(spec.claims[0], r) == ClaimVerdict::kRefuted);
    CHECK_FALSE(plain.passes(spec));

    spec.claims[0].expect = Expectation{14, r.by_kind};
    CHECK(claim_verdict(spec.claims[0], r) == ClaimVerdict::kRefutedAsExpected);
    CHECK(plain.passes(spec));
    CHECK_FALSE(plain.holds());

    spec.claims[0].expect = Expectation{14, {}};  // kinds not recorded: the count decides
    CHECK(plain.passes(spec));
    spec.claims[0].expect = Expectation{13, {}};  // one case off
    CHECK(claim_verdict(spec.claims[0], r) == ClaimVerdict::kExpectationMissed);
    CHECK_FALSE(plain.passes(spec));
    spec.claims[0].expect = Expectation{14, {{"value", 14}}};  // right count, wrong kinds
    CHECK(claim_verdict(spec.claims[0], r) == ClaimVerdict::kExpectationMissed);
    CHECK_FALSE(plain.passes(spec));

    // The finding gone: the same expectation on the proven interval, where the claim holds.
    Spec proven = single_claim("turbomind.mxfp4_fp16.folded", "turbomind.mxfp4_fp16.ordinary", {114, 126});
    proven.claims[0].expect = Expectation{14, {}};
    const ProofResult holds = run_proof(proven, {1});
    CHECK(holds.holds());
    CHECK(claim_verdict(proven.claims[0], holds.claims[0]) == ClaimVerdict::kExpectationMissed);
    CHECK_FALSE(holds.passes(proven));

    // A witness disagreement fails a finding too.
    ProofResult broken = plain;
    spec.claims[0].expect = Expectation{14, {}};
    broken.witness_disagreement_count = 1;
    CHECK_FALSE(broken.passes(spec));
  }

  TEST_CASE("difference kinds") {
    CHECK(difference_kind(FormatId::fp16, 0x3C00, 0x3C00) == "");
    CHECK(difference_kind(FormatId::fp16, 0x3C00, 0xBC00) == "sign");
    CHECK(difference_kind(FormatId::fp16, 0x0000, 0x8000) == "sign");
    CHECK(difference_kind(FormatId::fp16, 0x7C00, 0x7BFF) == "inf");
    CHECK(difference_kind(FormatId::fp16, 0x7FFF, 0x3C00) == "nan");
    CHECK(difference_kind(FormatId::fp16, 0x7FFF, 0x7E00) == "nan-bits");
    CHECK(difference_kind(FormatId::fp16, 0x0000, 0x0001) == "zero");
    CHECK(difference_kind(FormatId::fp16, 0x3C00, 0x3C01) == "value");
  }
}
