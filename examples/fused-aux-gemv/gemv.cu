// The fused aux GEMVs of issue 47, as a kernel engineer writes them: three launches, one per
// weight (gemv_sep), against one launch over the weights' rows joined into one buffer
// (gemv_fused: N = n0 + n1 + the rest). Both compute each row in the same order (row_dot),
// so their bits must be equal; a launch with another thread count splits K differently and
// must differ. Compiled by NVRTC (bitproof ab) to PTX for compute_90: the GPU runs it and the
// CPU's PTX executor runs the same PTX.
#include <cuda_fp16.h>

// One output row of y = W x: thread t sums w[k] * x[k] for k = t, t + blockDim.x, ... with
// fmaf in float, each warp's partials are added by shfl.down (16, 8, 4, 2, 1), each warp's sum
// is kept in shared memory as FP16 (half the bytes: a common trick, and a rounding point per
// warp: another thread count rounds other partials), then thread 0 adds the warps' sums in warp
// order in float. blockDim.x: a multiple of 32, at most 1024. The sum is thread 0's (the other
// threads return 0).
__device__ __forceinline__ float row_dot(const __half* x, const __half* w, unsigned k_len) {
  float acc = 0.0f;
  for (unsigned k = threadIdx.x; k < k_len; k += blockDim.x) acc = fmaf(__half2float(w[k]), __half2float(x[k]), acc);
  for (int offset = 16; offset > 0; offset >>= 1) acc = __fadd_rn(acc, __shfl_down_sync(0xffffffffu, acc, offset));
  __shared__ __half warp_sums[32];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = __float2half_rn(acc);
  __syncthreads();
  float total = 0.0f;
  if (threadIdx.x == 0) {
    for (unsigned i = 0; i < blockDim.x / 32; ++i) total += __half2float(warp_sums[i]);
  }
  return total;
}

// y[n] = round_fp16(row n of w · x), one block a row: grid = N, w is N x k_len.
extern "C" __global__ void gemv_sep(const __half* x, const __half* w, __half* y, unsigned k_len) {
  const float s = row_dot(x, w + static_cast<size_t>(blockIdx.x) * k_len, k_len);
  if (threadIdx.x == 0) y[blockIdx.x] = __float2half_rn(s);
}

// The three GEMVs in one launch over the joined weight (rows of w0, then w1, then w2): grid =
// n0 + n1 + n2; row n goes to y0, y1 or y2 by where it lies.
extern "C" __global__ void gemv_fused(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2,
                                      unsigned n0, unsigned n1, unsigned k_len) {
  const unsigned n = blockIdx.x;
  const float s = row_dot(x, w + static_cast<size_t>(n) * k_len, k_len);
  if (threadIdx.x != 0) return;
  const __half h = __float2half_rn(s);
  if (n < n0) {
    y0[n] = h;
  } else if (n < n0 + n1) {
    y1[n - n0] = h;
  } else {
    y2[n - n0 - n1] = h;
  }
}
