// The scale formats the audit reads: which catalogue format (src/format) a
// scale tensor's codes are in, given its safetensors dtype. One row each:
//
//   dtype     format  default  what stores it
//   F8_E8M0   ue8m0   yes      MXFP4/MXFP8 block scales (OCP MX v1.0)
//   U8        ue8m0   yes      the same bytes stored as U8 (named *scale*)
//   F8_E4M3   e4m3    yes      FP8 E4M3 scales, read as the dtype says
//   F8_E4M3   ue4m3   no       NVFP4 block scales (UE4M3: a byte with the sign bit set is no code)
//   F16       fp16    yes      GPTQ, AWQ, Marlin group scales
//   BF16      bf16    yes      BF16 group scales
//   F32       fp32    yes      per-tensor FP32 global scales (NVFP4 weight_scale_2), FP32 block scales
//
// A dtype is read in its default format unless --format names another row
// of the same dtype (--format ue4m3). Codes are the stored little-endian words
// of the dtype's width; what a code is (NaN, Inf, zero, subnormal, negative,
// no code of the format) is decoded from the format's row, never re-typed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "checkpoint/safetensors.hpp"
#include "format/format.hpp"

namespace bitproof::audit {

struct ScaleFormat {
  FormatId format;
  checkpoint::DType dtype;
  bool is_default;            // the reading of `dtype` unless --format names another row
  std::string_view used_by;   // what stores scales this way
  [[nodiscard]] constexpr std::string_view name() const { return spec_of(format).name; }
};

inline constexpr std::array kScaleFormats = {
    ScaleFormat{FormatId::ue8m0, checkpoint::DType::kF8E8M0, true, "MXFP4/MXFP8 block scales (OCP MX)"},
    ScaleFormat{FormatId::ue8m0, checkpoint::DType::kU8, true, "UE8M0 block scales stored as U8"},
    ScaleFormat{FormatId::e4m3, checkpoint::DType::kF8E4M3, true, "FP8 E4M3 scales"},
    ScaleFormat{FormatId::ue4m3, checkpoint::DType::kF8E4M3, false, "NVFP4 block scales (UE4M3)"},
    ScaleFormat{FormatId::fp16, checkpoint::DType::kF16, true, "GPTQ, AWQ, Marlin group scales"},
    ScaleFormat{FormatId::bf16, checkpoint::DType::kBF16, true, "BF16 group scales"},
    ScaleFormat{FormatId::fp32, checkpoint::DType::kF32, true, "FP32 global (per-tensor) or block scales"},
};

// Every dtype has exactly one default row, and a row's format fits in its dtype's width.
consteval bool scale_formats_are_consistent() {
  for (const ScaleFormat& r : kScaleFormats) {
    int defaults = 0;
    for (const ScaleFormat& o : kScaleFormats) defaults += o.dtype == r.dtype && o.is_default;
    if (defaults != 1) return false;
  }
  return true;
}
static_assert(scale_formats_are_consistent());

// The width of a scale dtype's codes in bits (8, 16, 32); 0 for a dtype that holds no scale format.
[[nodiscard]] constexpr int code_bits(checkpoint::DType dtype) {
  for (const ScaleFormat& r : kScaleFormats) {
    if (r.dtype != dtype) continue;
    switch (dtype) {
      case checkpoint::DType::kF16:
      case checkpoint::DType::kBF16: return 16;
      case checkpoint::DType::kF32: return 32;
      default: return 8;
    }
  }
  return 0;
}
static_assert(code_bits(checkpoint::DType::kF8E8M0) == 8 && code_bits(checkpoint::DType::kF16) == 16 && code_bits(checkpoint::DType::kI8) == 0);

[[nodiscard]] constexpr bool is_scale_dtype(checkpoint::DType dtype) { return code_bits(dtype) != 0; }

[[nodiscard]] constexpr std::optional<ScaleFormat> default_scale_format(checkpoint::DType dtype) {
  for (const ScaleFormat& r : kScaleFormats) {
    if (r.dtype == dtype && r.is_default) return r;
  }
  return std::nullopt;
}

// What a code of a format is, as the audit counts it. A code is exactly one
// of finite (normal), zero, subnormal, inf, nan or not_a_code; `negative`
// is counted besides (a negative finite, zero or subnormal code).
enum class CodeClass : std::uint8_t { kNormal, kZero, kSubnormal, kInf, kNaN, kNotACode };

struct ClassifiedCode {
  CodeClass kind;
  bool negative;
};

[[nodiscard]] constexpr ClassifiedCode classify_code(FormatId format, std::uint32_t code) {
  const FormatSpec& f = spec_of(format);
  if (f.bits < 32 && code >= f.code_count()) return {CodeClass::kNotACode, false};
  const Decoded d = decode(f, code);
  switch (d.kind) {
    case Kind::kNaN: return {CodeClass::kNaN, false};
    case Kind::kInf: return {CodeClass::kInf, d.negative};
    case Kind::kZero: return {CodeClass::kZero, d.negative};
    case Kind::kFinite: break;
  }
  const bool subnormal = f.has_subnormals() && ((code >> f.man_bits) & f.exp_field_max()) == 0;
  return {subnormal ? CodeClass::kSubnormal : CodeClass::kNormal, d.negative};
}

static_assert(classify_code(FormatId::ue8m0, 0xFF).kind == CodeClass::kNaN);
static_assert(classify_code(FormatId::ue8m0, 0x00).kind == CodeClass::kNormal);  // 2^-127: UE8M0 has no zero
static_assert(classify_code(FormatId::e4m3, 0x7F).kind == CodeClass::kNaN);
static_assert(classify_code(FormatId::ue4m3, 0x80).kind == CodeClass::kNotACode);
static_assert(classify_code(FormatId::fp16, 0x7C00).kind == CodeClass::kInf);
static_assert(classify_code(FormatId::fp16, 0x0001).kind == CodeClass::kSubnormal);
static_assert(classify_code(FormatId::fp16, 0x8000).kind == CodeClass::kZero && classify_code(FormatId::fp16, 0x8000).negative);
static_assert(classify_code(FormatId::fp32, 0x7FC00000).kind == CodeClass::kNaN);

}  // namespace bitproof::audit
