// Recipe views of scale codes: what a kernel's load-time transform makes of
// each code the audit saw, computed with the recipe's own functions from the
// catalogue (src/recipes), not re-typed. Printed only when asked for
// (`audit --view NAME`); each step flags the codes whose result leaves the
// range the kernel can represent.
//
// turbomind (src/recipes/turbomind_mxfp4.hpp, TurboMind SM70 MXFP4 -> FP16):
//   adjusted = turbomind::adjust_scale(byte)        clamp(byte + 15 - 127, 0, 30), the FP16 exponent field;
//                                                    flagged where the clamp changed it (byte < 112 or > 142)
//   folded   = adjusted + log2(turbomind::kTwoPow14) the field the folded recipe builds;
//                                                    flagged past 30 (31 is FP16's Inf/NaN field, 32 runs into the sign)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "format/format.hpp"
#include "recipes/turbomind_mxfp4.hpp"

namespace bitproof::audit {

// The E2M1 conversion factor the folded recipe moves into the scale: log2 of
// turbomind::kTwoPow14, read from its FP16 exponent field (14).
inline constexpr std::uint32_t kFoldShift =
    (turbomind::kTwoPow14 >> spec_of(FormatId::fp16).man_bits) - spec_of(FormatId::fp16).bias;
static_assert(kFoldShift == 14);

// The largest finite FP16 exponent field (30).
inline constexpr std::uint32_t kFp16MaxField = spec_of(FormatId::fp16).exp_field_max() - 1;

// adjust_scale without its clamp: the field the load-time transform aims at.
constexpr std::int64_t unclamped_adjusted(std::uint32_t byte) {
  return std::int64_t{byte} + spec_of(FormatId::fp16).bias - spec_of(FormatId::ue8m0).bias;
}

constexpr std::uint32_t adjusted_exponent(std::uint32_t byte) { return turbomind::adjust_scale(byte); }
constexpr std::uint32_t folded_exponent(std::uint32_t byte) { return adjusted_exponent(byte) + kFoldShift; }
constexpr bool adjust_clamped(std::uint32_t byte) {
  return unclamped_adjusted(byte) != std::int64_t{adjusted_exponent(byte)};
}
constexpr bool folded_past_fp16(std::uint32_t byte) { return folded_exponent(byte) > kFp16MaxField; }

static_assert(adjusted_exponent(114) == 2 && adjusted_exponent(126) == 14);  // the PR's audit line
static_assert(folded_exponent(114) == 16 && folded_exponent(126) == 28);
static_assert(!adjust_clamped(112) && adjust_clamped(111) && !adjust_clamped(142) && adjust_clamped(143));
static_assert(!folded_past_fp16(128) && folded_past_fp16(129) && folded_exponent(130) == 32);

// One step of a view: a transform of a code and the codes whose result it flags.
struct ViewStep {
  std::string_view words;    // "adjusted half exponents"
  std::uint32_t (*transform)(std::uint32_t code);
  bool (*flagged)(std::uint32_t code);
  std::string_view flag;     // what a flagged code means
};

struct ScaleView {
  std::string_view name;     // --view NAME
  std::string_view recipes;  // the catalogue recipes whose transform this is
  FormatId format;           // the scale format the view reads
  std::array<ViewStep, 2> steps;
};

inline constexpr std::array kScaleViews = {
    ScaleView{"turbomind",
              "turbomind.mxfp4_fp16.ordinary, turbomind.mxfp4_fp16.folded (turbomind::adjust_scale)",
              FormatId::ue8m0,
              {ViewStep{"adjusted half exponents", adjusted_exponent, adjust_clamped,
                        "clamped by adjust_scale (byte < 112: the FP16 scale becomes 0; > 142: held at 2^15)"},
               ViewStep{"folded exponents", folded_exponent, folded_past_fp16,
                        "folded exponent past FP16's 30 (31: Inf/NaN, 32+: into the sign bit)"}}},
};

[[nodiscard]] constexpr const ScaleView* scale_view_by_name(std::string_view name) {
  for (const ScaleView& v : kScaleViews) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace bitproof::audit
