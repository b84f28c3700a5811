// Pins shared by several recipe families: the CUDA Toolkit's own conversion and
// arithmetic functions (cuda_fp16.hpp, cuda_fp8.hpp, cuda_fp4.hpp), read in the
// CUDA 13.0 toolkit (nvcc 13.0.88, runtime headers 13.0.96). Which path each one
// takes on which architecture (software emulation or a hardware cvt) is stated in
// the pin; see also docs/catalogue.md.
#pragma once

#include "recipes/recipe.hpp"

namespace bitproof::upstream {

inline constexpr std::string_view kCudaToolkit = "NVIDIA CUDA Toolkit";
inline constexpr std::string_view kCudaRelease = "13.0.96";

inline constexpr Pin kPinHmul{PinKind::kCode,
                              kCudaToolkit,
                              "include/cuda_fp16.hpp",
                              kCudaRelease,
                              "__hmul",
                              "2648-2657",
                              "one FP16 multiply (device mul.f16, nearest even; NaN out is 0x7FFF); the host path "
                              "widens to FP32, multiplies exactly and rounds once"};
inline constexpr Pin kPinHalf2Float{PinKind::kCode,
                                    kCudaToolkit,
                                    "include/cuda_fp16.hpp",
                                    kCudaRelease,
                                    "__half2float, __internal_half2float",
                                    "670-714",
                                    "exact widening (device cvt.f32.f16); every NaN becomes 0x7FFFFFFF"};
inline constexpr Pin kPinFloat2HalfRn{PinKind::kCode,
                                      kCudaToolkit,
                                      "include/cuda_fp16.hpp",
                                      kCudaRelease,
                                      "__float2half_rn, __internal_float2half",
                                      "367-403, 563-579",
                                      "FP32 to FP16 nearest even (device cvt.rn.f16.f32); NaN becomes 0x7FFF"};
inline constexpr Pin kPinFloat2HalfRz{PinKind::kCode,
                                      kCudaToolkit,
                                      "include/cuda_fp16.hpp",
                                      kCudaRelease,
                                      "__float2half_rz",
                                      "580-593",
                                      "FP32 to FP16 toward zero (device cvt.rz.f16.f32); overflow saturates at 65504"};
inline constexpr Pin kPinFmulRn{PinKind::kCode,
                                kCudaToolkit,
                                "include/crt/device_functions.h",
                                kCudaRelease,
                                "__fmul_rn",
                                "900-917",
                                "one FP32 multiply, nearest even (mul.rn.f32; mul.rn.ftz.f32 under -ftz=true)"};
inline constexpr Pin kPinFp8ToHalf{PinKind::kCode,
                                   kCudaToolkit,
                                   "include/cuda_fp8.hpp",
                                   kCudaRelease,
                                   "__nv_cvt_fp8_to_halfraw",
                                   "472-523",
                                   "E5M2: byte << 8, any NaN becomes 0x7FFF (sign and payload dropped); E4M3: rebiased "
                                   "by 8, NaN 0x7FFF; hardware cvt.rn.f16x2.e{4m3,5m2}x2 when __CUDA_ARCH__ >= 890 "
                                   "(sm_89, sm_90), software below and on the host"};
inline constexpr Pin kPinFp4ToHalf{PinKind::kCode,
                                   kCudaToolkit,
                                   "include/cuda_fp4.hpp",
                                   kCudaRelease,
                                   "__nv_cvt_fp4_to_halfraw",
                                   "333-351",
                                   "the nibble as an E2M3 code (<< 2) decoded exactly in software; the hardware "
                                   "cvt.rn.f16x2.e2m1x2 only on family-specific sm_100+ targets (cuda_fp8.h 73-92): "
                                   "sm_90 runs the software path"};
inline constexpr Pin kPinE8m0ToBf16{PinKind::kCode,
                                    kCudaToolkit,
                                    "include/cuda_fp8.hpp",
                                    kCudaRelease,
                                    "__nv_cvt_e8m0_to_bf16raw, __internal_e8m0_to_bf16",
                                    "817-851",
                                    "byte << 7; 0 becomes 0x0040 (2^-127), 0xFF becomes 0x7FFF; the hardware "
                                    "cvt.rn.bf16x2.ue8m0x2 only on family-specific sm_100+: sm_90 runs software"};

// ggml's CUDA backend (ggml-org/ggml at d99724f2, 2026-08-21; llama.cpp carries the same
// sources under ggml/src/).
inline constexpr std::string_view kGgml = "ggml-org/ggml";
inline constexpr std::string_view kGgmlHead = "d99724f2b141fed9e1a9f402213506c081433465";
inline constexpr Pin kPinGgmlCudaMxfp4{PinKind::kCode,
                                       kGgml,
                                       "src/ggml-cuda/dequantize.cuh",
                                       kGgmlHead,
                                       "dequantize_mxfp4",
                                       "438-452",
                                       "d = ggml_cuda_e8m0_to_fp32(e); y = d x kvalues_mxfp4[nibble] x 0.5f in FP32, "
                                       "cast once to the output type"};
inline constexpr Pin kPinGgmlCudaE8m0{PinKind::kCode,
                                      kGgml,
                                      "src/ggml-cuda/common.cuh",
                                      kGgmlHead,
                                      "ggml_cuda_e8m0_to_fp32",
                                      "822-838",
                                      "CUDA >= 12.8: float(__nv_cvt_e8m0_to_bf16raw(e)) (0 -> 2^-127, 255 -> NaN); "
                                      "older: FP32 bits 0x00400000 for 0, e << 23 otherwise"};
inline constexpr Pin kPinGgmlFastMath{PinKind::kCode,
                                      kGgml,
                                      "src/ggml-cuda/CMakeLists.txt",
                                      kGgmlHead,
                                      "CUDA_FLAGS",
                                      "197",
                                      "the whole CUDA backend is built with -use_fast_math: FP32 multiplies flush "
                                      "subnormal operands and results to zero (mul.ftz.f32)"};
inline constexpr Pin kPinGgmlTable{PinKind::kCode,
                                   kGgml,
                                   "src/ggml-common.h",
                                   kGgmlHead,
                                   "kvalues_mxfp4",
                                   "1126-1129",
                                   "int8 table of twice the E2M1 values: 0 1 2 3 4 6 8 12, 0 -1 -2 -3 -4 -6 -8 -12 "
                                   "(code 8, -0, is the integer 0)"};

}  // namespace bitproof::upstream
