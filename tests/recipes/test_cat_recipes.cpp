// The recipe catalogue: every registered recipe has a spec card and a proof (every
// non-control recipe appears in some proofs/*.json, every control's target family is
// in a proof), the catalogue recipes match independent rewrites in compiler arithmetic,
// soft == oracle on large input spaces (sampled), and docs/catalogue.md is fresh.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "recipes/registry.hpp"
#include "compiler_half.hpp"

using namespace bitproof;

namespace {

const std::string kRoot = BITPROOF_SOURCE_DIR;

std::set<std::string> recipes_in_proofs() {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/proofs")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto spec = nlohmann::json::parse(in);
    for (const auto& claim : spec.at("claims")) {
      for (const auto& r : claim.at("recipes")) names.insert(r.get<std::string>());
    }
  }
  return names;
}

std::uint32_t run(const char* name, std::uint32_t a, std::uint32_t b = 0, std::uint32_t c = 0) {
  const RecipeEntry* r = recipe_by_name(name);
  REQUIRE_MESSAGE(r != nullptr, name);
  const std::uint32_t codes[] = {a, b, c};
  return r->soft(codes);
}

bool nan16(std::uint32_t b) { return (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0; }
bool same16(std::uint32_t a, std::uint32_t b) { return a == b || (nan16(a) && nan16(b)); }

// E2M1 and E4M3 values written out from the OCP definitions, as doubles.
double e2m1(std::uint32_t x) {
  static constexpr double kMag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (x & 8) ? -kMag[x & 7] : kMag[x & 7];
}
double e4m3(std::uint32_t c) {
  const int e = static_cast<int>(c >> 3) & 15, m = static_cast<int>(c) & 7;
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return (c & 0x80) ? -mag : mag;
}
// E4M3FNUZ (bias 8, 0x80 NaN) from its definition.
double e4m3fnuz(std::uint32_t c) {
  if (c == 0x80) return NAN;
  const int e = static_cast<int>(c >> 3) & 15, m = static_cast<int>(c) & 7;
  const double mag = e == 0 ? std::ldexp(m, -10) : std::ldexp(8 + m, e - 11);
  return (c & 0x80) ? -mag : mag;
}
std::uint32_t bf16_of_float(float f) { return std::bit_cast<std::uint32_t>(f) >> 16; }  // exact values only

// An `equal` spec over q, z (every code of z's format: uint4, or uint8 for GPTQ-v1's 1..16)
// and the given FP16 scales.
Spec zero_point_spec(const std::string& a, const std::string& b, const std::vector<std::uint32_t>& scales) {
  const std::string_view zero_format = spec_of(recipe_by_name(a)->card->inputs[1]).name;
  std::string list;
  for (std::size_t i = 0; i < scales.size(); ++i) list += fmt::format("{}{}", i ? "," : "", scales[i]);
  const std::string text = fmt::format(
      R"({{"bitproof_spec": 1, "name": "zp", "inputs": [{{"name": "q", "format": "uint4", "codes": "all"}},
          {{"name": "z", "format": "{}", "codes": "all"}}, {{"name": "scale", "format": "fp16", "codes": {{"list": [{}]}}}}],
          "output": "fp16", "claims": [{{"claim": "equal", "recipes": ["{}", "{}"]}}]}})",
      zero_format, list, a, b);
  auto spec = parse_spec(text, "test");
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

}  // namespace

TEST_SUITE("recipes") {
  TEST_CASE("every registered recipe has a spec card and a proof; every control's target is proven") {
    const std::set<std::string> proven = recipes_in_proofs();
    int missing = 0;
    for (const RecipeEntry& r : all_recipes()) {
      const RecipeCard& c = *r.card;
      CHECK_MESSAGE(!c.summary.empty(), c.name);
      CHECK_MESSAGE(!c.source.empty(), c.name);
      const std::string_view target = c.role == Role::kControl ? c.control_of : c.name;
      if (proven.count(std::string(target)) == 0 && ++missing <= 8) {
        FAIL_CHECK(fmt::format("{}: no proofs/*.json names {}", c.name, target));
      }
    }
    CHECK(missing == 0);
  }

  TEST_CASE("Marlin E2M1 -> FP16/BF16 and the E8M0 -> BF16 scale: every code against the OCP values") {
    for (std::uint32_t x = 0; x < 16; ++x) {
      CHECK_MESSAGE(same16(run("marlin.e2m1_fp16.flop", x), half_bits(static_cast<CompilerHalf>(e2m1(x)))), x);
      const float bf = std::bit_cast<float>(run("marlin.e2m1_bf16.flop", x) << 16);
      CHECK_MESSAGE(bf == static_cast<float>(e2m1(x)), x);
      CHECK(std::signbit(bf) == ((x & 8) != 0));
    }
    for (std::uint32_t s = 1; s < 255; ++s) {
      CHECK(std::bit_cast<float>(run("marlin.e8m0_bf16.shift", s) << 16) == std::ldexp(1.0f, static_cast<int>(s) - 127));
    }
    CHECK(run("marlin.e8m0_bf16.shift", 0) == 0x0000);    // 2^-127 lost: +0
    CHECK(run("marlin.e8m0_bf16.shift", 255) == 0x7F80);  // NaN becomes +Inf
  }

  TEST_CASE("FP8 E4M3 shift and scale fold against _Float16 arithmetic, all elements × every 7th FP16 scale") {
    int mismatches = 0;
    for (std::uint32_t c = 0; c < 256; ++c) {
      if ((c & 0x7F) == 0x7F) continue;  // NaN codes: the shift makes them ±480 (domain report)
      const CompilerHalf v = static_cast<CompilerHalf>(e4m3(c));
      CHECK(same16(run("fp8.e4m3_fp16.shift_flop", c), half_bits(v)));
      for (std::uint32_t s = 0; s < 65536; s += 7) {
        const std::uint16_t want = half_bits(static_cast<CompilerHalf>(v * half_of(s)));
        const std::uint32_t ordinary = run("fp8.e4m3_fp16.ordinary", c, s);
        if (!same16(ordinary, want) && ++mismatches <= 8) {
          FAIL_CHECK(fmt::format("e4m3 0x{:02X} × fp16 0x{:04X}: ordinary 0x{:04X}, _Float16 0x{:04X}", c, s, ordinary,
                                 want));
        }
      }
    }
    CHECK(mismatches == 0);
    CHECK(run("fp8.e4m3_fp16.shift_flop", 0x7F) == 0x5F80);  // NaN -> +480
    CHECK(run("fp8.e5m2_fp16.shift", 0x7C) == 0x7C00);       // Inf stays Inf
  }

  TEST_CASE("GPTQ magic-number paths against _Float16 (q - 8) * s, every nibble × every 3rd scale") {
    int mismatches = 0;
    for (std::uint32_t q = 0; q < 16; ++q) {
      for (std::uint32_t s = 0; s < 65536; s += 3) {
        const std::uint16_t want =
            half_bits(static_cast<CompilerHalf>(static_cast<CompilerHalf>(static_cast<int>(q) - 8) * half_of(s)));
        for (const char* name : {"gptq.u4b8_fp16.plain", "gptq.u4b8_fp16.magic_lo", "gptq.u4b8_fp16.magic_hi"}) {
          const std::uint32_t got = run(name, q, s);
          if (!same16(got, want) && ++mismatches <= 8) {
            FAIL_CHECK(fmt::format("{} q={} s=0x{:04X}: 0x{:04X} vs _Float16 0x{:04X}", name, q, s, got, want));
          }
        }
      }
    }
    CHECK(mismatches == 0);
    // The folded FMA parts from plain conversion next to 1.0 (found by `bitproof domain`).
    CHECK(run("gptq.u4b8_fp16.fma_folded", 0, 0x3C00) == run("gptq.u4b8_fp16.plain", 0, 0x3C00));
    CHECK(run("gptq.u4b8_fp16.fma_folded", 0, 0x3BFF) != run("gptq.u4b8_fp16.plain", 0, 0x3BFF));
  }

  TEST_CASE("SM70 scales, FP32-FMA decode and llama.cpp's doubled table against float arithmetic") {
    for (std::uint32_t s = 0; s < 255; ++s) {
      const float scale = std::ldexp(1.0f, static_cast<int>(s) - 127);
      CHECK(same16(run("sm70_marlin.e8m0_fp16.cvt_rn", s), half_bits(static_cast<CompilerHalf>(scale))));
      for (std::uint32_t x = 0; x < 16; ++x) {
        const float product = static_cast<float>(e2m1(x)) * scale;  // exact in float (2 significant bits)
        CHECK(same16(run("fp32fma.mxfp4_fp16.round_once", x, s), half_bits(static_cast<CompilerHalf>(product))));
        if (x == 8) continue;  // kvalues_mxfp4[8] is the int8 0: +0, the table has no -0
        CHECK(std::bit_cast<float>(run("llama.mxfp4_fp32.doubled", x, s)) == product);
      }
    }
    CHECK(run("llama.mxfp4_fp32.doubled", 8, 127) == 0x00000000u);  // -0 decodes to +0
  }

  TEST_CASE("soft and oracle arithmetic agree on a sample of every large catalogue input space") {
    std::uint64_t mismatches = 0;
    for (const char* name : {"fp8.e4m3_fp16.ordinary", "fp8.e4m3_fp16.folded"}) {
      const RecipeEntry* r = recipe_by_name(name);
      REQUIRE(r != nullptr);
      for (std::uint32_t c = 0; c < 256; c += 5) {
        for (std::uint32_t s = 0; s < 65536; s += 257) {
          const std::uint32_t codes[] = {c, s};
          if (r->soft(codes) != r->oracle(codes) && ++mismatches <= 8) {
            FAIL_CHECK(fmt::format("{} 0x{:02X} × 0x{:04X}: soft 0x{:04X} oracle 0x{:04X}", name, c, s,
                                   r->soft(codes), r->oracle(codes)));
          }
        }
      }
    }
    CHECK(mismatches == 0);
  }

  TEST_CASE("every proof spec parses; only the CUDA vendor specs may name recipes this build lacks") {
    // cuda_vendor.* recipes are registered only where the CUDA headers were found
    // (recipes.def); without them their specs are refused as bad input (exit 2,
    // "unknown recipe"), and nothing else may be.
    int specs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kRoot + "/proofs")) {
      if (entry.path().extension() != ".json") continue;
      ++specs;
      auto spec = load_spec(entry.path().string());
      if (spec.ok()) continue;
      const std::string& message = spec.error().message;
#if defined(BITPROOF_HAVE_CUDA_HEADERS)
      FAIL_CHECK(message);
#else
      CHECK_MESSAGE(message.find("unknown recipe \"cuda_vendor.") != std::string::npos, message);
#endif
    }
    CHECK(specs >= 20);
  }

  TEST_CASE("triton_kernels' MXFP4 upcast and Triton's AMD path against float arithmetic, every element and scale") {
    for (std::uint32_t x = 0; x < 16; ++x) {
      CHECK(run("triton.e2m1_fp16.bitfield", x) == half_bits(static_cast<CompilerHalf>(e2m1(x))));
      CHECK(run("triton_amd.e2m1_fp16.lut", x) == half_bits(static_cast<CompilerHalf>(e2m1(x))));
      CHECK(run("triton_amd.e2m1_bf16.lut", x) == bf16_of_float(static_cast<float>(e2m1(x))));
      for (std::uint32_t s = 0; s < 255; ++s) {
        // FP16: the scale rounded to FP16 first (the compiler's float -> _Float16 is RNE),
        // then one FP16 multiply (exact in float, rounded once), Inf clamped to ±65504.
        const CompilerHalf scale = static_cast<CompilerHalf>(std::ldexp(1.0f, static_cast<int>(s) - 127));
        CompilerHalf product = static_cast<CompilerHalf>(static_cast<float>(e2m1(x)) * static_cast<float>(scale));
        CHECK(same16(run("triton_amd.mxfp4_fp16.upcast", x, s), half_bits(product)));  // NaN: 0 x Inf
        if (std::isinf(static_cast<float>(product))) product = std::signbit(static_cast<float>(product)) ? -65504 : 65504;
        if (std::isnan(static_cast<float>(product))) product = -65504;  // 0 x Inf through minnum/maxnum
        CHECK_MESSAGE(run("triton.mxfp4_fp16.upcast", x, s) == half_bits(product), x, " ", s);
        // BF16: the product is exact in float (2 significant bits, 2^-127 a float subnormal).
        const float exact = static_cast<float>(e2m1(x)) * std::ldexp(1.0f, static_cast<int>(s) - 127);
        const float nvidia = std::isinf(exact) ? std::copysign(3.3895313892515355e38f, exact) : exact;
        CHECK_MESSAGE(run("triton.mxfp4_bf16.upcast", x, s) == bf16_of_float(nvidia), x, " ", s);
        const float amd = s == 0 ? static_cast<float>(e2m1(x)) * 0.0f : exact;  // no floor: 2^-127 is +0
        CHECK_MESSAGE(run("triton_amd.mxfp4_bf16.upcast", x, s) == bf16_of_float(amd), x, " ", s);
      }
      CHECK(run("triton.mxfp4_fp16.upcast", x, 255) == 0x7E00);
      CHECK(run("triton.mxfp4_bf16.upcast", x, 255) == 0x7FC0);
      CHECK(run("triton_amd.mxfp4_fp16.upcast", x, 255) == 0x7C01);
      CHECK(run("triton_amd.mxfp4_bf16.upcast", x, 255) == 0x7FFF);
    }
  }

  TEST_CASE("FNUZ FP8 -> FP16 / BF16: hardware and software paths against the definitions; the software NaN is -0") {
    for (std::uint32_t c = 0; c < 256; ++c) {
      const double v = e4m3fnuz(c);
      const std::uint32_t want = std::isnan(v) ? 0x7FFF : half_bits(static_cast<CompilerHalf>(v));
      CHECK_MESSAGE(run("triton_amd.e4m3fnuz_fp16.hw", c) == want, c);
      if (c != 0x80) CHECK_MESSAGE(run("triton_amd.e4m3fnuz_fp16.sw", c) == want, c);
      if ((c & 0x78) != 0) CHECK_MESSAGE(run("triton_amd.e4m3fnuz_fp16.sw_old", c) == want, c);  // normals
    }
    for (std::uint32_t c = 0; c < 256; ++c) {
      // E4M3FNUZ -> BF16 (4 significant bits: exact) and E5M2FNUZ (bias 16) -> FP16.
      const double v = e4m3fnuz(c);
      if (c != 0x80) {
        CHECK_MESSAGE(run("triton_amd.e4m3fnuz_bf16.hw", c) == bf16_of_float(static_cast<float>(v)), c);
        CHECK_MESSAGE(run("triton_amd.e4m3fnuz_bf16.sw", c) == bf16_of_float(static_cast<float>(v)), c);
        const int e = static_cast<int>(c >> 2) & 31, m = static_cast<int>(c) & 3;
        const double mag = e == 0 ? std::ldexp(m, -17) : std::ldexp(4 + m, e - 18);
        const std::uint32_t want = half_bits(static_cast<CompilerHalf>((c & 0x80) ? -mag : mag));
        CHECK_MESSAGE(run("triton_amd.e5m2fnuz_fp16.hw", c) == want, c);
        CHECK_MESSAGE(run("triton_amd.e5m2fnuz_fp16.sw", c) == want, c);
      }
    }
    CHECK(run("triton_amd.e4m3fnuz_bf16.sw", 0x80) == 0x8000);      // NaN -> -0
    CHECK(run("triton_amd.e5m2fnuz_fp16.sw", 0x80) == 0x8000);      // NaN -> -0
    CHECK(run("triton_amd.e4m3fnuz_fp16.sw", 0x80) == 0x8000);      // NaN -> -0
    CHECK(run("triton_amd.e4m3fnuz_fp16.sw_old", 0x00) == 0x0C00);  // zero -> 2^-12
    CHECK(run("triton_amd.e4m3fnuz_fp16.sw_old", 0x02) != half_bits(static_cast<CompilerHalf>(e4m3fnuz(2))));
  }

  TEST_CASE("Marlin NVFP4 BF16 path against float arithmetic: exact for normal UE4M3 scales, zero for subnormal ones") {
    for (std::uint32_t x = 0; x < 16; ++x) {
      for (std::uint32_t v = 0; v < 127; ++v) {
        const float want = static_cast<float>(e2m1(x)) * static_cast<float>(e4m3(v));
        const float folded = std::bit_cast<float>(run("marlin.nvfp4_bf16.folded", x, v));
        CHECK(std::bit_cast<float>(run("marlin.nvfp4_bf16.ordinary", x, v)) == want);
        if (v == 0 || v >= 8) {
          CHECK_MESSAGE(folded == want, x, " ", v);
        } else {
          // The subnormal scales lose 112 from the BF16 exponent: the BF16 product underflows to 0.
          CHECK_MESSAGE(folded == 0.0f, x, " ", v);
        }
      }
    }
  }

  TEST_CASE("AWQ / exllama zero-point paths against _Float16 (q - z) * s, every q, z and every 5th scale") {
    int mismatches = 0;
    for (std::uint32_t q = 0; q < 16; ++q) {
      for (std::uint32_t z = 0; z < 16; ++z) {
        for (std::uint32_t s = 0; s < 65536; s += 5) {
          const CompilerHalf d = static_cast<CompilerHalf>(static_cast<int>(q) - static_cast<int>(z));
          const std::uint16_t want = half_bits(static_cast<CompilerHalf>(d * half_of(s)));
          const std::uint32_t plain = run("awq.u4_fp16.plain", q, z, s);
          const std::uint32_t sub_fma = run("awq.u4_fp16.sub_fma", q, z, s);
          // fma(d, s, +0): a zero product comes out +0 whatever its sign.
          const bool zero = (want & 0x7FFF) == 0;
          const std::uint32_t want_fma = zero ? 0x0000 : want;
          if ((!same16(plain, want) || !same16(sub_fma, want_fma)) && ++mismatches <= 8) {
            FAIL_CHECK(fmt::format("q={} z={} s=0x{:04X}: plain 0x{:04X} sub_fma 0x{:04X} vs _Float16 0x{:04X}", q, z,
                                   s, plain, sub_fma, want));
          }
        }
        for (std::uint32_t k = 4; k <= 29; ++k) {  // power-of-two scales 2^-20 .. 2^5
          const std::uint32_t s = k < 10 ? (1u << k) : (k - 9) << 10;
          CHECK(run("awq.u4_fp16.fold_lo", q, z, s) == run("awq.u4_fp16.plain", q, z, s));
          CHECK(run("awq.u4_fp16.fold_hi", q, z, s) == run("awq.u4_fp16.plain", q, z, s));
        }
      }
    }
    CHECK(mismatches == 0);
    // Off the powers of two the folded form cancels 1024·s against a rounded 1024·s.
    // q = 3, z = 1, s = 1 + 2^-10: 1025·s rounds to 1026, the FMA gives 2 + 2^-8, (q - z)·s is 2 + 2^-9.
    CHECK(run("awq.u4_fp16.fold_lo", 3, 1, 0x3C01) == 0x4002);
    CHECK(run("awq.u4_fp16.plain", 3, 1, 0x3C01) == 0x4001);
  }

  TEST_CASE("the zero-point controls (2^24 inputs, too many for the generic control test) are refuted") {
    const std::vector<std::uint32_t> scales = {0x0001, 0x0400, 0x2E66, 0x3C00, 0x3C01, 0x4A00, 0x7BFF, 0xBC00};
    for (const RecipeEntry& r : all_recipes()) {
      if (r.card->role != Role::kControl || r.card->intent != Intent::kZeroPointProduct) continue;
      const Spec spec = zero_point_spec(std::string(r.card->name), std::string(r.card->control_of), scales);
      const ProofResult result = run_proof(spec, {4});
      CHECK_MESSAGE(!result.claims[0].holds(), r.card->name);
      CHECK_MESSAGE(!result.claims[0].counterexamples.empty(), r.card->name);
      CHECK(result.witness_disagreement_count == 0);
      MESSAGE(fmt::format("{}: refuted on {} of {} cases", r.card->name,
                          result.claims[0].cases - result.claims[0].holding, result.claims[0].cases));
    }
  }

  TEST_CASE("docs/catalogue.md is what scripts/catalogue.py renders from the committed reports") {
    const std::string command = fmt::format("/usr/bin/python3 {0}/scripts/catalogue.py --check {0}/docs/catalogue.md",
                                            kRoot);
    CHECK_MESSAGE(std::system(command.c_str()) == 0, "run scripts/catalogue-reports.sh");
  }
}
