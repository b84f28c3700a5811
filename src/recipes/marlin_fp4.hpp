// Recipe family: vLLM Marlin FP4 (E2M1) decode, as csrc/quantization/gptq_marlin/dequant.h
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

inline constexpr std::uint16_t kHalfTwoPow14 = 0b0'11101'0000000000;  // +16384 = 2^14
inline constexpr std::uint16_t kBf16TwoPow126 = 0b0'11111101'0000000;  // 2^126: (126 + 127) << 7
inline constexpr std::uint16_t kHalfTwoPow8 = 0b0'10111'0000000000;    // +256 = 2^8
inline constexpr std::uint16_t kHalfTwoPow7 = 0b0'10110'0000000000;    // +128 = 2^7
inline constexpr std::uint32_t kFloatTwoPow7 = 0x43000000u;             // +128.0f = 2^7
inline constexpr std::uint32_t kFloatTwoPow6 = 0x42800000u;             // +64.0f = 2^6

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
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = "vllm-project/vllm csrc/quantization/gptq_marlin/dequant.h (dequant<…, kFE2M1f>, "
                              "dequant_fp8_scales); quantization/utils/marlin_utils_fp4.py",
                    .arity = arity,
                    .inputs = inputs,
                    .output = output,
                    .intent = arity == 1 ? Intent::kValue : Intent::kProduct,
                    .role = role,
                    .control_of = control_of};
}

// ---- element decode, E2M1 -> FP16 and -> BF16 (dequant<…, kFE2M1f, false>) ----

struct E2m1Fp16 {
  static constexpr RecipeCard kCard = card("marlin.e2m1_fp16.flop", "marlin-fp16",
                                           "hmul((q & 0x8000) | ((q & 0x7000) >> 3), 2^14), q = x << 12", 1,
                                           {FormatId::e2m1, FormatId::e2m1}, FormatId::fp16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return Ar::hmul(fp4_to_half_bits(x), kHalfTwoPow14);
  }
};

struct E2m1Bf16 {
  static constexpr RecipeCard kCard = card("marlin.e2m1_bf16.flop", "marlin-bf16",
                                           "bmul((q & 0x8000) | ((q & 0x7000) >> 6), 2^126), q = x << 12", 1,
                                           {FormatId::e2m1, FormatId::e2m1}, FormatId::bf16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x) {
    return Ar::bmul(fp4_to_bf16_bits(x), kBf16TwoPow126);
  }
};

// ---- scale decode, E8M0 -> BF16 bits ----

struct E8m0Bf16 {
  static constexpr RecipeCard kCard = card("marlin.e8m0_bf16.shift", "marlin-e8m0",
                                           "bf16 bits s << 7 (dequant_fp8_scales, kFE8M0fnu)", 1,
                                           {FormatId::ue8m0, FormatId::ue8m0}, FormatId::bf16);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t s) {
    return e8m0_to_bf16_bits(s);
  }
};

// ---- MXFP4 -> BF16, E2M1 element × E8M0 scale ----

struct Mxfp4Bf16 {
  static constexpr RecipeCard kCard = card("marlin.mxfp4_bf16.ordinary", "ordinary",
                                           "bmul(bmul(raw_bf16, 2^126), bf16 bits s << 7): the flop, then the scale",
                                           2, {FormatId::e2m1, FormatId::ue8m0}, FormatId::bf16);
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
      card("marlin.mxfp4_bf16.folded", "folded", "bmul(raw_bf16, bf16 bits ((s + 126) mod 256) << 7): skip-flop, "
           "2^126 folded into the scale byte", 2, {FormatId::e2m1, FormatId::ue8m0}, FormatId::bf16);
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
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t element = Ar::hmul(fp4_to_half_bits(x), kHalfTwoPow14);
    const std::uint16_t scale = Ar::hmul(e4m3_to_half_bits(v & 0x7F), kHalfTwoPow8);
    return Ar::fmul(Ar::half2float(element), Ar::half2float(scale));
  }
};

struct Nvfp4Folded {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_fp16.folded", "folded",
           "fmul(half2float(hmul(raw, S0E5M3 scale v * 2^7)), global 2^7): skip-flop, 2^14 / 2^7 in the global scale",
           2, {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32);
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
           {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t element = Ar::bmul(fp4_to_bf16_bits(x), kBf16TwoPow126);
    const std::uint16_t scale = Ar::hmul(e4m3_to_half_bits(v & 0x7F), kHalfTwoPow8);
    return Ar::fmul(bf16_to_float_bits(element), Ar::half2float(scale));
  }
};

struct Nvfp4Bf16Folded {
  static constexpr RecipeCard kCard =
      card("marlin.nvfp4_bf16.folded", "folded",
           "fmul(fp32(bmul(raw_bf16, bf16 of the S0E5M3 byte)), global 2^119): skip-flop, 2^126 / 2^7 in the global "
           "scale",
           2, {FormatId::e2m1, FormatId::ue4m3}, FormatId::fp32);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t v) {
    const std::uint16_t product = Ar::bmul(fp4_to_bf16_bits(x), nvfp4_scale_bf16<Ar>(v));
    return Ar::fmul(bf16_to_float_bits(product), kFloatTwoPow119);
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
  static constexpr RecipeCard kCard =
      card("marlin.e2m1_fp16.control.ftz", "fp16-ftz", "the FP16 flop with a flushing multiply: loses ±0.5 (subnormal raw)",
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

}  // namespace bitproof::marlin
