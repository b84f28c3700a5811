// Recipe family: asymmetric INT4 with a zero point (AWQ, GPTQ with zeros) -> FP16,
// (q - z) × s with three inputs: the weight nibble q, the group's zero-point nibble z
// (both uint4) and the group's FP16 scale s. Intent: (q - z) × s rounded to FP16.
//
//   plain    hmul(int2half_rn(q - z), s)                  the obvious conversion
//   sub_fma  vllm-project/vllm csrc/quantization/awq/gemm_kernels.cu with dequantize.cuh:
//            dequantize_s4_to_fp16x2 builds 0x6400 | q and subtracts 0x6400 (1024: the
//            "Haotian" variant maps to 0..15, not -8..7), the zeros go through the same
//            function, then sub.f16x2 (weight - zero) and fma.rn.f16x2 (·, scale, ZERO = +0).
//            The low-nibble form: hfma(hsub(hsub(0x6400|q, 1024), hsub(0x6400|z, 1024)), s, +0).
//            (The high nibble, fma(0x6400 | q << 4, 1/16, -64), gives the same exact q.)
//            Every step before the FMA is exact; the FMA rounds once. Where it parts from
//            plain: a zero product. q == z gives +0 and fma(+0, s, +0) is +0 whatever the
//            sign of s, where (q - z) × s is -0 for a negative s; and a scale of +0 times a
//            negative difference is -0 + +0 = +0 too.
//   fold_lo  vllm-project/vllm csrc/quantization/gptq/qdq_4.cuh (exllama):
//            dequant_4bit_8_prep_zero_scale precomputes z1 = half bits 0xE400 | z
//            (-(1024 + z), exact), then z1·s = hmul(s, z1) and y1 = hmul(s, 1.0);
//            dequant_4bit_8_gptq (scaled) computes hfma(0x6400 | q, y1, z1·s): the zero
//            point and the scale folded into one FMA. -(1024 + z)·s is rounded on its own,
//            so the FMA cancels 1024·s against a rounded 1024·s: exact only where that
//            product is (power-of-two scales, see the proof).
//   fold_hi  the high nibble of the same kernel: hfma(0x6400 | q << 4, hmul(s, 1/16),
//            hmul(s, hsub(int2half_rn(-64), int2half_rn(z)))): 1024 + 16q scaled by s/16
//            (itself rounded) against (-64 - z)·s.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

// GPTQ-v1 zero points (gptq_v1.*): the kernels add 1 to the stored nibble, so z runs 1..16
// (z = 16 is how GPTQ-v1 stores a true zero point of 0: -1 wrapped to 0xF). These recipes
// take z as a uint8 code and are proven over 1..16; the awq.* recipes take z as uint4
// (AWQ stores its zeros without an offset). The old fold_lo / fold_hi masked z to 4 bits,
// so z = 16 was never tested (proofs/gptq-v1-int4-zero-16.json now covers it).

namespace bitproof::awq {

inline constexpr std::uint16_t kMagic = 0b0'11001'0000000000;       // +1024 (0x6400)
inline constexpr std::uint16_t kMinusMagic = 0b1'11001'0000000000;  // -1024 (0xE400)
inline constexpr std::uint16_t kOne = 0b0'01111'0000000000;         // +1    (0x3C00)
inline constexpr std::uint16_t kSixteenth = 0b0'01011'0000000000;   // +1/16 (0x2C00)
inline constexpr std::uint16_t kPlusZero = 0x0000;
inline constexpr std::uint16_t kMinus1032 = 0b1'11001'0000001000;  // -1032 (0xE408): GPTQ's symmetric constant
static_assert(kMagic == 0x6400 && kMinusMagic == 0xE400 && kOne == 0x3C00 && kSixteenth == 0x2C00);

BP_HD constexpr std::uint16_t low_magic(std::uint32_t q) { return static_cast<std::uint16_t>(kMagic | (q & 0xF)); }
BP_HD constexpr std::uint16_t high_magic(std::uint32_t q) {
  return static_cast<std::uint16_t>(kMagic | ((q & 0xF) << 4));
}
// dequant_4bit_8_prep_zero_scale's z1: the FP16 bits of -(1024 + z), exact for z <= 1023
// (0xE400 has no mantissa bits, so the OR adds).
BP_HD constexpr std::uint16_t minus_magic_zero(std::uint32_t z) {
  return static_cast<std::uint16_t>(kMinusMagic | (z & 0x3FF));
}
static_assert(minus_magic_zero(8) == kMinus1032);
static_assert(minus_magic_zero(16) == 0b1'11001'0000010000);  // -1040: GPTQ-v1's z = 16

// ---- pins ----
inline constexpr Pin kPinAwqDequant{PinKind::kCode,
                                    "vllm-project/vllm",
                                    "csrc/libtorch_stable/quantization/awq/dequantize.cuh",
                                    "85b2fecab7776cb7526856803c661c82d1fa8433",
                                    "dequantize_s4_to_fp16x2",
                                    "17-99",
                                    "nibbles ORed into 0x6400; low: minus 1024 (sub.f16x2), high: fma(., 1/16, -64): "
                                    "the exact integers 0..15 for weights and zeros alike"};
inline constexpr Pin kPinAwqGemm{
    PinKind::kCode,
    "vllm-project/vllm",
    "csrc/libtorch_stable/quantization/awq/gemm_kernels.cu",
    "85b2fecab7776cb7526856803c661c82d1fa8433",
    "gemm_forward_4bit_cuda_m16nXk32",
    "140-163",
    "sub.f16x2 weight - zero (exact, +0 when equal), then fma.rn.f16x2(d, scale, ZERO = +0)"};
inline constexpr Pin kPinExllamaPrep{PinKind::kCode,
                                     "turboderp/exllamav2",
                                     "exllamav2/exllamav2_ext/cuda/quant/qdq_4.cuh",
                                     "9e55e44bcbcb76b58f2f894889900d19888af3c9",
                                     "dequant_4bit_8_prep_zero_scale, dequant_4bit_8_gptq",
                                     "62-108",
                                     "z1 = bits 0xE400 | z and z16 = -64 - z, each times the scale (hmul); then "
                                     "hfma(0x6400 | q, s, z1 s) low and hfma(0x6400 | q << 4, s/16, z16 s) high"};
inline constexpr Pin kPinExllamaCall{PinKind::kCode,
                                     "turboderp/exllamav2",
                                     "exllamav2/exllamav2_ext/cuda/q_matrix.cu",
                                     "9e55e44bcbcb76b58f2f894889900d19888af3c9",
                                     "reconstruct_gptq_kernel",
                                     "204-207, 222-225, 234-256",
                                     "the prep is called with zeros[i] + 1 (z = 1..16); the folded values are written "
                                     "straight into the FP16 weight matrix (removed later by 54e3cf9a)"};
inline constexpr Pin kPinVllmQdq4{PinKind::kCode,
                                  "vllm-project/vllm",
                                  "csrc/libtorch_stable/quantization/gptq/qdq_4.cuh",
                                  "07aeaf9d4df870a76d5a0dc19d6a7e74b4be5d3b",
                                  "dequant_4bit_8_prep_zero_scale",
                                  "55-71",
                                  "the same helper, defined in vLLM but never called (every call passes the "
                                  "unscaled flag)"};
inline constexpr Pin kPinVllmReconstruct{PinKind::kCode,
                                         "vllm-project/vllm",
                                         "csrc/libtorch_stable/quantization/gptq/q_gemm.cu",
                                         "07aeaf9d4df870a76d5a0dc19d6a7e74b4be5d3b",
                                         "reconstruct_gptq_kernel",
                                         "1385-1419",
                                         "zero_offset = 1 for GPTQ-v1 (line 1403): w_zero = stored + 1; "
                                         "__hmul(__int2half_rn(q - w_zero), scale)"};
inline constexpr Pin kPinVllmAltGemm{PinKind::kCode,
                                     "vllm-project/vllm",
                                     "csrc/libtorch_stable/quantization/gptq/q_gemm.cu",
                                     "07aeaf9d4df870a76d5a0dc19d6a7e74b4be5d3b",
                                     "gemm_half_q_half_alt_4bit_kernel",
                                     "1187, 1227-1234, 1245-1256",
                                     "M <= 8 without exllama: hfma(int2half_rn(q), s, hmul(s, int2half_rn(-z))), z = "
                                     "stored + 1, the product -z s rounded on its own"};
inline constexpr Pin kPinExllamaPy{PinKind::kCode,
                                   "vllm-project/vllm",
                                   "vllm/model_executor/kernels/linear/mixed_precision/exllama.py",
                                   "07aeaf9d4df870a76d5a0dc19d6a7e74b4be5d3b",
                                   "ExllamaLinearKernel",
                                   "162-171",
                                   "use_v2_format = False: the kernels add 1 to every stored zero nibble"};

inline constexpr std::string_view kAwqSource =
    "vllm-project/vllm csrc/quantization/awq/gemm_kernels.cu (sub.f16x2 weight - zero, fma.rn.f16x2 with "
    "scale and ZERO) and awq/dequantize.cuh (dequantize_s4_to_fp16x2: 0x6400 | q minus 1024)";
inline constexpr std::string_view kExllamaSource =
    "vllm-project/vllm csrc/quantization/gptq/qdq_4.cuh (exllama): dequant_4bit_8_prep_zero_scale "
    "(z1 = 0xE400 | zero, scaled by hmul) and dequant_4bit_8_gptq (scaled: hfma(q | 0x6400, y1y16, z1z16))";

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          std::string_view source, Role role = Role::kRecipe, std::string_view control_of = {},
                          FormatId zero = FormatId::uint4) {
  return family_card({.source = source,
                      .arity = 3,
                      .inputs = {FormatId::uint4, zero, FormatId::fp16},
                      .output = FormatId::fp16,
                      .intent = Intent::kZeroPointProduct},
                     name, label, summary, role, control_of);
}

struct Plain {
  static constexpr RecipeCard kCard =
      card("awq.u4_fp16.plain", "plain", "hmul(int2half_rn(q - z), s)",
           "the plain conversion (q - z) * s, as the AWQ reference dequantize and the exllama fallback path "
           "(qdq_4.cuh without the magic number) compute it",
           Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const std::uint32_t difference = (q & 0xF) - (z & 0xF);  // int32 two's complement bits
    return Ar::hmul(Ar::int2half_rn(difference), static_cast<std::uint16_t>(s));
  }
};

template <class Ar>
BP_HD constexpr std::uint16_t awq_difference(std::uint32_t q, std::uint32_t z) {
  return Ar::hsub(Ar::hsub(low_magic(q), kMagic), Ar::hsub(low_magic(z), kMagic));
}

struct SubFma {
  static constexpr RecipeCard kCard =
      pinned(card("awq.u4_fp16.sub_fma", "sub-fma",
                  "hfma(hsub(hsub(0x6400|q, 1024), hsub(0x6400|z, 1024)), s, +0): vLLM AWQ GEMM", kAwqSource),
             {&kPinAwqDequant, &kPinAwqGemm});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    return Ar::hfma(awq_difference<Ar>(q, z), static_cast<std::uint16_t>(s), kPlusZero);
  }
};

struct FoldLow {
  static constexpr RecipeCard kCard =
      pinned(card("awq.u4_fp16.fold_lo", "fold-lo",
                  "hfma(0x6400|q, hmul(s, 1), hmul(s, 0xE400|z)): zero point and scale folded (exllama, low nibble)",
                  kExllamaSource),
             {&kPinExllamaPrep, &kPinExllamaCall, &kPinVllmQdq4},
             "exllamav2 passes z = stored + 1 (1..16); this recipe takes z as 4 bits (0..15), the GPTQ-v2 form: z = 16 "
             "is covered by gptq_v1.u4_fp16.exllama_fold_lo");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const auto scale = static_cast<std::uint16_t>(s);
    return Ar::hfma(low_magic(q), Ar::hmul(scale, kOne), Ar::hmul(scale, minus_magic_zero(z)));
  }
};

struct FoldHigh {
  static constexpr RecipeCard kCard =
      pinned(card("awq.u4_fp16.fold_hi", "fold-hi",
                  "hfma(0x6400|q<<4, hmul(s, 1/16), hmul(s, hsub(-64, z))): folded, high nibble in place (exllama)",
                  kExllamaSource),
             {&kPinExllamaPrep, &kPinExllamaCall, &kPinVllmQdq4},
             "z taken as 4 bits (0..15); gptq_v1.u4_fp16.exllama_fold_hi covers exllamav2's 1..16");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const auto scale = static_cast<std::uint16_t>(s);
    const std::uint16_t z16 = Ar::hsub(Ar::int2half_rn(static_cast<std::uint32_t>(-64)), Ar::int2half_rn(z & 0xF));
    return Ar::hfma(high_magic(q), Ar::hmul(scale, kSixteenth), Ar::hmul(scale, z16));
  }
};

// ---- GPTQ-v1: z = stored nibble + 1, 1..16, a uint8 input ----

inline constexpr std::string_view kGptqV1Source =
    "vLLM q_gemm.cu (GPTQ-v1, zero_offset 1) and exllamav2 (zeros[i] + 1): z runs 1..16";

template <class Ar>
BP_HD constexpr std::uint16_t exllama_fold_low(std::uint32_t q, std::uint32_t z, std::uint16_t scale) {
  return Ar::hfma(low_magic(q), Ar::hmul(scale, kOne), Ar::hmul(scale, minus_magic_zero(z)));
}

struct V1Plain {
  static constexpr RecipeCard kCard =
      pinned(card("gptq_v1.u4_fp16.plain", "v1-plain", "hmul(int2half_rn(q - z), s), z = stored + 1 in 1..16",
                  kGptqV1Source, Role::kRecipe, {}, FormatId::uint8),
             {&kPinVllmReconstruct, &kPinExllamaPy});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const std::uint32_t difference = (q & 0xF) - (z & 0xFF);
    return Ar::hmul(Ar::int2half_rn(difference), static_cast<std::uint16_t>(s));
  }
};

struct V1ExllamaLow {
  static constexpr RecipeCard kCard =
      pinned(card("gptq_v1.u4_fp16.exllama_fold_lo", "v1-fold-lo",
                  "hfma(0x6400|q, hmul(s, 1), hmul(s, 0xE400|z)), z in 1..16 (z = 16: -1040)", kGptqV1Source,
                  Role::kRecipe, {}, FormatId::uint8),
             {&kPinExllamaPrep, &kPinExllamaCall, &kPinVllmQdq4});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    return exllama_fold_low<Ar>(q, z & 0xFF, static_cast<std::uint16_t>(s));
  }
};

struct V1ExllamaHigh {
  static constexpr RecipeCard kCard = pinned(card("gptq_v1.u4_fp16.exllama_fold_hi", "v1-fold-hi",
                                                  "hfma(0x6400|q<<4, hmul(s, 1/16), hmul(s, -64 - z)), z in 1..16",
                                                  kGptqV1Source, Role::kRecipe, {}, FormatId::uint8),
                                             {&kPinExllamaPrep, &kPinExllamaCall, &kPinVllmQdq4});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const auto scale = static_cast<std::uint16_t>(s);
    const std::uint16_t z16 = Ar::hsub(Ar::int2half_rn(static_cast<std::uint32_t>(-64)), Ar::int2half_rn(z & 0xFF));
    return Ar::hfma(high_magic(q), Ar::hmul(scale, kSixteenth), Ar::hmul(scale, z16));
  }
};

struct V1AltFold {
  static constexpr RecipeCard kCard =
      pinned(card("gptq_v1.u4_fp16.alt_fold", "v1-alt-fold",
                  "hfma(int2half_rn(q), s, hmul(s, int2half_rn(-z))): vLLM's alt kernel, -z s rounded on its own",
                  kGptqV1Source, Role::kRecipe, {}, FormatId::uint8),
             {&kPinVllmAltGemm, &kPinExllamaPy});
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const auto scale = static_cast<std::uint16_t>(s);
    const std::uint32_t minus_z = 0u - (z & 0xFF);
    return Ar::hfma(Ar::int2half_rn(q & 0xF), scale, Ar::hmul(scale, Ar::int2half_rn(minus_z)));
  }
};

// ---- negative controls ----

struct V1ZeroMasked {
  static constexpr RecipeCard kCard =
      card("gptq_v1.u4_fp16.control.zero_masked", "v1-fold-lo-z4bit",
           "the exllama fold with z masked to 4 bits (the old model): z = 16 read as 0", kGptqV1Source, Role::kControl,
           "gptq_v1.u4_fp16.exllama_fold_lo", FormatId::uint8);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    return exllama_fold_low<Ar>(q, z & 0xF, static_cast<std::uint16_t>(s));
  }
};

struct ZeroReversed {
  static constexpr RecipeCard kCard =
      card("awq.u4_fp16.control.zero_minus_weight", "sub-fma-reversed",
           "sub_fma with the subtraction reversed (z - q): the sign is lost wherever q != z", kAwqSource,
           Role::kControl, "awq.u4_fp16.sub_fma");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    return Ar::hfma(awq_difference<Ar>(z, q), static_cast<std::uint16_t>(s), kPlusZero);
  }
};

struct FoldFixed1032 {
  static constexpr RecipeCard kCard =
      card("awq.u4_fp16.control.fold_1032", "fold-lo-1032",
           "fold_lo with GPTQ's symmetric constant -1032 in place of -(1024 + z): wrong fold constant unless z = 8",
           kExllamaSource, Role::kControl, "awq.u4_fp16.fold_lo");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t, std::uint32_t s) {
    const auto scale = static_cast<std::uint16_t>(s);
    return Ar::hfma(low_magic(q), Ar::hmul(scale, kOne), Ar::hmul(scale, kMinus1032));
  }
};

struct FoldNibbleSwapped {
  static constexpr RecipeCard kCard =
      card("awq.u4_fp16.control.nibble_swapped", "fold-lo-as-hi",
           "the low nibble decoded with the high nibble's constants (s/16, -64 - z): wrong nibble order",
           kExllamaSource, Role::kControl, "awq.u4_fp16.fold_hi");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const auto scale = static_cast<std::uint16_t>(s);
    const std::uint16_t z16 = Ar::hsub(Ar::int2half_rn(static_cast<std::uint32_t>(-64)), Ar::int2half_rn(z & 0xF));
    return Ar::hfma(low_magic(q), Ar::hmul(scale, kSixteenth), Ar::hmul(scale, z16));
  }
};

struct PlainTruncating {
  static constexpr RecipeCard kCard =
      card("awq.u4_fp16.control.plain_rz", "plain-rz", "plain with a truncating scale multiply",
           "the plain conversion (q - z) * s", Role::kControl, "awq.u4_fp16.plain");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t q, std::uint32_t z, std::uint32_t s) {
    const std::uint32_t difference = (q & 0xF) - (z & 0xF);
    return Ar::hmul_rz(Ar::int2half_rn(difference), static_cast<std::uint16_t>(s));
  }
};

}  // namespace bitproof::awq
