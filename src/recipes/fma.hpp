// Recipe family: one fused multiply-add a·b + c of three FP16 (or BF16) codes,
// computed the ways kernels and compilers compute it. Intent: a·b + c rounded
// once to the inputs' format (Intent::kFma: the fast exact oracle checks it on
// every case, oracle/fma_exact.hpp).
//
//   inputs   a, b, c: FP16 codes (S.EEEEE.MMMMMMMMMM) or BF16 codes (S.EEEEEEEE.MMMMMMM)
//   hfma      Ar::hfma(a, b, c)                      __hfma: fma.rn.f16, one rounding
//   fp32_fma  float2half_rn(ffma(h2f a, h2f b, h2f c))   widen, FP32 FMA, round again: LLVM's
//             lowering of llvm.fma.f16 without native half FMA (issue 98389). The product
//             (22 bits) is exact in FP32, but the sum can need up to 40 bits: rounded to 24
//             first, then to 11, it can land on a midpoint the exact sum was not on.
//   fp64_fma  double2half_rn(dfma(h2d a, h2d b, h2d c))  the same through FP64 (LLVM's fix,
//             PR 171904): the exact sum spans at most 40 bits (FP16: 2^31 .. 2^-48 when the
//             terms overlap; when they do not, the smaller one is far below the rounding
//             bit), so the FP64 FMA is exact or its rounding cannot move a midpoint.
//   rto       float2half_rn(fadd_ro(fmul(h2f a, h2f b), h2f c))   Boldo & Melquiond (IEEE TC
//             2008): the product is exact in FP32 (22 ≤ 24 bits), the sum is rounded to odd
//             in FP32 (24 ≥ 11 + 2 bits), and a value rounded to odd with at least two extra
//             bits rounds to nearest exactly as the exact value does. Their emulated FMA
//             splits the product with an exact multiplication and adds with TwoSum; here the
//             split is not needed: the product's low part is zero.
//   exact     the reference: the fast exact oracle itself (no arithmetic policy), so the
//             GPU can state "hfma is correctly rounded" as `equal` on 2^48 cases; its
//             witness is the Boost.Multiprecision FMA (OracleArith).
// For BF16 (p = 8) every route is written the same, but the arguments above do not carry
// over: BF16's exponent range lets the exact sum span far more than 53 bits, so the FP64
// route double-rounds too (0x6040 · 0x3F81 + 0xBF80: correct 0x6041, FP64 route 0x6042, see
// tests/proof/test_fma_claims.cpp), and FP32 holds a BF16 product exactly only inside its
// exponent range (a product can reach 2^256 or 2^-266), so the round-to-odd emulation parts
// from bfma where the FP32 product overflows or underflows.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "oracle/fma_exact.hpp"
#include "recipes/recipe.hpp"
#include "recipes/run_plan.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::fma_route {

// ---- pins ----

inline constexpr Pin kPinHfma{PinKind::kCode,
                              upstream::kCudaToolkit,
                              "include/cuda_fp16.hpp",
                              upstream::kCudaRelease,
                              "__hfma",
                              "2714-2717",
                              "one FP16 fused multiply-add, nearest even (fma.rn.f16); device only: no host path"};
inline constexpr Pin kPinBfma{PinKind::kCode,
                              upstream::kCudaToolkit,
                              "include/cuda_bf16.hpp",
                              upstream::kCudaRelease,
                              "__hfma (__nv_bfloat16)",
                              "3036-3042",
                              "one BF16 fused multiply-add, nearest even (fma.rn.bf16, sm_80+); device only"};
inline constexpr Pin kPinFmafRn{PinKind::kCode,
                                upstream::kCudaToolkit,
                                "include/crt/device_functions.h",
                                upstream::kCudaRelease,
                                "__fmaf_rn",
                                "1015",
                                "one FP32 fused multiply-add, nearest even (fma.rn.f32)"};
inline constexpr Pin kPinFmaRn{PinKind::kCode,
                               upstream::kCudaToolkit,
                               "include/crt/device_double_functions.h",
                               upstream::kCudaRelease,
                               "__fma_rn",
                               "266",
                               "one FP64 fused multiply-add, nearest even (fma.rn.f64)"};
inline constexpr Pin kPinDouble2Half{PinKind::kCode,
                                     upstream::kCudaToolkit,
                                     "include/cuda_fp16.hpp",
                                     upstream::kCudaRelease,
                                     "__double2half",
                                     "406-411",
                                     "FP64 to FP16 nearest even, one rounding (device cvt.rn.f16.f64)"};
inline constexpr Pin kPinDouble2Bf16{PinKind::kCode,
                                     upstream::kCudaToolkit,
                                     "include/cuda_bf16.hpp",
                                     upstream::kCudaRelease,
                                     "__double2bfloat16",
                                     "441-446",
                                     "FP64 to BF16 nearest even, one rounding (cvt.rn.bf16.f64 on sm_90)"};
inline constexpr Pin kPinFloat2Bf16{PinKind::kCode,
                                    upstream::kCudaToolkit,
                                    "include/cuda_bf16.hpp",
                                    upstream::kCudaRelease,
                                    "__float2bfloat16_rn",
                                    "488-497",
                                    "FP32 to BF16 nearest even (cvt.rn.bf16.f32); BF16 to FP32 is the bits << 16"};
inline constexpr Pin kPinFaddRounding{PinKind::kCode,
                                      upstream::kCudaToolkit,
                                      "include/crt/device_functions.h",
                                      upstream::kCudaRelease,
                                      "__fadd_rz, __fadd_ru, __fadd_rd",
                                      "785, 804, 823",
                                      "FP32 adds in the directed modes (add.rz/rp/rm.f32): round to odd is the "
                                      "truncated sum with its last bit set when the up and down sums differ"};
inline constexpr Pin kPinLlvmIssue{PinKind::kProse,
                                   "llvm/llvm-project",
                                   "https://github.com/llvm/llvm-project/issues/98389",
                                   "",
                                   "llvm.fma.f16 expanded through llvm.fma.f32 (fpext, fma, fptrunc)",
                                   "",
                                   "FP16 FMA lowered to FP32 FMA then rounded to FP16 on targets without a native "
                                   "half FMA; the issue's inputs 0x520b, 0x00e9, 0x2ff6 give 0x3000, correct 0x3001"};
inline constexpr Pin kPinLlvmFix{PinKind::kProse,
                                 "llvm/llvm-project",
                                 "https://github.com/llvm/llvm-project/pull/171904",
                                 "",
                                 "llvm.fma.f16 promoted to llvm.fma.f64",
                                 "",
                                 "the fix of issue 98389 (merged December 2025): widen to FP64, FMA, round to FP16"};
inline constexpr Pin kPinRoundToOdd{PinKind::kProse,
                                    "S. Boldo, G. Melquiond, IEEE Trans. Computers 57(4):462-471, 2008",
                                    "doi:10.1109/TC.2007.70819",
                                    "",
                                    "Emulation of FMA and correctly rounded sums: proved algorithms using rounding "
                                    "to odd",
                                    "",
                                    "a sum rounded to odd in p + k bits (k >= 2), then to nearest in p bits, is the "
                                    "exact sum rounded to nearest in p bits; the emulated FMA is built on it"};

// ---- cards ----

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          std::string_view source, FormatId format, Role role = Role::kRecipe,
                          std::string_view control_of = {}) {
  return family_card(
      {.source = source, .arity = 3, .inputs = {format, format, format}, .output = format, .intent = Intent::kFma},
      name, label, summary, role, control_of);
}

inline constexpr std::string_view kCudaSource = "CUDA cuda_fp16.h / cuda_bf16.h intrinsics";
inline constexpr std::string_view kLlvmSource = "LLVM's lowering of llvm.fma.f16 without native half FMA";

// ---- FP16 ----

struct Hfma {
  static constexpr RecipeCard kCard =
      pinned(card("fp16fma.hfma", "hfma", "hfma(a, b, c): one FP16 fused multiply-add, nearest even", kCudaSource,
                  FormatId::fp16),
             {&kPinHfma});
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W a, W b, W c) {
    return Ar::hfma(a, b, c);
  }
  // The claim sweep's batches (kernels/sweep.cu; recipes/run_plan.hpp): cases
  // a0 + t and a0 + t + 1 (t even) in the halves of one packed FMA, the same
  // fma.rn.f16 on each half (a policy without hfma2 has no batch form: the
  // sweep evaluates it case by case).
  template <class Ar, int kN>
    requires(kN % 2 == 0 && requires { Ar::hfma2(0u, 0u, 0u); })
  BP_HD static constexpr void eval_batch(std::uint32_t a0, std::uint32_t b, std::uint32_t c, std::uint32_t (&out)[kN]) {
    constexpr std::uint32_t kBoth = 0x0001'0001;  // a 16-bit code in both halves
    // a in the low half and a + 1 in the high one is a·kBoth + 2^16 (a + 1 ≤ 0xFFFF: no carry
    // between the halves), so pair t is pair 0 plus t·kBoth: one add a pair, not a shift,
    // an add and an or.
    const std::uint32_t first_pair = a0 * kBoth + 0x1'0000;
    for (int t = 0; t < kN; t += 2) {
      const std::uint32_t pair = Ar::hfma2(first_pair + static_cast<std::uint32_t>(t) * kBoth, b * kBoth, c * kBoth);
      out[t] = pair & 0xFFFF;
      out[t + 1] = pair >> 16;
    }
  }
};

struct Fp32Fma {
  static constexpr RecipeCard kCard =
      pinned(card("fp16fma.fp32_fma", "fp32-fma",
                  "float2half_rn(ffma(half2float(a), half2float(b), half2float(c))): FP32 FMA, then round to FP16",
                  kLlvmSource, FormatId::fp16),
             {&kPinFmafRn, &upstream::kPinFloat2HalfRn, &upstream::kPinHalf2Float, &kPinLlvmIssue});
  template <class Ar, class W = std::uint32_t>
  BP_HD static constexpr W eval(W a, W b, W c) {
    return Ar::float2half_rn(Ar::ffma(Ar::half2float(a), Ar::half2float(b), Ar::half2float(c)));
  }
};

struct Fp64Fma {
  static constexpr RecipeCard kCard =
      pinned(card("fp16fma.fp64_fma", "fp64-fma", "double2half_rn(dfma(double(a), double(b), double(c))): FP64 FMA, "
                  "then round to FP16", "LLVM's fixed lowering (llvm.fma.f64); CUDA __fma_rn, __double2half",
                  FormatId::fp16),
             {&kPinFmaRn, &kPinDouble2Half, &kPinLlvmFix});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::double2half_rn(Ar::dfma(Ar::half2double(a), Ar::half2double(b), Ar::half2double(c)));
  }
};

struct RoundToOdd {
  static constexpr RecipeCard kCard =
      pinned(card("fp16fma.rto", "rto-fma",
                  "float2half_rn(fadd_ro(fmul(half2float(a), half2float(b)), half2float(c))): exact FP32 product, "
                  "sum rounded to odd in FP32, then to nearest FP16",
                  "Boldo & Melquiond's FMA emulation by rounding to odd, on CUDA FP32 adds", FormatId::fp16),
             {&kPinFaddRounding, &upstream::kPinFmulRn, &upstream::kPinFloat2HalfRn, &kPinRoundToOdd});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::float2half_rn(Ar::fadd_ro(Ar::fmul(Ar::half2float(a), Ar::half2float(b)), Ar::half2float(c)));
  }
};

// The reference: the fast exact oracle (with the oracle policy: its Boost FMA, the witness).
template <class Ar>
concept ExactPolicy = requires { Ar::kExact; };

struct ExactFp16 {
  static constexpr RecipeCard kCard =
      card("exact.fma_fp16", "exact-fma", "a·b + c exact in a 32-bit integer window, rounded once to FP16 (the fast oracle)",
           "oracle/fma_exact.hpp", FormatId::fp16, Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    if constexpr (ExactPolicy<Ar>) {
      return Ar::hfma(a, b, c);
    } else {
      return oracle::fast::fma_fp16(a, b, c);
    }
  }
  // The claim sweep's batches (kernels/sweep.cu; recipes/run_plan.hpp): the run form.
  template <class Ar>
    requires(!ExactPolicy<Ar>)
  BP_HD static constexpr recipes::RunPlan plan_run(std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c) {
    return oracle::fast::plan_run(oracle::fast::kFp16, oracle::fast::kFp16, a0, n, b, c);
  }
  template <class Ar, int kN>
    requires(!ExactPolicy<Ar>)
  BP_HD static constexpr void eval_run(const recipes::RunPlan& plan, std::uint32_t t0, std::uint32_t a0, std::uint32_t b,
                                       std::uint32_t c, std::uint32_t (&out)[kN]) {
    oracle::fast::fma_run(oracle::fast::kFp16, oracle::fast::kFp16, plan, t0, a0, b, c, out);
  }
};

// ---- BF16 ----

struct Bfma {
  static constexpr RecipeCard kCard =
      pinned(card("bf16fma.bfma", "bfma", "hfma on __nv_bfloat16 (a, b, c): one BF16 fused multiply-add, nearest even",
                  kCudaSource, FormatId::bf16),
             {&kPinBfma});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::bfma(a, b, c);
  }
};

struct Bf16Fp32Fma {
  static constexpr RecipeCard kCard = pinned(
      card("bf16fma.fp32_fma", "fp32-fma",
           "float2bfloat16_rn(ffma(float(a), float(b), float(c))): FP32 FMA, then round to BF16",
           "the BF16 form of LLVM's FP32 lowering; CUDA __fmaf_rn, __float2bfloat16_rn", FormatId::bf16),
      {&kPinFmafRn, &kPinFloat2Bf16, &kPinLlvmIssue});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::float2bfloat16_rn(Ar::ffma(Ar::bfloat162float(a), Ar::bfloat162float(b), Ar::bfloat162float(c)));
  }
};

struct Bf16Fp64Fma {
  static constexpr RecipeCard kCard =
      pinned(card("bf16fma.fp64_fma", "fp64-fma",
                  "double2bfloat16_rn(dfma(double(a), double(b), double(c))): FP64 FMA, then round to BF16",
                  "CUDA __fma_rn, __double2bfloat16", FormatId::bf16),
             {&kPinFmaRn, &kPinDouble2Bf16, &kPinLlvmFix});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::double2bfloat16_rn(
        Ar::dfma(Ar::bfloat162double(a), Ar::bfloat162double(b), Ar::bfloat162double(c)));
  }
};

struct Bf16RoundToOdd {
  static constexpr RecipeCard kCard =
      pinned(card("bf16fma.rto", "rto-fma",
                  "float2bfloat16_rn(fadd_ro(fmul(float(a), float(b)), float(c))): FP32 product, sum rounded to odd "
                  "in FP32, then to nearest BF16",
                  "Boldo & Melquiond's FMA emulation by rounding to odd, on CUDA FP32 adds", FormatId::bf16),
             {&kPinFaddRounding, &upstream::kPinFmulRn, &kPinFloat2Bf16, &kPinRoundToOdd});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::float2bfloat16_rn(
        Ar::fadd_ro(Ar::fmul(Ar::bfloat162float(a), Ar::bfloat162float(b)), Ar::bfloat162float(c)));
  }
};

struct ExactBf16 {
  static constexpr RecipeCard kCard =
      card("exact.fma_bf16", "exact-fma", "a·b + c exact in a 32-bit integer window, rounded once to BF16 (the fast oracle)",
           "oracle/fma_exact.hpp", FormatId::bf16, Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    if constexpr (ExactPolicy<Ar>) {
      return Ar::bfma(a, b, c);
    } else {
      return oracle::fast::fma_bf16(a, b, c);
    }
  }
  // The claim sweep's batches (kernels/sweep.cu; recipes/run_plan.hpp): the run form.
  template <class Ar>
    requires(!ExactPolicy<Ar>)
  BP_HD static constexpr recipes::RunPlan plan_run(std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c) {
    return oracle::fast::plan_run(oracle::fast::kBf16, oracle::fast::kBf16, a0, n, b, c);
  }
  template <class Ar, int kN>
    requires(!ExactPolicy<Ar>)
  BP_HD static constexpr void eval_run(const recipes::RunPlan& plan, std::uint32_t t0, std::uint32_t a0, std::uint32_t b,
                                       std::uint32_t c, std::uint32_t (&out)[kN]) {
    oracle::fast::fma_run(oracle::fast::kBf16, oracle::fast::kBf16, plan, t0, a0, b, c, out);
  }
};

// ---- negative controls: each must be refuted against the recipe it corrupts ----

struct Unfused {
  static constexpr RecipeCard kCard =
      card("fp16fma.control.unfused", "hmul+hadd",
           "hadd(hmul(a, b), c): the product rounded to FP16 before the add, two roundings", kCudaSource,
           FormatId::fp16, Role::kControl, "fp16fma.hfma");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::hadd(Ar::hmul(a, b), c);
  }
};

struct RoundToOddTruncating {
  static constexpr RecipeCard kCard =
      card("fp16fma.control.rto_rz", "rto-fma-rz",
           "the round-to-odd sum cast to FP16 toward zero: the last rounding must be to nearest", kCudaSource,
           FormatId::fp16, Role::kControl, "fp16fma.rto");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::float2half_rz(Ar::fadd_ro(Ar::fmul(Ar::half2float(a), Ar::half2float(b)), Ar::half2float(c)));
  }
};

struct Bf16SignlessAddend {
  static constexpr RecipeCard kCard =
      card("bf16fma.control.signless_addend", "bfma|c|", "bfma(a, b, |c|): the addend's sign lost", kCudaSource,
           FormatId::bf16, Role::kControl, "bf16fma.bfma");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    return Ar::bfma(a, b, c & 0x7FFFu);
  }
};

}  // namespace bitproof::fma_route
