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

// Table lookups (a kLoad node over the table's bytes) at an address from x's bits. One leaf:
// the lemma pass enumerates the address (proven when both arms match). Two leaves (2^32 values):
// no lemma encloses it, so bitproof cannot show the address stays in the table: not proven, even
// for the same kernel twice. Past the table for some x: the lemma's evaluation says so (exit 2).
__device__ const unsigned short kLookup[64] = {
    0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800, 0x4880, 0x4900, 0x4980, 0x4A00, 0x4A80,
    0x4B00, 0x4B80, 0x4C00, 0x4C40, 0x4C80, 0x4CC0, 0x4D00, 0x4D40, 0x4D80, 0x4DC0, 0x4E00, 0x4E40, 0x4E80,
    0x4EC0, 0x4F00, 0x4F40, 0x4F80, 0x4FC0, 0x5000, 0xBC00, 0xC000, 0xC200, 0xC400, 0xC500, 0xC600, 0xC700,
    0xC800, 0xC880, 0xC900, 0xC980, 0xCA00, 0xCA80, 0xCB00, 0xCB80, 0xCC00, 0xCC40, 0xCC80, 0xCCC0, 0xCD00,
    0xCD40, 0xCD80, 0xCDC0, 0xCE00, 0xCE40, 0xCE80, 0xCEC0, 0xCF00, 0xCF40, 0xCF80, 0xCFC0, 0xD000};
extern "C" __global__ void narrow_lookup(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __ushort_as_half(kLookup[__half_as_ushort(x[i]) & 63u]);
}
extern "C" __global__ void wide_lookup(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __ushort_as_half(kLookup[(__half_as_ushort(x[i]) + __half_as_ushort(x[i ^ 1u])) & 63u]);
}
extern "C" __global__ void past_lookup(const __half* x, __half* y, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __ushort_as_half(kLookup[__half_as_ushort(x[i]) & 127u]);
}
