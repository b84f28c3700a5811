// Source of bits.ptx (tests/ptx/README.md): the bit manipulation and packing instructions nvcc
// emits for dequant and GEMV code, through the CUDA intrinsics that make them (the modes of prmt,
// bfi and lop3 have no intrinsic: inline PTX, as TurboMind's decoders write them). One thread
// per input pair (a, b, c); out[24 * i + j] is word j (test_ptx_bits.cpp names them).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

template <int kMode>
__device__ unsigned prmt_mode(unsigned a, unsigned b, unsigned c) {
  unsigned d;
  if (kMode == 0) asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  if (kMode == 1) asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  if (kMode == 2) asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  if (kMode == 3) asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  if (kMode == 4) asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  if (kMode == 5) asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

extern "C" __global__ void bits(const unsigned* in, unsigned* out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
  const unsigned long long ab = (static_cast<unsigned long long>(b) << 32) | a;
  unsigned* o = out + 24 * i;
  o[0] = __byte_perm(a, b, c);
  o[1] = prmt_mode<0>(a, b, c);
  o[2] = prmt_mode<1>(a, b, c);
  o[3] = prmt_mode<2>(a, b, c);
  o[4] = prmt_mode<3>(a, b, c);
  o[5] = prmt_mode<4>(a, b, c);
  o[6] = prmt_mode<5>(a, b, c);
  o[7] = __popc(a);
  o[8] = __clz(a);
  o[9] = __brev(a);
  o[10] = __popcll(ab) | (__clzll(ab) << 8);
  o[11] = static_cast<unsigned>(__brevll(ab) >> 16);
  o[12] = __funnelshift_l(a, b, c);
  o[13] = __funnelshift_r(a, b, c);
  o[14] = __funnelshift_lc(a, b, c);
  o[15] = __funnelshift_rc(a, b, c);
  unsigned bfe_u, bfe_s, bfi, lop;
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(bfe_u) : "r"(a), "r"(b), "r"(c));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(bfe_s) : "r"(a), "r"(b), "r"(c));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(bfi) : "r"(a), "r"(b), "r"(c), "r"(c >> 8));
  asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(lop) : "r"(a), "r"(b), "r"(c));  // majority
  o[16] = bfe_u;
  o[17] = bfe_s;
  o[18] = bfi;
  o[19] = lop;
  // A nibble's field as compilers write it ((a >> 4) & 0xF, a sign-extended field).
  o[20] = ((a >> (c & 31)) & 0xF) | (static_cast<unsigned>(static_cast<int>(b << 4) >> 28) << 4);
  const __half2 h = __floats2half2_rn(__uint_as_float(a), __uint_as_float(b));
  o[21] = *reinterpret_cast<const unsigned*>(&h);
  const __nv_bfloat162 bf = __floats2bfloat162_rn(__uint_as_float(a), __uint_as_float(b));
  o[22] = *reinterpret_cast<const unsigned*>(&bf);
  o[23] = __float_as_uint(__bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(c))));
}
