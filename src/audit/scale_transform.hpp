// What a UE8M0 scale byte becomes in the TurboMind SM70 MXFP4 decode, taken
// from the recipe's own header (src/recipes/turbomind_mxfp4.hpp), not re-typed:
//   adjusted = turbomind::adjust_scale(byte)         the FP16 exponent field, clamp(byte - 112, 0, 30)
//   folded   = adjusted + the exponent of kTwoPow14   the field the folded recipe multiplies by
// The audit's summary line reports the ranges of both.
#pragma once

#include <cstdint>

#include "format/format.hpp"
#include "recipes/turbomind_mxfp4.hpp"

namespace bitproof::audit {

// The E2M1 conversion factor the folded recipe moves into the scale: log2 of
// turbomind::kTwoPow14, read from its FP16 exponent field (14).
inline constexpr std::uint32_t kFoldShift =
    (turbomind::kTwoPow14 >> spec_of(FormatId::fp16).man_bits) - spec_of(FormatId::fp16).bias;
static_assert(kFoldShift == 14);

// UE8M0 byte 0xFF is NaN; the audit counts it apart.
inline constexpr std::uint32_t kE8m0Nan = 0xFF;

constexpr std::uint32_t adjusted_exponent(std::uint32_t byte) { return turbomind::adjust_scale(byte); }
constexpr std::uint32_t folded_exponent(std::uint32_t byte) { return adjusted_exponent(byte) + kFoldShift; }

static_assert(adjusted_exponent(114) == 2 && adjusted_exponent(126) == 14);  // the PR's audit line
static_assert(folded_exponent(114) == 16 && folded_exponent(126) == 28);

}  // namespace bitproof::audit
