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

#include "recipes/registry.hpp"

using namespace bitproof;

namespace {

const std::string kRoot = BITPROOF_SOURCE_DIR;

// Recipes registered by work in progress whose proof specs have not landed yet (issue 3's
// FP16 multiply family and the CUDA vendor witness). Empty this list as their proofs arrive.
const std::set<std::string_view> kAwaitingProof = {
    "fp16.half2float",       "fp16.float2half_rn",    "fp16.float2half_rz",    "cuda_vendor.e2m1_fp16",
    "cuda_vendor.e4m3_fp16", "cuda_vendor.e5m2_fp16", "cuda_vendor.e8m0_bf16", "cuda_vendor.mxfp4_fp32",
};

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

std::uint32_t run(const char* name, std::uint32_t a, std::uint32_t b = 0) {
  const RecipeEntry* r = recipe_by_name(name);
  REQUIRE_MESSAGE(r != nullptr, name);
  const std::uint32_t codes[] = {a, b};
  return r->soft(codes);
}

std::uint16_t half_bits(_Float16 h) {
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
_Float16 half_of(std::uint32_t b) {
  const auto bits = static_cast<std::uint16_t>(b);
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return h;
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
      if (kAwaitingProof.count(target) != 0) continue;
      if (proven.count(std::string(target)) == 0 && ++missing <= 8) {
        FAIL_CHECK(fmt::format("{}: no proofs/*.json names {}", c.name, target));
      }
    }
    CHECK(missing == 0);
  }

  TEST_CASE("Marlin E2M1 -> FP16/BF16 and the E8M0 -> BF16 scale: every code against the OCP values") {
    for (std::uint32_t x = 0; x < 16; ++x) {
      CHECK_MESSAGE(same16(run("marlin.e2m1_fp16.flop", x), half_bits(static_cast<_Float16>(e2m1(x)))), x);
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
      const _Float16 v = static_cast<_Float16>(e4m3(c));
      CHECK(same16(run("fp8.e4m3_fp16.shift_flop", c), half_bits(v)));
      for (std::uint32_t s = 0; s < 65536; s += 7) {
        const std::uint16_t want = half_bits(static_cast<_Float16>(v * half_of(s)));
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
            half_bits(static_cast<_Float16>(static_cast<_Float16>(static_cast<int>(q) - 8) * half_of(s)));
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
      CHECK(same16(run("sm70_marlin.e8m0_fp16.cvt_rn", s), half_bits(static_cast<_Float16>(scale))));
      for (std::uint32_t x = 0; x < 16; ++x) {
        const float product = static_cast<float>(e2m1(x)) * scale;  // exact in float (2 significant bits)
        CHECK(same16(run("fp32fma.mxfp4_fp16.round_once", x, s), half_bits(static_cast<_Float16>(product))));
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

  TEST_CASE("docs/catalogue.md is what scripts/catalogue.py renders from the committed reports") {
    const std::string command = fmt::format("/usr/bin/python3 {0}/scripts/catalogue.py --check {0}/docs/catalogue.md",
                                            kRoot);
    CHECK_MESSAGE(std::system(command.c_str()) == 0, "run scripts/catalogue-reports.sh");
  }
}
