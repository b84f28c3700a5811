// Small GEMV kernels for tests/gpu/ab_kernels.py: the fused auxiliary GEMVs of
// the issue-47 example at a test's size, and faulty variants (a kernel that
// leaves one output unwritten, one that reads far outside its buffers, one that
// never returns). y = W x with x [1, K] and W [N, K] in FP16, FP32 accumulation.
#include <cuda_fp16.h>

// One block of THREADS per output row: thread t sums x[k] * w[k] over k = t,
// t + THREADS, ... with fmaf, then the block adds the partial sums in a fixed
// tree. The summation order depends on THREADS, so 128 and 256 give other bits.
template <int THREADS>
__device__ float row_dot(const __half* x, const __half* w_row, unsigned k) {
  __shared__ float part[THREADS];
  float acc = 0.0f;
  for (unsigned i = threadIdx.x; i < k; i += THREADS) acc = fmaf(__half2float(x[i]), __half2float(w_row[i]), acc);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  return part[0];
}

// Row blockIdx.x of the joined weight [n0 + n1 + n2, K] goes to y0, y1 or y2.
template <int THREADS>
__device__ void fused_rows(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2, unsigned n0,
                           unsigned n1, unsigned k, bool write_last) {
  const unsigned row = blockIdx.x;
  const float v = row_dot<THREADS>(x, w + static_cast<size_t>(row) * k, k);
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

// 256 threads a row: another summation order (the differing variant).
extern "C" __global__ void gemv_fused_256(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2,
                                         unsigned n0, unsigned n1, unsigned k) {
  fused_rows<256>(x, w, y0, y1, y2, n0, n1, k, true);
}

// Leaves y2 unwritten: its elements keep the poison (0xFFFF, a NaN).
extern "C" __global__ void gemv_fused_no_last(const __half* x, const __half* w, __half* y0, __half* y1, __half* y2,
                                             unsigned n0, unsigned n1, unsigned k) {
  fused_rows<128>(x, w, y0, y1, y2, n0, n1, k, false);
}

// Reads x at `offset` elements past its start (far outside every buffer): an illegal address.
extern "C" __global__ void gemv_oob(const __half* x, const __half* w, __half* y, unsigned k, unsigned long long offset) {
  const float v = row_dot<128>(x + offset, w + static_cast<size_t>(blockIdx.x) * k, k);
  if (threadIdx.x == 0) y[blockIdx.x] = __float2half_rn(v);
}

// Never returns: waits for a value nobody writes.
extern "C" __global__ void spin(unsigned short* y) {
  volatile unsigned short* v = y;
  while (v[0] != 0x1234u) {
  }
}
