// Recipe family: GPTQ symmetric INT4 (vLLM scalar_types.uint4b8: a nibble q stores q - 8)
// -> FP16 by the magic number 0x6400, as vllm-project/vllm
// csrc/quantization/marlin/dequant.h (dequant<half2, kU4B8, false>, after
// FasterTransformer's interleaved_numeric_conversion.h) and the AWQ kernels ship it.
//
//   inputs   q: u4b8 nibble (value q - 8); s: FP16 group scale
//   output   FP16 bits; intent (q - 8) × s, rounded to FP16
//   magic    0x6400 | q is the FP16 1024 + q (exponent 25: quantum 1), exact
//   plain    hmul(int2half_rn(q - 8), s)                       the obvious conversion
//   lo       hmul(hsub(0x6400 | q, 0x6408), s)                 1024 + q - 1032 = q - 8
//   hi       hmul(hfma(0x6400 | q << 4, 0x2C00, 0xD480), s)    (1024 + 16q) / 16 - 72 = q - 8
//            (the high nibble of a byte, kept in place: 0x2C00 = 1/16, 0xD480 = -72)
//   fma_fold hfma(0x6400 | q, s, hmul(0xE408, s))              the "scale(bias) cached" form
//            the dequant.h comment describes and warns "may have accuracy issue":
//            -1032·s is rounded once on its own before the FMA.
//   channelwise  GPTQ per-channel (group_blocks == -1): the scale is not applied to the
//            element but in write_result's epilogue, to the FP32 dot product already rounded
//            to FP16: RN16(RN16(sum a (q - 8)) x s). For one element with activation 1 that
//            is hmul(half(q - 8), s), the grouped bits; for a real sum it rounds twice and
//            the unscaled sum can overflow FP16 (K = 8192 with activations near 1 gives
//            65536 = Inf) before a small scale would bring it back. An element proof can
//            show only the first; the rest is an operator claim.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/marlin_fp4.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::gptq {

inline constexpr Pin kPinU4b8{PinKind::kCode,
                              marlin::kVllm,
                              marlin::kDequantH,
                              marlin::kVllmMain,
                              "dequant<half2, kU4B8, false>",
                              "121-142",
                              "low nibble ORed into 0x6400 (1024 + q) minus 0x6408 (1032): q - 8 exactly; high nibble "
                              "in place, fma(1024 + 16q, 1/16, -72); then the group scale (scale<>, one __hmul2)"};
inline constexpr Pin kPinFmaComment{PinKind::kCode,
                                    marlin::kVllm,
                                    marlin::kDequantH,
                                    marlin::kVllmMain,
                                    "header comment (no-zero-point case)",
                                    "39-47",
                                    "the flop and the scale could be one FMA with a cached scale x bias; the comment "
                                    "warns it may have accuracy issues and no kernel uses it"};
inline constexpr Pin kPinChannelEpilogue{PinKind::kCode,
                                         marlin::kVllm,
                                         marlin::kTemplateH,
                                         marlin::kVllmMain,
                                         "write_result: write",
                                         "1654-1689",
                                         "group_blocks == -1, 4-bit: the FP32 sum rounded to FP16 (1659-1660), then "
                                         "__hmul2 by the channel scale (1672)"};

inline constexpr std::uint16_t kMagic = 0b0'11001'0000000000;       // +1024 (0x6400)
inline constexpr std::uint16_t kMagicPlus8 = 0b0'11001'0000001000;  // +1032 (0x6408)
inline constexpr std::uint16_t kMinus1032 = 0b1'11001'0000001000;   // -1032 (0xE408)
inline constexpr std::uint16_t kSixteenth = 0b0'01011'0000000000;   // +1/16 (0x2C00)
inline constexpr std::uint16_t kMinus72 = 0b1'10101'0010000000;     // -72   (0xD480)
static_assert(kMagic == 0x6400 && kMagicPlus8 == 0x6408 && kSixteenth == 0x2C00 && kMinus72 == 0xD480);

BP_HD constexpr std::uint16_t low_magic(std::uint32_t q) { return static_cast<std::uint16_t>(kMagic | (q & 0xF)); }
BP_HD constexpr std::uint16_t high_magic(std::uint32_t q) {
  return static_cast<std::uint16_t>(kMagic | ((q & 0xF) << 4));
}

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return family_card({.source = "vllm-project/vllm csrc/quantization/marlin/dequant.h (dequant<half2, kU4B8>, "
                                "0x6400 magic number; FasterTransformer interleaved_numeric_conversion.h)",
                      .arity = 2,
                      .inputs = {FormatId::u4b8, FormatId::fp16},
                      .output = FormatId::fp16,
                      .intent = Intent::kProduct},
                     name, label, summary, role, control_of);
}

struct Plain {
  static constexpr RecipeCard kCard =
      card("gptq.u4b8_fp16.plain", "plain", "hmul(int2half_rn(q - 8), s)", Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    const std::uint32_t value = (q & 0xF) - 8u;  // int32 two's complement bits
    return Ar::hmul(Ar::int2half_rn(value), static_cast<std::uint16_t>(s));
  }
};

struct MagicLow {
  static constexpr RecipeCard kCard =
      pinned(card("gptq.u4b8_fp16.magic_lo", "magic-lo", "hmul(hsub(0x6400 | q, 0x6408), s)"),
             {&kPinU4b8, &marlin::kPinGroupScale});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    return Ar::hmul(Ar::hsub(low_magic(q), kMagicPlus8), static_cast<std::uint16_t>(s));
  }
};

struct MagicHigh {
  static constexpr RecipeCard kCard =
      pinned(card("gptq.u4b8_fp16.magic_hi", "magic-hi", "hmul(hfma(0x6400 | q << 4, 1/16, -72), s)"),
             {&kPinU4b8, &marlin::kPinGroupScale});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    return Ar::hmul(Ar::hfma(high_magic(q), kSixteenth, kMinus72), static_cast<std::uint16_t>(s));
  }
};

struct FmaFolded {
  static constexpr RecipeCard kCard = pinned(
      card("gptq.u4b8_fp16.fma_folded", "fma-folded", "hfma(0x6400 | q, s, hmul(-1032, s)): bias and scale folded"),
      {&kPinFmaComment}, "upstream describes this form and does not ship it: a hypothetical kernel");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    const auto scale = static_cast<std::uint16_t>(s);
    return Ar::hfma(low_magic(q), scale, Ar::hmul(kMinus1032, scale));
  }
};

// ---- negative controls ----

struct Channelwise {
  static constexpr RecipeCard kCard =
      pinned(card("gptq.u4b8_fp16.channelwise", "channelwise",
                  "hmul(float2half_rn(float(q - 8)), s): per-channel GPTQ, the scale in the epilogue on one element"),
             {&kPinChannelEpilogue, &kPinU4b8},
             "one element with activation 1: the epilogue's scale applies to the FP16-rounded sum, so real sums round "
             "twice and can overflow before the scale; not an element claim");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    const std::uint16_t unscaled = Ar::hsub(low_magic(q), kMagicPlus8);     // the dequantized weight, no scale
    const std::uint16_t sum = Ar::float2half_rn(Ar::half2float(unscaled));  // the FP32 sum of one term, rounded
    return Ar::hmul(sum, static_cast<std::uint16_t>(s));
  }
};

struct MagicForgetsBias {
  static constexpr RecipeCard kCard =
      card("gptq.u4b8_fp16.control.sub_1024", "magic-1024",
           "subtracts 0x6400 (1024, the kU4 constant) where kU4B8 needs 0x6408: wrong fold constant", Role::kControl,
           "gptq.u4b8_fp16.magic_lo");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    return Ar::hmul(Ar::hsub(low_magic(q), kMagic), static_cast<std::uint16_t>(s));
  }
};

struct NibbleSwapped {
  static constexpr RecipeCard kCard =
      card("gptq.u4b8_fp16.control.nibble_swapped", "lo-as-hi",
           "the low nibble decoded with the high nibble's constants (1/16, -72): wrong nibble order", Role::kControl,
           "gptq.u4b8_fp16.magic_hi");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    return Ar::hmul(Ar::hfma(low_magic(q), kSixteenth, kMinus72), static_cast<std::uint16_t>(s));
  }
};

struct TruncatingScale {
  static constexpr RecipeCard kCard =
      card("gptq.u4b8_fp16.control.scale_rz", "magic-lo-rz", "the low path with a truncating scale multiply",
           Role::kControl, "gptq.u4b8_fp16.magic_lo");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t s) {
    return Ar::hmul_rz(Ar::hsub(low_magic(q), kMagicPlus8), static_cast<std::uint16_t>(s));
  }
};

}  // namespace bitproof::gptq
