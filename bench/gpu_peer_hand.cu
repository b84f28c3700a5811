// The hand-written peer of the claim sweep kernel (bench/gpu_sweep.sh): a plain
// CUDA kernel that multiplies every FP16 pair with __hmul and through FP32
// (__half2float, *, __float2half_rn) and counts the pairs whose bits differ. No
// digest, no claims table, no recipe dispatch: the rate bitproof's generic
// kernel is measured against. Prints the median of 20 launches (CUDA events).
//   nvcc -O3 -arch=sm_90 -o gpu_peer_hand bench/gpu_peer_hand.cu && ./gpu_peer_hand
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t e = (call);                                                            \
    if (e != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

constexpr int kPerThread = 256;  // consecutive a codes, one b code
constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) hand_sweep(unsigned long long* differing) {
  const std::uint64_t first = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kPerThread;
  const __half b = __ushort_as_half(static_cast<unsigned short>(first >> 16));
  const auto a0 = static_cast<unsigned short>(first & 0xFFFF);
  unsigned n = 0;
#pragma unroll 8
  for (int t = 0; t < kPerThread; ++t) {
    const __half a = __ushort_as_half(static_cast<unsigned short>(a0 + t));
    const unsigned short hw = __half_as_ushort(__hmul(a, b));
    const unsigned short fp32 = __half_as_ushort(__float2half_rn(__half2float(a) * __half2float(b)));
    n += hw != fp32 ? 1 : 0;
  }
  for (int d = 16; d > 0; d /= 2) n += __shfl_xor_sync(0xFFFFFFFFu, n, d);
  if (threadIdx.x % 32 == 0 && n != 0) atomicAdd(differing, n);
}

int main() {
  constexpr unsigned kBlocks = (std::uint64_t{1} << 32) / kPerThread / kThreads;
  unsigned long long* differing = nullptr;
  CHECK(cudaMalloc(&differing, sizeof *differing));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  unsigned long long count = 0;
  for (int i = 0; i < 22; ++i) {  // two warm-up launches
    CHECK(cudaMemset(differing, 0, sizeof *differing));
    CHECK(cudaEventRecord(start));
    hand_sweep<<<kBlocks, kThreads>>>(differing);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    if (i >= 2) ms.push_back(t);
    CHECK(cudaMemcpy(&count, differing, sizeof count, cudaMemcpyDeviceToHost));
  }
  std::sort(ms.begin(), ms.end());
  std::printf("{\"peer\": \"hand-written __hmul vs FP32 route\", \"launches\": %zu, \"median_ms\": %.4f, \"min_ms\": %.4f, "
              "\"cases_per_second\": %.4g, \"differing\": %llu}\n",
              ms.size(), ms[ms.size() / 2], ms[0], 4294967296.0 / (ms[ms.size() / 2] / 1000.0), count);
  return count == 0 ? 0 : 1;
}
