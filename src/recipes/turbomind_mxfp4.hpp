// Recipe family: TurboMind SM70 MXFP4 -> FP16 decode, as the DeepSeek V4 kernel
// of 1CatAI/1Cat-vLLM ships it (PR #312 "Fold DeepSeek V4 MXFP4 decode exponents").
//
//   inputs   x: E2M1 code (4 bits S.EE.M); s: UE8M0 scale byte
//   output   FP16 bits
//   load     a   = clamp(s + 15 - 127, 0, 30)          half exponent field; 31 would be Inf
//   element  raw = ((x << 12) & 0x8000) | ((x << 9) & 0x0E00)
//                  the FP16 bits of E2M1(x) * 2^-14 (code 1 is an FP16 subnormal)
//   ordinary out = hmul(hmul(raw, 2^14), half_bits(a << 10))
//   folded   out = hmul(raw, half_bits((a + 14) << 10))       one multiply saved
//   intent   E2M1(x) * 2^(s - 127), rounded to FP16
//
// Modelled as the kernel does it, clamps and overflows included: a + 14 past 30
// makes Inf or wraps into the sign bit, and a = 0 makes the ordinary scale +0.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::turbomind {

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
BP_HD constexpr std::uint16_t half_from_exponent_field(std::uint32_t e) {
  return static_cast<std::uint16_t>(e << 10);
}

inline constexpr auto kCardBase = RecipeCard{
    .name = {},
    .label = {},
    .summary = {},
    .source = "1CatAI/1Cat-vLLM TurboMind SM70 MXFP4 decode (PR #312)",
    .arity = 2,
    .inputs = {FormatId::e2m1, FormatId::ue8m0},
    .output = FormatId::fp16,
    .intent = Intent::kProduct,
};

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  RecipeCard c = kCardBase;
  c.name = name;
  c.label = label;
  c.summary = summary;
  c.role = role;
  c.control_of = control_of;
  return c;
}

struct Ordinary {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.ordinary", "ordinary",
           "hmul(hmul(raw, 2^14), half_bits(a << 10)), a = clamp(s - 112, 0, 30)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const std::uint16_t elem = Ar::hmul(raw_bits(x), kTwoPow14);
    return Ar::hmul(elem, half_from_exponent_field(adjust_scale(s)));
  }
};

struct Folded {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.folded", "folded", "hmul(raw, half_bits((a + 14) << 10)), a = clamp(s - 112, 0, 30)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::hmul(raw_bits(x), half_from_exponent_field(adjust_scale(s) + 14));
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
           "ordinary with round-toward-zero multiplies: wrong wherever a product rounds (overflow)",
           Role::kControl, "turbomind.mxfp4_fp16.ordinary");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const std::uint16_t elem = Ar::hmul_rz(raw_bits(x), kTwoPow14);
    return Ar::hmul_rz(elem, half_from_exponent_field(adjust_scale(s)));
  }
};

struct FlushingFolded {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.control.ftz", "folded-ftz",
           "folded with a multiply that flushes subnormals: loses E2M1 code 1 (raw is subnormal)",
           Role::kControl, "turbomind.mxfp4_fp16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::hmul_ftz(raw_bits(x), half_from_exponent_field(adjust_scale(s) + 14));
  }
};

struct SignlessFolded {
  static constexpr RecipeCard kCard =
      card("turbomind.mxfp4_fp16.control.signless", "folded-signless",
           "folded with a decode that drops the sign bit", Role::kControl, "turbomind.mxfp4_fp16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const auto unsigned_raw = static_cast<std::uint16_t>(raw_bits(x) & 0x7FFF);
    return Ar::hmul(unsigned_raw, half_from_exponent_field(adjust_scale(s) + 14));
  }
};

}  // namespace bitproof::turbomind
