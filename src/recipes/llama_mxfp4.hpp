// Recipe family: llama.cpp (ggml-org/llama.cpp) MXFP4 dequantization, FP32 out.
//
//   ggml/src/ggml-common.h   kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
//                            the E2M1 values doubled, so they are integers (int8)
//   ggml/src/ggml-impl.h     GGML_E8M0_TO_FP32_HALF(e) = 2^(e-128): bits 0x00200000 << e for
//                            e < 2 (FP32 subnormals 2^-128, 2^-127), (e - 1) << 23 otherwise;
//                            "NaNs are not handled here": e = 255 is 2^127
//   ggml/src/ggml-quants.c   dequantize_row_mxfp4: y = kvalues_mxfp4[q] * d, one FP32 multiply
//
//   doubled      fmul(float(kvalues[x]), e8m0_half(s))
//   naive        fmul(float(E2M1(x)), float bits s << 23): the undoubled table with the plain
//                bit-cast scale; s = 0 becomes +0 instead of the subnormal 2^-127.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::llama {

// FP32 bits of (float)kvalues_mxfp4[x]: the compiler's exact int8 -> float.
BP_HD constexpr std::uint32_t doubled_value_bits(std::uint32_t x) {
  constexpr std::uint32_t kTable[16] = {
      0x00000000u, 0x3F800000u, 0x40000000u, 0x40400000u,  // 0, 1, 2, 3
      0x40800000u, 0x40C00000u, 0x41000000u, 0x41400000u,  // 4, 6, 8, 12
      0x00000000u, 0xBF800000u, 0xC0000000u, 0xC0400000u,  // (int8 0 -> +0.0f), -1, -2, -3
      0xC0800000u, 0xC0C00000u, 0xC1000000u, 0xC1400000u,  // -4, -6, -8, -12
  };
  return kTable[x & 0xF];
}
// FP32 bits of the E2M1 values themselves (a plain float table, as a naive decoder has).
BP_HD constexpr std::uint32_t e2m1_value_bits(std::uint32_t x) {
  constexpr std::uint32_t kTable[16] = {
      0x00000000u, 0x3F000000u, 0x3F800000u, 0x3FC00000u,  // 0, 0.5, 1, 1.5
      0x40000000u, 0x40400000u, 0x40800000u, 0x40C00000u,  // 2, 3, 4, 6
      0x80000000u, 0xBF000000u, 0xBF800000u, 0xBFC00000u,  // -0, -0.5, -1, -1.5
      0xC0000000u, 0xC0400000u, 0xC0800000u, 0xC0C00000u,  // -2, -3, -4, -6
  };
  return kTable[x & 0xF];
}

BP_HD constexpr std::uint32_t e8m0_half_bits(std::uint32_t e) {
  e &= 0xFF;
  return e < 2 ? (0x00200000u << e) : ((e - 1) << 23);
}
static_assert(e8m0_half_bits(0) == 0x00200000u && e8m0_half_bits(127) == 0x3F000000u);  // 2^-128, 0.5

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = "ggml-org/llama.cpp ggml/src/ggml-common.h (kvalues_mxfp4), ggml-impl.h "
                              "(GGML_E8M0_TO_FP32_HALF), ggml-quants.c (dequantize_row_mxfp4)",
                    .arity = 2,
                    .inputs = {FormatId::e2m1, FormatId::ue8m0},
                    .output = FormatId::fp32,
                    .intent = Intent::kProduct,
                    .role = role,
                    .control_of = control_of};
}

struct Doubled {
  static constexpr RecipeCard kCard =
      card("llama.mxfp4_fp32.doubled", "doubled", "fmul(float(kvalues_mxfp4[x]), GGML_E8M0_TO_FP32_HALF(s))");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(doubled_value_bits(x), e8m0_half_bits(s));
  }
};

struct Naive {
  static constexpr RecipeCard kCard =
      card("llama.mxfp4_fp32.naive", "naive", "fmul(E2M1 float table[x], float bits s << 23)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(e2m1_value_bits(x), (s & 0xFF) << 23);
  }
};

// ---- negative controls ----

struct FullScale {
  static constexpr RecipeCard kCard =
      card("llama.mxfp4_fp32.control.full_scale", "doubled×full",
           "the doubled table with the full scale 2^(s-127): every value doubled", Role::kControl,
           "llama.mxfp4_fp32.doubled");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(doubled_value_bits(x), (s & 0xFF) << 23);
  }
};

struct SwappedNibble {
  static constexpr RecipeCard kCard =
      card("llama.mxfp4_fp32.control.nibble_swapped", "doubled-swapped",
           "the table indexed with the nibble's two halves swapped ((x >> 2 | x << 2) & 15)", Role::kControl,
           "llama.mxfp4_fp32.doubled");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(doubled_value_bits(((x >> 2) | (x << 2)) & 0xF), e8m0_half_bits(s));
  }
};

}  // namespace bitproof::llama
