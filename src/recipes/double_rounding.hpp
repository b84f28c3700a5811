// Recipe family: the basic operations of FP16 and BF16 against the same operation
// in FP32 rounded once more to the format: double rounding through FP32.
//
//   inputs   a, b: FP16 codes (S.EEEEE.MMMMMMMMMM) or BF16 codes (S.EEEEEEEE.MMMMMMM)
//   hadd / hsub            Ar::hadd(a, b), Ar::hsub(a, b)         one FP16 rounding (add.f16, sub.f16)
//   fp32_add / fp32_sub    float2half_rn(fadd(h2f a, ±h2f b))      FP32 add rounded, then FP16: two roundings
//   badd / bsub / bmul     the BF16 operations (add/sub/mul.bf16 on sm_90)
//   fp32_* (bf16)          float2bfloat16_rn(f(bfloat162float a, bfloat162float b))
// Why they should agree: for +, −, ×, ÷ and √, rounding first to p' bits and then to p
// bits is innocuous when p' ≥ 2p + 2 (Figueroa, SIGNUM 1995; Roux's formal proof):
// FP32 has p' = 24, FP16 p = 11 (2p + 2 = 24) and BF16 p = 8 (18). FP32's exponent range
// holds every FP16 sum and product exactly placed; BF16 shares FP32's exponent range, so
// its products can overflow or fall into FP32's subnormals: the sweep says whether that
// ever shows. a − b in FP32 is fadd(a, −b): IEEE 754 defines subtraction so, signed zeros
// included (the FP32 subtract __fsub_rn is the same instruction with the sign flipped).
// This host's CUDA headers run exactly this FP32 route as the host path of __hadd, __hsub
// and __hmul (cuda_fp16.hpp / cuda_bf16.hpp): where the claim holds, their host paths
// and the device give the same bits.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/fma.hpp"
#include "recipes/recipe.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::dblround {

inline constexpr Pin kPinHadd{PinKind::kCode,
                              upstream::kCudaToolkit,
                              "include/cuda_fp16.hpp",
                              upstream::kCudaRelease,
                              "__hadd",
                              "2628-2637",
                              "one FP16 add (add.f16, sm_53+); the host path: float add, then __float2half"};
inline constexpr Pin kPinHsub{PinKind::kCode,
                              upstream::kCudaToolkit,
                              "include/cuda_fp16.hpp",
                              upstream::kCudaRelease,
                              "__hsub",
                              "2638-2647",
                              "one FP16 subtract (sub.f16); the host path: float subtract, then __float2half"};
inline constexpr Pin kPinBf16Ops{PinKind::kCode,
                                 upstream::kCudaToolkit,
                                 "include/cuda_bf16.hpp",
                                 upstream::kCudaRelease,
                                 "__hadd, __hsub, __hmul (__nv_bfloat16)",
                                 "2930-2959",
                                 "one BF16 add / subtract / multiply on the device; the host path: the float "
                                 "operation, then __float2bfloat16"};
inline constexpr Pin kPinFaddRn{PinKind::kCode,
                                upstream::kCudaToolkit,
                                "include/crt/device_functions.h",
                                upstream::kCudaRelease,
                                "__fadd_rn",
                                "766",
                                "one FP32 add, nearest even (add.rn.f32)"};

inline constexpr std::uint32_t kFloatSign = 0x80000000u;

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary, FormatId format,
                          Intent intent) {
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = "CUDA cuda_fp16.h / cuda_bf16.h arithmetic and its FP32 host path",
                    .arity = 2,
                    .inputs = {format, format},
                    .output = format,
                    .intent = intent};
}

// ---- FP16 ----

struct Hadd {
  static constexpr RecipeCard kCard =
      pinned(card("fp16.hadd", "hadd", "hadd(a, b): one FP16 add, nearest even", FormatId::fp16, Intent::kSum),
             {&kPinHadd});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::hadd(a, b);
  }
};

struct Fp32Add {
  static constexpr RecipeCard kCard = pinned(
      card("fp16.fp32_add", "fp32-add", "float2half_rn(fadd(half2float(a), half2float(b))): FP32 add rounded to FP16",
           FormatId::fp16, Intent::kSum),
      {&kPinFaddRn, &upstream::kPinHalf2Float, &upstream::kPinFloat2HalfRn, &kPinHadd});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2half_rn(Ar::fadd(Ar::half2float(a), Ar::half2float(b)));
  }
};

struct Hsub {
  static constexpr RecipeCard kCard =
      pinned(card("fp16.hsub", "hsub", "hsub(a, b): one FP16 subtract, nearest even", FormatId::fp16,
                  Intent::kDifference),
             {&kPinHsub});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::hsub(a, b);
  }
};

struct Fp32Sub {
  static constexpr RecipeCard kCard = pinned(
      card("fp16.fp32_sub", "fp32-sub",
           "float2half_rn(fadd(half2float(a), -half2float(b))): FP32 subtract rounded to FP16", FormatId::fp16,
           Intent::kDifference),
      {&kPinFaddRn, &upstream::kPinHalf2Float, &upstream::kPinFloat2HalfRn, &kPinHsub});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2half_rn(Ar::fadd(Ar::half2float(a), Ar::half2float(b) ^ kFloatSign));
  }
};

// ---- BF16 ----

struct Badd {
  static constexpr RecipeCard kCard =
      pinned(card("bf16.badd", "badd", "hadd on __nv_bfloat16: one BF16 add, nearest even", FormatId::bf16,
                  Intent::kSum),
             {&kPinBf16Ops});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::badd(a, b);
  }
};

struct Bf16Fp32Add {
  static constexpr RecipeCard kCard = pinned(
      card("bf16.fp32_add", "fp32-add",
           "float2bfloat16_rn(fadd(bfloat162float(a), bfloat162float(b))): FP32 add rounded to BF16", FormatId::bf16,
           Intent::kSum),
      {&kPinFaddRn, &fma_route::kPinFloat2Bf16, &kPinBf16Ops});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2bfloat16_rn(Ar::fadd(Ar::bfloat162float(a), Ar::bfloat162float(b)));
  }
};

struct Bsub {
  static constexpr RecipeCard kCard =
      pinned(card("bf16.bsub", "bsub", "hsub on __nv_bfloat16: one BF16 subtract, nearest even", FormatId::bf16,
                  Intent::kDifference),
             {&kPinBf16Ops});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::bsub(a, b);
  }
};

struct Bf16Fp32Sub {
  static constexpr RecipeCard kCard = pinned(
      card("bf16.fp32_sub", "fp32-sub",
           "float2bfloat16_rn(fadd(bfloat162float(a), -bfloat162float(b))): FP32 subtract rounded to BF16",
           FormatId::bf16, Intent::kDifference),
      {&kPinFaddRn, &fma_route::kPinFloat2Bf16, &kPinBf16Ops});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2bfloat16_rn(Ar::fadd(Ar::bfloat162float(a), Ar::bfloat162float(b) ^ kFloatSign));
  }
};

struct Bmul {
  static constexpr RecipeCard kCard =
      pinned(card("bf16.bmul", "bmul", "hmul on __nv_bfloat16: one BF16 multiply, nearest even", FormatId::bf16,
                  Intent::kProduct),
             {&kPinBf16Ops});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::bmul(a, b);
  }
};

struct Bf16Fp32Mul {
  static constexpr RecipeCard kCard = pinned(
      card("bf16.fp32_mul", "fp32-mul",
           "float2bfloat16_rn(fmul(bfloat162float(a), bfloat162float(b))): FP32 multiply rounded to BF16",
           FormatId::bf16, Intent::kProduct),
      {&upstream::kPinFmulRn, &fma_route::kPinFloat2Bf16, &kPinBf16Ops});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2bfloat16_rn(Ar::fmul(Ar::bfloat162float(a), Ar::bfloat162float(b)));
  }
};

}  // namespace bitproof::dblround
