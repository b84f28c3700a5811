// The built-in operators, written once over a value policy (values.hpp): the CPU
// model, the GPU kernels (kernels/operators.cu) and the trace (trace.hpp) all call
// these functions, one output element per call.
//
// ---- fp16_gemv: y = W·x, M = 1 ---------------------------------------------------
//   inputs   x  FP16 [1, K];  W  FP16 [N, K] (one tensor, or several joined row-wise: the
//            fused launch over a joined buffer)
//   element  for each block b of block_k columns:  p_b = +0; p_b = fma(x_k, w_nk, p_b),
//            k ascending (FP32 FMA accumulation, operands widened exactly);
//            partials folded in `order`: forward p_0 + p_1 + ... (FP32 adds, left to
//            right), reverse p_{B-1} + p_{B-2} + ...;  y_n = FP16(sum), nearest even
//   source   the DeepSeek V4 auxiliary GEMVs of the fused-FP16 PR (context/
//            pr-fused-fp16-aux-gemv.txt: "block-K=1024 FP32 FMA/reduction order"); the
//            PR's Triton kernel is in no stored copy, so this is the order its text states
//
// ---- mxfp4_gemm: Y = A·dequant(Wq, S)^T, decode shapes (M = 1..8) ------------------
//   inputs   A  FP16 [M, K];  Wq  E2M1 codes [N, K] (two a byte, low nibble first);
//            S  UE8M0 [N, K/32] (one scale per 32 codes along K); Wq/S may be joined
//   element  w_nk = dequant(code, scale): a catalogue recipe e2m1×ue8m0 → fp16 (one node);
//            split-K: K cut into `splits` equal slices (multiples of 32), each slice a
//            sequential FP32 FMA chain from +0 as above, slices folded in `order`;
//            y_mn = FP16(sum)
//   source   TurboMind SM70 MXFP4 decode GEMM (recipes/turbomind_mxfp4.hpp pins the
//            dequant); the CTA-level HMMA accumulation order is modelled as the split-K
//            chain above, the order the fold PR says it preserves
//
// ---- swiglu: h = SiLU(g) · u ------------------------------------------------------
//   inputs   g, u  FP16 [M, I];   element  h = FP16(silu(FP32(g)) · FP32(u))
//   (silu: values.hpp's deterministic FP32 model)
#pragma once

#include <cstdint>

#include "hd.hpp"

namespace bitproof::op {

// The order block (or split-K slice) partials are added in.
enum class FoldOrder : std::uint8_t { kForward, kReverse };

// One FP32 FMA chain from +0 over columns [begin, end) of row `row` against the
// activation row `arow`; `weight(k)` gives the FP32 weight of column k.
template <class V, class WeightFn>
BP_HD typename V::F32 fma_chain(V& v, const typename V::Tensor& a, std::uint64_t arow, std::uint64_t begin,
                                std::uint64_t end, WeightFn weight) {
  typename V::F32 acc = v.zero();
  for (std::uint64_t k = begin; k < end; ++k) acc = v.fma(v.widen(a, arow, k), weight(k), acc);
  return acc;
}

// `parts` partial chains of `width` columns each, folded in `order`.
template <class V, class WeightFn>
BP_HD typename V::F32 folded_chains(V& v, const typename V::Tensor& a, std::uint64_t arow, std::uint64_t parts,
                                    std::uint64_t width, FoldOrder order, WeightFn weight) {
  typename V::F32 sum = v.zero();
  for (std::uint64_t i = 0; i < parts; ++i) {
    const std::uint64_t p = order == FoldOrder::kForward ? i : parts - 1 - i;
    const typename V::F32 partial = fma_chain(v, a, arow, p * width, (p + 1) * width, weight);
    sum = i == 0 ? partial : v.add(sum, partial);
  }
  return sum;
}

struct GemvShape {
  std::uint64_t k = 0;        // columns (x's length)
  std::uint64_t block_k = 0;  // divides k
  FoldOrder order = FoldOrder::kForward;
};

// y_n of fp16_gemv (row n of W).
template <class V>
BP_HD typename V::F16 gemv_element(V& v, const typename V::Tensor& x, const typename V::Tensor& w, std::uint64_t n,
                                   const GemvShape& s) {
  const auto weight = [&](std::uint64_t k) { return v.h2f(v.f16(w, n, k)); };
  return v.f2h(folded_chains(v, x, 0, s.k / s.block_k, s.block_k, s.order, weight));
}

struct GemmShape {
  std::uint64_t k = 0;       // columns, a multiple of 32
  std::uint64_t splits = 1;  // split-K slices; (k / 32) % splits == 0
  FoldOrder order = FoldOrder::kForward;
};

inline constexpr std::uint64_t kMxBlock = 32;   // codes per UE8M0 scale (OCP MX v1.0)
inline constexpr std::uint64_t kMaxGemmRows = 8;  // mxfp4_gemm's M: decode shapes

// Column n of mxfp4_gemm with dequant recipe R, all `rows` (≤ kMaxGemmRows) rows
// at once: each weight is dequantised once and used by every row. Row m's
// arithmetic is exactly its own chains (k ascending within a slice, slices
// folded in order), so y_mn does not depend on the other rows.
template <class R, class V>
BP_HD void mxfp4_column(V& v, const typename V::Tensor& a, const typename V::Tensor& codes,
                        const typename V::Tensor& scales, std::uint64_t n, std::uint64_t rows, const GemmShape& s,
                        typename V::F16* out) {
  typename V::F32 sum[kMaxGemmRows];
  typename V::F32 part[kMaxGemmRows];
  const std::uint64_t width = s.k / s.splits;
  for (std::uint64_t i = 0; i < s.splits; ++i) {
    const std::uint64_t p = s.order == FoldOrder::kForward ? i : s.splits - 1 - i;
    for (std::uint64_t m = 0; m < rows; ++m) part[m] = v.zero();
    for (std::uint64_t k = p * width; k < (p + 1) * width; ++k) {
      const typename V::F32 w = v.h2f(v.template recipe<R>(v.e2m1(codes, n, k), v.u8(scales, n, k / kMxBlock)));
      for (std::uint64_t m = 0; m < rows; ++m) part[m] = v.fma(v.widen(a, m, k), w, part[m]);
    }
    for (std::uint64_t m = 0; m < rows; ++m) sum[m] = i == 0 ? part[m] : v.add(sum[m], part[m]);
  }
  for (std::uint64_t m = 0; m < rows; ++m) out[m] = v.f2h(sum[m]);
}

// h_mi of swiglu.
template <class V>
BP_HD typename V::F16 swiglu_element(V& v, const typename V::Tensor& g, const typename V::Tensor& u, std::uint64_t m,
                                     std::uint64_t i) {
  return v.f2h(v.mul(v.silu(v.widen(g, m, i)), v.widen(u, m, i)));
}

}  // namespace bitproof::op
