// bitproof's CUDA host header (src/user/include): real CUDA dequant code
// compiled with the host compiler gives the catalogue's bits. The adapters are
// written as a kernel team writes them; each is compared with the catalogue
// recipe it implements on every code, and a broken variant must differ. The
// toolkit conversions are checked against the oracle's exact decode on every
// code; __byte_perm against PTX prmt's documented selector semantics.
#include <doctest/doctest.h>

// src/user/include comes first on this test's include path (tests/CMakeLists.txt),
// as on a user recipe's: <cuda_fp16.h> is bitproof's host header.
#include <cuda_fp16.h>

#include "adapters/turbomind_fold.cuh"
#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "recipes/registry.hpp"

namespace bitproof {
namespace {

std::uint32_t catalogue(const char* name, std::uint32_t a, std::uint32_t b = 0) {
  const RecipeEntry* r = recipe_by_name(name);
  REQUIRE_MESSAGE(r != nullptr, name);
  const std::uint32_t codes[3] = {a, b, 0};
  return r->soft(codes);
}

// The oracle's decode of `code` in `from`, rounded to FP16 (NaN -> the GPU's 0x7FFF).
std::uint32_t oracle_half(FormatId from, std::uint32_t code) {
  // round_to turns NaN into the canonical 0x7FFF, the GPU's NaN.
  return *oracle::round_to(FormatId::fp16, oracle::exact_of(from, code), oracle::Rounding::kNearestEven).code;
}

}  // namespace

TEST_SUITE("user") {
  TEST_CASE("a TurboMind decode written in CUDA gives the catalogue's bits on every E2M1 x UE8M0 code") {
    int mismatches = 0, broken_differs = 0;
    for (std::uint32_t s = 0; s < 256; ++s) {
      for (std::uint32_t x = 0; x < 16; ++x) {
        const auto ordinary = bp_tm_ordinary(x, s), folded = bp_tm_folded(x, s);
        if (ordinary != catalogue("turbomind.mxfp4_fp16.ordinary", x, s) ||
            folded != catalogue("turbomind.mxfp4_fp16.folded", x, s)) {
          if (++mismatches <= 4) MESSAGE("x=" << x << " s=" << s << " ordinary " << ordinary << " folded " << folded);
        }
        broken_differs += bp_tm_folded_broken(x, s) != folded;
      }
    }
    CHECK(mismatches == 0);
    CHECK(broken_differs > 0);  // negative control: the +13 constant is caught
  }

  TEST_CASE("toolkit conversions: exact on every code, NaN to 0x7FFF") {
    for (std::uint32_t c = 0; c < 256; ++c) {
      CAPTURE(c);
      CHECK(bp_e4m3_cvt(c) == oracle_half(FormatId::e4m3, c));
      CHECK(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2).x == oracle_half(FormatId::e5m2, c));
      const std::uint32_t bf16 = __nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c)).x;
      CHECK(bf16 ==
            *oracle::round_to(FormatId::bf16, oracle::exact_of(FormatId::ue8m0, c), oracle::Rounding::kNearestEven).code);
    }
    for (std::uint32_t c = 0; c < 16; ++c) {
      CHECK(__nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1).x == oracle_half(FormatId::e2m1, c));
    }
    // A second, independent witness where the build found the toolkit: NVIDIA's own host path
    // (the catalogue's cuda_vendor recipes include the real cuda_fp8.h / cuda_fp4.h).
    if (recipe_by_name("cuda_vendor.e4m3_fp16") != nullptr) {
      for (std::uint32_t c = 0; c < 256; ++c) {
        CAPTURE(c);
        CHECK(bp_e4m3_cvt(c) == catalogue("cuda_vendor.e4m3_fp16", c));
        CHECK(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2).x ==
              catalogue("cuda_vendor.e5m2_fp16", c));
        CHECK(__nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c)).x == catalogue("cuda_vendor.e8m0_bf16", c));
        if (c < 16) {
          CHECK(__nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1).x ==
                catalogue("cuda_vendor.e2m1_fp16", c));
        }
      }
    } else {
      MESSAGE("built without the CUDA toolkit's headers: the toolkit's own host path is not compared");
    }
    const __half2_raw pair = __nv_cvt_fp8x2_to_halfraw2(0x7F01, __NV_E4M3);
    CHECK(pair.x == 0x1800);  // the low byte is .x
    CHECK(pair.y == 0x7FFF);
  }

  TEST_CASE("binary16 and bfloat16 intrinsics: each the model's operation, operands in order") {
    const std::uint32_t samples[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3555, 0x3C00, 0xBC01,
                                     0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x6409, 0x6408, 0x1234, 0xC321};
    for (const std::uint32_t a : samples) {
      for (const std::uint32_t b : samples) {
        CAPTURE(a);
        CAPTURE(b);
        const __half x = __ushort_as_half(a), y = __ushort_as_half(b);
        CHECK(__half_as_ushort(__hmul(x, y)) == catalogue("fp16.hmul", a, b));
        CHECK(__half_as_ushort(x - y) == __half_as_ushort(__hsub(x, y)));
        CHECK(__half_as_ushort(x * y) == __half_as_ushort(__hmul(x, y)));
        CHECK(__half_as_ushort(__hadd(x, __hneg(y))) == __half_as_ushort(__hsub(x, y)));
        const __half2 p = __hmul2(__halves2half2(x, y), __halves2half2(y, x));
        CHECK(__half_as_ushort(__low2half(p)) == __half_as_ushort(__hmul(x, y)));
        CHECK(__half_as_ushort(__high2half(p)) == __half_as_ushort(__hmul(y, x)));
        CHECK(__half_as_ushort(__hfma(x, y, __ushort_as_half(0x8000))) == __half_as_ushort(__hmul(x, y)));
      }
    }
    CHECK(__half_as_ushort(__hsub(__ushort_as_half(0x3C00), __ushort_as_half(0x4000))) == 0xBC00);  // 1 - 2 = -1
    CHECK(__half_as_ushort(__float2half_rn(65520.0f)) == 0x7C00);  // the tie above 65504 rounds to Inf
    CHECK(__half_as_ushort(__float2half_rz(65520.0f)) == 0x7BFF);
    CHECK(__half2float(__ushort_as_half(0x0001)) == 0x1p-24f);
    CHECK(__half_as_ushort(__int2half_rn(-8)) == 0xC800);
    CHECK(__half_as_ushort(__int2half_rn(2049)) == 0x6800);  // tie to even
    // __half(double) rounds once: 1 + 2^-11 + 2^-40 is above the tie, so up; through float it would tie to 1.
    CHECK(__half_as_ushort(__half(1.0 + 0x1p-11 + 0x1p-40)) == 0x3C01);
    CHECK(__half_as_ushort(__half(1.0 + 0x1p-11)) == 0x3C00);  // the tie itself: to even
    CHECK(__half_as_ushort(__half(65520.0)) == 0x7C00);
    CHECK(__half_as_ushort(__half(-0.0)) == 0x8000);
    CHECK(__half_as_ushort(__half(3)) == 0x4200);  // the int constructor, as __int2half_rn
    CHECK(__bfloat16_as_ushort(__hmul(__ushort_as_bfloat16(0x0040), __ushort_as_bfloat16(0x7E80))) == 0x3F00);
    CHECK(__bfloat16_as_ushort(__float2bfloat16_rn(__uint_as_float(0x3F808000u))) == 0x3F80);  // tie to even
    CHECK(__float_as_uint(__fmul_rn(__uint_as_float(0x7F800000u), 0.0f)) == 0x7FFFFFFFu);  // the GPU's NaN
  }

  TEST_CASE("__byte_perm and funnel shifts: PTX prmt / shf semantics") {
    CHECK(__byte_perm(0x03020100u, 0x07060504u, 0x5410) == 0x05040100u);  // the low halves of x and y
    CHECK(__byte_perm(0x03020100u, 0x07060504u, 0x7632) == 0x07060302u);  // the high halves
    CHECK(__byte_perm(0x03020100u, 0x07060504u, 0x0123) == 0x00010203u);  // reversed bytes of x
    CHECK(__funnelshift_l(0x80000000u, 0x00000001u, 1) == 0x00000003u);
    CHECK(__funnelshift_r(0x00000002u, 0x00000001u, 1) == 0x80000001u);
    CHECK(__funnelshift_l(0x1u, 0x0u, 33) == 0x0u);  // the shift is taken mod 32: 33 -> 1, hi 0 << 1 | lo's top bit 0
  }
}

}  // namespace bitproof
