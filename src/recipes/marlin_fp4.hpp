// Recipe family: vLLM Marlin FP4 (E2M1) decode, as csrc/quantization/marlin/dequant.h
// and vllm/model_executor/layers/quantization/utils/marlin_utils_fp4.py ship it
// (vllm-project/vllm). Marlin places each 4-bit code into the top of a 16-bit
// lane, then moves the exponent+mantissa bits right into the target format:
//
//   FP16   bits = (q & 0x8000) | ((q & 0x7000) >> 3),  q = x << 12
//          = the FP16 bits of E2M1(x) * 2^-14 (code 1, 0.5, is an FP16 subnormal);
//          the "flop": hmul by 2^14 (BIAS_OFFSET = 2^4 - 2^1 = 14)
//   BF16   bits = (q & 0x8000) | ((q & 0x7000) >> 6)
//          = the BF16 bits of E2M1(x) * 2^-126 (code 1 is a BF16 subnormal);
//          the "flop": BF16 multiply by 2^126 (BIAS = (126 + 127) << 23 as float)
//   E8M0 scale -> BF16 (dequant_fp8_scales<nv_bfloat162, kFE8M0fnu>): bits = s << 7,
//          i.e. 2^(s-127) for s in 1..254; s = 0 gives +0 (not 2^-127) and s = 255
//          gives +Inf (not NaN); the source says "we assume that such a extreme value
//          would not occur in real models".
//
// MXFP4 (E8M0 scales, BF16 only) takes the flop: ordinary = (raw * 2^126) * scale.
// `folded` is the skip-flop form Marlin uses for FP8 and NVFP4 weights, applied to
// MXFP4: 2^126 moved into the scale byte at load time, s' = (s + 126) mod 256 (uint8
// tensor arithmetic, like mxfp4_marlin_process_scales' `+ 6`, which asserts s <= 249
// for exactly this reason).
//
// NVFP4 (UE4M3 scales, FP16 path): the kernel skips the flop; the load step rewrites
// each scale v into the "S0E5M3" byte of half(v) * 2^7 (marlin_scales * 2^7, view
// int16, << 1, high byte) that dequant_fp8_scales<half2, kFE4M3fn> expands back to the
// half bits byte << 7, so the kernel's scale is v * 2^7, and the factor 2^(14 - 7) = 2^7
// goes into the FP32 global scale (nvfp4_marlin_process_global_scale). Modelled with a
// unit global scale: out = fp32(hmul(raw, v * 2^7)) * 2^7.
//
// NVFP4, BF16 path: the same load step (the S0E5M3 byte of half(v) * 2^7) expanded by
// dequant_fp8_scales<nv_bfloat162, kFE4M3fn>, the skip-flop BF16 element (E2M1 × 2^-126),
// one BF16 multiply, and 2^(126 - 7) = 2^119 in the FP32 global scale
// (nvfp4_marlin_process_global_scale: exponent_bias 2^7 - 2^1 = 126 for BF16). Ordinary:
// fmul(fp32(bmul(raw_bf16, 2^126)), fp32 of v). The BF16 expansion keeps the byte's top bit
// as BF16 exponent bit 7, which is right only while v * 2^7 >= 2: the UE4M3 subnormal
// scales (codes 1..7) come out 2^-112 times too small (the proof's domain report shows it).
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

namespace bitproof::marlin {

// ---- pins: vllm-project/vllm, read at 6097afb9 (main, 2026-04-19) unless named otherwise ----
// Since 4561f139 (#32952, 2026-01-23) the kernels live in csrc/quantization/marlin/ (earlier: gptq_marlin/).
inline constexpr std::string_view kVllm = "vllm-project/vllm";
inline constexpr std::string_view kVllmMain = "6097afb9bdf9bf59fec70c04b12ab355daf07b23";
inline constexpr std::string_view kVllmPreRescale = "4561f13985e86ea15c9c672fbcfa28f12530e3e5";  // 2026-01-23
inline constexpr std::string_view kVllmMinRescale = "9482b0b085e044fe9db8926d0ba262fd70b56ca1";  // 2026-03-18
inline constexpr std::string_view kDequantH = "csrc/quantization/marlin/dequant.h";
inline constexpr std::string_view kTemplateH = "csrc/quantization/marlin/marlin_template.h";
inline constexpr std::string_view kUtilsFp4 = "vllm/model_executor/layers/quantization/utils/marlin_utils_fp4.py";

inline constexpr Pin kPinFp4Half{PinKind::kCode,
                                 kVllm,
                                 kDequantH,
                                 kVllmMain,
                                 "dequant<half2, kFE2M1f, *>",
                                 "397-431",
                                 "code at bits 15..12; sign kept, exponent+mantissa moved right 3: the FP16 bits of "
                                 "E2M1 x 2^-14; the flop multiplies by 2^14 (__hmul2, RN)"};
inline constexpr Pin kPinFp4Bf16{PinKind::kCode,
                                 kVllm,
                                 kDequantH,
                                 kVllmMain,
                                 "dequant<nv_bfloat162, kFE2M1f, *>",
                                 "433-471",
                                 "the same move by 6: the BF16 bits of E2M1 x 2^-126; the flop multiplies by 2^126 "
                                 "(the float with bits (126 + 127) << 23, BF16 __hmul2)"};
inline constexpr Pin kPinE8m0Bf16{PinKind::kCode,
                                  kVllm,
                                  kDequantH,
                                  kVllmMain,
                                  "dequant_fp8_scales<nv_bfloat162, kFE8M0fnu>",
                                  "550-562",
                                  "the scale byte moved to BF16 bits 14..7 (2^(s-127)); the comment accepts that "
                                  "s = 0 becomes 0; s = 255 becomes +Inf"};
inline constexpr Pin kPinGroupScale{PinKind::kCode,
                                    kVllm,
                                    kTemplateH,
                                    kVllmMain,
                                    "scale<>",
                                    "104-116",
                                    "one group scale broadcast and multiplied into the dequantized pair (__hmul2, RN)"};
inline constexpr Pin kPinMxfp4Scales{PinKind::kCode,
                                     kVllm,
                                     kUtilsFp4,
                                     kVllmMain,
                                     "mxfp4_marlin_process_scales",
                                     "117-131",
                                     "16-bit activations: the E8M0 bytes only permuted; FP8 activations: +6 added to "
                                     "each byte after asserting the largest is <= 249 (no wrap)"};
inline constexpr Pin kPinNvfp4ScalesNow{PinKind::kCode,
                                        kVllm,
                                        kUtilsFp4,
                                        kVllmMain,
                                        "nvfp4_marlin_process_scales",
                                        "53-114",
                                        "scales to half (exact), times 2^7 in half, every entry below 2 set to 0 "
                                        "(line 109, #37502), int16 bits << 1, high byte kept: the S0E5M3 byte"};
inline constexpr Pin kPinNvfp4FactorNow{PinKind::kCode,
                                        kVllm,
                                        kUtilsFp4,
                                        kVllmMain,
                                        "_nvfp4_compute_scale_factor",
                                        "30-50",
                                        "1 for half; BF16: 2^floor(log2(57344 / M)), M the largest v x 2^7, when M < "
                                        "57344: so v x sf x 2^7 <= 57344 and never overflows FP16"};
inline constexpr Pin kPinNvfp4GlobalNow{PinKind::kCode,
                                        kVllm,
                                        kUtilsFp4,
                                        kVllmMain,
                                        "nvfp4_marlin_process_global_scale",
                                        "134-146",
                                        "the global scale in FP32 times 2^(bias - 7): 2^7 for half, 2^119 for BF16, "
                                        "divided by the rescale factor"};
inline constexpr Pin kPinFp8ScalesHalf{PinKind::kCode,
                                       kVllm,
                                       kDequantH,
                                       kVllmMain,
                                       "dequant_fp8_scales<half2, kFE4M3fn>",
                                       "520-531",
                                       "the S0E5M3 byte expanded to the half bits byte << 7"};
inline constexpr Pin kPinFp8ScalesBf16{PinKind::kCode,
                                       kVllm,
                                       kDequantH,
                                       kVllmMain,
                                       "dequant_fp8_scales<nv_bfloat162, kFE4M3fn>",
                                       "533-548",
                                       "the byte's top bit to BF16 exponent bit 7, its low 7 bits >> 4: BF16 exponent "
                                       "e5 + 112 only while the top bit is set"};
inline constexpr Pin kPinWriteGlobalNow{
    PinKind::kCode,
    kVllm,
    kTemplateH,
    kVllmMain,
    "write_result: write",
    "1655-1660",
    "the FP32 accumulator times the FP32 global scale, then rounded to 16 bits once"};
inline constexpr Pin kPinFp8Half{PinKind::kCode,
                                 kVllm,
                                 kDequantH,
                                 kVllmMain,
                                 "dequant<half2, kFE4M3fn, *>",
                                 "320-354",
                                 "byte at bits 15..8; sign kept, magnitude moved right 1: the FP16 bits of E4M3 x 2^-8 "
                                 "(NaN S.1111.111 not special); the flop multiplies by 2^8 (__hmul2)"};
inline constexpr Pin kPinFp8FusedBias{PinKind::kCode,
                                      kVllm,
                                      "vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py",
                                      kVllmMain,
                                      "fp8_fused_exponent_bias_into_scales",
                                      "28-39",
                                      "16-bit activations: the scale tensor times 2^8 at load time in its own dtype "
                                      "(one FP16 multiply, nearest even); the kernel then skips the flop"};
inline constexpr Pin kPinNvfp4ScalesOld{PinKind::kCode,
                                        kVllm,
                                        kUtilsFp4,
                                        kVllmPreRescale,
                                        "nvfp4_marlin_process_scales",
                                        "30-58",
                                        "before #34577: scales to half, times 2^7, int16 bits << 1, high byte kept; no "
                                        "rescale, no flush"};
inline constexpr Pin kPinNvfp4GlobalOld{PinKind::kCode,
                                        kVllm,
                                        kUtilsFp4,
                                        kVllmPreRescale,
                                        "nvfp4_marlin_process_global_scale",
                                        "78-88",
                                        "the global scale times 2^(bias - 7), kept in the 16-bit activation dtype"};
inline constexpr Pin kPinWriteGlobalOld{PinKind::kCode,
                                        kVllm,
                                        kTemplateH,
                                        kVllmPreRescale,
                                        "write_result: write",
                                        "1646-1648, 1663-1665",
                                        "before #33972: the FP32 sum rounded to 16 bits, then __hmul2 by the 16-bit "
                                        "global scale (for one element and a unit global, the same bits)"};
inline constexpr Pin kPinNvfp4FactorMin{PinKind::kCode,
                                        kVllm,
                                        kUtilsFp4,
                                        kVllmMinRescale,
                                        "_nvfp4_compute_scale_factor, nvfp4_marlin_process_scales",
                                        "30-42, 93-98",
                                        "2026-03-18..04-07: sf = 2^ceil(log2(2 / m)), m the smallest v x 2^7, no "
                                        "overflow check; scales (v x sf) to half, then x 2^7 in half"};

inline constexpr std::uint16_t kHalfTwoPow14 = 0b0'11101'0000000000;   // +16384 = 2^14
inline constexpr std::uint16_t kBf16TwoPow126 = 0b0'11111101'0000000;  // 2^126: (126 + 127) << 7
inline constexpr std::uint16_t kHalfTwoPow8 = 0b0'10111'0000000000;    // +256 = 2^8
inline constexpr std::uint16_t kHalfTwoPow7 = 0b0'10110'0000000000;    // +128 = 2^7
inline constexpr std::uint32_t kFloatTwoPow7 = 0x43000000u;            // +128.0f = 2^7
inline constexpr std::uint32_t kFloatTwoPow6 = 0x42800000u;            // +64.0f = 2^6

// E2M1 code x placed at bits 15..12 of a lane, then Marlin's FP16 / BF16 moves.
BP_HD constexpr std::uint16_t fp4_to_half_bits(std::uint32_t x, int right_shift = 3) {
  const std::uint32_t q = (x & 0xF) << 12;
  return static_cast<std::uint16_t>((q & 0x8000) | ((q & 0x7000) >> right_shift));
}
BP_HD constexpr std::uint16_t fp4_to_bf16_bits(std::uint32_t x) {
  const std::uint32_t q = (x & 0xF) << 12;
  return static_cast<std::uint16_t>((q & 0x8000) | ((q & 0x7000) >> 6));
}
static_assert(fp4_to_half_bits(0b0'11'1) == 0b0'00011'1000000000);  // +6.0 -> 1.5 * 2^-12 = 6 * 2^-14
static_assert(fp4_to_half_bits(0b1'00'1) == 0b1'00000'1000000000);  // -0.5 -> -2^-15, subnormal
static_assert(fp4_to_bf16_bits(0b0'11'1) == 0b0'00000011'1000000);  // +6.0 -> 1.5 * 2^-124 = 6 * 2^-126
static_assert(fp4_to_bf16_bits(0b0'00'1) == 0b0'00000000'1000000);  // +0.5 -> 2^-127, subnormal

// dequant_fp8_scales<nv_bfloat162, kFE8M0fnu>: the scale byte into the BF16 exponent field.
BP_HD constexpr std::uint16_t e8m0_to_bf16_bits(std::uint32_t s) { return static_cast<std::uint16_t>((s & 0xFF) << 7); }
static_assert(e8m0_to_bf16_bits(127) == 0b0'01111111'0000000);  // 2^0 = 1.0

// E4M3 bits moved into FP16 (dequant<half2, kFE4M3fn, true>): the FP16 bits of v * 2^-8.
BP_HD constexpr std::uint16_t e4m3_to_half_bits(std::uint32_t c) {
  const std::uint32_t q = (c & 0xFF) << 8;
  return static_cast<std::uint16_t>((q & 0x8000) | ((q & 0x7F00) >> 1));
}
static_assert(e4m3_to_half_bits(0b0'0111'000) == 0b0'00111'0000000000);  // 1.0 -> 2^-8
static_assert(e4m3_to_half_bits(0b0'1111'110) == 0b0'01111'1100000000);  // 448 -> 1.75 * 2^0 = 448 * 2^-8

// NVFP4 load step: UE4M3 scale v -> the kernel's FP16 scale v * 2^7, through torch's
// exact .to(half), a half multiply by 2^7, and the S0E5M3 byte (bits << 1, high byte)
// that the kernel expands as byte << 7: the sign bit and the low 7 mantissa bits drop.
template <class Ar>
BP_HD constexpr std::uint32_t nvfp4_scale_byte(std::uint32_t v) {
  const std::uint16_t half_v = Ar::hmul(e4m3_to_half_bits(v & 0x7F), kHalfTwoPow8);  // torch: scales.to(half)
  const std::uint16_t times128 = Ar::hmul(half_v, kHalfTwoPow7);                     // marlin_scales * 2^7
  return static_cast<std::uint32_t>((times128 << 1) >> 8) & 0xFF;                    // view(int16) << 1, [:, 1::2]
}
template <class Ar>
BP_HD constexpr std::uint16_t nvfp4_scale_half(std::uint32_t v) {
  return static_cast<std::uint16_t>(nvfp4_scale_byte<Ar>(v) << 7);  // (q & 0xFF00) >> 1
}
// The same byte expanded by dequant_fp8_scales<nv_bfloat162, kFE4M3fn>: ((q & 0x8000) >> 1) |
// ((q & 0x7F00) >> 4), q = byte << 8. The byte's top bit (the S0E5M3 exponent's top bit,
// set whenever v * 2^7 >= 2) lands on BF16 exponent bit 7 and the low 4 exponent bits on bits
// 3..0: BF16 exponent e5 + 112 = the FP16 value v * 2^7 again, but only while that top bit is
// set. For v < 2^-6 (the UE4M3 subnormals, codes 1..7) the exponent loses 112: 2^-112 too small.
BP_HD constexpr std::uint16_t s0e5m3_to_bf16_bits(std::uint32_t byte) {
  const std::uint32_t q = (byte & 0xFF) << 8;
  return static_cast<std::uint16_t>(((q & 0x8000) >> 1) | ((q & 0x7F00) >> 4));
}
static_assert(s0e5m3_to_bf16_bits(0b1'0000'000) == 0b0'10000000'0000000);  // e5 = 16: 2^1 in both
template <class Ar>
BP_HD constexpr std::uint16_t nvfp4_scale_bf16(std::uint32_t v) {
  return s0e5m3_to_bf16_bits(nvfp4_scale_byte<Ar>(v));
}
inline constexpr std::uint32_t kFloatTwoPow119 = 0x7B000000u;  // 2^119 = 2^(126 - 7): the BF16 global-scale fold
inline constexpr std::uint32_t kFloatTwoPow118 = 0x7A800000u;  // 2^118
BP_HD constexpr std::uint32_t bf16_to_float_bits(std::uint32_t b) { return (b & 0xFFFF) << 16; }

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary, int arity,
                          std::array<FormatId, kMaxArity> inputs, FormatId output, Role role = Role::kRecipe,
                          std::string_view control_of = {}) {
  return family_card({.source = "vllm-project/vllm csrc/quantization/marlin/dequant.h (dequant<…, kFE2M1f>, "
                                "dequant_fp8_scales); quantization/utils/marlin_utils_fp4.py",
                      .arity = arity,
                      .inputs = inputs,
                      .output = output,
                      .intent = arity == 1 ? Intent::kValue : Intent::kProduct},
                     name, label, summary, role, control_of);
}

// ---- element decode, E2M1 -> FP16 and -> BF16 (dequant<…, kFE2M1f, false>) ----

struct E2m1Fp16 {
  static constexpr RecipeCard kCard =
      pinned(card("marlin.e2m1_fp16.flop", "marlin-fp16", "hmul((q & 0x8000) | ((q & 0x7000) >> 3), 2^14), q = x << 12",
                  1, {FormatId::e2m1, FormatId::e2m1}, FormatId::fp16),
             {&kPinFp4Half},
             "no generated kernel runs the FP16 flop (NVFP4 skips it; MXFP4 is generated for BF16 only): upstream "
             "code, unreached");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return Ar::hmul(fp4_to_half_bits(x), kHalfTwoPow14);
  }
};

struct E2m1Bf16 {
  static constexpr RecipeCard kCard = pinned(
      card("marlin.e2m1_bf16.flop", "marlin-bf16", "bmul((q & 0x8000) | ((q & 0x7000) >> 6), 2^126), q = x << 12", 1,
           {FormatId::e2m1, FormatId::e2m1}, FormatId::bf16),
      {&kPinFp4Bf16});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return Ar::bmul(fp4_to_bf16_bits(x), kBf16TwoPow126);
  }
};

// ---- scale decode, E8M0 -> BF16 bits ----

struct E8m0Bf16 {
  static constexpr RecipeCard kCard =
      pinned(card("marlin.e8m0_bf16.shift", "marlin-e8m0", "bf16 bits s << 7 (dequant_fp8_scales, kFE8M0fnu)", 1,
                  {FormatId::ue8m0, FormatId::ue8m0}, FormatId::bf16),
             {&kPinE8m0Bf16});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t s) {
    return e8m0_to_bf16_bits(s);
  }
};

// ---- MXFP4 -> BF16, E2M1 element × E8M0 scale ----

struct Mxfp4Bf16 {
  static constexpr RecipeCard kCard =
      pinned(card("marlin.mxfp4_bf16.ordinary", "ordinary",
                  "bmul(bmul(raw_bf16, 2^126), bf16 bits s << 7): the flop, then the scale", 2,
                  {FormatId::e2m1, FormatId::ue8m0}, FormatId::bf16),
             {&kPinFp4Bf16, &kPinE8m0Bf16, &kPinGroupScale, &kPinMxfp4Scales});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::bmul(Ar::bmul(fp4_to_bf16_bits(x), kBf16TwoPow126), e8m0_to_bf16_bits(s));
  }
};

template <int kFold>
BP_HD constexpr std::uint16_t folded_scale(std::uint32_t s) {
  return e8m0_to_bf16_bits((s + kFold) & 0xFF);  // uint8 arithmetic at load time: wraps
}

struct Mxfp4Bf16Folded {
  static constexpr RecipeCard kCard =
      pinned(card("marlin.mxfp4_bf16.folded", "folded",
                  "bmul(raw_bf16, bf16 bits ((s + 126) mod 256) << 7): skip-flop, "
                  "2^126 folded into the scale byte",
                  2, {FormatId::e2m1, FormatId::ue8m0}, FormatId::bf16),
             {&kPinMxfp4Scales, &kPinFp4Bf16, &kPinE8m0Bf16},
             "no upstream kernel folds 2^126 into the byte: BF16 activations run the flop; this is the skip-flop form "
             "a kernel could ship, wrapping mod 256 where upstream's FP8-activation fold (+6) asserts instead");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::bmul(fp4_to_bf16_bits(x), folded_scale<126>(s));
  }
};

// ---- NVFP4, E2M1 element × UE4M3 scale, FP16 path with the factor in the FP32 global scale ----

struct Nvfp4Ordinary {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_fp16.ordinary", "ordinary",
           "fmul(half2float(hmul(raw, 2^14)), half2float(half(v))): exact decode of both, one FP32 product", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t element = Ar::hmul(fp4_to_half_bits(x), kHalfTwoPow14);
    const std::uint16_t scale = Ar::hmul(e4m3_to_half_bits(v & 0x7F), kHalfTwoPow8);
    return Ar::fmul(Ar::half2float(element), Ar::half2float(scale));
  }
};

struct Nvfp4Folded {
  static constexpr RecipeCard kCard = pinned(
      card("marlin.nvfp4_fp16.folded", "folded",
           "fmul(half2float(hmul(raw, S0E5M3 scale v * 2^7)), global 2^7): skip-flop, 2^14 / 2^7 in the global scale",
           2, {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32),
      {&kPinNvfp4ScalesOld, &kPinFp8ScalesHalf, &kPinFp4Half, &kPinWriteGlobalOld},
      "the FP16 pipeline as shipped 2025-05-10 (d74e5f37) .. 2026-03-17 (24575899, #34577) and again 2026-03-27 "
      "(148a5c12, #33972) .. 2026-04-07 (73105554, #37502); in between, #34577 rescaled FP16 scales too (a tensor "
      "holding scale codes 1..7 got sf > 1), which this model does not, until #33972 kept half scales unscaled; "
      "current main flushes scale codes 1..7 to 0 (marlin.nvfp4_fp16.current; finding marlin-nvfp4-current)");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    return Ar::fmul(Ar::half2float(Ar::hmul(fp4_to_half_bits(x), nvfp4_scale_half<Ar>(v))), kFloatTwoPow7);
  }
};

// ---- NVFP4, BF16 path: E2M1 element × UE4M3 scale, 2^119 in the FP32 global scale ----

struct Nvfp4Bf16Ordinary {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_bf16.ordinary", "ordinary",
           "fmul(fp32(bmul(raw_bf16, 2^126)), half2float(half(v))): exact decode of both, one FP32 product", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t element = Ar::bmul(fp4_to_bf16_bits(x), kBf16TwoPow126);
    const std::uint16_t scale = Ar::hmul(e4m3_to_half_bits(v & 0x7F), kHalfTwoPow8);
    return Ar::fmul(bf16_to_float_bits(element), Ar::half2float(scale));
  }
};

struct Nvfp4Bf16Folded {
  static constexpr RecipeCard kCard = pinned(
      card("marlin.nvfp4_bf16.folded", "folded",
           "fmul(fp32(bmul(raw_bf16, bf16 of the S0E5M3 byte)), global 2^119): skip-flop, 2^126 / 2^7 in the global "
           "scale",
           2, {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32),
      {&kPinNvfp4ScalesOld, &kPinFp8ScalesBf16, &kPinFp4Bf16, &kPinNvfp4GlobalOld},
      "the pipeline as shipped before the rescale (#34577, 2026-03-17): scale codes 1..7 come out 2^-112 too small and "
      "their products underflow to 0, the bits current main gives by flushing");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t product = Ar::bmul(fp4_to_bf16_bits(x), nvfp4_scale_bf16<Ar>(v));
    return Ar::fmul(bf16_to_float_bits(product), kFloatTwoPow119);
  }
};

// ---- NVFP4 as current main ships it (#37502): small scales flushed, FP32 global ----
//
// Load: half(v) x 2^7 in half; every value below 2 becomes 0 (UE4M3 codes 1..7:
// v x 2^7 = c/4 < 2); then the S0E5M3 byte. With the flush every byte is 0 or has its
// top bit set, so the BF16 expansion is exact. The FP16 rescale factor is 1; the BF16
// one is 1 for any tensor whose largest block scale is above 224 (the usual case; a
// larger factor only brings small codes back exactly). NaN scale codes (0x7F) are
// outside what is modelled: torch's NaN payload through the half steps was not read.
template <class Ar, std::uint16_t kFlushBelow = 0b0'10000'0000000000>  // +2.0
BP_HD constexpr std::uint32_t nvfp4_scale_byte_flushed(std::uint32_t v) {
  const std::uint16_t half_v = Ar::hmul(e4m3_to_half_bits(v & 0x7F), kHalfTwoPow8);  // .to(half)
  const std::uint16_t times128 = Ar::hmul(half_v, kHalfTwoPow7);                     // x 2^7
  const bool flushed = times128 < kFlushBelow;  // half bits of values >= 0 order as the values
  return flushed ? 0u : (static_cast<std::uint32_t>((times128 << 1) >> 8) & 0xFF);
}

struct Nvfp4Current {
  static constexpr RecipeCard kCard =
      pinned(card("marlin.nvfp4_fp16.current", "current-fp16",
                  "fmul(half2float(hmul(raw, S0E5M3 scale, 0 where v x 2^7 < 2)), global 2^7): main since #37502", 2,
                  {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32),
             {&kPinNvfp4ScalesNow, &kPinFp8ScalesHalf, &kPinFp4Half, &kPinWriteGlobalNow},
             "scale codes 1..7 (v < 2^-6) give 0: the flush drops them; NaN scale codes are not modelled");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const auto scale = static_cast<std::uint16_t>(nvfp4_scale_byte_flushed<Ar>(v) << 7);
    return Ar::fmul(Ar::half2float(Ar::hmul(fp4_to_half_bits(x), scale)), kFloatTwoPow7);
  }
};

struct Nvfp4Bf16Current {
  static constexpr RecipeCard kCard = pinned(
      card("marlin.nvfp4_bf16.current", "current-bf16",
           "fmul(fp32(bmul(raw_bf16, bf16 of the flushed S0E5M3 byte)), global 2^119): main since #37502, factor 1", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32),
      {&kPinNvfp4ScalesNow, &kPinNvfp4FactorNow, &kPinFp8ScalesBf16, &kPinWriteGlobalNow},
      "rescale factor 1 (largest block scale above 224); NaN scale codes are not modelled");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t product = Ar::bmul(fp4_to_bf16_bits(x), s0e5m3_to_bf16_bits(nvfp4_scale_byte_flushed<Ar>(v)));
    return Ar::fmul(bf16_to_float_bits(product), kFloatTwoPow119);
  }
};

// The rescale of 2026-03-18..04-07 (kPinNvfp4FactorMin) on a tensor whose smallest block
// scale is UE4M3 code 1 (2^-9): sf = 2^ceil(log2(2 / 2^-2)) = 8. Every scale goes to half(v x 8)
// and then x 2^7 in half: from v x 1024 >= 65520 on that is +Inf, the byte 0xF8, which the BF16
// expansion reads as 2^16: the scale saturates. The global scale carries 2^119 / 8 = 2^116.
inline constexpr std::uint32_t kFloatTwoPow116 = 0x79800000u;
inline constexpr std::uint16_t kHalfEight = 0b0'10010'0000000000;  // +8

struct Nvfp4Bf16MinRescale {
  static constexpr RecipeCard kCard = pinned(
      card("marlin.nvfp4_bf16.min_rescale_sf8", "min-rescale-sf8",
           "the BF16 fold after the 2026-03-18 rescale with sf = 8: half(v x 8) x 2^7 overflows to the byte 0xF8 "
           "(BF16 2^16) for v > 64",
           2, {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32),
      {&kPinNvfp4FactorMin, &kPinNvfp4ScalesOld, &kPinFp8ScalesBf16, &kPinFp4Bf16},
      "upstream from 9482b0b0 (2026-03-18) until 73105554 (#37502, 2026-04-07); sf = 8 is what a tensor holding "
      "scale code 1 gets");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t half_v = Ar::hmul(e4m3_to_half_bits(v & 0x7F), kHalfTwoPow8);
    const std::uint16_t rescaled = Ar::hmul(half_v, kHalfEight);  // (float(v) x 8).to(half): exact or Inf alike
    const std::uint16_t times128 = Ar::hmul(rescaled, kHalfTwoPow7);
    const std::uint32_t byte = static_cast<std::uint32_t>((times128 << 1) >> 8) & 0xFF;
    const std::uint16_t product = Ar::bmul(fp4_to_bf16_bits(x), s0e5m3_to_bf16_bits(byte));
    return Ar::fmul(bf16_to_float_bits(product), kFloatTwoPow116);
  }
};

// ---- negative controls: each must be refuted against the recipe it corrupts ----

struct E2m1Fp16WrongShift {
  static constexpr RecipeCard kCard =
      card("marlin.e2m1_fp16.control.bf16_shift", "fp16-shift6",
           "the FP16 decode with the BF16 right shift (6): exponent bits land in the mantissa", 1,
           {FormatId::e2m1, FormatId::e2m1}, FormatId::fp16, Role::kControl, "marlin.e2m1_fp16.flop");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return Ar::hmul(fp4_to_half_bits(x, 6), kHalfTwoPow14);
  }
};

struct E2m1Fp16Flushing {
  static constexpr RecipeCard kCard = card(
      "marlin.e2m1_fp16.control.ftz", "fp16-ftz", "the FP16 flop with a flushing multiply: loses ±0.5 (subnormal raw)",
      1, {FormatId::e2m1, FormatId::e2m1}, FormatId::fp16, Role::kControl, "marlin.e2m1_fp16.flop");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return Ar::hmul_ftz(fp4_to_half_bits(x), kHalfTwoPow14);
  }
};

struct Mxfp4Bf16FoldOff {
  static constexpr RecipeCard kCard =
      card("marlin.mxfp4_bf16.control.fold_plus125", "fold+125", "folded with 125 instead of 126: every value halved",
           2, {FormatId::e2m1, FormatId::ue8m0}, FormatId::bf16, Role::kControl, "marlin.mxfp4_bf16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::bmul(fp4_to_bf16_bits(x), folded_scale<125>(s));
  }
};

struct Mxfp4Bf16Signless {
  static constexpr RecipeCard kCard =
      card("marlin.mxfp4_bf16.control.signless", "ordinary-signless", "ordinary with the sign mask 0x8000 dropped", 2,
           {FormatId::e2m1, FormatId::ue8m0}, FormatId::bf16, Role::kControl, "marlin.mxfp4_bf16.ordinary");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    const auto magnitude = static_cast<std::uint16_t>(fp4_to_bf16_bits(x) & 0x7FFF);
    return Ar::bmul(Ar::bmul(magnitude, kBf16TwoPow126), e8m0_to_bf16_bits(s));
  }
};

struct Nvfp4GlobalOff {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_fp16.control.global_2pow6", "global-2^6",
           "folded with 2^6 in the global scale (exponent_bias - 8): every value halved", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kControl, "marlin.nvfp4_fp16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    return Ar::fmul(Ar::half2float(Ar::hmul(fp4_to_half_bits(x), nvfp4_scale_half<Ar>(v))), kFloatTwoPow6);
  }
};

struct Nvfp4Flushing {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_fp16.control.ftz", "folded-ftz",
           "folded with a flushing FP16 multiply: small element × scale products (subnormal in FP16) vanish", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kControl, "marlin.nvfp4_fp16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    return Ar::fmul(Ar::half2float(Ar::hmul_ftz(fp4_to_half_bits(x), nvfp4_scale_half<Ar>(v))), kFloatTwoPow7);
  }
};

struct Nvfp4Bf16GlobalOff {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_bf16.control.global_2pow118", "global-2^118",
           "the BF16 fold with 2^118 in the global scale: wrong fold constant, every value halved", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kControl, "marlin.nvfp4_bf16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t product = Ar::bmul(fp4_to_bf16_bits(x), nvfp4_scale_bf16<Ar>(v));
    return Ar::fmul(bf16_to_float_bits(product), kFloatTwoPow118);
  }
};

struct Nvfp4Bf16HalfExpansion {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_bf16.control.half_expansion", "half-expansion",
           "the BF16 fold with the scale byte expanded the FP16 way (byte << 7) and read as BF16", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kControl, "marlin.nvfp4_bf16.folded");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t product = Ar::bmul(fp4_to_bf16_bits(x), nvfp4_scale_half<Ar>(v));
    return Ar::fmul(bf16_to_float_bits(product), kFloatTwoPow119);
  }
};

struct Nvfp4CurrentFlushBelow4 {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_fp16.control.flush_below4", "flush<4",
           "current with the flush threshold 4 instead of 2: code 8 (v x 2^7 = 2) is lost too", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kControl, "marlin.nvfp4_fp16.current");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const auto scale = static_cast<std::uint16_t>(nvfp4_scale_byte_flushed<Ar, 0b0'10001'0000000000>(v) << 7);
    return Ar::fmul(Ar::half2float(Ar::hmul(fp4_to_half_bits(x), scale)), kFloatTwoPow7);
  }
};

struct Nvfp4Bf16CurrentHalfExpansion {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_bf16.control.current_half_expansion", "current-half-exp",
           "current BF16 with the flushed byte expanded the FP16 way (byte << 7) and read as BF16", 2,
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32, Role::kControl, "marlin.nvfp4_bf16.current");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const auto scale = static_cast<std::uint16_t>(nvfp4_scale_byte_flushed<Ar>(v) << 7);
    return Ar::fmul(bf16_to_float_bits(Ar::bmul(fp4_to_bf16_bits(x), scale)), kFloatTwoPow119);
  }
};

}  // namespace bitproof::marlin
