// Recipe family: AMD FNUZ FP8 (E4M3FNUZ: bias 8, NaN = 0x80, no -0, no Inf) -> FP16, as
// Triton's AMD backend lowers tt.fp_to_fp (triton-lang/triton third_party/amd/lib/
// TritonAMDGPUToLLVM/ConvertFpCastOpToLLVM.cpp, Fp8E4M3FNUZ_to_Fp16).
//
//   hw      CDNA3 (MI300): v_cvt_pk_f32_fp8 (exact FNUZ -> FP32; NaN -> NaN), then
//           cvtFp32ToFp16RTNE. Modelled as the exact decode into FP32 bits followed by
//           float2half_rn: every E4M3FNUZ value is an FP16 number, so this is the exact
//           value for every code (NaN the canonical FP16 NaN).
//   sw      every other AMD GPU, Fp8E4M3FNUZ_to_Fp16_oneValue (one stored version): the
//           byte in the high half of 16 bits, sign kept apart, magnitude >> 1, + (15 - 8) << 10
//           (0x1C00); then a select for NaN (0x80 -> 0x7E00) and an 8-entry table for
//           |code| 0..7 (zero and the subnormals: 0, 0x1400 .. 0x1F00); then sign OR'd in.
//           The table select runs after the NaN select and matches |0x80| = 0 too, so the
//           NaN code decodes to 0x0000 | sign = -0.
//   sw_old  an older software fallback of the same backend ("when handled by software,
//           this format does not handle denormals"; exponent test mask 0x7A00): magnitude
//           >> 1, then + 0x0C00 when (byte << 8) & 0x7A00 is zero, else + 0x1C00, sign OR'd.
//           Normal codes are exact; subnormals are not, and the 0x7A00 mask also catches the
//           middle mantissa bit: code 0 decodes as 2^-12 (0x0C00), code 2 (2^-9) as 1.25 * 2^-8 (0x1D00).
//
// Same file, E5M2FNUZ (bias 16) -> FP16: _HW is v_cvt_pk_f32_bf8 then RTNE (exact); _SW moves
// bits (exponent field 0 and 1 to FP16 subnormals, else exponent - 1) and turns NaN into -0.
// E4M3FNUZ -> BF16: _HW (CDNA3) the exact FP32 truncated to BF16 (exact: 4 significant bits);
// _SW (CDNA4) shifts the magnitude into BF16 position and multiplies by 2^119 in FP32 (the
// bias move; FNUZ subnormals are FP32 subnormals there, so a flushing FP32 multiply would lose
// them: modelled with subnormals kept, as the IEEE multiply does), NaN -> -0.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::fnuz {

inline constexpr std::string_view kSource =
    "triton-lang/triton third_party/amd/lib/TritonAMDGPUToLLVM/ConvertFpCastOpToLLVM.cpp (Fp8E4M3FNUZ_to_Fp16: "
    "_HW on CDNA3, _SW / Fp8E4M3FNUZ_to_Fp16_oneValue elsewhere)";
inline constexpr std::string_view kOldSource =
    "triton-lang/triton AMD backend, older Fp8E4M3FNUZ_to_Fp16_oneValue (exponent mask 0x7A00, + 0x0C00 / "
    "+ 0x1C00; 'does not handle denormals'), as stored in several forks";

// The exact FP32 bits of an E4M3FNUZ code (what v_cvt_pk_f32_fp8 returns): bit moves only.
BP_HD constexpr std::uint32_t e4m3fnuz_float_bits(std::uint32_t c) {
  c &= 0xFF;
  if (c == 0x80) return 0x7FC00000u;  // NaN
  const std::uint32_t sign = (c & 0x80) << 24;
  const std::uint32_t e = (c >> 3) & 0xF;
  std::uint32_t m = c & 7;
  if (e != 0) return sign | ((e - 8 + 127) << 23) | (m << 20);
  if (m == 0) return sign;  // +0 (0x00); 0x80 was NaN
  int exp = -7;             // value m/8 * 2^-7: normalise the 3-bit mantissa
  while ((m & 8) == 0) {
    m <<= 1;
    --exp;
  }
  return sign | (static_cast<std::uint32_t>(exp + 127) << 23) | ((m & 7) << 20);
}
static_assert(e4m3fnuz_float_bits(0x40) == 0x3F800000u);  // 0.1000.000 = 1.0
static_assert(e4m3fnuz_float_bits(0x01) == 0x3A800000u);  // 2^-10, the smallest subnormal
static_assert(e4m3fnuz_float_bits(0x7F) == 0x43700000u);  // 240, the largest

// The software path's table for |code| 0..7: 0 and m * 2^-10 (a switch: device code
// cannot index a host constexpr array).
BP_HD constexpr std::uint32_t subnormal_table(std::uint32_t m) {
  switch (m & 7) {
    case 1: return 0x1400;
    case 2: return 0x1800;
    case 3: return 0x1A00;
    case 4: return 0x1C00;
    case 5: return 0x1D00;
    case 6: return 0x1E00;
    case 7: return 0x1F00;
    default: return 0x0000;
  }
}

BP_HD constexpr std::uint16_t sw_bits(std::uint32_t c, std::uint32_t exponent_adjust = 0x1C00) {
  const std::uint32_t a = (c & 0xFF) << 8;
  const std::uint32_t sign = a & 0x8000;
  std::uint32_t out = (((a & 0x7FFF) >> 1) + exponent_adjust) & 0xFFFF;
  if ((c & 0xFF) == 0x80) out = 0x7E00;
  const std::uint32_t magnitude = c & 0x7F;
  if (magnitude < 8) out = subnormal_table(magnitude);
  return static_cast<std::uint16_t>(out | sign);
}
static_assert(sw_bits(0x40) == 0x3C00 && sw_bits(0xC0) == 0xBC00 && sw_bits(0x03) == 0x1A00);
static_assert(sw_bits(0x80) == 0x8000);  // NaN -> -0: the table select overrides the NaN select

BP_HD constexpr std::uint16_t sw_old_bits(std::uint32_t c) {
  const std::uint32_t a = (c & 0xFF) << 8;
  const std::uint32_t sign = a & 0x8000;
  const std::uint32_t shifted = (a & 0x7FFF) >> 1;
  const std::uint32_t out = (a & 0x7A00) == 0 ? shifted + 0x0C00 : shifted + 0x1C00;
  return static_cast<std::uint16_t>((out & 0xFFFF) | sign);
}

// The exact FP32 bits of an E5M2FNUZ code (bias 16, NaN = 0x80): bit moves only.
BP_HD constexpr std::uint32_t e5m2fnuz_float_bits(std::uint32_t c) {
  c &= 0xFF;
  if (c == 0x80) return 0x7FC00000u;
  const std::uint32_t sign = (c & 0x80) << 24;
  const std::uint32_t e = (c >> 2) & 0x1F;
  std::uint32_t m = c & 3;
  if (e != 0) return sign | ((e - 16 + 127) << 23) | (m << 21);
  if (m == 0) return sign;
  int exp = -15;  // value m/4 * 2^-15
  while ((m & 4) == 0) {
    m <<= 1;
    --exp;
  }
  return sign | (static_cast<std::uint32_t>(exp + 127) << 23) | ((m & 3) << 21);
}
static_assert(e5m2fnuz_float_bits(0x40) == 0x3F800000u);  // 0.10000.00 = 1.0
static_assert(e5m2fnuz_float_bits(0x01) == 0x37000000u);  // 2^-17

// Fp8E5M2FNUZ_to_Fp16_oneValue: exponent field 0 -> mantissa >> 1 (an FP16 subnormal);
// field 1 -> the FP16 subnormal 2^-15 (1 + m/4) = (m >> 1) + 0x0200; else exponent - 1.
BP_HD constexpr std::uint16_t e5m2fnuz_sw_bits(std::uint32_t c, std::uint32_t exponent_step = 0x0400) {
  const std::uint32_t a = (c & 0xFF) << 8;
  const std::uint32_t e = a & 0x7C00, m = a & 0x0300, sign = a & 0x8000;
  if (e == 0) return static_cast<std::uint16_t>(sign | (m >> 1));
  if (e == 0x0400) return static_cast<std::uint16_t>(sign | ((m >> 1) + 0x0200));
  return static_cast<std::uint16_t>(sign | m | (e - exponent_step));
}
static_assert(e5m2fnuz_sw_bits(0x40) == 0x3C00 && e5m2fnuz_sw_bits(0x04) == 0x0200 && e5m2fnuz_sw_bits(0x80) == 0x8000);

inline constexpr std::uint32_t kFloatTwoPow119 = 0x7B000000u;  // 2^(127 - 8)
inline constexpr std::uint32_t kFloatTwoPow120 = 0x7B800000u;  // 2^(127 - 7): OCP E4M3's bias

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          std::string_view source, Role role = Role::kRecipe, std::string_view control_of = {},
                          FormatId input = FormatId::e4m3fnuz, FormatId output = FormatId::fp16) {
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = source,
                    .arity = 1,
                    .inputs = {input},
                    .output = output,
                    .intent = Intent::kValue,
                    .role = role,
                    .control_of = control_of};
}

struct Hw {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_fp16.hw", "fnuz-hw", "float2half_rn(exact FP32 of the code): v_cvt_pk_f32_fp8, RTNE",
           kSource);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::float2half_rn(e4m3fnuz_float_bits(c));
  }
};

struct Sw {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_fp16.sw", "fnuz-sw",
           "sign | ((|byte << 8| >> 1) + 0x1C00), NaN select 0x7E00, then |c| < 8 from a table (NaN lands on -0)",
           kSource);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return sw_bits(c);
  }
};

struct SwOld {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_fp16.sw_old", "fnuz-sw-old",
           "sign | ((|byte << 8| >> 1) + (byte & 0x7A ? 0x1C00 : 0x0C00)): no subnormal handling", kOldSource);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return sw_old_bits(c);
  }
};

// ---- E5M2FNUZ -> FP16 and E4M3FNUZ -> BF16 (same file) ----

struct E5m2Hw {
  static constexpr RecipeCard kCard =
      card("triton_amd.e5m2fnuz_fp16.hw", "e5m2fnuz-hw",
           "float2half_rn(exact FP32 of the code): v_cvt_pk_f32_bf8, RTNE (Fp8E5M2FNUZ_to_Fp16_HW)", kSource,
           Role::kRecipe, {}, FormatId::e5m2fnuz, FormatId::fp16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::float2half_rn(e5m2fnuz_float_bits(c));
  }
};

struct E5m2Sw {
  static constexpr RecipeCard kCard =
      card("triton_amd.e5m2fnuz_fp16.sw", "e5m2fnuz-sw",
           "byte << 8 with the exponent lowered by 1 (field 1 to the subnormal 0x0200 + m/2, field 0 m/2); NaN -> -0",
           kSource, Role::kRecipe, {}, FormatId::e5m2fnuz, FormatId::fp16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return e5m2fnuz_sw_bits(c);
  }
};

struct E4m3Bf16Hw {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_bf16.hw", "fnuz-bf16-hw",
           "exact FP32 of the code, truncated to BF16 (v_cvt_pk_f32_fp8, convertFp32ToBf16 RTZ)", kSource,
           Role::kRecipe, {}, FormatId::e4m3fnuz, FormatId::bf16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return e4m3fnuz_float_bits(c) >> 16;
  }
};

struct E4m3Bf16Sw {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_bf16.sw", "fnuz-bf16-sw",
           "fmul(float bits (|byte << 8| >> 4) << 16, 2^119) >> 16 | sign: an FP32 multiply moves the bias "
           "(Fp8E4M3FNUZ_to_Bf16_SW, CDNA4); NaN -> -0",
           kSource, Role::kRecipe, {}, FormatId::e4m3fnuz, FormatId::bf16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    const std::uint32_t a = (c & 0xFF) << 8;
    const std::uint32_t shifted = (a & 0x7FFF) >> 4;
    return (Ar::fmul(shifted << 16, kFloatTwoPow119) >> 16) | (a & 0x8000);
  }
};

// ---- negative controls ----

struct SwOcpBias {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_fp16.control.ocp_bias", "fnuz-sw-bias7",
           "the software path with the OCP E4M3 exponent offset (15 - 7) << 10: wrong fold constant, every normal "
           "value doubled",
           kSource, Role::kControl, "triton_amd.e4m3fnuz_fp16.sw");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return sw_bits(c, 0x2000);
  }
};

struct HwSignless {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_fp16.control.signless", "fnuz-hw-signless", "the hardware path with the sign bit lost",
           kSource, Role::kControl, "triton_amd.e4m3fnuz_fp16.hw");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::float2half_rn(e4m3fnuz_float_bits(c) & 0x7FFFFFFFu);
  }
};

struct HwFlushing {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_fp16.control.flush", "fnuz-hw-ftz",
           "the hardware path with subnormal codes flushed to zero (a denormal-flushing conversion)", kSource,
           Role::kControl, "triton_amd.e4m3fnuz_fp16.hw");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    if ((c & 0x78) == 0 && (c & 0xFF) != 0x80) return (c & 0x80) << 8;
    return Ar::float2half_rn(e4m3fnuz_float_bits(c));
  }
};

struct E5m2SwOcpShift {
  static constexpr RecipeCard kCard =
      card("triton_amd.e5m2fnuz_fp16.control.ocp_shift", "e5m2fnuz-as-e5m2",
           "E5M2FNUZ bytes moved as OCP E5M2 (byte << 8, exponent not lowered): every value doubled", kSource,
           Role::kControl, "triton_amd.e5m2fnuz_fp16.sw", FormatId::e5m2fnuz, FormatId::fp16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return (c & 0xFF) << 8;
  }
};

struct E4m3Bf16SwOcpBias {
  static constexpr RecipeCard kCard =
      card("triton_amd.e4m3fnuz_bf16.control.bias_2pow120", "fnuz-bf16-2^120",
           "the BF16 software path with OCP E4M3's 2^120: wrong fold constant, every value doubled", kSource,
           Role::kControl, "triton_amd.e4m3fnuz_bf16.sw", FormatId::e4m3fnuz, FormatId::bf16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    const std::uint32_t a = (c & 0xFF) << 8;
    const std::uint32_t shifted = (a & 0x7FFF) >> 4;
    return (Ar::fmul(shifted << 16, kFloatTwoPow120) >> 16) | (a & 0x8000);
  }
};

}  // namespace bitproof::fnuz
