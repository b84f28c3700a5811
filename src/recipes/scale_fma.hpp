// Recipe family: one MXFP4 element × its UE8M0 scale to FP16, through FP32 with one
// rounding, against the FP16 multiply with the scale rounded to FP16 first.
//
//   round_once  float2half_rn(ffma(half2float(hmul(raw, 2^14)), float bits s << 23, -0.0f))
//               the element and the scale are exact in FP32 (s >= 1), their product is
//               exact there (2 significant bits), so the only rounding is the final one;
//               the addend is -0.0f so a -0 product stays -0 (an accumulator initialised
//               to +0.0f would turn -0 into +0: see the control).
//   hmul        sm70_marlin.mxfp4_fp16.cvt_rn: the scale rounded to FP16 first
//               (float2half_rn(bits)), then one FP16 multiply: two roundings.
// They part where the FP16 scale is not the true scale: 2^(s-127) below 2^-24 (rounded
// to 0 or 2^-24) or above 2^15 (Inf), while the FP32 path still rounds the product once.
// Decode-then-FMA in FP32 is the generic dequant-GEMM epilogue (value.to(float32) * scale,
// then one cast); the FP16 product is the Volta path. triton_kernels' MXFP upcast is not
// this: read against _upcast_from_mxfp.py it converts the scale to FP16 (RNE) and multiplies
// in FP16, then clamps to ±65504 (triton.mxfp4_fp16.upcast in triton_mxfp.hpp).
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"
#include "recipes/sm70_scale.hpp"
#include "recipes/turbomind_mxfp4.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::scale_fma {

inline constexpr std::uint32_t kMinusZero = 0x80000000u;  // -0.0f
inline constexpr std::uint32_t kPlusZero = 0x00000000u;   // +0.0f

template <class Ar>
BP_HD constexpr std::uint32_t element_f32(std::uint32_t x) {
  return Ar::half2float(Ar::hmul(turbomind::raw_bits(x), turbomind::kTwoPow14));
}

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return family_card({.source = "decode, one exact FP32 product, one cast to FP16 (the form of ggml's CUDA "
                                "dequantize_mxfp4) vs the FP16 multiply of the SM70 path",
                      .arity = 2,
                      .inputs = {FormatId::e2m1, FormatId::ue8m0},
                      .output = FormatId::fp16,
                      .intent = Intent::kProduct},
                     name, label, summary, role, control_of);
}

struct RoundOnce {
  static constexpr RecipeCard kCard =
      pinned(card("fp32fma.mxfp4_fp16.round_once", "fp32-fma",
                  "float2half_rn(ffma(element_f32, float bits s << 23, -0.0f)): one rounding"),
             {&upstream::kPinGgmlCudaMxfp4, &upstream::kPinGgmlCudaE8m0},
             "ggml, the shipped kernel of this form, differs on two inputs: code 8 (-0) is the integer 0 in its table, "
             "so +0 (as the plus_zero_acc control), and scale 255 is NaN there (Inf here); its -use_fast_math FTZ "
             "changes no FP16 result (llama.mxfp4_fp32.cuda models it exactly)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::float2half_rn(Ar::ffma(element_f32<Ar>(x), sm70::e8m0_float_bits(s), kMinusZero));
  }
};

// ---- negative controls ----

struct PlusZeroAccumulator {
  static constexpr RecipeCard kCard = card("fp32fma.mxfp4_fp16.control.plus_zero_acc", "fp32-fma+0",
                                           "the FMA with a +0.0f accumulator: -0 × s + 0 = +0, the sign of zero lost",
                                           Role::kControl, "fp32fma.mxfp4_fp16.round_once");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::float2half_rn(Ar::ffma(element_f32<Ar>(x), sm70::e8m0_float_bits(s), kPlusZero));
  }
};

struct TruncatingCast {
  static constexpr RecipeCard kCard =
      card("fp32fma.mxfp4_fp16.control.cast_rz", "fp32-fma-rz", "the final cast truncates (float2half_rz)",
           Role::kControl, "fp32fma.mxfp4_fp16.round_once");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::float2half_rz(Ar::ffma(element_f32<Ar>(x), sm70::e8m0_float_bits(s), kMinusZero));
  }
};

}  // namespace bitproof::scale_fma
