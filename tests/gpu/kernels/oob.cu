// A GEMV that reads far outside its input (tests/gpu/ab_kernels.py: exit 2 on the GPU, no crash).
#include "row_dot.cuh"

// Reads x at `offset` elements past its start (far outside every buffer): an illegal address.
extern "C" __global__ void gemv_oob(const __half* x, const __half* w, __half* y, unsigned k, unsigned long long offset) {
  const float v = row_dot<128>(x + offset, w + static_cast<size_t>(blockIdx.x) * k, k);
  if (threadIdx.x == 0) y[blockIdx.x] = __float2half_rn(v);
}

