// DeviceArith compiled for the host: every op falls back to its software twin
// (the CUTLASS float8.h pattern), so host code may instantiate recipes with
// it. Checked op by op against SoftArith on every FP16 code x edge codes; the
// device side of the same ops is checked on the GPU (tests/gpu) against the
// same model. Needs the CUDA headers (cuda_fp16.h), else it reports a skip. The
// sanitizer build takes every k-th FP16 code (tests/sweep_stride.hpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#if defined(BITPROOF_HAVE_CUDA_HEADERS)
#include "arith/device_arith.cuh"
#endif
#include "arith/soft_arith.hpp"
#include "sweep_stride.hpp"

using namespace bitproof;

TEST_SUITE("backend") {
  TEST_CASE("DeviceArith's host twins are the soft model's ops, op for op") {
#if defined(BITPROOF_HAVE_CUDA_HEADERS)
    int mismatches = 0;
    int controls = 0;
    for (std::uint32_t a = 0; a < 65536; a += bitproof::test::sweep_stride()) {
      for (std::uint32_t e = 0; e < 32; ++e) {
        const auto x = static_cast<std::uint16_t>(a);
        const auto y = static_cast<std::uint16_t>((e << 10) | (a * 7 & 0x3FF) | (e & 1 ? 0x8000 : 0));
        const std::uint32_t f = SoftArith::half2float(x);
        const std::uint32_t g = SoftArith::half2float(y);
        const bool same = DeviceArith::hmul(x, y) == SoftArith::hmul(x, y) &&
                          DeviceArith::hmul_rz(x, y) == SoftArith::hmul_rz(x, y) &&
                          DeviceArith::hmul_ftz(x, y) == SoftArith::hmul_ftz(x, y) &&
                          DeviceArith::hadd(x, y) == SoftArith::hadd(x, y) &&
                          DeviceArith::hfma(x, y, x) == SoftArith::hfma(x, y, x) &&
                          DeviceArith::half2float(x) == f && DeviceArith::fmul(f, g) == SoftArith::fmul(f, g) &&
                          DeviceArith::float2half_rn(f ^ (a << 3)) == SoftArith::float2half_rn(f ^ (a << 3)) &&
                          DeviceArith::float2half_rz(f ^ (a << 3)) == SoftArith::float2half_rz(f ^ (a << 3));
        if (!same && ++mismatches <= 4) FAIL_CHECK(fmt::format("0x{:04X} 0x{:04X}", x, y));
        // Negative control: the comparison tells a truncating twin from the rounding one.
        if (DeviceArith::hmul(x, y) != SoftArith::hmul_rz(x, y)) ++controls;
      }
    }
    CHECK(mismatches == 0);
    CHECK(controls > 0);
#else
    MESSAGE("skipped: built without the CUDA headers");
#endif
  }
}
