// Small kernels for tests/cli/kernel_prove.py (issue 48): pairs the PTX proof must treat rightly.
// PTX: nvcc -ptx -arch=compute_90 kernels.cu -o kernels.ptx (CUDA 13.0)
#include <cuda_fp16.h>

// y = x, element by element.
extern "C" __global__ void copy(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

// y = x * 1.0 in FP16: equal to x for every number, but a NaN comes out as the canonical NaN
// (0x7FFF), so the two differ exactly on NaN payloads other than 0x7FFF. No uniform [-1, 1] case
// shows it; evaluating the output on all 65,536 values of its one leaf does (refuted by exhaustion).
extern "C" __global__ void times_one(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hmul(x[i], __ushort_as_half(0x3C00));
}

// y[i] = x[i] + x[i ^ 1], and the same with x[i] * 1.0 first. Equal bits for every input (a NaN
// makes both sums the canonical NaN), but the graphs differ and the output depends on two f16
// leaves (2^32 values, too many to evaluate): "not proven", and no case refutes it.
extern "C" __global__ void pair_sum(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hadd(x[i], x[i ^ 1u]);
}
extern "C" __global__ void pair_sum_times_one(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hadd(__hmul(x[i], __ushort_as_half(0x3C00)), x[i ^ 1u]);
}

// A loop whose trip count is a tensor value: a data-dependent branch, not provable by tracing.
extern "C" __global__ void data_loop(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half acc = x[i];
  const unsigned trips = __half_as_ushort(x[i]) & 3u;
  for (unsigned t = 0; t < trips; ++t) acc = __hadd(acc, x[i]);
  y[i] = acc;
}

// An address taken from a tensor value: not provable by tracing (the index is x's bits).
extern "C" __global__ void data_index(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[__half_as_ushort(x[i]) % n];
}
