// The sanitizer build's stride through the suites' largest sweeps.
//
// A sanitizer run needs every code path, not every case again: the Release run proves the
// sweeps exhaustively, and under AddressSanitizer + UndefinedBehaviorSanitizer the same
// loops take every k-th case (k odd, so low mantissa bits and exponent fields still vary;
// the edge codes each sweep pairs with stay complete). k comes from the compile definition
// BITPROOF_TEST_STRIDE, which CMakeLists.txt sets only when BITPROOF_SANITIZE is on
// (cache variable BITPROOF_SANITIZE_TEST_STRIDE), and the environment variable of the same
// name overrides it at run time (BITPROOF_TEST_STRIDE=1: every case, sanitizers or not).
// tests/main.cpp prints the stride whenever it is not 1, so no run is stepped silently.
#pragma once

#include <cstdint>
#include <cstdlib>

#ifndef BITPROOF_TEST_STRIDE
#define BITPROOF_TEST_STRIDE 1
#endif

namespace bitproof::test {

// 1 (every case) unless this is a sanitizer build or BITPROOF_TEST_STRIDE says otherwise.
inline unsigned sweep_stride() {
  static const unsigned stride = [] {
    unsigned s = BITPROOF_TEST_STRIDE;
    if (const char* env = std::getenv("BITPROOF_TEST_STRIDE"); env != nullptr && *env != '\0') {
      char* end = nullptr;
      const unsigned long v = std::strtoul(env, &end, 10);
      if (*end == '\0' && v >= 1 && v <= 1000) s = static_cast<unsigned>(v);
    }
    return s < 1 ? 1u : s;
  }();
  return stride;
}

// n cases stepped: how many of n a stepped loop visits (for counts the tests check).
inline std::uint64_t stepped_count(std::uint64_t n) {
  const unsigned s = sweep_stride();
  return (n + s - 1) / s;
}

}  // namespace bitproof::test
