// Value policies: what an operator template (operators.hpp) computes with.
//
// An operator is written once over a value policy V, which supplies
//   types     V::F16, V::F32 (FP16 / FP32 values), V::Code (a format code),
//             V::Tensor (how an operand tensor is reached)
//   loads     f16(T, row, col), e2m1(T, row, col), u8(T, row, col), widen(T, row, col) = h2f(f16(...))
//             (an activation operand: the recorder memoises it)
//   ops       h2f, f2h (round to nearest even), fma, add, mul (binary32,
//             nearest even), zero(), silu(F32), recipe<R>(code, scale)
// Three policies exist, so the CPU model, the GPU kernel and the trace come from
// the same source:
//   Bits<SoftArith>    raw bits through the soft model (the CPU backend)
//   Bits<DeviceArith>  raw bits through the CUDA instructions (kernels/operators.cu)
//   trace::Recorder    graph nodes (src/operator/trace.hpp): what was computed, not a value
#pragma once

#include <cstdint>

#include "hd.hpp"

namespace bitproof::op {

// A row-major 2-D operand in memory: element (r, c) at data[r * row_stride + c]
// (for packed E2M1, the code of column c is in byte c / 2, low nibble first).
struct Strided {
  const void* data = nullptr;
  std::uint64_t row_stride = 0;  // elements (E2M1: codes) per row
};

// SiLU on binary32 bits, g / (1 + e^-g), from the policy's FP32 operations only,
// so every IEEE implementation of them gives the same bits:
//   y = clamp(-g, -87, 87)                           (NaN passes through the products)
//   n = round(y·log2 e) by the 1.5·2^23 trick;  r = y - n·ln2 (two FMAs, Cody–Waite)
//   e^r by Horner on 1/k!, k ≤ 7;  e^y = e^r · 2^n (n in -126..126: exact scaling)
//   1/(1 + e^y) by four Newton steps r' = r + r·(1 - d·r) from a bit-trick seed
// A model of the kind of SiLU kernels compute, not of one kernel's __expf: it is
// deterministic where __expf (MUFU.EX2) is not reproducible on a CPU.
template <class Ar>
BP_HD constexpr std::uint32_t silu_bits(std::uint32_t g) {
  constexpr std::uint32_t kOne = 0x3F800000u;        // 1.0
  constexpr std::uint32_t kMagic = 0x4B400000u;      // 1.5·2^23: adding it rounds to an integer
  constexpr std::uint32_t kLog2e = 0x3FB8AA3Bu;      // 1.44269502
  constexpr std::uint32_t kLn2Hi = 0x3F317200u;      // 0.693145752 (exact in 16 bits)
  constexpr std::uint32_t kLn2Lo = 0x35BFBE8Eu;      // 1.42860677e-06
  constexpr std::uint32_t kClamp = 0x42AE0000u;      // 87.0
  constexpr std::uint32_t kInvFact[7] = {0x39500D01u,   // 1/5040
                                         0x3AB60B61u,   // 1/720
                                         0x3C088889u,   // 1/120
                                         0x3D2AAAABu,   // 1/24
                                         0x3E2AAAABu,   // 1/6
                                         0x3F000000u,   // 1/2
                                         kOne};         // 1
  const std::uint32_t sign = 0x80000000u;
  std::uint32_t y = g ^ sign;
  const bool nan = (g & 0x7FFFFFFFu) > 0x7F800000u;
  if (!nan && (y & 0x7FFFFFFFu) > kClamp) y = (y & sign) | kClamp;
  const std::uint32_t shifted = Ar::fadd(Ar::fmul(y, kLog2e), kMagic);
  const std::uint32_t n_float = Ar::fadd(shifted, kMagic ^ sign);
  const int n = nan ? 0 : static_cast<int>(shifted) - static_cast<int>(kMagic);
  std::uint32_t r = Ar::ffma(n_float ^ sign, kLn2Hi, y);
  r = Ar::ffma(n_float ^ sign, kLn2Lo, r);
  std::uint32_t p = kInvFact[0];
  for (int i = 1; i < 7; ++i) p = Ar::ffma(p, r, kInvFact[i]);
  p = Ar::ffma(p, r, kOne);
  const std::uint32_t two_n = static_cast<std::uint32_t>(n + 127) << 23;
  const std::uint32_t e = Ar::fmul(p, two_n);
  const std::uint32_t d = Ar::fadd(kOne, e);
  std::uint32_t inv = 0x7EF311C3u - d;
  for (int i = 0; i < 4; ++i) inv = Ar::ffma(inv, Ar::ffma(d ^ sign, inv, kOne), inv);
  return Ar::fmul(g, inv);
}

// Raw bits through an arithmetic policy Ar (SoftArith or DeviceArith).
template <class Ar>
struct Bits {
  using F16 = std::uint16_t;
  using F32 = std::uint32_t;
  using Code = std::uint32_t;
  using Tensor = Strided;

  BP_HD static F16 f16(const Tensor& t, std::uint64_t row, std::uint64_t col) {
    return static_cast<const std::uint16_t*>(t.data)[row * t.row_stride + col];
  }
  BP_HD static Code e2m1(const Tensor& t, std::uint64_t row, std::uint64_t col) {
    const std::uint64_t at = row * t.row_stride + col;
    const std::uint8_t byte = static_cast<const std::uint8_t*>(t.data)[at / 2];
    return (at & 1) != 0 ? byte >> 4 : byte & 0xFu;
  }
  BP_HD static Code u8(const Tensor& t, std::uint64_t row, std::uint64_t col) {
    return static_cast<const std::uint8_t*>(t.data)[row * t.row_stride + col];
  }
  BP_HD static F32 zero() { return 0; }
  BP_HD static F32 h2f(F16 h) { return Ar::half2float(h); }
  BP_HD static F32 widen(const Tensor& t, std::uint64_t row, std::uint64_t col) { return h2f(f16(t, row, col)); }
  BP_HD static F16 f2h(F32 f) { return Ar::float2half_rn(f); }
  BP_HD static F32 fma(F32 a, F32 b, F32 c) { return Ar::ffma(a, b, c); }
  BP_HD static F32 add(F32 a, F32 b) { return Ar::fadd(a, b); }
  BP_HD static F32 mul(F32 a, F32 b) { return Ar::fmul(a, b); }
  BP_HD static F32 silu(F32 g) { return silu_bits<Ar>(g); }
  template <class Recipe>
  BP_HD static F16 recipe(Code x, Code s) {
    return static_cast<F16>(Recipe::template eval<Ar>(x, s));
  }
};

}  // namespace bitproof::op
