// Recipe family: llama.cpp (ggml-org/llama.cpp) MXFP4 dequantization, FP32 out.
//
//   ggml/src/ggml-common.h   kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}
//                            the E2M1 values doubled, so they are integers (int8)
//   ggml/src/ggml-impl.h     GGML_E8M0_TO_FP32_HALF(e) = 2^(e-128): bits 0x00200000 << e for
//                            e < 2 (FP32 subnormals 2^-128, 2^-127), (e - 1) << 23 otherwise;
//                            "NaNs are not handled here": e = 255 is 2^127
//   ggml/src/ggml-quants.c   dequantize_row_mxfp4: y = kvalues_mxfp4[q] * d, one FP32 multiply
//
//   doubled      fmul(float(kvalues[x]), e8m0_half(s))        the CPU path (ggml-quants.c)
//   naive        fmul(float(E2M1(x)), float bits s << 23): the undoubled table with the plain
//                bit-cast scale; s = 0 becomes +0 instead of the subnormal 2^-127. No shipped
//                function: a reference for what a naive decoder gives.
//   cuda         the CUDA path (ggml-cuda dequantize_mxfp4, CUDA >= 12.8, built -use_fast_math):
//                d = float(__nv_cvt_e8m0_to_bf16raw(s)) (0 -> 2^-127, 255 -> NaN), then
//                d * kvalues[x] * 0.5f, which ptxas emits as one FMUL.FTZ.D2 (the halving inside
//                the multiply, before rounding and the overflow check): flush(d) x (kvalues[x] / 2)
//                rounded once, the result flushed. Every such product is exact (a power of two
//                times a small integer), so where tininess is detected does not matter here.
//                It differs from the CPU path on 32 of the 4,096 inputs: s = 0 (every nonzero code
//                flushes to ±0), s = 1 with |x| = 0.5 (2^-127 flushes), s = 255 (NaN for every
//                code): proofs/llama-mxfp4-cuda.json. The s = 253..254 agreement depends on the
//                .D2 fusion, measured with nvcc 13.0 on sm_90 (an unfused x 0.5 would overflow first).
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"
#include "recipes/upstream.hpp"

namespace bitproof::llama {

inline constexpr std::string_view kGgmlCpu = "8599e0ea3756c4bac4ef813af2241cb1a8bbfb0b";  // = llama.cpp d3cf1f14
inline constexpr Pin kPinCpuDequant{PinKind::kCode,
                                    upstream::kGgml,
                                    "src/ggml-quants.c",
                                    kGgmlCpu,
                                    "dequantize_row_mxfp4",
                                    "569-587",
                                    "d = GGML_E8M0_TO_FP32_HALF(e) once a block; y = (float)kvalues_mxfp4[q] x d, "
                                    "one FP32 multiply; no fast-math on the CPU build"};
inline constexpr Pin kPinCpuHalfScale{PinKind::kCode,
                                      upstream::kGgml,
                                      "src/ggml-impl.h",
                                      kGgmlCpu,
                                      "ggml_e8m0_to_fp32_half",
                                      "477-495",
                                      "FP32 bits of 2^(e-128): 0x00200000 << e for e < 2 (subnormals), (e - 1) << 23 "
                                      "otherwise; NaN (e = 255) not handled: 2^127"};
inline constexpr Pin kPinCpuTable{PinKind::kCode,
                                  upstream::kGgml,
                                  "src/ggml-common.h",
                                  kGgmlCpu,
                                  "kvalues_fp4",
                                  "1124-1129",
                                  "the E2M1 values doubled as int8: code 8 (-0) is the integer 0, so +0.0f"};

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

// FP32 bits of kvalues_mxfp4[x] / 2: the E2M1 values with code 8 as +0 (int8 0).
BP_HD constexpr std::uint32_t halved_doubled_bits(std::uint32_t x) { return (x & 0xF) == 8 ? 0u : e2m1_value_bits(x); }
// What -ftz does to an FP32 operand or result: a subnormal becomes a zero of its sign.
BP_HD constexpr std::uint32_t flush_fp32(std::uint32_t bits) {
  return (bits & 0x7F800000u) == 0 ? (bits & 0x80000000u) : bits;
}
// ggml_cuda_e8m0_to_fp32 with CUDA >= 12.8: float(__nv_cvt_e8m0_to_bf16raw(e)), written out
// (cuda_fp8.hpp __internal_e8m0_to_bf16: e << 7, 0 -> 0x0040, 255 -> 0x7FFF), widened by << 16.
BP_HD constexpr std::uint32_t cuda_e8m0_bits(std::uint32_t e) {
  e &= 0xFF;
  const std::uint32_t bf16 = e == 0 ? 0x0040u : (e == 0xFF ? 0x7FFFu : e << 7);
  return bf16 << 16;
}
static_assert(cuda_e8m0_bits(0) == 0x00400000u && cuda_e8m0_bits(127) == 0x3F800000u &&
              cuda_e8m0_bits(255) == 0x7FFF0000u);

BP_HD constexpr std::uint32_t e8m0_half_bits(std::uint32_t e) {
  e &= 0xFF;
  return e < 2 ? (0x00200000u << e) : ((e - 1) << 23);
}
static_assert(e8m0_half_bits(0) == 0x00200000u && e8m0_half_bits(127) == 0x3F000000u);  // 2^-128, 0.5

constexpr RecipeCard card(std::string_view name, std::string_view label, std::string_view summary,
                          Role role = Role::kRecipe, std::string_view control_of = {}) {
  return family_card({.source = "ggml-org/llama.cpp ggml/src/ggml-common.h (kvalues_mxfp4), ggml-impl.h "
                                "(GGML_E8M0_TO_FP32_HALF), ggml-quants.c (dequantize_row_mxfp4)",
                      .arity = 2,
                      .inputs = {FormatId::e2m1, FormatId::ue8m0},
                      .output = FormatId::fp32,
                      .intent = Intent::kProduct},
                     name, label, summary, role, control_of);
}

struct Doubled {
  static constexpr RecipeCard kCard =
      pinned(card("llama.mxfp4_fp32.doubled", "doubled", "fmul(float(kvalues_mxfp4[x]), GGML_E8M0_TO_FP32_HALF(s))"),
             {&kPinCpuDequant, &kPinCpuHalfScale, &kPinCpuTable},
             "the CPU path; the CUDA path (llama.mxfp4_fp32.cuda) differs on 32 inputs: proofs/llama-mxfp4-cuda.json");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(doubled_value_bits(x), e8m0_half_bits(s));
  }
};

struct Naive {
  static constexpr RecipeCard kCard =
      card("llama.mxfp4_fp32.naive", "naive", "fmul(E2M1 float table[x], float bits s << 23)", Role::kReference);
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(e2m1_value_bits(x), (s & 0xFF) << 23);
  }
};

struct Cuda {
  static constexpr RecipeCard kCard =
      pinned(card("llama.mxfp4_fp32.cuda", "cuda",
                  "flush(fmul(flush(float(cvt_e8m0_to_bf16raw(s))), kvalues[x] / 2)): ggml-cuda, -use_fast_math"),
             {&upstream::kPinGgmlCudaMxfp4, &upstream::kPinGgmlCudaE8m0, &upstream::kPinGgmlFastMath,
              &upstream::kPinGgmlTable},
             "CUDA >= 12.8 (older toolkits decode the scale with a shift: 20 differences instead of 32); the x 0.5 "
             "fused into the multiply (FMUL.FTZ.D2) as nvcc 13.0 emits it for sm_90");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return flush_fp32(Ar::fmul(flush_fp32(cuda_e8m0_bits(s)), halved_doubled_bits(x)));
  }
};

// ---- negative controls ----

struct FullScale {
  static constexpr RecipeCard kCard = card("llama.mxfp4_fp32.control.full_scale", "doubled×full",
                                           "the doubled table with the full scale 2^(s-127): every value doubled",
                                           Role::kControl, "llama.mxfp4_fp32.doubled");
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

struct CudaNoFtz {
  static constexpr RecipeCard kCard =
      card("llama.mxfp4_fp32.control.cuda_no_ftz", "cuda-no-ftz",
           "the CUDA path without -use_fast_math's flush: s = 0 and s = 1 keep their subnormals", Role::kControl,
           "llama.mxfp4_fp32.cuda");
  template <class Ar>
  BP_HD static constexpr std::uint32_t eval(std::uint32_t x, std::uint32_t s) {
    return Ar::fmul(cuda_e8m0_bits(s), halved_doubled_bits(x));
  }
};

}  // namespace bitproof::llama
