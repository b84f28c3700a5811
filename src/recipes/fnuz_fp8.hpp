// Recipe family: AMD FNUZ FP8 (E4M3FNUZ: bias 8, NaN = 0x80, no -0, no Inf) -> FP16, as
// Triton's AMD backend lowers tt.fp_to_fp (triton-lang/triton third_party/amd/lib/
// TritonAMDGPUToLLVM/ConvertFpCastOpToLLVM.cpp, Fp8E4M3FNUZ_to_Fp16).
//
//   hw      CDNA3 (MI300): v_cvt_pk_f32_fp8 (exact FNUZ -> FP32; NaN -> NaN), then
//           cvtFp32ToFp16RTNE. Modelled as the exact decode into FP32 bits followed by
//           float2half_rn: every E4M3FNUZ value is an FP16 number, so this is the exact
//           value for every code (NaN the canonical FP16 NaN).
//   sw      every other AMD GPU, Fp8E4M3fnuzToFp16OneValue as upstream main had it until
//           #10747 (8d749c16, 2026-07-11; read at its parent 7aab98ee): the
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
// bits (exponent field 0 and 1 to FP16 subnormals, else exponent - 1) and, until #10747, turns
// NaN into -0. E4M3FNUZ -> BF16: _HW (CDNA3) the exact FP32 truncated to BF16 (exact: 4
// significant bits); _SW (every target but CDNA3: CDNA4 when bd2fe16b was read) shifts the
// magnitude into BF16 position and multiplies by 2^119 in FP32 (the bias move; FNUZ subnormals
// are FP32 subnormals there, so a flushing FP32 multiply would lose them: modelled with
// subnormals kept, as the IEEE multiply does), NaN -> -0 until #10747.
// The -0 for 0x80 is upstream's own: main shipped it until #10747; the nan_guard recipes are
// what it ships since, and the findings fnuz-*-nan-guard keep the one-case difference.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::fnuz {

inline constexpr std::string_view kSource =
    "triton-lang/triton third_party/amd/lib/TritonAMDGPUToLLVM/ConvertFpCastOpToLLVM.cpp (Fp8E4M3FNUZ_to_Fp16: "
    "_HW on CDNA3, _SW / Fp8E4M3FNUZ_to_Fp16_oneValue elsewhere)";
// Pins. bd2fe16b is upstream Triton's "[AMD] Fix tt.fp_to_fp bf16 to fp32 conversion (#4238)",
// 2024-07-03, read in openeuler-mirror/triton-cpu (which carries upstream history); 7aab98ee
// ("[AMD][NFC] Remove incorrect fp32->fp8 conversion via f16 intermediate value (#10846)",
// 2026-07-10) and 8d749c16 ("[AMD] Fix fp8 e4m3fnuz/e5m2fnuz NaN (0x80) silently decoding to a
// finite value (#10747)", 2026-07-11) are upstream main just before and at the NaN fix, read in
// AlexAUT/triton (a fork carrying upstream history); 01d980fc is the newest stored
// triton-lang/triton version of the renamed file (search index only: no snapshot holds it).
inline constexpr std::string_view kMirror = "openeuler-mirror/triton-cpu";
inline constexpr std::string_view kBd2fe16b = "bd2fe16b8a8b38f0145c5c1c7c8a02a73b604470";
inline constexpr std::string_view kEwOld = "third_party/amd/lib/TritonAMDGPUToLLVM/ElementwiseOpToLLVM.cpp";
inline constexpr std::string_view kCastNew = "third_party/amd/lib/TritonAMDGPUToLLVM/ConvertFpCastOpToLLVM.cpp";
inline constexpr std::string_view k01d980fc = "01d980fcd2b594846681c45c1fc1675c2ddd6b4c";
inline constexpr std::string_view kForkWithMain = "AlexAUT/triton";
inline constexpr std::string_view k7aab98ee = "7aab98eee6048388731ef838cab72cd166834d94";  // before #10747
inline constexpr std::string_view k8d749c16 = "8d749c1660d399b71d8a115bd0aacfa7f955d65b";  // #10747
inline constexpr Pin kPinHwChain{PinKind::kCode,
                                 kMirror,
                                 kEwOld,
                                 kBd2fe16b,
                                 "Fp8E4M3FNUZ_to_Fp16_HW, convert_val_Fp8_to_Fp16, cvtFp8ToFp32, cvtFp32ToFp16",
                                 "96-143, 184-195, 624-628",
                                 "v_cvt_pk_f32_fp8 gives the exact FP32 of the code, v_cvt_f16_f32 rounds it to FP16 "
                                 "(nearest even); selected on CDNA3"};
inline constexpr Pin kPinSwOld{PinKind::kCode,
                               kMirror,
                               kEwOld,
                               kBd2fe16b,
                               "Fp8E4M3FNUZ_to_Fp16_oneValue",
                               "583-613",
                               "a = byte << 8; (|a| >> 1) + 0x0C00 when a & 0x7A00 is 0, else + 0x1C00; sign ORed: no "
                               "subnormal handling (selected on every non-CDNA3 target, 630-633)"};
inline constexpr Pin kPinE5m2Hw{PinKind::kCode,
                                kMirror,
                                kEwOld,
                                kBd2fe16b,
                                "Fp8E5M2FNUZ_to_Fp16_HW",
                                "387-396",
                                "v_cvt_pk_f32_bf8 then nearest-even FP16, on CDNA3"};
inline constexpr Pin kPinE5m2SwOld{PinKind::kCode,
                                   kMirror,
                                   kEwOld,
                                   kBd2fe16b,
                                   "Fp8E5M2FNUZ_to_Fp16_oneValue",
                                   "343-376",
                                   "exponent field 0: m >> 1; field 1: (m >> 1) + 0x0200; else exponent lowered by "
                                   "one; sign ORed: 0x80 (the NaN) becomes -0"};
inline constexpr Pin kPinBf16Hw{PinKind::kCode,
                                kMirror,
                                kEwOld,
                                kBd2fe16b,
                                "Fp8E4M3FNUZ_to_Bf16, convertFp32ToBf16",
                                "313-318, 542-550",
                                "the hardware cvt to FP32, then truncated to BF16 (>> 16, RTZ)"};

inline constexpr Pin kPinSwNow{PinKind::kCode,
                               "triton-lang/triton",
                               kCastNew,
                               k01d980fc,
                               "CvtFp8E4M3ToFp16::Fp8E4M3fnuzToFp16OneValue",
                               "949-999",
                               "byte in the high half, sign split off, >> 1, + 0x1C00; magnitudes 0..7 from a table; "
                               "sign ORed; then, as the last write (line 995), 0x80 (the NaN) becomes 0x7E00; selected "
                               "off CDNA3 (918-921)"};
inline constexpr Pin kPinE5m2SwNow{PinKind::kCode,
                                   "triton-lang/triton",
                                   kCastNew,
                                   k01d980fc,
                                   "CvtFp8E5M2ToFp16::Fp8E5M2fnuzToFp16OneValue",
                                   "1124-1162",
                                   "exponent lowered by one, fields 0 and 1 to subnormals by hand; line 1159 maps the "
                                   "NaN byte 0x80 to 0x7E00"};
inline constexpr Pin kPinBf16SwNow{PinKind::kCode,
                                   "triton-lang/triton",
                                   kCastNew,
                                   k01d980fc,
                                   "CvtFp8E4M3ToBf16::Fp8E4M3fnuzToBf16SW",
                                   "1261-1317",
                                   "magnitude bits moved to BF16 position, read as FP32, times 2^119 (1294-1295), sign "
                                   "ORed; lines 1313-1316 map the NaN byte 0x80 to 0x7FC0"};

inline constexpr Pin kPinSwPreFix{PinKind::kCode,
                                  kForkWithMain,
                                  kCastNew,
                                  k7aab98ee,
                                  "CvtFp8E4M3ToFp16::Fp8E4M3fnuzToFp16OneValue",
                                  "949-999, 917-921",
                                  "upstream main before #10747: byte in the high half, sign split off, >> 1, + 0x1C00; "
                                  "the NaN select 0x80 -> 0x7E00 (974) runs before the table for magnitudes 0..7 "
                                  "(989-992), which matches 0x80's magnitude 0 too, and the sign OR (995) makes it "
                                  "0x8000 = -0; selected off CDNA3 (917-921)"};
inline constexpr Pin kPinE5m2SwPreFix{PinKind::kCode,
                                      kForkWithMain,
                                      kCastNew,
                                      k7aab98ee,
                                      "CvtFp8E5M2ToFp16::Fp8E5M2fnuzToFp16OneValue",
                                      "1124-1158",
                                      "upstream main before #10747: exponent lowered by one, fields 0 and 1 to "
                                      "subnormals by hand, no case for 0x80: the NaN byte takes the zero-exponent "
                                      "branch and becomes sign | 0 = -0"};
inline constexpr Pin kPinBf16SwPreFix{PinKind::kCode,
                                      kForkWithMain,
                                      kCastNew,
                                      k7aab98ee,
                                      "CvtFp8E4M3ToBf16::Fp8E4M3fnuzToBf16SW",
                                      "1257-1307, 1228-1232",
                                      "upstream main before #10747: magnitude bits moved to BF16 position, read as "
                                      "FP32, times 2^119 (1290-1291), sign ORed (1300); no NaN guard: 0x80 becomes -0; "
                                      "selected off CDNA3 (1228-1232)"};
inline constexpr Pin kPinSwFix{PinKind::kCode,
                               kForkWithMain,
                               kCastNew,
                               k8d749c16,
                               "CvtFp8E4M3ToFp16::Fp8E4M3fnuzToFp16OneValue",
                               "949-998",
                               "#10747 moves the NaN select after the table and the sign OR (line 994): 0x80 -> "
                               "0x7E00, every other code unchanged"};
inline constexpr Pin kPinE5m2SwFix{PinKind::kCode,
                                   kForkWithMain,
                                   kCastNew,
                                   k8d749c16,
                                   "CvtFp8E5M2ToFp16::Fp8E5M2fnuzToFp16OneValue",
                                   "1123-1160",
                                   "#10747 adds the select 0x80 -> 0x7E00 before the final bitcast (line 1157)"};
inline constexpr Pin kPinBf16SwFix{PinKind::kCode,
                                   kForkWithMain,
                                   kCastNew,
                                   k8d749c16,
                                   "CvtFp8E4M3ToBf16::Fp8E4M3fnuzToBf16SW",
                                   "1259-1315",
                                   "#10747 adds a per-lane select 0x80 -> 0x7FC0 on the two outputs (1311-1314)"};

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
  return family_card({.source = source, .arity = 1, .inputs = {input}, .output = output, .intent = Intent::kValue},
                     name, label, summary, role, control_of);
}

struct Hw {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e4m3fnuz_fp16.hw", "fnuz-hw",
                  "float2half_rn(exact FP32 of the code): v_cvt_pk_f32_fp8, RTNE", kSource),
             {&kPinHwChain});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::float2half_rn(e4m3fnuz_float_bits(c));
  }
};

struct Sw {
  static constexpr RecipeCard kCard = pinned(
      card("triton_amd.e4m3fnuz_fp16.sw", "fnuz-sw",
           "sign | ((|byte << 8| >> 1) + 0x1C00), NaN select 0x7E00, then |c| < 8 from a table (NaN lands on -0)",
           kSource),
      {&kPinSwPreFix},
      "upstream main until #10747 (8d749c16, 2026-07-11): 0x80 (the NaN) gives -0 here; from 8d749c16 on (and in "
      "01d980fc) it gives 0x7E00 (triton_amd.e4m3fnuz_fp16.sw_nan_guard; finding fnuz-e4m3-fp16-nan-guard)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return sw_bits(c);
  }
};

struct SwOld {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e4m3fnuz_fp16.sw_old", "fnuz-sw-old",
                  "sign | ((|byte << 8| >> 1) + (byte & 0x7A ? 0x1C00 : 0x0C00)): no subnormal handling", kOldSource),
             {&kPinSwOld});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return sw_old_bits(c);
  }
};

// ---- E5M2FNUZ -> FP16 and E4M3FNUZ -> BF16 (same file) ----

struct E5m2Hw {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e5m2fnuz_fp16.hw", "e5m2fnuz-hw",
                  "float2half_rn(exact FP32 of the code): v_cvt_pk_f32_bf8, RTNE (Fp8E5M2FNUZ_to_Fp16_HW)", kSource,
                  Role::kRecipe, {}, FormatId::e5m2fnuz, FormatId::fp16),
             {&kPinE5m2Hw, &kPinHwChain});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return Ar::float2half_rn(e5m2fnuz_float_bits(c));
  }
};

struct E5m2Sw {
  static constexpr RecipeCard kCard = pinned(
      card("triton_amd.e5m2fnuz_fp16.sw", "e5m2fnuz-sw",
           "byte << 8 with the exponent lowered by 1 (field 1 to the subnormal 0x0200 + m/2, field 0 m/2); NaN -> -0",
           kSource, Role::kRecipe, {}, FormatId::e5m2fnuz, FormatId::fp16),
      {&kPinE5m2SwOld, &kPinE5m2SwPreFix},
      "upstream from bd2fe16b (and before) until #10747 (8d749c16, 2026-07-11): 0x80 (the NaN) gives -0; from "
      "8d749c16 on (and in 01d980fc) it gives 0x7E00 (triton_amd.e5m2fnuz_fp16.sw_nan_guard)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return e5m2fnuz_sw_bits(c);
  }
};

struct E4m3Bf16Hw {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e4m3fnuz_bf16.hw", "fnuz-bf16-hw",
                  "exact FP32 of the code, truncated to BF16 (v_cvt_pk_f32_fp8, convertFp32ToBf16 RTZ)", kSource,
                  Role::kRecipe, {}, FormatId::e4m3fnuz, FormatId::bf16),
             {&kPinBf16Hw, &kPinHwChain});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return e4m3fnuz_float_bits(c) >> 16;
  }
};

struct E4m3Bf16Sw {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e4m3fnuz_bf16.sw", "fnuz-bf16-sw",
                  "fmul(float bits (|byte << 8| >> 4) << 16, 2^119) >> 16 | sign: an FP32 multiply moves the bias "
                  "(Fp8E4M3fnuzToBf16SW, off CDNA3); NaN -> -0",
                  kSource, Role::kRecipe, {}, FormatId::e4m3fnuz, FormatId::bf16),
             {&kPinBf16SwPreFix},
             "upstream main until #10747 (8d749c16, 2026-07-11): 0x80 gives -0 here, 0x7FC0 from 8d749c16 on (and "
             "in 01d980fc); assumes the FP32 multiply keeps subnormals");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    const std::uint32_t a = (c & 0xFF) << 8;
    const std::uint32_t shifted = (a & 0x7FFF) >> 4;
    return (Ar::fmul(shifted << 16, kFloatTwoPow119) >> 16) | (a & 0x8000);
  }
};

// ---- upstream since #10747 (8d749c16; also 01d980fc): the NaN byte 0x80 guarded as the last write ----

struct SwNanGuard {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e4m3fnuz_fp16.sw_nan_guard", "fnuz-sw-nan",
                  "the software decode with #10747's NaN guard: 0x80 -> 0x7E00, every other code as sw", kSource),
             {&kPinSwFix, &kPinSwNow});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return (c & 0xFF) == 0x80 ? 0x7E00u : sw_bits(c);
  }
};

struct E5m2SwNanGuard {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e5m2fnuz_fp16.sw_nan_guard", "e5m2fnuz-sw-nan",
                  "the E5M2FNUZ software decode with #10747's NaN guard: 0x80 -> 0x7E00", kSource, Role::kRecipe, {},
                  FormatId::e5m2fnuz, FormatId::fp16),
             {&kPinE5m2SwFix, &kPinE5m2SwNow});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    return (c & 0xFF) == 0x80 ? 0x7E00u : e5m2fnuz_sw_bits(c);
  }
};

struct E4m3Bf16SwNanGuard {
  static constexpr RecipeCard kCard = pinned(card("triton_amd.e4m3fnuz_bf16.sw_nan_guard", "fnuz-bf16-sw-nan",
                                                  "the BF16 software path with #10747's NaN guard: 0x80 -> 0x7FC0",
                                                  kSource, Role::kRecipe, {}, FormatId::e4m3fnuz, FormatId::bf16),
                                             {&kPinBf16SwFix, &kPinBf16SwNow});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t c) {
    if ((c & 0xFF) == 0x80) return 0x7FC0u;
    return E4m3Bf16Sw::eval<Ar>(c);
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
