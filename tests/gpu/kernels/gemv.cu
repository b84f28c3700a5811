// Small GEMV kernels for tests/gpu/ab_kernels.py: the fused auxiliary GEMVs of
// the issue-47 example at a test's size, a variant that differs (FP16 partial sums) and
// one that leaves an output unwritten. y = W x with x [1, K] and W [N, K] in FP16,
// FP32 accumulation.
#include "row_dot.cuh"

// Row blockIdx.x of the joined weight [n0 + n1 + n2, K] goes to y0, y1 or y2.
template <int THREADS, bool ROUND_PARTIALS = false>
__device__ void fused_rows(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2, unsigned n0,
                           unsigned n1, unsigned k, bool write_last) {
  const unsigned row = blockIdx.x;
  const float v = row_dot<THREADS, ROUND_PARTIALS>(x, w + static_cast<size_t>(row) * k, k);
  if (threadIdx.x != 0) return;
  if (row < n0) {
    y0[row] = __float2half_rn(v);
  } else if (row < n0 + n1) {
    y1[row - n0] = __float2half_rn(v);
  } else if (write_last) {
    y2[row - n0 - n1] = __float2half_rn(v);
  }
}

extern "C" __global__ void gemv_sep(const __half* x, const __half* w, __half* y, unsigned k) {
  const float v = row_dot<128>(x, w + static_cast<size_t>(blockIdx.x) * k, k);
  if (threadIdx.x == 0) y[blockIdx.x] = __float2half_rn(v);
}

extern "C" __global__ void gemv_fused(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2,
                                     unsigned n0, unsigned n1, unsigned k) {
  fused_rows<128>(x, w, y0, y1, y2, n0, n1, k, true);
}

// Each thread's partial sum rounded to FP16 before the block's tree: the variant that differs.
extern "C" __global__ void gemv_fused_half_partials(const __half* x, const __half* w, __half* y0, __half* y1,
                                                   __half* y2, unsigned n0, unsigned n1, unsigned k) {
  fused_rows<128, true>(x, w, y0, y1, y2, n0, n1, k, true);
}

// Leaves y2 unwritten: its elements keep the poison (0xFFFF, a NaN).
extern "C" __global__ void gemv_fused_no_last(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2,
                                             unsigned n0, unsigned n1, unsigned k) {
  fused_rows<128>(x, w, y0, y1, y2, n0, n1, k, false);
}

