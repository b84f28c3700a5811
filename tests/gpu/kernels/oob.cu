// A GEMV that reads far outside its input (tests/gpu/ab_kernels.py: exit 2 on the GPU, no crash).
#include "row_dot.cuh"

// Reads x at `offset` elements past its start (far outside every buffer): an illegal address.
extern "C" __global__ void gemv_oob(const __half* x, const __half* w, __half* y, unsigned k, unsigned long long offset) {
  const float v = row_dot<128>(x + offset, w + static_cast<size_t>(blockIdx.x) * k, k);
  if (threadIdx.x == 0) y[blockIdx.x] = __float2half_rn(v);
}


// Computes y right, then thread 0 of the last block also writes 3 elements past y's end (inside
// the guard the GPU runner keeps around every buffer; no fault): ab must name the buffer, exit 2.
extern "C" __global__ void gemv_overrun(const __half* x, const __half* w, __half* y, unsigned k) {
  const float v = row_dot<128>(x, w + static_cast<size_t>(blockIdx.x) * k, k);
  if (threadIdx.x != 0) return;
  y[blockIdx.x] = __float2half_rn(v);
  if (blockIdx.x + 1 == gridDim.x) y[gridDim.x + 2] = __float2half_rn(v);
}
