// The CPU feature reading (src/cpu_features) against the compiler's
// own __builtin_cpu_supports, feature by feature, on whatever CPU runs the
// tests. The builtin is a separate implementation (libgcc's probe), so a
// wrong leaf, bit index or XCR0 mask on our side shows up as a mismatch here
// on any machine that has the feature.
#include <doctest/doctest.h>

#include "cpu_features.hpp"

using namespace bitproof;

TEST_SUITE("backend") {
  TEST_CASE("cpu features: agree with __builtin_cpu_supports") {
    const CpuFeatures& f = cpu_features();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    CHECK(f.avx2 == (__builtin_cpu_supports("avx2") != 0));
    CHECK(f.fma == (__builtin_cpu_supports("fma") != 0));
#if !defined(__clang__) || __clang_major__ >= 15  // clang 14's builtin has no "f16c" (the GCC build checks it)
    CHECK(f.f16c == (__builtin_cpu_supports("f16c") != 0));
#endif
    CHECK(f.avx512f == (__builtin_cpu_supports("avx512f") != 0));
    CHECK(f.avx512cd == (__builtin_cpu_supports("avx512cd") != 0));
    CHECK(f.avx512bw == (__builtin_cpu_supports("avx512bw") != 0));
    CHECK(f.avx512dq == (__builtin_cpu_supports("avx512dq") != 0));
    CHECK(f.avx512vl == (__builtin_cpu_supports("avx512vl") != 0));
    MESSAGE("avx2 ", f.avx2, " fma ", f.fma, " f16c ", f.f16c, " avx512f ", f.avx512f, " avx512bw ", f.avx512bw);
#else
    CHECK_FALSE(f.avx2);
    CHECK_FALSE(f.avx512f);
#endif
    CHECK(&f == &cpu_features());  // read once
  }
}

#if defined(__linux__)
#include <sched.h>

#include "parallel.hpp"

TEST_SUITE("backend") {
  TEST_CASE("the default thread count is the CPUs this process may use (taskset, cpusets), not the machine's") {
    cpu_set_t saved;
    REQUIRE(sched_getaffinity(0, sizeof saved, &saved) == 0);
    CHECK(resolve_threads(0) == static_cast<unsigned>(CPU_COUNT(&saved)));
    CHECK(resolve_threads(3) == 3);  // an explicit count is kept
    int first = 0;
    while (!CPU_ISSET(first, &saved)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    const unsigned pinned = resolve_threads(0);
    REQUIRE(sched_setaffinity(0, sizeof saved, &saved) == 0);
    CHECK(pinned == 1);
  }
}
#endif
