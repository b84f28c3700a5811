// Recipe family: TurboMind SM70 MXFP4 -> FP16 decode, the DeepSeek V4 kernel of
// 1CatAI/1Cat-vLLM (its vendored lmdeploy TurboMind), and the PR that folds its exponents
// (context/pr-fold-mxfp4-exponents.txt, "Fold DeepSeek V4 MXFP4 decode exponents").
//
//   inputs   x: E2M1 code (4 bits S.EE.M); s: UE8M0 scale byte
//   output   FP16 bits
//   load     a   = clamp(s + 15 - 127, 0, 30)          half exponent field; 31 would be Inf
//   element  raw = ((x << 12) & 0x8000) | ((x << 9) & 0x0E00)
//                  the FP16 bits of E2M1(x) * 2^-14 (code 1 is an FP16 subnormal)
//   ordinary out = hmul(hmul(raw, 2^14), half_bits(a << 10))
//   folded   out = hmul(raw, half_bits((a + 14) << 10))       one multiply saved
//   prescaled out = hmul(raw, hmul(half_bits(a << 10), 2^14)) the 2^14 in the prepared scale
//   intent   E2M1(x) * 2^(s - 127), rounded to FP16
//
// What is modelled from code and what from prose. The load-time clamp, the element
// placement, the 2^14 multiply and the scale multiply of `ordinary` are read in
// 1CatAI/1Cat-vLLM at ae13773a (pins below). The `folded` form comes from the PR's text:
// its code is in no stored copy (every 1Cat-vLLM ref and fork was searched). The nearest
// shipped code, the DeepSeek V4 M = 6 decode kernel, builds the same folded scale with an
// FP16 multiply per group (`prescaled`), which saturates to +Inf where the PR's bare
// `(a + 14) << 10` would run into the sign bit: so the model's edges above s = 128 (Inf at
// 129, a negative scale from 130) are the model's behaviour, not a measured kernel's.
// Modelled as written, clamps and overflows included: a + 14 past 30 makes Inf or wraps
// into the sign bit, and a = 0 makes the ordinary scale +0.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::turbomind {

// ---- pins: 1CatAI/1Cat-vLLM at ae13773a (HEAD, 2026-08-22), which vendors lmdeploy's TurboMind ----
inline constexpr std::string_view k1Cat = "1CatAI/1Cat-vLLM";
inline constexpr std::string_view k1CatHead = "ae13773a0deebf583022613c4508e5072cedef91";
inline constexpr std::string_view kTmGemm = "csrc/sm70_turbomind/lmdeploy/src/turbomind/kernels/gemm/";
inline constexpr Pin kPinAdjustScale{PinKind::kCode,
                                     k1Cat,
                                     "csrc/sm70_turbomind/lmdeploy/src/turbomind/kernels/gemm/cast.cu",
                                     k1CatHead,
                                     "adjust_ue8m0_scale_for_half_kernel",
                                     "215-222",
                                     "at load time each UE8M0 byte becomes max(0, min(30, s + 15 - 127)): an FP16 "
                                     "exponent field, 31 (Inf) excluded"};
inline constexpr Pin kPinTmDequantScale{PinKind::kCode,
                                        k1Cat,
                                        "csrc/sm70_turbomind/lmdeploy/src/turbomind/kernels/gemm/transform.h",
                                        k1CatHead,
                                        "Transform_HMMA_SIMT_B::dequant(Array<half_t, 2>&, Array<uint8_t, 1>)",
                                        "142-149",
                                        "the adjusted field used as the FP16 scale __ushort_as_half(a << 10), then "
                                        "one __hmul per element"};
inline constexpr Pin kPinPrepare{PinKind::kCode,
                                 k1Cat,
                                 "csrc/sm70_turbomind/ops/awq_sm70_gemm.cu",
                                 k1CatHead,
                                 "mxfp4_sm70_prepare",
                                 "2992-2996",
                                 "the MXFP4 weight load calls AdjustUe8m0ScaleForHalf on the scale tensor"};
inline constexpr Pin kPinTmE2m1{PinKind::kCode,
                                k1Cat,
                                "csrc/sm70_turbomind/lmdeploy/src/turbomind/kernels/attention/quantization.h",
                                k1CatHead,
                                "ConvertKvCache<fp4_e2m1_t, T>::cvt_f16x8_e2m1",
                                "740-765",
                                "sign to bit 15, exponent and mantissa to bits 11..9 (E2M1 x 2^-14, code 1 "
                                "subnormal), then mul.f16x2 by 0x7400 = 2^14"};
inline constexpr Pin kPinQpnM1{PinKind::kCode,
                               "rapatel0/1Cat-vLLM",
                               "csrc/sm70_turbomind/ops/mxfp4_qpn_m1_sm70.cu",
                               "4b618e7638f7f8526a6bbe2b836114ee812ab21e",
                               "dequant_e2m1x8, mxfp4_qpn_m1_sm70_kernel",
                               "14-28, 81, 91-99",
                               "the DeepSeek V4 M = 6 decode kernel: per group P = hmul(half_bits(a << 10), 2^14), "
                               "then hmul2(raw, P): the 2^14 folded into the scale by one FP16 multiply"};
// Read in the search index at 256ae302 (a 1CatAI commit later than the 2026-08-22 snapshot,
// so scripts/check-pins.py cannot reach it there): the struct is lines 283-316 under its
// three-line contract comment (280-282); the element bits at 301-304 are raw_bits() on each
// nibble, the scale multiply at 307-312 one mul.f16x2 (nearest even, subnormals kept).
// Earlier stored revisions (40382cb1, ae13773a) have no such struct.
inline constexpr Pin kPinPrescaledContract{PinKind::kCode,
                                           k1Cat,
                                           "csrc/sm70_turbomind/lmdeploy/src/turbomind/kernels/gemm/transform.h",
                                           "256ae30281aef90a2f6792d3e0f760ecfb741456",
                                           "Transform_HMMA_SIMT_B_PrescaledE2M1",
                                           "280-316",
                                           "raw element bits times a prepared 16-bit scale (mul.f16x2); preparation "
                                           "must reject scale magnitudes above 65504 / 16384 (instantiated for NVFP4)"};
inline constexpr Pin kPinPrDescription{PinKind::kProse,
                                       k1Cat,
                                       "shared/context/pr-fold-mxfp4-exponents.txt",
                                       "",
                                       "PR \"Fold DeepSeek V4 MXFP4 decode exponents\"",
                                       "",
                                       "the element raw = E2M1 bits placed as FP16 x 2^-14, multiplied by 2^14 "
                                       "(ordinary) or by the scale with 14 added to its exponent field (folded): the "
                                       "PR's text; its code is in no stored copy"};

inline constexpr std::uint16_t kTwoPow14 = 0b0'11101'0000000000;  // +16384 = 2^14

// Load-time scale adjustment: UE8M0 byte -> FP16 exponent field, clamped.
BP_HD constexpr std::uint32_t adjust_scale(std::uint32_t e8m0) {
  const int a = static_cast<int>(e8m0) + 15 - 127;
  return static_cast<std::uint32_t>(a < 0 ? 0 : (a > 30 ? 30 : a));
}

// E2M1 code placed into FP16 bits: sign to bit 15, E.M to bits 11..9.
BP_HD constexpr std::uint16_t raw_bits(std::uint32_t x) {
  return static_cast<std::uint16_t>(((x << 12) & 0x8000) | ((x << 9) & 0x0E00));
}
static_assert(raw_bits(0b0'11'1) == 0b0'00011'1000000000);  // +6.0 -> 1.5 * 2^-12 = 6 * 2^-14
static_assert(raw_bits(0b1'00'1) == 0b1'00000'1000000000);  // -0.5 -> -2^-15 (subnormal)

// FP16 bits with exponent field e and zero mantissa, truncated to 16 bits like
// the kernel's `__ushort_as_half(e << 10)`.
BP_HD constexpr std::uint16_t half_from_exponent_field(std::uint32_t e) { return static_cast<std::uint16_t>(e << 10); }

inline constexpr RecipeFamily kFamily{
    .source = "1CatAI/1Cat-vLLM TurboMind SM70 MXFP4 decode (vendored lmdeploy); the fold from the PR's text",
    .arity = 2,
    .inputs = {FormatId::e2m1, FormatId::ue8m0},
    .output = FormatId::fp16,
    .intent = Intent::kProduct,
};

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return family_card(kFamily, name, label, summary, role, control_of);
}

struct Ordinary {
  static constexpr RecipeCard kCard =
      pinned(card("turbomind.mxfp4_fp16.ordinary", "ordinary",
                  "hmul(hmul(raw, 2^14), half_bits(a << 10)), a = clamp(s - 112, 0, 30)"),
             {&kPinAdjustScale, &kPinPrepare, &kPinTmE2m1, &kPinTmDequantScale});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const std::uint16_t elem = Ar::hmul(raw_bits(x), kTwoPow14);
    return Ar::hmul(elem, half_from_exponent_field(adjust_scale(s)));
  }
};

struct Folded {
  static constexpr RecipeCard kCard = pinned(
      card("turbomind.mxfp4_fp16.folded", "folded", "hmul(raw, half_bits((a + 14) << 10)), a = clamp(s - 112, 0, 30)"),
      {&kPinPrDescription, &kPinQpnM1, &kPinAdjustScale},
      "modelled from the PR's description, not its code (in no stored copy): the unguarded (a + 14) << 10 past a = 16 "
      "gives +Inf at a = 17 and wraps into the sign bit from a = 18 (the model's behaviour); the shipped M = 6 kernel "
      "builds the same scale by an FP16 multiply (turbomind.mxfp4_fp16.prescaled), equal to this on s = 113..128");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::hmul(raw_bits(x), half_from_exponent_field(adjust_scale(s) + 14));
  }
};

// The prescaled path: the 2^14 moved into a prepared FP16 scale once per group,
// P = hmul(half_bits(a << 10), 2^14), then one multiply per element. P is +0 for a = 0
// (s <= 112), (a + 14) << 10 for a = 1..16 and +Inf from a = 17 (s >= 129): so the
// preparation's contract (every scale at most 65504 / 16384) admits exactly s <= 128.
// On 0..128 it returns the ordinary path's bits; the PR's unguarded (a + 14) << 10 agrees
// with it only on 113..128 (proofs/dsv4-mxfp4-fp16-prescaled.json).
template <class Ar>
BP_HD constexpr std::uint16_t prescaled_scale(std::uint32_t s) {
  return Ar::hmul(half_from_exponent_field(adjust_scale(s)), kTwoPow14);
}

struct Prescaled {
  static constexpr RecipeCard kCard = pinned(
      card("turbomind.mxfp4_fp16.prescaled", "prescaled",
           "hmul(raw, hmul(half_bits(a << 10), 2^14)): the 2^14 folded into the prepared scale; admitted for s <= 128"),
      {&kPinQpnM1, &kPinPrescaledContract, &kPinAdjustScale},
      "precondition (checked per tensor at preparation): every scale <= 65504 / 16384, i.e. UE8M0 s <= 128; "
      "upstream's PrescaledE2M1 transform serves NVFP4, the MXFP4 form is the M = 6 decode kernel");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::hmul(raw_bits(x), prescaled_scale<Ar>(s));
  }
};

// ---- negative controls: each must be refuted against the recipe it corrupts ----

template <int kFold>
struct FoldOffBy {
  static constexpr RecipeCard kCard =
      card(kFold == 13 ? "turbomind.mxfp4_fp16.control.fold_plus13" : "turbomind.mxfp4_fp16.control.fold_plus15",
           kFold == 13 ? "fold+13" : "fold+15", "folded with the fold constant off by one: every exponent wrong",
           Role::kControl, "turbomind.mxfp4_fp16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::hmul(raw_bits(x), half_from_exponent_field(adjust_scale(s) + kFold));
  }
};

struct TruncatingOrdinary {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.control.truncating", "ordinary-rz",
           "ordinary with round-toward-zero multiplies: wrong wherever a product rounds (overflow)", Role::kControl,
           "turbomind.mxfp4_fp16.ordinary");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const std::uint16_t elem = Ar::hmul_rz(raw_bits(x), kTwoPow14);
    return Ar::hmul_rz(elem, half_from_exponent_field(adjust_scale(s)));
  }
};

struct FlushingFolded {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.control.ftz", "folded-ftz",
           "folded with a multiply that flushes subnormals: loses E2M1 code 1 (raw is subnormal)", Role::kControl,
           "turbomind.mxfp4_fp16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::hmul_ftz(raw_bits(x), half_from_exponent_field(adjust_scale(s) + 14));
  }
};

struct SignlessFolded {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.control.signless", "folded-signless", "folded with a decode that drops the sign bit",
           Role::kControl, "turbomind.mxfp4_fp16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const auto unsigned_raw = static_cast<std::uint16_t>(raw_bits(x) & 0x7FFF);
    return Ar::hmul(unsigned_raw, half_from_exponent_field(adjust_scale(s) + 14));
  }
};

struct PrescaleMissing {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.control.prescale_missing", "prescale-missing",
           "the prescaled path without the 2^14 in the prepared scale: every nonzero value 2^14 too small",
           Role::kControl, "turbomind.mxfp4_fp16.prescaled");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::hmul(raw_bits(x), half_from_exponent_field(adjust_scale(s)));
  }
};

}  // namespace bitproof::turbomind
