// Tensor-core kernels for the PTX proof's opaque mma nodes (issue 48): tests/cli/kernel_prove.py (h)
// and tests/gpu/kernel_prove_gpu.py. One warp computes y = f16(A x B^T) for A 16x16 and B 8x16 (both
// f16, row-major: B's rows are the columns of the product) with mma.sync.aligned.m16n8k16.row.col.
// f32.f16.f16.f32 and a zero accumulator; y is 16x8 f16.
// PTX: nvcc -ptx -arch=compute_90 mma.cu -o mma.ptx (CUDA 13.0)
//
// Fragments (PTX ISA 9.7.14.5.8, m16n8k16 .f16): lane l, g = l / 4, t = l % 4. A: a0 = A[g][2t..2t+1],
// a1 = A[g+8][2t..], a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]; B: b0 = B[g][2t..2t+1], b1 = B[g][2t+8..];
// D: d0, d1 = (g, 2t), (g, 2t+1); d2, d3 = (g+8, 2t), (g+8, 2t+1).
#include <cuda_fp16.h>

namespace {

struct Frag {
  unsigned a[4], b[2];
};

__device__ unsigned pair_at(const __half* m, unsigned row, unsigned col) {  // two halves as one register
  return *reinterpret_cast<const unsigned*>(m + row * 16 + col);
}

__device__ Frag fragments(const __half* A, const __half* B) {
  const unsigned l = threadIdx.x, g = l / 4, t = l % 4;
  return {{pair_at(A, g, 2 * t), pair_at(A, g + 8, 2 * t), pair_at(A, g, 2 * t + 8), pair_at(A, g + 8, 2 * t + 8)},
          {pair_at(B, g, 2 * t), pair_at(B, g, 2 * t + 8)}};
}

__device__ void mma16(const unsigned a[4], const unsigned b[2], const float c[4], float d[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
}

__device__ void mma8(unsigned a0, unsigned a1, unsigned b0, const float c[4], float d[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(b0), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__device__ void store(const float d[4], __half* y) {
  const unsigned l = threadIdx.x, g = l / 4, t = l % 4;
  y[g * 8 + 2 * t] = __float2half_rn(d[0]);
  y[g * 8 + 2 * t + 1] = __float2half_rn(d[1]);
  y[(g + 8) * 8 + 2 * t] = __float2half_rn(d[2]);
  y[(g + 8) * 8 + 2 * t + 1] = __float2half_rn(d[3]);
}

// y = f16(a x b + 0): the one m16n8k16 every kernel but mma_two_k8 issues.
__device__ void product(const unsigned a[4], const unsigned b[2], __half* y) {
  const float zero[4] = {0.f, 0.f, 0.f, 0.f};
  float d[4];
  mma16(a, b, zero, d);
  store(d, y);
}

}  // namespace

// The fragments loaded straight from global memory.
extern "C" __global__ void mma_direct(const __half* A, const __half* B, __half* y) {
  const Frag f = fragments(A, B);
  product(f.a, f.b, y);
}

// The same product through shared memory: the warp copies A and B there element by element (another
// thread owns each element), then reads the same fragments. Proven equal to mma_direct: the mma nodes'
// operands are the same leaves.
extern "C" __global__ void mma_shared(const __half* A, const __half* B, __half* y) {
  __shared__ __align__(16) __half sA[256], sB[128];
  for (unsigned i = threadIdx.x; i < 256; i += 32) sA[255 - i] = A[255 - i];
  for (unsigned i = threadIdx.x; i < 128; i += 32) sB[i] = B[i];
  __syncthreads();
  const Frag f = fragments(sA, sB);
  product(f.a, f.b, y);
}

// The k halves exchanged in both operands: the same sum of the same 16 products per output, in
// another order of k. Not proven (another operand order is another node: the hardware's accumulation
// order is not known); whether the GPU's bits differ is the hardware's business ("not proven" is not
// "refuted").
extern "C" __global__ void mma_k_swapped(const __half* A, const __half* B, __half* y) {
  const Frag f = fragments(A, B);
  const unsigned a[4] = {f.a[2], f.a[3], f.a[0], f.a[1]}, b[2] = {f.b[1], f.b[0]};
  product(a, b, y);
}

// Two m16n8k8 products chained through the f32 accumulator (k 0..7, then 8..15): another
// instruction, not proven; the GPU's bits may differ (a rounding after the first eight products).
extern "C" __global__ void mma_two_k8(const __half* A, const __half* B, __half* y) {
  const Frag f = fragments(A, B);
  const float zero[4] = {0.f, 0.f, 0.f, 0.f};
  float half_sum[4], d[4];
  mma8(f.a[0], f.a[1], f.b[0], zero, half_sum);
  mma8(f.a[2], f.a[3], f.b[1], half_sum, d);
  store(d, y);
}

// A's rows read one lower (row g+1 for g, wrapping): another product, refuted by the GPU's cases.
extern "C" __global__ void mma_shifted(const __half* A, const __half* B, __half* y) {
  const unsigned l = threadIdx.x, g = l / 4, t = l % 4, h = (g + 1) % 8;
  const unsigned a[4] = {pair_at(A, h, 2 * t), pair_at(A, h + 8, 2 * t), pair_at(A, h, 2 * t + 8),
                         pair_at(A, h + 8, 2 * t + 8)};
  const unsigned b[2] = {pair_at(B, g, 2 * t), pair_at(B, g, 2 * t + 8)};
  product(a, b, y);
}

// The fragments through ldmatrix (as CUTLASS and Triton load them): A and B copied to shared memory,
// A's four 8x8 blocks with one ldmatrix.x4 (lanes 0-7 give block 0's rows A[i][0..7], 8-15 block 1's
// A[8+i][0..7], 16-23 block 2's A[i][8..15], 24-31 block 3's A[8+i][8..15]), B's two with
// ldmatrix.x2 (B[i][0..7], B[i][8..15]). The same registers as mma_direct's: proven equal.
extern "C" __global__ void mma_ldmatrix(const __half* A, const __half* B, __half* y) {
  __shared__ __align__(16) __half sA[256], sB[128];
  for (unsigned i = threadIdx.x; i < 256; i += 32) sA[i] = A[i];
  for (unsigned i = threadIdx.x; i < 128; i += 32) sB[i] = B[i];
  __syncthreads();
  const unsigned l = threadIdx.x, m = l / 8, i = l % 8;
  const unsigned pa = static_cast<unsigned>(__cvta_generic_to_shared(sA + (i + 8 * (m % 2)) * 16 + 8 * (m / 2)));
  const unsigned pb = static_cast<unsigned>(__cvta_generic_to_shared(sB + i * 16 + 8 * (m % 2)));
  unsigned a[4], b[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(pa));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
  product(a, b, y);
}

// B kept k-major in shared memory (sBt[k][n] = B[n][k], as a K x N weight is stored) and its
// fragments read with ldmatrix.x2.trans (lane 4g + t gets sBt[2t][g], sBt[2t+1][g]: b0 again).
extern "C" __global__ void mma_ldmatrix_trans(const __half* A, const __half* B, __half* y) {
  __shared__ __align__(16) __half sBt[128];
  for (unsigned i = threadIdx.x; i < 128; i += 32) sBt[(i % 16) * 8 + i / 16] = B[i];
  __syncthreads();
  const unsigned l = threadIdx.x, m = l / 8, i = l % 8;
  const unsigned pb = static_cast<unsigned>(__cvta_generic_to_shared(sBt + (i + 8 * (m % 2)) * 8));
  const Frag f = fragments(A, B);
  unsigned b[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
  product(f.a, b, y);
}
