// Recipe family: the basic operations of FP16 and BF16 against the same operation
// in FP32 rounded once more to the format: double rounding through FP32.
//
//   inputs   a, b: FP16 codes (S.EEEEE.MMMMMMMMMM) or BF16 codes (S.EEEEEEEE.MMMMMMM)
//   hadd / hsub            Ar::hadd(a, b), Ar::hsub(a, b)         one FP16 rounding (add.f16, sub.f16)
//   fp32_add / fp32_sub    float2half_rn(fadd(h2f a, ±h2f b))      FP32 add rounded, then FP16: two roundings
//   badd / bsub / bmul     the BF16 operations (add/sub/mul.bf16 on sm_90)
//   fp32_* (bf16)          float2bfloat16_rn(f(bfloat162float a, bfloat162float b))
//   hdiv / hsqrt           Ar::hdiv(a, b), Ar::hsqrt(a): FP16 ÷ and √. The model is the intent,
//   bdiv / bsqrt           one correct rounding; CUDA computes both from approximate FP32
//                          instructions (rcp.approx, div.approx, sqrt.approx: see the pins), so
//                          the GPU's model sweep is what says whether the shipped code is correctly
//                          rounded (each card's caveat)
//   fp32_div / fp32_sqrt   float2half_rn(fdiv_rn(h2f a, h2f b)), float2half_rn(fsqrt_rn(h2f a)),
//                          and the BF16 forms
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
inline constexpr Pin kPinHdiv{PinKind::kCode,
                              upstream::kCudaToolkit,
                              "include/cuda_fp16.hpp",
                              upstream::kCudaRelease,
                              "__hdiv",
                              "2723-2750",
                              "device: rcp.approx.ftz.f32 of b times a, cvt.rn.f16.f32; two FP32 FMAs refine it only when "
                              "that result is nonzero and below 0x008F in magnitude; the host path: float divide, then "
                              "__float2half"};
inline constexpr Pin kPinHsqrt{PinKind::kCode,
                               upstream::kCudaToolkit,
                               "include/cuda_fp16.hpp",
                               upstream::kCudaRelease,
                               "hsqrt, __APPROX_FCAST",
                               "2758-2769, 3223-3225",
                               "cvt.f32.f16, sqrt.approx.ftz.f32, cvt.rn.f16.f32; device only"};
inline constexpr Pin kPinBdiv{PinKind::kCode,
                              upstream::kCudaToolkit,
                              "include/cuda_bf16.hpp",
                              upstream::kCudaRelease,
                              "__hdiv, __internal_device_hdiv (__nv_bfloat16)",
                              "3067-3093",
                              "device: div.approx.f32 (b scaled by 1/4 when |b| >= 2^126, the quotient by 1/4 after), "
                              "then __float2bfloat16 (\"good enough for c-r bfloat div\", its comment says)"};
inline constexpr Pin kPinBsqrt{PinKind::kCode,
                               upstream::kCudaToolkit,
                               "include/cuda_bf16.hpp",
                               upstream::kCudaRelease,
                               "hsqrt (__nv_bfloat16)",
                               "3481-3485",
                               "sqrt.approx.f32, then __float2bfloat16_rn; device only"};
inline constexpr Pin kPinFdivRn{PinKind::kCode,
                                upstream::kCudaToolkit,
                                "include/crt/device_functions.h",
                                upstream::kCudaRelease,
                                "__fdiv_rn",
                                "1324",
                                "one FP32 divide, nearest even (div.rn.f32; IEEE also under --use_fast_math)"};
inline constexpr Pin kPinFsqrtRn{PinKind::kCode,
                                 upstream::kCudaToolkit,
                                 "include/crt/device_functions.h",
                                 upstream::kCudaRelease,
                                 "__fsqrt_rn",
                                 "1233",
                                 "one FP32 square root, nearest even (sqrt.rn.f32)"};
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
  return family_card({.source = "CUDA cuda_fp16.h / cuda_bf16.h arithmetic and its FP32 host path",
                      .arity = 2,
                      .inputs = {format, format},
                      .output = format,
                      .intent = intent},
                     name, label, summary);
}

// The card of a one-input recipe (√).
constexpr RecipeCard unary(RecipeCard c) {
  c.arity = 1;
  return c;
}

// The card of a negative control: deliberately wrong, refuted against `of`.
constexpr RecipeCard control(RecipeCard c, std::string_view of) {
  c.role = Role::kControl;
  c.control_of = of;
  return c;
}

inline constexpr std::string_view kApproxCaveat =
    "the model is the intent, the correctly rounded result; CUDA computes it from an approximate FP32 "
    "instruction, so where the hardware parts from it the GPU's model sweep counts the cases";

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

struct Hdiv {
  static constexpr RecipeCard kCard =
      pinned(card("fp16.hdiv", "hdiv", "hdiv(a, b): one FP16 divide, nearest even (the intent of __hdiv)",
                  FormatId::fp16, Intent::kQuotient),
             {&kPinHdiv}, kApproxCaveat);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::hdiv(a, b);
  }
};

struct Fp32Div {
  static constexpr RecipeCard kCard = pinned(
      card("fp16.fp32_div", "fp32-div",
           "float2half_rn(fdiv_rn(half2float(a), half2float(b))): FP32 divide rounded to FP16", FormatId::fp16,
           Intent::kQuotient),
      {&kPinFdivRn, &upstream::kPinHalf2Float, &upstream::kPinFloat2HalfRn, &kPinHdiv});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2half_rn(Ar::fdiv(Ar::half2float(a), Ar::half2float(b)));
  }
};

struct Hsqrt {
  static constexpr RecipeCard kCard =
      pinned(unary(card("fp16.hsqrt", "hsqrt", "hsqrt(a): one FP16 square root, nearest even (the intent of hsqrt)",
                        FormatId::fp16, Intent::kSquareRoot)),
             {&kPinHsqrt}, kApproxCaveat);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a) {
    return Ar::hsqrt(a);
  }
};

struct Fp32Sqrt {
  static constexpr RecipeCard kCard =
      pinned(unary(card("fp16.fp32_sqrt", "fp32-sqrt",
                        "float2half_rn(fsqrt_rn(half2float(a))): FP32 square root rounded to FP16", FormatId::fp16,
                        Intent::kSquareRoot)),
             {&kPinFsqrtRn, &upstream::kPinHalf2Float, &upstream::kPinFloat2HalfRn, &kPinHsqrt});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a) {
    return Ar::float2half_rn(Ar::fsqrt(Ar::half2float(a)));
  }
};

// Negative controls: the FP32 result cut to FP16 toward zero (the last rounding must be to nearest).
struct DivTruncated {
  static constexpr RecipeCard kCard =
      control(card("fp16.control.fp32_div_rz", "fp32-div-rz",
                   "float2half_rz(fdiv_rn(half2float(a), half2float(b))): the last rounding toward zero",
                   FormatId::fp16, Intent::kQuotient),
              "fp16.fp32_div");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2half_rz(Ar::fdiv(Ar::half2float(a), Ar::half2float(b)));
  }
};

struct SqrtTruncated {
  static constexpr RecipeCard kCard =
      control(unary(card("fp16.control.fp32_sqrt_rz", "fp32-sqrt-rz",
                         "float2half_rz(fsqrt_rn(half2float(a))): the last rounding toward zero", FormatId::fp16,
                         Intent::kSquareRoot)),
              "fp16.fp32_sqrt");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a) {
    return Ar::float2half_rz(Ar::fsqrt(Ar::half2float(a)));
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

struct Bdiv {
  static constexpr RecipeCard kCard =
      pinned(card("bf16.bdiv", "bdiv", "hdiv on __nv_bfloat16: one BF16 divide, nearest even (the intent of __hdiv)",
                  FormatId::bf16, Intent::kQuotient),
             {&kPinBdiv}, kApproxCaveat);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::bdiv(a, b);
  }
};

struct Bf16Fp32Div {
  static constexpr RecipeCard kCard = pinned(
      card("bf16.fp32_div", "fp32-div",
           "float2bfloat16_rn(fdiv_rn(bfloat162float(a), bfloat162float(b))): FP32 divide rounded to BF16",
           FormatId::bf16, Intent::kQuotient),
      {&kPinFdivRn, &fma_route::kPinFloat2Bf16, &kPinBdiv});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b) {
    return Ar::float2bfloat16_rn(Ar::fdiv(Ar::bfloat162float(a), Ar::bfloat162float(b)));
  }
};

struct Bsqrt {
  static constexpr RecipeCard kCard = pinned(
      unary(card("bf16.bsqrt", "bsqrt", "hsqrt on __nv_bfloat16: one BF16 square root, nearest even (its intent)",
                 FormatId::bf16, Intent::kSquareRoot)),
      {&kPinBsqrt}, kApproxCaveat);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a) {
    return Ar::bsqrt(a);
  }
};

struct Bf16Fp32Sqrt {
  static constexpr RecipeCard kCard =
      pinned(unary(card("bf16.fp32_sqrt", "fp32-sqrt",
                        "float2bfloat16_rn(fsqrt_rn(bfloat162float(a))): FP32 square root rounded to BF16",
                        FormatId::bf16, Intent::kSquareRoot)),
             {&kPinFsqrtRn, &fma_route::kPinFloat2Bf16, &kPinBsqrt});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a) {
    return Ar::float2bfloat16_rn(Ar::fsqrt(Ar::bfloat162float(a)));
  }
};

}  // namespace bitproof::dblround
