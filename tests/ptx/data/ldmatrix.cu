// ldmatrix's layouts (issue 48; module.hpp's kLdmatrix card): tests/ptx/test_ptx_mma.cpp runs these on
// the executor against the layout the PTX ISA gives, and tests/gpu/kernel_prove_gpu.py sets the GPU's
// bits against the executor's (--backend all). One warp: x (256 f16, four 8x8 matrices, row-major,
// matrix m at element 64m) is copied to shared memory, lane 8m + i gives the address of matrix m's
// row i, and every lane stores its registers to y[4 * lane + m] (32-bit words; y is 512 bytes).
// PTX: nvcc -ptx -arch=compute_90 ldmatrix.cu -o ldmatrix.ptx (CUDA 13.0)
#include <cuda_fp16.h>

namespace {

__device__ unsigned stage(const __half* x, __half* sm) {  // x to shared; this lane's row address
  for (unsigned i = threadIdx.x; i < 256; i += 32) sm[i] = x[i];
  __syncthreads();
  const unsigned m = threadIdx.x / 8, i = threadIdx.x % 8;
  return static_cast<unsigned>(__cvta_generic_to_shared(sm + 64 * m + 8 * i));
}

__device__ void put(unsigned* y, const unsigned* r, int n) {
  for (int m = 0; m < n; ++m) y[4 * threadIdx.x + m] = r[m];
}

}  // namespace

extern "C" __global__ void ldm_x4(const __half* x, unsigned* y) {
  __shared__ __align__(16) __half sm[256];
  const unsigned a = stage(x, sm);
  unsigned r[4];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
  put(y, r, 4);
}

extern "C" __global__ void ldm_x4_trans(const __half* x, unsigned* y) {
  __shared__ __align__(16) __half sm[256];
  const unsigned a = stage(x, sm);
  unsigned r[4];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
  put(y, r, 4);
}

// .x1 reads lanes 0-7's addresses and .x2 lanes 0-15's; the others' are not read.
extern "C" __global__ void ldm_x1(const __half* x, unsigned* y) {
  __shared__ __align__(16) __half sm[256];
  const unsigned a = stage(x, sm);
  unsigned r[1];
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(a));
  put(y, r, 1);
}

extern "C" __global__ void ldm_x2_trans(const __half* x, unsigned* y) {
  __shared__ __align__(16) __half sm[256];
  const unsigned a = stage(x, sm);
  unsigned r[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(a));
  put(y, r, 2);
}
