// Recipe family: FP8 -> FP16 by moving bits, no conversion instruction.
//
// E4M3 (vllm-project/vllm csrc/quantization/gptq_marlin/dequant.h, dequant<half2, kFE4M3fn>;
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
// every code, Inf and NaN included (vLLM's fp8_e5m2 KV-cache path, csrc/quantization/fp8
// … vec_conversion<uint16_t, uint8_t>: `(uint16_t)a << 8`).
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/marlin_fp4.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::fp8 {

inline constexpr std::string_view kMarlinSource =
    "vllm-project/vllm csrc/quantization/gptq_marlin/dequant.h (dequant<half2, kFE4M3fn>); "
    "quantization/utils/marlin_utils_fp8.py (scale fold)";

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary, int arity,
                          std::array<FormatId, kMaxArity> inputs, std::string_view source = kMarlinSource,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = source,
                    .arity = arity,
                    .inputs = inputs,
                    .output = FormatId::fp16,
                    .intent = arity == 1 ? Intent::kValue : Intent::kProduct,
                    .role = role,
                    .control_of = control_of};
}

using marlin::e4m3_to_half_bits;
using marlin::kHalfTwoPow7;
using marlin::kHalfTwoPow8;

struct E4m3Flop {
  static constexpr RecipeCard kCard = card("fp8.e4m3_fp16.shift_flop", "e4m3-shift",
                                           "hmul((q & 0x8000) | ((q & 0x7F00) >> 1), 2^8), q = c << 8", 1,
                                           {FormatId::e4m3, FormatId::e4m3});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::hmul(e4m3_to_half_bits(c), kHalfTwoPow8);
  }
};

struct E4m3ScaledOrdinary {
  static constexpr RecipeCard kCard = card("fp8.e4m3_fp16.ordinary", "ordinary",
                                           "hmul(hmul(shift(c), 2^8), s): the flop, then the FP16 channel scale", 2,
                                           {FormatId::e4m3, FormatId::fp16});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c, std::uint32_t s) {
    return Ar::hmul(Ar::hmul(e4m3_to_half_bits(c), kHalfTwoPow8), static_cast<std::uint16_t>(s));
  }
};

struct E4m3ScaledFolded {
  static constexpr RecipeCard kCard = card("fp8.e4m3_fp16.folded", "folded",
                                           "hmul(shift(c), hmul(s, 2^8)): skip-flop, 2^8 folded into the scale", 2,
                                           {FormatId::e4m3, FormatId::fp16});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c, std::uint32_t s) {
    return Ar::hmul(e4m3_to_half_bits(c), Ar::hmul(static_cast<std::uint16_t>(s), kHalfTwoPow8));
  }
};

struct E5m2Shift {
  static constexpr RecipeCard kCard =
      card("fp8.e5m2_fp16.shift", "e5m2-shift", "fp16 bits c << 8 (E5M2 is the top byte of FP16)", 1,
           {FormatId::e5m2, FormatId::e5m2},
           "vllm-project/vllm csrc/quantization/fp8 (fp8_e5m2 KV cache: vec_conversion, (uint16_t)a << 8)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return (c & 0xFF) << 8;
  }
};

// ---- negative controls ----

struct E4m3FoldOff {
  static constexpr RecipeCard kCard =
      card("fp8.e4m3_fp16.control.flop_2pow7", "e4m3-2^7", "the flop with 2^7 (wrong fold constant): every value halved",
           1, {FormatId::e4m3, FormatId::e4m3}, kMarlinSource, Role::kControl, "fp8.e4m3_fp16.shift_flop");
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

}  // namespace bitproof::fp8
