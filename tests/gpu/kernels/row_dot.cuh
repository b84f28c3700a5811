// The row dot product the test kernels share (tests/gpu/ab_kernels.py).
#pragma once
#include <cuda_fp16.h>
// One block of THREADS per output row: thread t sums x[k] * w[k] over k = t,
// t + THREADS, ... with fmaf, then the block adds the partial sums in a fixed
// tree. ROUND_PARTIALS: each thread's partial sum rounded to FP16 first (the
// variant that differs: another order alone rarely moves an FP16 result).
template <int THREADS, bool ROUND_PARTIALS = false>
__device__ float row_dot(const __half* x, const __half* w_row, unsigned k) {
  __shared__ float part[THREADS];
  float acc = 0.0f;
  for (unsigned i = threadIdx.x; i < k; i += THREADS) acc = fmaf(__half2float(x[i]), __half2float(w_row[i]), acc);
  part[threadIdx.x] = ROUND_PARTIALS ? __half2float(__float2half_rn(acc)) : acc;
  __syncthreads();
  for (unsigned s = THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  return part[0];
}

