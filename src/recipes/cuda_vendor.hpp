// Recipe family: the vendor witness. Decodes through CUDA's own cuda_fp4.h /
// cuda_fp8.h conversions, which are __host__ __device__: on the GPU they are
// the device path (hardware cvt where the architecture has one, e.g. FP8 on
// sm_89+), on the CPU the toolkit's host implementation. Either way they were
// written by someone else from their reading of the formats, so a claim that
// our exact decoding (the oracle) agrees with them is an independent check of
// both. Registered only when the CUDA toolkit headers were found at build time
// (BITPROOF_HAVE_CUDA_HEADERS); recipes.def guards the lines.
//
//   e2m1_fp16   __nv_cvt_fp4_to_halfraw(x, __NV_E2M1)     E2M1 -> FP16, exact
//   e4m3_fp16   __nv_cvt_fp8_to_halfraw(x, __NV_E4M3)     E4M3 -> FP16, exact (NaN -> NaN)
//   e5m2_fp16   __nv_cvt_fp8_to_halfraw(x, __NV_E5M2)     E5M2 -> FP16, exact (Inf, NaN kept)
//   e8m0_bf16   __nv_cvt_e8m0_to_bf16raw(s)               UE8M0 -> BF16, exact (2^-127 is a BF16 subnormal)
//   mxfp4_fp32  fmul(half2float(e2m1_fp16(x)), bf16->fp32(e8m0_bf16(s)))
//               an MXFP4 element times its scale in FP32: the scale 2^-127 and
//               products below 2^-126 are FP32 subnormals, so this is the recipe
//               that --use_fast_math (flush-to-zero) breaks, on the subnormal
//               E2M1 code (±0.5) first.
// The soft and oracle policies both run the same host implementation here: the
// witness for these recipes is the claim itself (exact / correctly_rounded
// against the oracle's decoding), not the soft-vs-oracle comparison.
#pragma once

#include <cuda_fp4.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "hd.hpp"
#include "recipes/llama_mxfp4.hpp"
#include "recipes/recipe.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::cuda_vendor {

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary, FormatId in,
                          FormatId out, Role role = Role::kRecipe, std::string_view control_of = {}) {
  return family_card({.source = "CUDA toolkit cuda_fp4.h / cuda_fp8.h (host and device paths)",
                      .arity = 1,
                      .inputs = {in, in},
                      .output = out,
                      .intent = Intent::kValue},
                     name, label, summary, role, control_of);
}

BP_HD inline std::uint32_t e2m1_to_half(std::uint32_t x) {
  return __nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(x & 0xF), __NV_E2M1).x;
}
BP_HD inline std::uint32_t fp8_to_half(std::uint32_t x, __nv_fp8_interpretation_t kind) {
  return __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(x & 0xFF), kind).x;
}
BP_HD inline std::uint32_t e8m0_to_bf16(std::uint32_t s) {
  return __nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(s & 0xFF)).x;
}
// BF16 bits -> FP32 bits: exact, the BF16 code is the top half of the FP32 code.
BP_HD constexpr std::uint32_t bf16_bits_to_fp32(std::uint32_t b) { return (b & 0xFFFF) << 16; }
// FP32 subnormal -> zero of the same sign (what -ftz does): one definition, llama_mxfp4.hpp's.
using llama::flush_fp32;

struct E2m1ToHalf {
  static constexpr RecipeCard kCard =
      pinned(card("cuda_vendor.e2m1_fp16", "cuda-e2m1", "__nv_cvt_fp4_to_halfraw(x, __NV_E2M1)", FormatId::e2m1,
                  FormatId::fp16),
             {&upstream::kPinFp4ToHalf},
             "the device path taken depends on the target: software emulation on sm_75..sm_90 and plain sm_100+, the "
             "hardware cvt only on family-specific sm_100a/f+; an H200 runs the same C code as the host");
  template <class Ar>
  BP_HD static std::uint32_t eval(std::uint32_t x) {
    return e2m1_to_half(x);
  }
};

struct E4m3ToHalf {
  static constexpr RecipeCard kCard =
      pinned(card("cuda_vendor.e4m3_fp16", "cuda-e4m3", "__nv_cvt_fp8_to_halfraw(x, __NV_E4M3)", FormatId::e4m3,
                  FormatId::fp16),
             {&upstream::kPinFp8ToHalf},
             "hardware cvt.rn.f16x2.e4m3x2 on sm_89 and newer (an H200), software below and on the host; measured "
             "equal on all 256 codes on an H200");
  template <class Ar>
  BP_HD static std::uint32_t eval(std::uint32_t x) {
    return fp8_to_half(x, __NV_E4M3);
  }
};

struct E5m2ToHalf {
  static constexpr RecipeCard kCard =
      pinned(card("cuda_vendor.e5m2_fp16", "cuda-e5m2", "__nv_cvt_fp8_to_halfraw(x, __NV_E5M2)", FormatId::e5m2,
                  FormatId::fp16),
             {&upstream::kPinFp8ToHalf},
             "hardware cvt.rn.f16x2.e5m2x2 on sm_89 and newer (an H200), software below and on the host; both "
             "canonicalise NaN to 0x7FFF (measured on an H200)");
  template <class Ar>
  BP_HD static std::uint32_t eval(std::uint32_t x) {
    return fp8_to_half(x, __NV_E5M2);
  }
};

struct E8m0ToBf16 {
  static constexpr RecipeCard kCard =
      pinned(card("cuda_vendor.e8m0_bf16", "cuda-e8m0", "__nv_cvt_e8m0_to_bf16raw(s)", FormatId::ue8m0, FormatId::bf16),
             {&upstream::kPinE8m0ToBf16},
             "software emulation except on family-specific sm_100a/f+ targets: an H200 runs the same C code as the "
             "host; what the hardware cvt gives for 0x00 and 0xFF is not verified");
  template <class Ar>
  BP_HD static std::uint32_t eval(std::uint32_t s) {
    return e8m0_to_bf16(s);
  }
};

struct Mxfp4Fp32 {
  static constexpr RecipeCard kCard = [] {
    RecipeCard c = card("cuda_vendor.mxfp4_fp32", "cuda-mxfp4-fp32",
                        "fmul(half2float(cuda e2m1->half), bf16->fp32(cuda e8m0->bf16)): one FP32 multiply",
                        FormatId::e2m1, FormatId::fp32);
    c.arity = 2;
    c.inputs = {FormatId::e2m1, FormatId::ue8m0};
    c.intent = Intent::kProduct;
    c.pins = {&upstream::kPinFp4ToHalf, &upstream::kPinE8m0ToBf16, &upstream::kPinHalf2Float, &upstream::kPinFmulRn};
    c.caveat = "E2M1 and E8M0 decode in software on an H200 (hardware only on family-specific sm_100a/f+)";
    return c;
  }();
  template <class Ar>
  BP_HD static std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(Ar::half2float(static_cast<std::uint16_t>(e2m1_to_half(x))), bf16_bits_to_fp32(e8m0_to_bf16(s)));
  }
};

// ---- negative controls ----

struct E4m3ReadAsE5m2 {
  static constexpr RecipeCard kCard = card("cuda_vendor.control.e4m3_as_e5m2", "cuda-e4m3-as-e5m2",
                                           "E4M3 codes decoded with __NV_E5M2: the wrong interpretation",
                                           FormatId::e4m3, FormatId::fp16, Role::kControl, "cuda_vendor.e4m3_fp16");
  template <class Ar>
  BP_HD static std::uint32_t eval(std::uint32_t x) {
    return fp8_to_half(x, __NV_E5M2);
  }
};

struct Mxfp4Fp32Flushing {
  static constexpr RecipeCard kCard = [] {
    RecipeCard c = card("cuda_vendor.control.mxfp4_fp32_ftz", "cuda-mxfp4-fp32-ftz",
                        "mxfp4_fp32 with FP32 subnormal operands and results flushed, as -ftz=true does",
                        FormatId::e2m1, FormatId::fp32, Role::kControl, "cuda_vendor.mxfp4_fp32");
    c.arity = 2;
    c.inputs = {FormatId::e2m1, FormatId::ue8m0};
    c.intent = Intent::kProduct;
    return c;
  }();
  template <class Ar>
  BP_HD static std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const std::uint32_t element = flush_fp32(Ar::half2float(static_cast<std::uint16_t>(e2m1_to_half(x))));
    return flush_fp32(Ar::fmul(element, flush_fp32(bf16_bits_to_fp32(e8m0_to_bf16(s)))));
  }
};

}  // namespace bitproof::cuda_vendor
