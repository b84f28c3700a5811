// doctest's main, plus one line when the suites' largest sweeps are stepped (the sanitizer
// build: tests/sweep_stride.hpp), so a stepped run always says so.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "backend/backend.hpp"
#include "sweep_stride.hpp"

int main(int argc, char** argv) {
  // The CUDA backend's compile child (NVRTC under a time limit) is this program again.
  if (const auto child = bitproof::run_backend_child(argc, argv)) return *child;
  if (const unsigned stride = bitproof::test::sweep_stride(); stride != 1) {
    std::printf("bitproof tests: the largest sweeps take 1 case in %u (BITPROOF_TEST_STRIDE=%u: the sanitizer build "
                "steps them, the Release build runs every case; BITPROOF_TEST_STRIDE=1 runs every case)\n",
                stride, stride);
    std::fflush(stdout);
  }
  doctest::Context context(argc, argv);
  return context.run();
}
