// Recipe family: FP8 -> FP16 by moving bits, no conversion instruction.
//
// E4M3 (vllm-project/vllm csrc/quantization/marlin/dequant.h, dequant<half2, kFE4M3fn>;
// the fold in quantization/utils/marlin_utils_fp8.py). The 7 magnitude bits of S.EEEE.MMM
// move right by one into FP16's S.EEEEE.MMMMMMMMMM:
//   bits = (q & 0x8000) | ((q & 0x7F00) >> 1),  q = c << 8
//        = the FP16 bits of E4M3(c) * 2^-8 (FP16 bias 15 minus E4M3 bias 7); E4M3
//          subnormals land on FP16 subnormals, exactly. NaN (S.1111.111) is not special:
//          its bits become ±1.875 (exponent field 15), i.e. ±480 after the flop.
//   flop     hmul(bits, 2^8)                          (dequant<…, false>)
//   ordinary hmul(hmul(bits, 2^8), s)                 the flop, then the FP16 channel scale s
//   folded   hmul(bits, hmul(s, 2^8))                 skip-flop (dequant<…, true>, as Marlin runs
//                                                     FP8 weights): 2^8 folded into s at load time
// E5M2 is the top byte of an FP16 (S.EEEEE.MM, bias 15 both): bits = c << 8, exact for
// every code, Inf and NaN payloads included. FlashInfer's pre-Hopper fast path ships this
// shift (fast_dequant_f8f16x4, a byte permute). vLLM does not: its KV cache decodes with
// CUDA's __nv_cvt_fp8_to_halfraw, which turns every NaN into 0x7FFF (vllm.e5m2_fp16.kv_cache;
// the 6 NaN codes are a finding, proofs/fp8-e5m2-fp16-nan.json). The shift was credited to
// vLLM until the catalogue was read against its source.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/marlin_fp4.hpp"
#include "recipes/recipe.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::fp8 {

inline constexpr std::string_view kMarlinSource =
    "vllm-project/vllm csrc/quantization/marlin/dequant.h (dequant<half2, kFE4M3fn>); "
    "quantization/utils/marlin_utils_fp8.py (scale fold)";

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary, int arity,
                          std::array<FormatId, kMaxArity> inputs, std::string_view source = kMarlinSource,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return family_card({.source = source,
                      .arity = arity,
                      .inputs = inputs,
                      .output = FormatId::fp16,
                      .intent = arity == 1 ? Intent::kValue : Intent::kProduct},
                     name, label, summary, role, control_of);
}

inline constexpr Pin kPinFlashinferE5m2{
    PinKind::kCode,
    "flashinfer-ai/flashinfer",
    "include/flashinfer/vec_dtypes.cuh",
    "fb28d7242b3506a2348265962041acc1fb56cca4",
    "fast_dequant_f8f16x4<__nv_fp8_e5m2, half>, vec_cast",
    "219-223, 385-414",
    "each E5M2 byte placed in the high byte of a zero FP16 word (__byte_perm): c << 8, sign and NaN payload kept; "
    "taken below sm_90 when the vector length is a multiple of 4 (sm_90 uses the hardware cvt)"};
inline constexpr Pin kPinVllmE5m2Now{PinKind::kCode,
                                     "vllm-project/vllm",
                                     "csrc/quantization/fp8/nvidia/quant_utils.cuh",
                                     "03476e5c1184648abcfd1573b630bcd81741a555",
                                     "scaled_vec_conversion<uint16_t, uint8_t>",
                                     "293-300",
                                     "the byte through __nv_cvt_fp8_to_halfraw(a, __NV_E5M2), widened to FP32, times "
                                     "the KV scale, rounded back once (scale 1.0 modelled: no change)"};
inline constexpr Pin kPinVllmE5m2Old{PinKind::kCode,
                                     "vllm-project/vllm",
                                     "csrc/quantization/fp8_e5m2_kvcache/quant_utils.cuh",
                                     "307256070571928f3adfefad7f1a4f317c70ff22",
                                     "vec_conversion<uint16_t, uint8_t>",
                                     "23-29",
                                     "the unscaled KV path: __nv_cvt_fp8_to_halfraw(a, __NV_E5M2).x"};

using marlin::e4m3_to_half_bits;
using marlin::kHalfTwoPow7;
using marlin::kHalfTwoPow8;

struct E4m3Flop {
  static constexpr RecipeCard kCard =
      pinned(card("fp8.e4m3_fp16.shift_flop", "e4m3-shift", "hmul((q & 0x8000) | ((q & 0x7F00) >> 1), 2^8), q = c << 8",
                  1, {FormatId::e4m3, FormatId::e4m3}),
             {&marlin::kPinFp8Half},
             "no generated FP16 kernel runs the FP8 flop: FP16 FP8-weight kernels skip it (the folded recipe); "
             "upstream code, unreached");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::hmul(e4m3_to_half_bits(c), kHalfTwoPow8);
  }
};

struct E4m3ScaledOrdinary {
  static constexpr RecipeCard kCard =
      card("fp8.e4m3_fp16.ordinary", "ordinary", "hmul(hmul(shift(c), 2^8), s): the flop, then the FP16 channel scale",
           2, {FormatId::e4m3, FormatId::fp16}, kMarlinSource, Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c, std::uint32_t s) {
    return Ar::hmul(Ar::hmul(e4m3_to_half_bits(c), kHalfTwoPow8), static_cast<std::uint16_t>(s));
  }
};

struct E4m3ScaledFolded {
  static constexpr RecipeCard kCard = pinned(
      card("fp8.e4m3_fp16.folded", "folded", "hmul(shift(c), hmul(s, 2^8)): skip-flop, 2^8 folded into the scale", 2,
           {FormatId::e4m3, FormatId::fp16}),
      {&marlin::kPinFp8Half, &marlin::kPinFp8FusedBias, &marlin::kPinGroupScale});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c, std::uint32_t s) {
    return Ar::hmul(e4m3_to_half_bits(c), Ar::hmul(static_cast<std::uint16_t>(s), kHalfTwoPow8));
  }
};

struct E5m2Shift {
  static constexpr RecipeCard kCard =
      pinned(card("fp8.e5m2_fp16.shift", "e5m2-shift", "fp16 bits c << 8 (E5M2 is the top byte of FP16)", 1,
                  {FormatId::e5m2, FormatId::e5m2},
                  "flashinfer-ai/flashinfer vec_dtypes.cuh fast_dequant_f8f16x4 (byte permute); was credited to vLLM"),
             {&kPinFlashinferE5m2},
             "vLLM does not ship this shift (see vllm.e5m2_fp16.kv_cache): they differ on the 6 NaN codes");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return (c & 0xFF) << 8;
  }
};

// vLLM's E5M2 KV-cache decode, scale 1.0: CUDA's conversion, NaN canonicalised.
struct E5m2VllmKvCache {
  static constexpr RecipeCard kCard =
      pinned(card("vllm.e5m2_fp16.kv_cache", "vllm-e5m2",
                  "__nv_cvt_fp8_to_halfraw(c, E5M2): c << 8, every NaN (0x7D..0x7F, 0xFD..0xFF) becomes 0x7FFF", 1,
                  {FormatId::e5m2, FormatId::e5m2}, "vllm-project/vllm csrc/quantization/fp8/nvidia/quant_utils.cuh"),
             {&kPinVllmE5m2Now, &kPinVllmE5m2Old, &upstream::kPinFp8ToHalf},
             "a KV scale other than 1.0 adds an FP32 multiply and one rounding, not modelled here");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    const std::uint32_t bits = (c & 0xFF) << 8;
    return (bits & 0x7FFF) > 0x7C00 ? 0x7FFFu : bits;
  }
};

// ---- negative controls ----

struct E4m3FoldOff {
  static constexpr RecipeCard kCard = card(
      "fp8.e4m3_fp16.control.flop_2pow7", "e4m3-2^7", "the flop with 2^7 (wrong fold constant): every value halved", 1,
      {FormatId::e4m3, FormatId::e4m3}, kMarlinSource, Role::kControl, "fp8.e4m3_fp16.shift_flop");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::hmul(e4m3_to_half_bits(c), kHalfTwoPow7);
  }
};

struct E4m3Signless {
  static constexpr RecipeCard kCard =
      card("fp8.e4m3_fp16.control.signless", "e4m3-signless", "the shift without the sign mask 0x8000", 1,
           {FormatId::e4m3, FormatId::e4m3}, kMarlinSource, Role::kControl, "fp8.e4m3_fp16.shift_flop");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::hmul(static_cast<std::uint16_t>(e4m3_to_half_bits(c) & 0x7FFF), kHalfTwoPow8);
  }
};

struct E4m3Flushing {
  static constexpr RecipeCard kCard =
      card("fp8.e4m3_fp16.control.ftz", "e4m3-ftz", "the flop with a flushing multiply: E4M3 subnormals vanish", 1,
           {FormatId::e4m3, FormatId::e4m3}, kMarlinSource, Role::kControl, "fp8.e4m3_fp16.shift_flop");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::hmul_ftz(e4m3_to_half_bits(c), kHalfTwoPow8);
  }
};

struct E5m2Truncated {
  static constexpr RecipeCard kCard =
      card("fp8.e5m2_fp16.control.e4m3_shift", "e5m2-as-e4m3", "E5M2 codes moved with the E4M3 shift (>> 1)", 1,
           {FormatId::e5m2, FormatId::e5m2}, kMarlinSource, Role::kControl, "fp8.e5m2_fp16.shift");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::hmul(e4m3_to_half_bits(c), kHalfTwoPow8);
  }
};

struct E5m2VllmSignedNan {
  static constexpr RecipeCard kCard =
      card("vllm.e5m2_fp16.control.signed_nan", "vllm-e5m2-signed-nan",
           "the vLLM decode keeping the NaN's sign (sign | 0x7FFF): wrong on 0xFD..0xFF", 1,
           {FormatId::e5m2, FormatId::e5m2}, kMarlinSource, Role::kControl, "vllm.e5m2_fp16.kv_cache");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    const std::uint32_t bits = (c & 0xFF) << 8;
    return (bits & 0x7FFF) > 0x7C00 ? ((bits & 0x8000) | 0x7FFFu) : bits;
  }
};

}  // namespace bitproof::fp8
