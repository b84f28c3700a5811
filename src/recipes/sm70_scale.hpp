// Recipe family: UE8M0 scale -> FP16 on Volta, two ways, and the MXFP4 decode built on each.
//
//   cvt_rn       float2half_rn(float bits s << 23)
//                the SM70 Marlin path of 1CatAI/1Cat-vLLM as issue 6 describes it: bit-cast
//                the byte into an FP32 exponent, one round-to-nearest conversion; keeps
//                FP16 subnormals (2^-24 .. 2^-15, s = 103..112) and rounds 2^-25 (s = 102)
//                to 0; s = 0 casts to +0 (2^-127 rounds to 0 anyway); s = 255 is +Inf,
//                not NaN; s >= 143 overflows to +Inf.
//   clamp_shift  half bits clamp(s + 15 - 127, 0, 30) << 10
//                the TurboMind SM70 path (turbomind_mxfp4.hpp): no subnormals (s <= 112 -> +0),
//                saturates at 2^15 (s >= 142), 255 -> 2^15.
//   mxfp4 (e2m1 × ue8m0 -> fp16): hmul(hmul(raw, 2^14), cvt_rn(s)), the ordinary TurboMind
//                decode with the SM70 Marlin scale; compare turbomind.mxfp4_fp16.ordinary.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"
#include "recipes/turbomind_mxfp4.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::sm70 {

inline constexpr std::string_view kSource =
    "1CatAI/1Cat-vLLM SM70 Marlin MXFP4 scale path (E8M0 -> FP32 bit cast -> __floats2half2_rn); TurboMind "
    "clamp-and-shift (vendored lmdeploy)";
inline constexpr std::string_view kSm70Gemm = "csrc/quantization/marlin/sm70_marlin_mxfp4_gemm.cu";
inline constexpr Pin kPinSm70E8m0{PinKind::kCode,
                                  turbomind::k1Cat,
                                  kSm70Gemm,
                                  turbomind::k1CatHead,
                                  "e8m0x2_to_half2_fast",
                                  "48-56",
                                  "each scale byte placed in an FP32 exponent field (byte << 23) and the pair "
                                  "converted with __floats2half2_rn: FP16 subnormals kept, s >= 143 to +Inf"};
inline constexpr Pin kPinSm70Load{PinKind::kCode,
                                  turbomind::k1Cat,
                                  kSm70Gemm,
                                  turbomind::k1CatHead,
                                  "load_cta_n_aligned",
                                  "224-235",
                                  "the element through Marlin's dequant<half2, kFE2M1f, false> (raw x 2^14), then "
                                  "__hmul2 by the FP16 scale"};
inline constexpr Pin kPinSm70Dequant{PinKind::kCode,
                                     turbomind::k1Cat,
                                     "csrc/quantization/marlin/dequant.h",
                                     turbomind::k1CatHead,
                                     "dequant<half2, kFE2M1f, *>",
                                     "397-431",
                                     "the E2M1 nibble moved into FP16 bits (E2M1 x 2^-14), times 2^14 (__hmul2)"};

BP_HD constexpr std::uint32_t e8m0_float_bits(std::uint32_t s) { return (s & 0xFF) << 23; }

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary, int arity,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return family_card({.source = kSource,
                      .arity = arity,
                      .inputs = arity == 1 ? std::array<FormatId, kMaxArity>{FormatId::ue8m0, FormatId::ue8m0}
                                           : std::array<FormatId, kMaxArity>{FormatId::e2m1, FormatId::ue8m0},
                      .output = FormatId::fp16,
                      .intent = arity == 1 ? Intent::kValue : Intent::kProduct},
                     name, label, summary, role, control_of);
}

struct ScaleCvtRn {
  static constexpr RecipeCard kCard =
      pinned(card("sm70_marlin.e8m0_fp16.cvt_rn", "cvt-rn", "float2half_rn(float bits s << 23)", 1), {&kPinSm70E8m0},
             "since 2f0a5056 (2026-08-16); before it the kernel used clamp(s - 112, 0, 31) << 10: no subnormals, +Inf "
             "from s = 143");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t s) {
    return Ar::float2half_rn(e8m0_float_bits(s));
  }
};

struct ScaleClampShift {
  static constexpr RecipeCard kCard =
      pinned(card("turbomind.e8m0_fp16.clamp_shift", "clamp-shift", "half bits clamp(s - 112, 0, 30) << 10", 1),
             {&turbomind::kPinAdjustScale, &turbomind::kPinTmDequantScale});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t s) {
    return turbomind::half_from_exponent_field(turbomind::adjust_scale(s));
  }
};

struct Mxfp4CvtRn {
  static constexpr RecipeCard kCard = pinned(card("sm70_marlin.mxfp4_fp16.cvt_rn", "cvt-rn-scale",
                                                  "hmul(hmul(raw, 2^14), float2half_rn(float bits s << 23))", 2),
                                             {&kPinSm70Load, &kPinSm70Dequant, &kPinSm70E8m0});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const std::uint16_t element = Ar::hmul(turbomind::raw_bits(x), turbomind::kTwoPow14);
    return Ar::hmul(element, Ar::float2half_rn(e8m0_float_bits(s)));
  }
};

// ---- negative controls ----

struct ScaleCvtRz {
  static constexpr RecipeCard kCard =
      card("sm70_marlin.e8m0_fp16.control.cvt_rz", "cvt-rz",
           "float2half_rz: truncation, wrong where the conversion rounds (2^16 and up saturate at 65504)", 1,
           Role::kControl, "sm70_marlin.e8m0_fp16.cvt_rn");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t s) {
    return Ar::float2half_rz(e8m0_float_bits(s));
  }
};

struct ScaleBiasOff {
  static constexpr RecipeCard kCard = card("sm70_marlin.e8m0_fp16.control.exponent_plus1", "cvt-rn+1",
                                           "the byte placed one exponent too high: every scale doubled", 1,
                                           Role::kControl, "sm70_marlin.e8m0_fp16.cvt_rn");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t s) {
    return Ar::float2half_rn(e8m0_float_bits(s + 1));
  }
};

}  // namespace bitproof::sm70
