// Recipe family: one FP16 × FP16 product and the FP16 <-> FP32 conversions,
// computed the ways CUDA kernels compute them.
//
//   inputs   a, b: FP16 codes (S.EEEEE.MMMMMMMMMM); output FP16 bits
//   intent   a × b, rounded to FP16
//   hmul        Ar::hmul(a, b)                                       __hmul: one FP16 multiply
//   fp32_round  float2half_rn(fmul(half2float(a), half2float(b)))   widen, multiply in FP32, round once
//
// Why they should agree: the FP32 product of two FP16 values is exact (11 × 11 =
// 22 significant bits ≤ 24; exponents 2^-48 .. 2^32 inside FP32's normal range),
// so the only rounding on the FP32 path is the final conversion, the same
// correct rounding hmul performs; NaN results are canonical on both paths.
//
// Conversions, each over its whole input format (for checking NaN bits):
//   half2float      Ar::half2float(h)     FP16 -> FP32, exact
//   float2half_rn   Ar::float2half_rn(f)  FP32 -> FP16, nearest even
//   float2half_rz   Ar::float2half_rz(f)  FP32 -> FP16, toward zero
//
// Every recipe here is vector-capable: `eval<Ar, W>` takes and returns the
// policy's word type W (uint32_t for the scalar policies; a SIMD vector for the
// CPU backend's vector policy), so the CPU sweeps them 16 cases at a time.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::fp16 {

constexpr RecipeCard mul_card(std::string_view name, std::string_view label, std::string_view summary,
                              Role role = Role::kRecipe, std::string_view control_of = {}) {
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = "CUDA cuda_fp16.h intrinsics (__hmul, __half2float, __fmul_rn, __float2half_rn)",
                    .arity = 2,
                    .inputs = {FormatId::fp16, FormatId::fp16},
                    .output = FormatId::fp16,
                    .intent = Intent::kProduct,
                    .role = role,
                    .control_of = control_of};
}

constexpr RecipeCard convert_card(std::string_view name, std::string_view label, std::string_view summary,
                                  FormatId from, FormatId to) {
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = "CUDA cuda_fp16.h conversions",
                    .arity = 1,
                    .inputs = {from, from},
                    .output = to,
                    .intent = Intent::kValue};
}

struct Hmul {
  static constexpr RecipeCard kCard =
      pinned(mul_card("fp16.hmul", "hmul", "hmul(a, b): one FP16 multiply, nearest even"), {&upstream::kPinHmul});
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W a, W b) {
    return Ar::hmul(a, b);
  }
};

struct Fp32Round {
  static constexpr RecipeCard kCard =
      pinned(mul_card("fp16.fp32_round", "fp32-round",
                      "float2half_rn(fmul(half2float(a), half2float(b))): FP32 multiply rounded once to FP16"),
             {&upstream::kPinHalf2Float, &upstream::kPinFmulRn, &upstream::kPinFloat2HalfRn});
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W a, W b) {
    return Ar::float2half_rn(Ar::fmul(Ar::half2float(a), Ar::half2float(b)));
  }
};

// ---- negative controls: each must be refuted against the recipe it corrupts ----

struct Fp32RoundTowardZero {
  static constexpr RecipeCard kCard =
      mul_card("fp16.control.fp32_round_rz", "fp32-round-rz",
               "the FP32 path rounded toward zero: wrong wherever the product is inexact or overflows", Role::kControl,
               "fp16.fp32_round");
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W a, W b) {
    return Ar::float2half_rz(Ar::fmul(Ar::half2float(a), Ar::half2float(b)));
  }
};

struct HmulTowardZero {
  static constexpr RecipeCard kCard =
      mul_card("fp16.control.hmul_rz", "hmul-rz",
               "FP16 multiply rounded toward zero: wrong wherever the product rounds", Role::kControl, "fp16.hmul");
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W a, W b) {
    return Ar::hmul_rz(a, b);
  }
};

struct HmulFlushing {
  static constexpr RecipeCard kCard =
      mul_card("fp16.control.hmul_ftz", "hmul-ftz",
               "FP16 multiply flushing subnormal inputs and results to zero: wrong on every subnormal", Role::kControl,
               "fp16.hmul");
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W a, W b) {
    return Ar::hmul_ftz(a, b);
  }
};

// ---- conversions ----

struct HalfToFloat {
  static constexpr RecipeCard kCard = pinned(
      convert_card("fp16.half2float", "half2float", "half2float(h): FP16 -> FP32", FormatId::fp16, FormatId::fp32),
      {&upstream::kPinHalf2Float});
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W h) {
    return Ar::half2float(h);
  }
};

struct FloatToHalfNearest {
  static constexpr RecipeCard kCard =
      pinned(convert_card("fp16.float2half_rn", "float2half_rn", "float2half_rn(f): FP32 -> FP16, nearest even",
                          FormatId::fp32, FormatId::fp16),
             {&upstream::kPinFloat2HalfRn});
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W f) {
    return Ar::float2half_rn(f);
  }
};

struct FloatToHalfTowardZero {
  static constexpr RecipeCard kCard =
      pinned(convert_card("fp16.float2half_rz", "float2half_rz", "float2half_rz(f): FP32 -> FP16, toward zero",
                          FormatId::fp32, FormatId::fp16),
             {&upstream::kPinFloat2HalfRz});
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W f) {
    return Ar::float2half_rz(f);
  }
};

}  // namespace bitproof::fp16
