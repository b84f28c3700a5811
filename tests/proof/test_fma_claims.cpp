// Three-input FMA claims through the engine: the committed 2^48 specs on CPU slices
// (the LLVM issue 98389 triple among them), correctly_rounded claims above the 2^24
// Boost limit through the fast oracle, the GPU's refusal of those, and the negative
// controls (a wrong FMA refuted with its counterexample).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string>

#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "report/report.hpp"

using namespace bitproof;

namespace {

Spec load(const std::string& name) {
  auto spec = load_spec(fmt::format("{}/proofs/{}", BITPROOF_SOURCE_DIR, name));
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

void slice(Spec& spec, const char* input, std::uint32_t lo, std::uint32_t hi) {
  auto ok = override_range(spec, input, {lo, hi}, "test");
  REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? "" : ok.error().message));
}

// A spec over FP16/BF16 triples with one claim, from JSON.
Spec triple_spec(const std::string& format, const std::string& a, const std::string& b, const std::string& c,
                 const std::string& claim) {
  const std::string text = fmt::format(
      R"({{"bitproof_spec": 1, "name": "t", "inputs": [
            {{"name": "a", "format": "{0}", "codes": {1}}},
            {{"name": "b", "format": "{0}", "codes": {2}}},
            {{"name": "c", "format": "{0}", "codes": {3}}}],
          "output": "{0}", "claims": [{4}]}})",
      format, a, b, c, claim);
  auto spec = parse_spec(text, "test");
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

std::string show(const Spec& spec, const Counterexample& cx) {
  std::string s = fmt::format("case {}:", cx.case_index);
  for (std::uint32_t in : cx.inputs) fmt::format_to(std::back_inserter(s), " {}", describe_code(spec.output, in));
  for (std::size_t r = 0; r < cx.outputs.size(); ++r) {
    s += fmt::format(" | {} {}", cx.recipes[r]->card->name, describe_code(spec.output, cx.outputs[r]));
  }
  if (cx.intent_code) s += " | correct " + describe_code(spec.output, *cx.intent_code);
  return s + " (" + cx.kind + ")";
}

}  // namespace

TEST_SUITE("proof") {
  TEST_CASE("fp16-fma-routes on a CPU slice around LLVM issue 98389: the FP32 route refuted there, the rest hold") {
    Spec spec = load("fp16-fma-routes.json");
    CHECK(spec.case_count() == (std::uint64_t{1} << 48));
    slice(spec, "a", 0x520b, 0x520b);  // +48.34375
    slice(spec, "b", 0x00e0, 0x00ef);  // subnormals 224..239 · 2^-24
    slice(spec, "c", 0x2ff0, 0x2fff);  // +0.12353515625 .. +0.12493896484375
    REQUIRE(spec.case_count() == 256);
    const ProofResult r = run_proof(spec, {256, 2});
    CHECK(r.witness_disagreement_count == 0);
    REQUIRE(r.claims.size() == 4);
    CHECK(r.claims[0].holds());  // hfma ≡ the exact oracle
    CHECK(r.claims[1].holds());  // the FP64 route
    CHECK(r.claims[2].holds());  // round to odd
    CHECK_FALSE(r.claims[3].holds());
    const auto& cxs = r.claims[3].counterexamples;
    for (std::size_t i = 0; i < std::min<std::size_t>(4, cxs.size()); ++i) MESSAGE(show(spec, cxs[i]));
    const auto llvm = std::find_if(cxs.begin(), cxs.end(), [](const Counterexample& cx) {
      return cx.inputs == std::vector<std::uint32_t>{0x520b, 0x00e9, 0x2ff6};
    });
    REQUIRE(llvm != cxs.end());
    CHECK(llvm->outputs == std::vector<std::uint32_t>{0x3000, 0x3001});  // fp32 route, hfma
    CHECK(llvm->intent_code == 0x3001u);
    CHECK(llvm->kind == "value");
  }

  TEST_CASE("the FP64 route's NaN bits: Inf x 0 + c gives the H200's 0xFE00, hfma 0x7FFF (found on the GPU)") {
    Spec spec = load("fp16-fma-routes.json");
    slice(spec, "a", 0x7C00, 0x7C00);  // +Inf
    slice(spec, "b", 0x0000, 0x0000);  // +0
    slice(spec, "c", 0x3C00, 0x3C0F);  // 1 .. 1 + 15 * 2^-10
    REQUIRE(spec.case_count() == 16);
    const ProofResult r = run_proof(spec, {16, 1});
    CHECK(r.witness_disagreement_count == 0);
    CHECK(r.claims[0].holds());  // hfma ≡ the exact oracle: both NaN, the canonical 0x7FFF
    CHECK(r.claims[2].holds());  // round to odd (FP32 operations give the canonical NaN)
    REQUIRE_FALSE(r.claims[1].holds());
    CHECK(r.claims[1].cases - r.claims[1].holding == 16);
    CHECK(r.claims[1].by_kind.at("nan-bits") == 16);
    REQUIRE_FALSE(r.claims[1].counterexamples.empty());
    CHECK(r.claims[1].counterexamples[0].outputs == std::vector<std::uint32_t>{0xFE00, 0x7FFF});  // FP64 route, hfma
  }

  TEST_CASE("bf16-fma-routes on a CPU slice: every route holds on ordinary exponents; the signless control is refuted") {
    Spec spec = load("bf16-fma-routes.json");
    slice(spec, "a", 0x3F80, 0x3F9F);  // 1 .. 1.2421875
    slice(spec, "b", 0xBB00, 0xBB0F);  // about -2^-9
    slice(spec, "c", 0x3B00, 0x3B0F);  // about +2^-9: cancellation
    const ProofResult r = run_proof(spec, {8, 2});
    CHECK(r.witness_disagreement_count == 0);
    for (std::size_t c = 0; c < r.claims.size(); ++c) {
      CHECK_MESSAGE(r.claims[c].holds(), "claim ", c, ": ", r.claims[c].cases - r.claims[c].holding, " failing");
    }
    // The same box with the signs of b and c swapped: a negative addend, whose sign the control drops.
    const Spec control = triple_spec("bf16", R"({"range": [16256, 16287]})", R"({"range": [15104, 15119]})",
                                     R"({"range": [47872, 47887]})",
                                     R"({"claim": "equal", "recipes": ["bf16fma.control.signless_addend", "bf16fma.bfma"]})");
    const ProofResult refuted = run_proof(control, {8, 2});
    CHECK_FALSE(refuted.claims[0].holds());
    REQUIRE_FALSE(refuted.claims[0].counterexamples.empty());
    MESSAGE(show(control, refuted.claims[0].counterexamples[0]));
  }

  TEST_CASE("BF16 findings: the FP64 route double-rounds (the sum spans > 53 bits), round to odd overflows in FP32") {
    // 0x6040 (+1.5·2^65) · 0x3F81 (+1.0078125) + 0xBF80 (−1): the product lies exactly on the midpoint of
    // 0x6041 and 0x6042; minus 1 puts the exact sum just below it (correct 0x6041), but FP64's last place
    // there is 2^13, so the FP64 FMA returns the midpoint and the tie goes to even 0x6042.
    Spec spec = load("bf16-fma-routes.json");
    slice(spec, "a", 0x6040, 0x6040);
    slice(spec, "b", 0x3F81, 0x3F81);
    slice(spec, "c", 0xBF80, 0xBF80);
    const ProofResult r = run_proof(spec, {8, 1});
    CHECK(r.claims[0].holds());  // bfma ≡ the exact oracle
    REQUIRE_FALSE(r.claims[1].holds());
    CHECK(r.claims[1].counterexamples[0].outputs == std::vector<std::uint32_t>{0x6042, 0x6041});
    CHECK(r.claims[1].counterexamples[0].intent_code == 0x6041u);
    MESSAGE(show(spec, r.claims[1].counterexamples[0]));
    // 0x4000 (+2) · 0x7F00 (+2^127) + 0xFF00 (−2^127) = +2^127, but the FP32 product overflows to +∞.
    slice(spec, "a", 0x4000, 0x4000);
    slice(spec, "b", 0x7F00, 0x7F00);
    slice(spec, "c", 0xFF00, 0xFF00);
    const ProofResult o = run_proof(spec, {8, 1});
    CHECK(o.claims[1].holds());  // FP64 holds the product
    REQUIRE_FALSE(o.claims[2].holds());
    CHECK(o.claims[2].counterexamples[0].outputs == std::vector<std::uint32_t>{0x7F80, 0x7F00});
    MESSAGE(show(spec, o.claims[2].counterexamples[0]));
  }

  TEST_CASE("correctly_rounded FMA claims above 2^24 cases run on the fast oracle (CPU); the GPU is told to use equal") {
    // a: every FP16 code; b: 256 codes from +1; c: +0 and the least subnormal. 2^25 cases.
    const Spec spec = triple_spec("fp16", R"("all")", R"({"range": [15360, 15615]})", R"({"range": [0, 1]})",
                                  R"({"claim": "correctly_rounded", "recipes": ["fp16fma.hfma", "exact.fma_fp16"]})");
    REQUIRE(spec.case_count() == (std::uint64_t{1} << 25));
    REQUIRE(check_sweepable(spec).ok());
    const auto gpu = check_sweepable(spec, true);
    REQUIRE_FALSE(gpu.ok());
    CHECK(gpu.error().message.find("exact.fma_fp16") != std::string::npos);
    const ProofResult r = run_proof(spec, {8, 2});
    CHECK(r.claims[0].cases == (std::uint64_t{1} << 25));
    CHECK(r.claims[0].holds());
    CHECK(r.witness_mode == WitnessMode::kSampled);
    CHECK(r.witness_disagreement_count == 0);  // soft hfma vs Boost, and the fast oracle vs Boost, on the sample

    // Not an FMA intent: above 2^24 the Boost oracle would run on every case, refused as before.
    auto hmul = parse_spec(
        R"({"bitproof_spec": 1, "name": "t", "inputs": [{"name": "a", "format": "fp16", "codes": "all"},
            {"name": "b", "format": "fp16", "codes": {"range": [0, 511]}}], "output": "fp16",
            "claims": [{"claim": "correctly_rounded", "recipes": ["fp16.hmul"]}]})",
        "test");
    REQUIRE(hmul.ok());
    CHECK_FALSE(check_sweepable(*hmul).ok());
  }

  TEST_CASE("negative controls: wrong FMAs are refuted by correctly_rounded and exact claims, the oracle's verdict printed") {
    const std::string a = R"({"range": [20992, 21007]})";  // 0x5200.. 0x520f
    const std::string b = R"({"range": [224, 239]})";      // 0x00e0 .. 0x00ef
    const std::string c = R"({"range": [12272, 12287]})";  // 0x2ff0 .. 0x2fff
    for (const char* wrong : {"fp16fma.control.unfused", "fp16fma.control.rto_rz", "fp16fma.fp32_fma"}) {
      const Spec spec = triple_spec("fp16", a, b, c,
                                    fmt::format(R"({{"claim": "correctly_rounded", "recipes": ["{}"]}})", wrong));
      const ProofResult r = run_proof(spec, {4, 2});
      CHECK_MESSAGE(!r.claims[0].holds(), std::string(wrong));
      CHECK(r.witness_disagreement_count == 0);
      REQUIRE_FALSE(r.claims[0].counterexamples.empty());
      MESSAGE(std::string(wrong), ": ", r.claims[0].cases - r.claims[0].holding, " of ", r.claims[0].cases, "; ",
              show(spec, r.claims[0].counterexamples[0]));
      CHECK_FALSE(r.claims[0].counterexamples[0].correctly_rounded[0]);
    }
    const Spec hold = triple_spec("fp16", a, b, c,
                                  R"({"claim": "correctly_rounded", "recipes": ["fp16fma.hfma", "fp16fma.fp64_fma", "fp16fma.rto"]})");
    CHECK(run_proof(hold, {4, 2}).claims[0].holds());
    // exact: hfma rounds on almost all of these cases, so the claim is refuted as "inexact".
    const Spec exact = triple_spec("fp16", a, b, c, R"({"claim": "exact", "recipes": ["fp16fma.hfma"]})");
    const ProofResult e = run_proof(exact, {4, 2});
    CHECK_FALSE(e.claims[0].holds());
    CHECK(e.claims[0].by_kind.count("inexact") == 1);
  }
}
