// The timing gate's helper kernels (src/backend/cuda_timing.cpp), one small image:
//   bp_time_block  holds its stream until the host writes a nonzero word to `flag`
//                  (mapped host memory), so the start event, the timed graph and the
//                  stop event are queued before any of them runs: launch overhead is
//                  not timed (nvbench's blocking kernel). It gives up after
//                  kBlockTimeoutNs and writes 1 to timed_out, so nothing can hang.
//   bp_time_clock  measures the SM clock beside a sample: clock64 cycles over a
//                  globaltimer interval of kClockWindowNs, both read on one SM.
#include <cstdint>

namespace {
constexpr std::uint64_t kBlockTimeoutNs = 2'000'000'000;
constexpr std::uint64_t kClockWindowNs = 50'000;

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
}  // namespace

extern "C" __global__ void bp_time_block(const volatile std::uint32_t* flag, std::uint32_t* timed_out) {
  const std::uint64_t start = global_ns();
  while (*flag == 0) {
    if (global_ns() - start > kBlockTimeoutNs) {
      *timed_out = 1;
      return;
    }
  }
}

// out[0]: SM cycles, out[1]: nanoseconds of the same interval.
extern "C" __global__ void bp_time_clock(std::uint64_t* out) {
  const std::uint64_t t0 = global_ns();
  const long long c0 = clock64();
  std::uint64_t t1 = t0;
  while (t1 - t0 < kClockWindowNs) t1 = global_ns();
  const long long c1 = clock64();
  out[0] = static_cast<std::uint64_t>(c1 - c0);
  out[1] = t1 - t0;
}
