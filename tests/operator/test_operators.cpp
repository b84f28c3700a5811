// The operator templates (src/operator): the soft model against the oracle
// arithmetic (two independent implementations of every FP32 operation), the
// A/B run on the CPU, and the trace proof with its negative controls: each
// control must be refuted with the first difference named.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>

#include "operator/host_float.hpp"
#include "arith/soft_arith.hpp"
#include "operator/ab.hpp"
#include "recipes/turbomind_mxfp4.hpp"
#include "operator/operators.hpp"
#include "operator/trace.hpp"
#include "operator/values.hpp"
#include "splitmix.hpp"
#include "oracle/oracle_arith.hpp"
#include "proof/ab_proof.hpp"
#include "report/report.hpp"

using namespace bitproof;
using nlohmann::json;

namespace {

float as_float(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// A small A/B spec: x [m, k] against arms built by `arms` (JSON).
op::AbSpec spec_from(const json& j) {
  auto spec = op::parse_ab_spec(j.dump(), BITPROOF_SOURCE_DIR "/proofs/ab/test.json");
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

json gemv_spec(std::uint64_t block_a, std::uint64_t block_b, const char* order_b, const json& values) {
  const json x = {{"name", "x"}, {"role", "activation"}, {"dtype", "f16"}, {"shape", {1, 512}}, {"values", values}};
  const json w1 = {{"name", "w1"}, {"role", "weight"}, {"dtype", "f16"}, {"shape", {24, 512}}, {"values", values}};
  const json w2 = {{"name", "w2"}, {"role", "weight"}, {"dtype", "f16"}, {"shape", {8, 512}}, {"values", values}};
  const json separate = {{"name", "separate"},
                         {"stages",
                          {{{"op", "fp16_gemv"}, {"x", "x"}, {"weights", {"w1"}}, {"outputs", {"y1"}}, {"block_k", block_a}},
                           {{"op", "fp16_gemv"}, {"x", "x"}, {"weights", {"w2"}}, {"outputs", {"y2"}}, {"block_k", block_a}}}}};
  const json fused = {{"name", "fused"},
                      {"stages",
                       {{{"op", "fp16_gemv"}, {"x", "x"}, {"weights", {"w1", "w2"}}, {"outputs", {"y1", "y2"}},
                         {"block_k", block_b}, {"order", order_b}}}}};
  return {{"bitproof_ab", 1}, {"name", "t"}, {"cases", 4}, {"inputs", {x, w1, w2}}, {"arms", {separate, fused}},
          {"outputs", {"y1", "y2"}}};
}

json gemm_spec(const char* dequant_b, std::uint64_t split_b, std::uint32_t scale_hi) {
  const json x = {{"name", "x"}, {"role", "activation"}, {"dtype", "f16"}, {"shape", {3, 256}}};
  auto w = [&](const char* name, std::uint64_t rows, std::uint64_t cols) {
    return json{{"name", name}, {"role", "weight"}, {"dtype", "mxfp4"}, {"shape", {rows, cols}},
                {"scales", {{"range", {114, scale_hi}}}}};
  };
  auto arm = [](const char* name, const char* dequant, std::uint64_t split) {
    return json{{"name", name},
                {"stages",
                 {{{"op", "mxfp4_gemm"}, {"a", "x"}, {"weights", {"w1"}}, {"outputs", {"g"}}, {"dequant", dequant},
                   {"split_k", split}},
                  {{"op", "mxfp4_gemm"}, {"a", "x"}, {"weights", {"w3"}}, {"outputs", {"u"}}, {"dequant", dequant},
                   {"split_k", split}},
                  {{"op", "swiglu"}, {"gate", "g"}, {"up", "u"}, {"outputs", {"h"}}},
                  {{"op", "mxfp4_gemm"}, {"a", "h"}, {"weights", {"w2"}}, {"outputs", {"o"}}, {"dequant", dequant}}}}};
  };
  return {{"bitproof_ab", 1},
          {"name", "t"},
          {"cases", 3},
          {"inputs", {x, w("w1", 32, 256), w("w3", 32, 256), w("w2", 16, 32)}},
          {"arms", {arm("a", "turbomind.mxfp4_fp16.ordinary", 4), arm("b", dequant_b, split_b)}},
          {"outputs", {"g", "u", "h", "o"}}};
}

std::map<std::string, op::ScaleSet> synthetic_scales(const op::AbSpec& spec) {
  op::Weights none;
  auto sets = trace_scale_sets(spec, none, "", {});
  REQUIRE(sets.ok());
  return *sets;
}

op::Substitution fold_substitution(std::uint32_t lo, std::uint32_t hi) {
  return {{recipe_by_name("turbomind.mxfp4_fp16.ordinary"), recipe_by_name("turbomind.mxfp4_fp16.folded")},
          {lo, hi},
          "the fold's element proof"};
}

op::TraceResult trace(const op::AbSpec& spec, const std::vector<op::Substitution>& subs = {}) {
  auto r = op::prove_by_trace(spec, synthetic_scales(spec), subs, {2});
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

// The A/B run on the CPU with the host's binary32 unit, and the same run with the
// soft model as a second backend: the two CPU arithmetics must agree on every element.
op::AbResult run_cpu(const op::AbSpec& spec, bool with_soft = true) {
  auto weights = op::load_weights(spec, "");
  REQUIRE(weights.ok());
  auto host = op::make_cpu_runner(spec, *weights, 2, op::CpuArith::kHostFloat);
  auto soft = op::make_cpu_runner(spec, *weights, 2, op::CpuArith::kSoft);
  REQUIRE(host.ok());
  REQUIRE(soft.ok());
  std::vector<op::ArmRunner*> runners{host->get()};
  if (with_soft) runners.push_back(soft->get());
  auto r = op::run_ab(spec, runners, 4);
  REQUIRE(r.ok());
  CHECK(r->backend_disagreement_count == 0);
  return *r;
}

op::AbSpec committed(const char* name, std::uint64_t cases) {
  auto spec = op::load_ab_spec(std::string(BITPROOF_SOURCE_DIR "/proofs/ab/") + name + ".json");
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  spec->cases = cases;
  return *spec;
}

}  // namespace

TEST_SUITE("operator") {
  TEST_CASE("host binary32 unit: the soft model's bits on edge and random operands (else the CPU backend refuses it)") {
    const HostFloatCheck& c = host_float_agrees();
    CHECK_MESSAGE(c.agrees, c.detail);
    CHECK(c.operations > 100000);
    // Negative control: without NaN canonicalisation the host's NaNs are not the model's.
    const float nan = std::bit_cast<float>(0x7FC00001u);
    CHECK(std::bit_cast<std::uint32_t>(nan + 1.0f) != SoftArith::fadd(0x7FC00001u, 0x3F800000u));
    CHECK(HostFloatArith::fadd(0x7FC00001u, 0x3F800000u) == SoftArith::fadd(0x7FC00001u, 0x3F800000u));
  }

  TEST_CASE("silu model: soft and oracle arithmetic give the same bits; the model is SiLU to 4 ulp") {
    int differ = 0, inaccurate = 0, control_differs = 0;
    for (std::uint32_t h = 0; h < 65536; h += 3) {
      const std::uint32_t g = SoftArith::half2float(static_cast<std::uint16_t>(h));
      const std::uint32_t soft = op::silu_bits<SoftArith>(g);
      if (soft != op::silu_bits<OracleArith>(g) && differ++ < 4)
        FAIL_CHECK(fmt::format("silu {:#06x}: soft {:#010x} oracle {:#010x}", h, soft, op::silu_bits<OracleArith>(g)));
      // Negative control: the same model without the sign flip (SiLU of -g's exponent) is another function.
      if (soft != op::silu_bits<SoftArith>(g ^ 0x80000000u)) ++control_differs;
      const double x = as_float(g);
      if (!std::isfinite(x) || std::fabs(x) > 80) continue;
      const double want = x / (1 + std::exp(-x));
      const double got = as_float(soft);
      // ilogb(0) is INT_MIN: an exact zero has no ulp, the model must give zero.
      const double ulp = want == 0 ? 0 : std::ldexp(1.0, std::ilogb(want) - 23);
      if (std::fabs(got - want) > 4 * ulp + 1e-38 && inaccurate++ < 4)
        FAIL_CHECK(fmt::format("silu({}) = {} (model) vs {} (libm)", x, got, want));
    }
    CHECK(differ == 0);
    CHECK(inaccurate == 0);
    CHECK(control_differs > 20000);
  }

  TEST_CASE("operators: the soft model equals the oracle arithmetic element by element") {
    std::uint64_t seed = 9;
    std::vector<std::uint16_t> x(3 * 256), w(8 * 256);
    for (auto& v : x) v = op::draw_f16({false, -1, 1}, splitmix64_next(seed));
    for (auto& v : w) v = op::draw_f16({false, -1, 1}, splitmix64_next(seed));
    std::vector<std::uint8_t> codes(8 * 256 / 2), scales(8 * 256 / 32);
    for (auto& c : codes) c = static_cast<std::uint8_t>(splitmix64_next(seed));
    for (auto& s : scales) s = static_cast<std::uint8_t>(110 + splitmix64_next(seed) % 20);
    op::Bits<SoftArith> soft;
    op::Bits<OracleArith> oracle;
    const op::Strided xs{x.data(), 256}, ws{w.data(), 256}, cs{codes.data(), 256}, ss{scales.data(), 8};
    int mismatches = 0, control = 0;
    for (std::uint64_t n = 0; n < 8; ++n) {
      const op::GemvShape g{256, 64, op::FoldOrder::kForward};
      if (op::gemv_element(soft, xs, ws, n, g) != op::gemv_element(oracle, xs, ws, n, g)) ++mismatches;
      const op::GemvShape other{256, 32, op::FoldOrder::kReverse};
      if (op::gemv_element(soft, xs, ws, n, g) != op::gemv_element(soft, xs, ws, n, other)) ++control;
      const op::GemmShape s{256, 2, op::FoldOrder::kForward};
      std::uint16_t by_soft[3], by_oracle[3];
      op::mxfp4_column<turbomind::Folded>(soft, xs, cs, ss, n, 3, s, by_soft);
      op::mxfp4_column<turbomind::Folded>(oracle, xs, cs, ss, n, 3, s, by_oracle);
      for (std::uint64_t m = 0; m < 3; ++m) {
        if (by_soft[m] != by_oracle[m]) ++mismatches;
        if (op::swiglu_element(soft, xs, ws, m, n) != op::swiglu_element(oracle, xs, ws, m, n)) ++mismatches;
      }
    }
    CHECK(mismatches == 0);
    MESSAGE(fmt::format("another block size and order changed {} of 8 GEMV outputs", control));
  }

  TEST_CASE("ab on the CPU: equal arms agree on every case; a reassociated arm differs, with the case named") {
    const op::AbSpec same = spec_from(gemv_spec(128, 128, "forward", json{{"uniform", {-1, 1}}}));
    const op::AbResult r = run_cpu(same);
    CHECK(r.arms_equal());
    CHECK(r.outputs.size() == 2);
    CHECK(r.outputs[0].digest[0] == r.outputs[0].digest[1]);
    // Reassociation moves an FP16 output in about one of 400 elements: the committed control, 2 cases.
    const op::AbResult d = run_cpu(committed("dsv4-fused-aux-gemv-block512", 2), false);
    REQUIRE_FALSE(d.arms_equal());
    REQUIRE_FALSE(d.first_differences.empty());
    CHECK(d.first_differences[0].a != d.first_differences[0].b);
    CHECK(d.outputs[0].digest[0] != d.outputs[0].digest[1]);
  }

  TEST_CASE("trace: fused over the joined buffer and separate launches are the same graphs") {
    const op::TraceResult r = trace(spec_from(gemv_spec(128, 128, "forward", json{{"uniform", {-1, 1}}})));
    CHECK(r.identical);
    CHECK(r.elements == 32);
    CHECK_FALSE(r.difference.has_value());
  }

  TEST_CASE("trace: another block-K is refuted at the block boundary") {
    const op::TraceResult r = trace(spec_from(gemv_spec(128, 64, "forward", json{{"uniform", {-1, 1}}})));
    REQUIRE_FALSE(r.identical);
    REQUIRE(r.difference.has_value());
    CHECK(r.difference->col == 0);
    CHECK(r.difference->position.find("arm A: reduction step k = 64") != std::string::npos);
    CHECK(r.difference->operation_a.find("x[0][64]") != std::string::npos);
    CHECK(r.difference->operation_b.ends_with(", +0)"));  // the fused arm restarts its chain at k = 64
    MESSAGE(r.difference->position, " | ", r.difference->operation_a, " | ", r.difference->operation_b);
  }

  TEST_CASE("trace: block partials added in reverse are refuted at the fold") {
    const op::TraceResult r = trace(spec_from(gemv_spec(128, 128, "reverse", json{{"uniform", {-1, 1}}})));
    REQUIRE_FALSE(r.identical);
    CHECK(r.difference->operation_a.starts_with("add("));
    CHECK(r.difference->operation_b.starts_with("add("));
    CHECK(r.difference->operation_a != r.difference->operation_b);
  }

  TEST_CASE("trace: ordinary and folded dequant are one node only where the element proof covers every scale") {
    const op::AbSpec fold = spec_from(gemm_spec("turbomind.mxfp4_fp16.folded", 4, 126));
    const op::TraceResult proven = trace(fold, {fold_substitution(113, 128)});
    CHECK(proven.identical);
    CHECK(proven.substitution_used[0]);
    CHECK(proven.compared == std::vector<std::string>{"g", "u", "h", "o"});
    // No element proof: the first dequant node differs, and the proof says why.
    const op::TraceResult bare = trace(fold);
    REQUIRE_FALSE(bare.identical);
    CHECK(bare.difference->why.find("no element proof") != std::string::npos);
    // A proof on 113..128 does not cover a weight whose scales reach 129.
    const op::TraceResult past = trace(spec_from(gemm_spec("turbomind.mxfp4_fp16.folded", 4, 129)),
                                       {fold_substitution(113, 128)});
    REQUIRE_FALSE(past.identical);
    CHECK(past.difference->why.find("holds byte 129") != std::string::npos);
    MESSAGE(past.difference->why);
    // An element proof whose sweep failed justifies nothing, even where the scales fit.
    op::Substitution failed = fold_substitution(113, 129);
    failed.holds = false;
    const op::TraceResult unproven = trace(fold, {failed});
    REQUIRE_FALSE(unproven.identical);
    CHECK(unproven.difference->why.find("does not hold") != std::string::npos);
  }

  TEST_CASE("trace: another split-K is refuted") {
    const op::TraceResult r = trace(spec_from(gemm_spec("turbomind.mxfp4_fp16.ordinary", 2, 126)));
    REQUIRE_FALSE(r.identical);
    CHECK(r.difference->tensor == "g");
  }

  TEST_CASE("ab on the CPU: the fold past its interval differs on concrete cases too") {
    const op::AbResult r = run_cpu(spec_from(gemm_spec("turbomind.mxfp4_fp16.folded", 4, 129)));
    CHECK_FALSE(r.arms_equal());
    const op::AbResult ok = run_cpu(spec_from(gemm_spec("turbomind.mxfp4_fp16.folded", 4, 126)));
    CHECK(ok.arms_equal());
  }
}
