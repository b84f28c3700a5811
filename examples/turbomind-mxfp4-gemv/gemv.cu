// TurboMind-style MXFP4 GEMV, y = W x, in two dequant forms (issue 47's example; bitproof's own code,
// modelled on TurboMind's MXFP4 decode, no code copied):
//
//   gemv_ordinary  w = hmul(hmul(raw, 2^14), half_bits(a << 10))          two FP16 multiplies
//   gemv_folded    w = hmul(raw, half_bits((a + 14) << 10))               the 2^14 folded into the scale
//
// where raw = the E2M1 code's bits placed as FP16 E2M1(x) * 2^-14 (sign to bit 15, E.M to bits
// 11..9; code 1 is an FP16 subnormal) and a = clamp(s + 15 - 127, 0, 30) the UE8M0 scale byte as an
// FP16 exponent field. For scale bytes 114..126 (a = 2..14) the two agree on every code; from 129
// (a + 14 = 31: +Inf) the folded scale overflows and the outputs differ.
//
// Read in (pins; src/recipes/turbomind_mxfp4.hpp models the same element arithmetic):
// - the element placement and the 2^14 multiply: 1CatAI/1Cat-vLLM at 40382cb1de717bc554f4a99b59398a71383d6d30,
//   csrc/sm70_turbomind/lmdeploy/src/turbomind/kernels/attention/quantization.h (lmdeploy's TurboMind,
//   vendored), ConvertKvCache<fp4_e2m1_t, T>::cvt_f16x8_e2m1: (x << 12 & 0x80008000) | (x << 9 &
//   0x0E000E00), then mul.f16x2 by (15 - 1 + 15) << 10 = 2^14;
// - the load-time clamp and the scale multiply: the same repository at ae13773a0deebf583022613c4508e5072cedef91,
//   kernels/gemm/cast.cu adjust_ue8m0_scale_for_half_kernel (lines 215-222) and kernels/gemm/transform.h
//   Transform_HMMA_SIMT_B::dequant (142-149): __ushort_as_half(a << 10), one __hmul per element (these two
//   pins as src/recipes/turbomind_mxfp4.hpp records them; the first was read again for this file).
//   (InternLM/lmdeploy's own src/turbomind/kernels/attention/quantization.h, as stored at 082e49f6, has u8/u4
//   decoders only, no E2M1 one to pin; its lop3 tables use the a = 0xF0, b = 0xCC, c = 0xAA convention.)
//
// Layout (what `bitproof synth-checkpoint` writes for an MXFP4 weight): codes [n, k/2] bytes, two E2M1
// codes a byte, low nibble first (column c in byte c / 2); scales [n, k/32] UE8M0 bytes; x [k] f16;
// y [n] f16. One warp a row; lane j takes the bytes j, j + 32, ...; f32 FMA accumulation; butterfly
// reduce; y = round-to-nearest f16. Launch: grid ceil(n / 4), block 128; k a multiple of 64.
//
// PTX (tests/ptx reads it): nvcc -ptx -arch=sm_90 examples/turbomind-mxfp4-gemv/gemv.cu -o examples/turbomind-mxfp4-gemv/gemv.ptx
#include <cuda_fp16.h>

namespace {

__device__ __forceinline__ __half e2m1_raw(unsigned x) {
  return __ushort_as_half(static_cast<unsigned short>(((x << 12) & 0x8000u) | ((x << 9) & 0x0E00u)));
}

// The UE8M0 byte as an FP16 exponent field, clamped to 0..30 (31 would be Inf).
__device__ __forceinline__ unsigned scale_field(unsigned s) {
  const int a = static_cast<int>(s) + 15 - 127;
  return static_cast<unsigned>(a < 0 ? 0 : (a > 30 ? 30 : a));
}

template <bool kFolded>
__device__ __forceinline__ __half dequant(unsigned code, unsigned a) {
  if (kFolded) return __hmul(e2m1_raw(code), __ushort_as_half(static_cast<unsigned short>((a + 14) << 10)));
  const __half elem = __hmul(e2m1_raw(code), __ushort_as_half(0x7400));  // 2^14
  return __hmul(elem, __ushort_as_half(static_cast<unsigned short>(a << 10)));
}

template <bool kFolded>
__device__ void gemv_row(const unsigned char* codes, const unsigned char* scales, const __half* x, __half* y,
                         unsigned n, unsigned k) {
  const unsigned row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x & 31;
  if (row >= n) return;
  const unsigned char* rc = codes + static_cast<size_t>(row) * (k / 2);
  const unsigned char* rs = scales + static_cast<size_t>(row) * (k / 32);
  float acc = 0.0f;
  for (unsigned j = lane; j < k / 2; j += 32) {
    const unsigned byte = rc[j], a = scale_field(rs[j / 16]);
    acc = fmaf(__half2float(dequant<kFolded>(byte & 0xF, a)), __half2float(x[2 * j]), acc);
    acc = fmaf(__half2float(dequant<kFolded>(byte >> 4, a)), __half2float(x[2 * j + 1]), acc);
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[row] = __float2half_rn(acc);
}

}  // namespace

extern "C" __global__ void gemv_ordinary(const unsigned char* codes, const unsigned char* scales, const __half* x,
                                         __half* y, unsigned n, unsigned k) {
  gemv_row<false>(codes, scales, x, y, n, k);
}

extern "C" __global__ void gemv_folded(const unsigned char* codes, const unsigned char* scales, const __half* x,
                                       __half* y, unsigned n, unsigned k) {
  gemv_row<true>(codes, scales, x, y, n, k);
}
