// Source of the PTX fixtures in this directory (tests/ptx/README.md gives the command).
#include <cuda_fp16.h>

// y[i] = a * x[i] + y[i] (elementwise, fused multiply-add).
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// out[warp] = the sum of a warp's 32 inputs, butterfly order.
extern "C" __global__ void warp_reduce(const float* in, float* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}

// out[block] = the tree sum of the block's 128 inputs in shared memory.
extern "C" __global__ void block_reduce(const float* in, float* out) {
  __shared__ float s[128];
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * 128 + t];
  __syncthreads();
  for (unsigned w = 64; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// y[row] = sum_k w[row][k] * x[k] in f32 from f16 operands: one warp a row, each lane a strided
// K slice with FMAs, then a butterfly reduce; rows of three matrices joined (fused) or one (separate).
__device__ void gemv_row(const __half* x, const __half* w, __half* y, unsigned row, unsigned k) {
  unsigned lane = threadIdx.x & 31;
  float acc = 0.0f;
  for (unsigned j = lane; j < k; j += 32) acc = fmaf(__half2float(w[row * k + j]), __half2float(x[j]), acc);
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[row] = __float2half_rn(acc);
}

extern "C" __global__ void gemv_sep(const __half* x, const __half* w, __half* y, unsigned n, unsigned k) {
  unsigned row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row < n) gemv_row(x, w, y, row, k);
}

extern "C" __global__ void gemv_fused(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2,
                                      unsigned n0, unsigned n1, unsigned n2, unsigned k) {
  unsigned row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row < n0) gemv_row(x, w, y0, row, k);
  else if (row < n0 + n1) gemv_row(x, w + n0 * k, y1, row - n0, k);
  else if (row < n0 + n1 + n2) gemv_row(x, w + (n0 + n1) * k, y2, row - n0 - n1, k);
}

// Half arithmetic: c = a * b + c lane-wise in half2, then hadd, hmul, and the vote.
extern "C" __global__ void half_ops(const __half2* a, const __half2* b, __half2* c, unsigned* ballot) {
  unsigned i = threadIdx.x;
  __half2 r = __hfma2(a[i], b[i], c[i]);
  r = __hadd2(r, a[i]);
  c[i] = __hmul2(r, b[i]);
  unsigned m = __ballot_sync(0xffffffffu, __low2float(r) > 0.0f);
  if (i == 0) *ballot = m;
}
