// Recipe family: triton_kernels' MXFP4 upcast and Triton's AMD lookup-table decode.
//
// NVIDIA, pre-sm_100 path (triton-lang/triton python/triton_kernels/triton_kernels/
// numerics_details/mxfp_details/_upcast_from_mxfp.py, commit 01757dc2: upcast_ue8m0_scale
// with handle_nan=False, _upcast_mxfp4_values, then _upcast_from_mxfp / upcast_mxfp4_tile):
//   element  bit field: em = x & 7; bits = em << (m - 1) | sign; em & 6 adds (bias - 1) << m;
//            em == 1 (0.5, subnormal in E2M1) is patched to the constant 0.5 (0x3800 / 0x3F00).
//            Exact for every code, in FP16 and in BF16.
//   scale    FP16: float bits s << 23, converted to FP16 round-to-nearest-even (s = 0 is +0.0f,
//            2^-25 ties to 0, 2^16 and up overflow to Inf); BF16: bits max(s << 7, 0x0040), so
//            s = 0 is the BF16 subnormal 2^-127 and s = 255 is +Inf.
//   product  dst_tensor * dst_scale in the destination dtype: one FP16 (BF16) multiply, RNE.
//            The file does not multiply in FP32: the scale_fma card used to say it did.
//   clamp    tl.clamp(·, -max_fin, max_fin): an overflow to ±Inf saturates to ±65504
//            (±0x7F7F in BF16). A NaN product (element ±0 times an Inf FP16 scale, s 143..254)
//            depends on the target. Below sm_90 Triton lowers the clamp to maxnum/minnum
//            (propagate_nan NONE): NaN becomes -max_fin (triton.mxfp4_fp16.upcast). On sm_90
//            and newer it matches the clip pattern and emits min.xorsign.abs.f16 against
//            +max_fin: min(|v|, max) with v's own sign, so the hardware's 0 x Inf NaN (0x7FFF,
//            positive) becomes +65504 (triton.mxfp4_fp16.upcast_sm90; measured on an H200:
//            exactly the 224 pairs s 143..254 x x in {0, 8} differ). BF16 is clamped in FP32
//            (tl.clamp promotes BF16) and never sees a NaN product below s = 255.
//   NaN      tl.where(scale == 0xFF, nan, ·): s = 255 gives the NaN constant (FP16 0x7E00,
//            BF16 0x7FC0: LLVM's default quiet NaN), whatever the element.
//
// AMD path (triton-lang/triton third_party/amd/lib/TritonAMDGPUToLLVM/UpcastMXFPToLLVM.cpp,
// one stored version: upcast8xMxfp4, mxfpScaleFp16, mxfpScaleBf16ViaF32):
//   element  a lookup table through llvm.amdgcn.perm (v_perm_b32, the byte permute that
//            picks 4 of 8 bytes): the FP16 high byte of each magnitude is byte (x & 7) of
//            0x46444240'3E3C3800 (the low byte is 0 for every E2M1 value), OR the sign
//            (x & 8) << 4 into it; BF16 needs both bytes: 0x40404040'3F3F3F00 and
//            0xC0804000'C0800000. The "CUTLASS-style LUT decode": the same byte-permute
//            table shape prmt gives on NVIDIA.
//   FP16     scale = cvt RTNE(float bits s << 23); one FP16 multiply; s = 255 -> 0x7C01; no clamp.
//   BF16     element to FP32 (bits << 16), scale float bits s << 23 (s = 0 is +0.0f: no floor),
//            one FP32 multiply, truncated to BF16 (bits >> 16); s = 255 -> 0x7FFF.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::triton {

inline constexpr std::string_view kNvidiaSource =
    "triton-lang/triton python/triton_kernels/triton_kernels/numerics_details/mxfp_details/_upcast_from_mxfp.py "
    "(upcast_ue8m0_scale, _upcast_mxfp4_values pre-sm_100 path, _upcast_from_mxfp), commit 01757dc2";
inline constexpr std::string_view kAmdSource =
    "triton-lang/triton third_party/amd/lib/TritonAMDGPUToLLVM/UpcastMXFPToLLVM.cpp (upcast8xMxfp4 "
    "llvm.amdgcn.perm lookup table, mxfpScaleFp16, mxfpScaleBf16ViaF32)";

inline constexpr std::string_view kUpcastPy =
    "python/triton_kernels/triton_kernels/numerics_details/mxfp_details/_upcast_from_mxfp.py";
inline constexpr std::string_view kTritonUpcastRev = "01757dc263bbb944c504c2b0c62a45d44eeee4a0";
inline constexpr Pin kPinUpcastScale{PinKind::kCode,
                                     "triton-lang/triton",
                                     kUpcastPy,
                                     kTritonUpcastRev,
                                     "upcast_ue8m0_scale",
                                     "8-32",
                                     "pre-sm_100: BF16 bits max(s << 7, 0x0040); FP16: FP32 bits s << 23 converted "
                                     "with .to() (nearest even); handle_nan=False in both callers"};
inline constexpr Pin kPinUpcastValues{PinKind::kCode,
                                      "triton-lang/triton",
                                      kUpcastPy,
                                      kTritonUpcastRev,
                                      "_upcast_mxfp4_values",
                                      "67-79",
                                      "pre-sm_100 bit field: magnitude bits shifted into the mantissa, bias - 1 added "
                                      "when em & 6, 0.5 patched to a constant, sign to bit 15"};
inline constexpr Pin kPinUpcastTile{PinKind::kCode,
                                    "triton-lang/triton",
                                    kUpcastPy,
                                    kTritonUpcastRev,
                                    "upcast_mxfp4_tile",
                                    "83-107",
                                    "one multiply in the destination dtype, tl.clamp to +-max_fin (line 105), the "
                                    "NaN constant where the scale byte is 0xFF (106)"};
inline constexpr Pin kPinClampGeneric{PinKind::kCode,
                                      "triton-lang/triton",
                                      "lib/Conversion/TritonGPUToLLVM/ElementwiseOpToLLVM.cpp",
                                      "335422ec43d9a8676cc9482c1f053cb279d1e9f1",
                                      "ClampFOpConversion",
                                      "699-745",
                                      "propagate_nan NONE: maxnum(x, min) then minnum(., max): a NaN x becomes min "
                                      "(-max_fin); the lowering below sm_90"};
inline constexpr Pin kPinClampSm90{PinKind::kCode,
                                   "triton-lang/triton",
                                   "third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/ElementwiseOpToLLVM.cpp",
                                   "d5abeceaf8f43e0e74f2bf218a38f5972892f9c1",
                                   "ClampFOpConversion",
                                   "759-863",
                                   "computeCapability >= 90 and bounds -c, c: min.xorsign.abs(x, c), i.e. "
                                   "min(|x|, c) with x's sign: a positive NaN becomes +c"};
inline constexpr Pin kPinAmdUpcast{PinKind::kCode,
                                   "triton-lang/triton",
                                   "third_party/amd/lib/TritonAMDGPUToLLVM/UpcastMXFPToLLVM.cpp",
                                   "029b091304822f6a728c425e0d64f4b46a4d3c01",
                                   "upcast8xMxfp4",
                                   "25-161",
                                   "magnitude bits as llvm.amdgcn.perm selectors into two table words (FP16 high "
                                   "bytes 0x46444240:0x3e3c3800; BF16 also a low-byte table), sign ORed in"};
inline constexpr Pin kPinAmdScaleFp16{PinKind::kCode,
                                      "triton-lang/triton",
                                      "third_party/amd/lib/TritonAMDGPUToLLVM/UpcastMXFPToLLVM.cpp",
                                      "029b091304822f6a728c425e0d64f4b46a4d3c01",
                                      "mxfpScaleFp16",
                                      "194-208",
                                      "scale RTNE(FP32 bits s << 23) to FP16, one FP16 multiply; s = 0xFF selects "
                                      "0x7C01 unless fastMath"};
inline constexpr Pin kPinAmdScaleBf16{PinKind::kCode,
                                      "triton-lang/triton",
                                      "third_party/amd/lib/TritonAMDGPUToLLVM/UpcastMXFPToLLVM.cpp",
                                      "029b091304822f6a728c425e0d64f4b46a4d3c01",
                                      "mxfpScaleBf16ViaF32",
                                      "216-233",
                                      "element to FP32, times FP32 bits s << 23, truncated (>> 16); s = 0xFF selects "
                                      "0x7FFF unless fastMath"};

inline constexpr std::uint16_t kHalfMax = 0x7BFF;       // 65504
inline constexpr std::uint16_t kBf16Max = 0x7F7F;       // 3.3895313892515355e38
inline constexpr std::uint16_t kHalfNanConst = 0x7E00;  // LLVM's quiet NaN, FP16
inline constexpr std::uint16_t kBf16NanConst = 0x7FC0;  // LLVM's quiet NaN, BF16
inline constexpr std::uint16_t kAmdHalfNan = 0x7C01;
inline constexpr std::uint16_t kAmdBf16Nan = 0x7FFF;

// _upcast_mxfp4_values without cvt.e2m1x2: the bit-field decode.
template <int kMantissaBits, int kBias, std::uint32_t kHalfCode>
BP_HD constexpr std::uint16_t bitfield_decode(std::uint32_t x) {
  const std::uint32_t em = x & 7;
  std::uint32_t bits = (em << (kMantissaBits - 1)) | ((x & 8) << 12);
  if ((em & 6) != 0) bits += static_cast<std::uint32_t>(kBias - 1) << kMantissaBits;
  if (em == 1) bits = kHalfCode | (bits & 0x8000);
  return static_cast<std::uint16_t>(bits);
}
BP_HD constexpr std::uint16_t e2m1_fp16(std::uint32_t x) { return bitfield_decode<10, 15, 0x3800>(x); }
BP_HD constexpr std::uint16_t e2m1_bf16(std::uint32_t x) { return bitfield_decode<7, 127, 0x3F00>(x); }
static_assert(e2m1_fp16(0b0'11'1) == 0x4600 && e2m1_fp16(0b1'00'1) == 0xB800 && e2m1_fp16(0b0'01'0) == 0x3C00);
static_assert(e2m1_bf16(0b0'11'1) == 0x40C0 && e2m1_bf16(0b1'00'1) == 0xBF00 && e2m1_bf16(0b0'01'0) == 0x3F80);

// Byte `sel` (0..7) of the 8-byte table hi:lo, as v_perm_b32 / prmt pick it for
// selectors 0..7. Selector values 8..15 (bit 3 set) make prmt replicate the sign bit
// of byte (sel & 7) instead: every table byte here is below 0x80, so that gives 0x00.
BP_HD constexpr std::uint32_t permute_byte(std::uint32_t hi, std::uint32_t lo, std::uint32_t sel) {
  const std::uint32_t byte = (((sel & 4) != 0 ? hi : lo) >> (8 * (sel & 3))) & 0xFF;
  if ((sel & 8) != 0) return (byte & 0x80) != 0 ? 0xFF : 0x00;
  return byte;
}
inline constexpr std::uint32_t kHalfHiLo = 0x3E3C3800u;  // FP16 high bytes of 0, 0.5, 1, 1.5
inline constexpr std::uint32_t kHalfHiHi = 0x46444240u;  // FP16 high bytes of 2, 3, 4, 6
inline constexpr std::uint32_t kBf16HiLo = 0x3F3F3F00u;  // BF16 high bytes of 0, 0.5, 1, 1.5
inline constexpr std::uint32_t kBf16HiHi = 0x40404040u;  // BF16 high bytes of 2, 3, 4, 6
inline constexpr std::uint32_t kBf16LoLo = 0xC0800000u;  // BF16 low bytes of 0, 0.5, 1, 1.5
inline constexpr std::uint32_t kBf16LoHi = 0xC0804000u;  // BF16 low bytes of 2, 3, 4, 6

BP_HD constexpr std::uint16_t lut_fp16(std::uint32_t x) {
  const std::uint32_t high = permute_byte(kHalfHiHi, kHalfHiLo, x & 7) | ((x & 8) << 4);
  return static_cast<std::uint16_t>(high << 8);
}
BP_HD constexpr std::uint16_t lut_bf16(std::uint32_t x) {
  const std::uint32_t high = permute_byte(kBf16HiHi, kBf16HiLo, x & 7) | ((x & 8) << 4);
  return static_cast<std::uint16_t>((high << 8) | permute_byte(kBf16LoHi, kBf16LoLo, x & 7));
}
static_assert(lut_fp16(0b0'11'1) == 0x4600 && lut_fp16(0b1'00'1) == 0xB800);
static_assert(lut_bf16(0b0'11'1) == 0x40C0 && lut_bf16(0b1'00'1) == 0xBF00 && lut_bf16(0b0'01'1) == 0x3FC0);

BP_HD constexpr bool half_is_nan(std::uint32_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }
BP_HD constexpr bool half_is_inf(std::uint32_t h) { return (h & 0x7FFF) == 0x7C00; }
BP_HD constexpr bool bf16_is_nan(std::uint32_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0; }
BP_HD constexpr bool bf16_is_inf(std::uint32_t b) { return (b & 0x7FFF) == 0x7F80; }

// tl.clamp(v, -max, max) lowered as minnum(maxnum(v, -max), max): Inf saturates, NaN
// becomes -max (maxnum returns the non-NaN operand).
BP_HD constexpr std::uint32_t clamp_half(std::uint32_t h) {
  if (half_is_nan(h)) return 0x8000u | kHalfMax;
  if (half_is_inf(h)) return (h & 0x8000u) | kHalfMax;
  return h;
}
// The sm_90+ lowering: min.xorsign.abs.f16(h, +65504) = min(|h|, 65504) with h's sign bit;
// PTX min returns the non-NaN operand, so a NaN keeps only its sign.
BP_HD constexpr std::uint32_t clamp_half_xorsign(std::uint32_t h) {
  if (half_is_nan(h) || half_is_inf(h)) return (h & 0x8000u) | kHalfMax;
  return h;
}
BP_HD constexpr std::uint32_t clamp_bf16(std::uint32_t b) {
  if (bf16_is_nan(b)) return 0x8000u | kBf16Max;
  if (bf16_is_inf(b)) return (b & 0x8000u) | kBf16Max;
  return b;
}

BP_HD constexpr std::uint32_t e8m0_float_bits(std::uint32_t s) { return (s & 0xFF) << 23; }
// upcast_ue8m0_scale for BF16: the floor 0x0040 keeps 2^-127 (a BF16 subnormal).
BP_HD constexpr std::uint16_t e8m0_bf16_floored(std::uint32_t s) {
  const std::uint32_t bits = (s & 0xFF) << 7;
  return static_cast<std::uint16_t>(bits < 0x0040 ? 0x0040 : bits);
}

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary, int arity,
                          FormatId output, std::string_view source, Role role = Role::kRecipe,
                          std::string_view control_of = {}) {
  return family_card({.source = source,
                      .arity = arity,
                      .inputs = arity == 1 ? std::array<FormatId, kMaxArity>{FormatId::e2m1, FormatId::e2m1}
                                           : std::array<FormatId, kMaxArity>{FormatId::e2m1, FormatId::ue8m0},
                      .output = output,
                      .intent = arity == 1 ? Intent::kValue : Intent::kProduct},
                     name, label, summary, role, control_of);
}

// ---- element decodes: bit field (NVIDIA path) and lookup table (AMD path) ----

struct BitfieldFp16 {
  static constexpr RecipeCard kCard =
      pinned(card("triton.e2m1_fp16.bitfield", "bitfield-fp16",
                  "em << 9 | sign, + 14 << 10 when em & 6, 0.5 patched to 0x3800", 1, FormatId::fp16, kNvidiaSource),
             {&kPinUpcastValues});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return e2m1_fp16(x);
  }
};

struct LutFp16 {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e2m1_fp16.lut", "lut-fp16",
                  "high byte = byte (x & 7) of 0x46444240'3E3C3800 | (x & 8) << 4, low byte 0: byte-permute table", 1,
                  FormatId::fp16, kAmdSource),
             {&kPinAmdUpcast});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return lut_fp16(x);
  }
};

struct LutBf16 {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.e2m1_bf16.lut", "lut-bf16",
                  "two byte-permute tables (0x40404040'3F3F3F00 high, 0xC0804000'C0800000 low) | sign", 1,
                  FormatId::bf16, kAmdSource),
             {&kPinAmdUpcast});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return lut_bf16(x);
  }
};

// ---- MXFP4 upcast, E2M1 element × UE8M0 scale ----

struct UpcastFp16 {
  static constexpr RecipeCard kCard =
      pinned(card("triton.mxfp4_fp16.upcast", "triton-fp16",
                  "clamp(hmul(bitfield(x), float2half_rn(bits s << 23)), ±65504); s = 255 -> NaN 0x7E00", 2,
                  FormatId::fp16, kNvidiaSource),
             {&kPinUpcastTile, &kPinClampGeneric, &kPinUpcastScale, &kPinUpcastValues},
             "the clamp as lowered below sm_90 (maxnum/minnum): a NaN product becomes -65504; on sm_90+ it is +65504 "
             "(triton.mxfp4_fp16.upcast_sm90, finding triton-mxfp4-fp16-sm90-clamp)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kHalfNanConst;
    return clamp_half(Ar::hmul(e2m1_fp16(x), Ar::float2half_rn(e8m0_float_bits(s))));
  }
};

struct UpcastFp16Sm90 {
  static constexpr RecipeCard kCard = pinned(
      card("triton.mxfp4_fp16.upcast_sm90", "triton-fp16-sm90",
           "the FP16 upcast with sm_90's clamp (min.xorsign.abs): a NaN product keeps its sign, 0 x Inf -> +65504", 2,
           FormatId::fp16, kNvidiaSource),
      {&kPinUpcastTile, &kPinClampSm90, &kPinUpcastScale, &kPinUpcastValues},
      "what an H200 runs; measured there: 224 pairs (s 143..254, x in {0, 8}) give 0x7BFF");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kHalfNanConst;
    return clamp_half_xorsign(Ar::hmul(e2m1_fp16(x), Ar::float2half_rn(e8m0_float_bits(s))));
  }
};

struct UpcastBf16 {
  static constexpr RecipeCard kCard =
      pinned(card("triton.mxfp4_bf16.upcast", "triton-bf16",
                  "clamp(bmul(bitfield(x), bf16 bits max(s << 7, 0x40)), ±max); s = 255 -> NaN 0x7FC0", 2,
                  FormatId::bf16, kNvidiaSource),
             {&kPinUpcastTile, &kPinUpcastScale, &kPinUpcastValues});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kBf16NanConst;
    return clamp_bf16(Ar::bmul(e2m1_bf16(x), e8m0_bf16_floored(s)));
  }
};

struct AmdUpcastFp16 {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.mxfp4_fp16.upcast", "amd-fp16",
                  "hmul(lut(x), float2half_rn(bits s << 23)); s = 255 -> 0x7C01 (mxfpScaleFp16)", 2, FormatId::fp16,
                  kAmdSource),
             {&kPinAmdUpcast, &kPinAmdScaleFp16});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kAmdHalfNan;
    return Ar::hmul(lut_fp16(x), Ar::float2half_rn(e8m0_float_bits(s)));
  }
};

struct AmdUpcastBf16 {
  static constexpr RecipeCard kCard =
      pinned(card("triton_amd.mxfp4_bf16.upcast", "amd-bf16",
                  "fmul(lut_bf16(x) << 16, bits s << 23) >> 16: FP32 multiply, truncated; s = 255 -> 0x7FFF "
                  "(mxfpScaleBf16ViaF32)",
                  2, FormatId::bf16, kAmdSource),
             {&kPinAmdUpcast, &kPinAmdScaleBf16},
             "assumes the AMD FP32 multiply keeps subnormals (denormal mode not verified)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kAmdBf16Nan;
    return Ar::fmul(static_cast<std::uint32_t>(lut_bf16(x)) << 16, e8m0_float_bits(s)) >> 16;
  }
};

// ---- negative controls ----

struct BitfieldUnpatchedHalf {
  static constexpr RecipeCard kCard =
      card("triton.e2m1_fp16.control.unpatched_half", "bitfield-no-0.5",
           "the bit field without the em == 1 patch: 0.5 decodes as the FP16 subnormal 2^-15", 1, FormatId::fp16,
           kNvidiaSource, Role::kControl, "triton.e2m1_fp16.bitfield");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    const std::uint32_t em = x & 7;
    std::uint32_t bits = (em << 9) | ((x & 8) << 12);
    if ((em & 6) != 0) bits += 14u << 10;
    return bits;
  }
};

struct LutUnmaskedSelector {
  static constexpr RecipeCard kCard =
      card("triton_amd.e2m1_fp16.control.unmasked_selector", "lut-sign-in-selector",
           "the whole nibble as the permute selector: bit 3 turns the pick into a sign replicate, so every "
           "negative code decodes to -0 (lost magnitude)",
           1, FormatId::fp16, kAmdSource, Role::kControl, "triton_amd.e2m1_fp16.lut");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    const std::uint32_t high = permute_byte(kHalfHiHi, kHalfHiLo, x & 0xF) | ((x & 8) << 4);
    return (high << 8) & 0xFFFF;
  }
};

struct LutSwappedTables {
  static constexpr RecipeCard kCard =
      card("triton_amd.e2m1_bf16.control.tables_swapped", "lut-bf16-swapped",
           "the BF16 table words in the wrong order (low word as the upper half): wrong nibble order", 1,
           FormatId::bf16, kAmdSource, Role::kControl, "triton_amd.e2m1_bf16.lut");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    const std::uint32_t high = permute_byte(kBf16HiLo, kBf16HiHi, x & 7) | ((x & 8) << 4);
    return ((high << 8) | permute_byte(kBf16LoLo, kBf16LoHi, x & 7)) & 0xFFFF;
  }
};

struct UpcastBf16NoFloor {
  static constexpr RecipeCard kCard =
      card("triton.mxfp4_bf16.control.no_floor", "triton-bf16-no-floor",
           "the BF16 upcast without max(·, 0x0040): scale byte 0 becomes +0 instead of 2^-127", 2, FormatId::bf16,
           kNvidiaSource, Role::kControl, "triton.mxfp4_bf16.upcast");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kBf16NanConst;
    return clamp_bf16(Ar::bmul(e2m1_bf16(x), static_cast<std::uint16_t>((s & 0xFF) << 7)));
  }
};

struct UpcastFp16ScaleRz {
  static constexpr RecipeCard kCard =
      card("triton.mxfp4_fp16.control.scale_rz", "triton-fp16-scale-rz",
           "the FP16 upcast with the scale converted toward zero: 2^-25 becomes 0 and 2^16 and up 65504 instead of "
           "Inf",
           2, FormatId::fp16, kNvidiaSource, Role::kControl, "triton.mxfp4_fp16.upcast");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kHalfNanConst;
    return clamp_half(Ar::hmul(e2m1_fp16(x), Ar::float2half_rz(e8m0_float_bits(s))));
  }
};

struct AmdBf16NoNan {
  static constexpr RecipeCard kCard =
      card("triton_amd.mxfp4_bf16.control.no_nan", "amd-bf16-no-nan",
           "the AMD BF16 path without the NaN select: scale byte 255 gives ±Inf or a truncated NaN", 2, FormatId::bf16,
           kAmdSource, Role::kControl, "triton_amd.mxfp4_bf16.upcast");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(static_cast<std::uint32_t>(lut_bf16(x)) << 16, e8m0_float_bits(s)) >> 16;
  }
};

struct UpcastFp16Sm90SignlessClamp {
  static constexpr RecipeCard kCard =
      card("triton.mxfp4_fp16.control.sm90_clamp_unsigned", "triton-fp16-sm90-abs",
           "the sm_90 clamp returning min(|v|, 65504) without the sign: every negative value loses its sign", 2,
           FormatId::fp16, kNvidiaSource, Role::kControl, "triton.mxfp4_fp16.upcast_sm90");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    if ((s & 0xFF) == 0xFF) return kHalfNanConst;
    return clamp_half_xorsign(Ar::hmul(e2m1_fp16(x), Ar::float2half_rn(e8m0_float_bits(s)))) & 0x7FFFu;
  }
};

}  // namespace bitproof::triton
