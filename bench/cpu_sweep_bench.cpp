// bitproof_cpu_sweep_bench SPEC [PEER_ROWS]: the CPU backend on the 2^32 claim
// (every core, vector sweep, sampled oracle witness included) against two
// plain scalar loops computing the same check on every core, in the same run:
//   soft    SoftArith::hmul(a, b) vs SoftArith::float2half_rn(fmul(half2float)),
//           the obvious loop over the soft model the backend vectorises;
//   native  the compiler's _Float16 multiply (AVX512-FP16 vmulsh) vs F16C
//           conversions around an FP32 multiply: the fastest scalar loop.
// The peers run over PEER_ROWS b-codes (default 4096: 2^28 cases) and are
// reported as cases per second. Prints one JSON line.
#include <fmt/format.h>

#include <immintrin.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "arith/soft_arith.hpp"
#include "backend/backend.hpp"
#include "proof/spec.hpp"
#include "report/report.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t soft_rows(std::uint32_t first, std::uint32_t last) {
  using bitproof::SoftArith;
  std::uint64_t mismatches = 0;
  for (std::uint32_t b = first; b < last; ++b) {
    for (std::uint32_t a = 0; a < 65536; ++a) {
      const auto x = static_cast<std::uint16_t>(a);
      const auto y = static_cast<std::uint16_t>(b);
      const std::uint16_t h = SoftArith::hmul(x, y);
      const std::uint16_t f = SoftArith::float2half_rn(SoftArith::fmul(SoftArith::half2float(x), SoftArith::half2float(y)));
      mismatches += h != f;
    }
  }
  return mismatches;
}

#if defined(__x86_64__)
// Explicit instructions, so the compiler cannot fold the two sides into one
// expression (its _Float16 arithmetic is computed in float and rounded).
__attribute__((target("avx512fp16,avx512vl,f16c"))) std::uint64_t native_rows(std::uint32_t first, std::uint32_t last) {
  std::uint64_t mismatches = 0;
  for (std::uint32_t b = first; b < last; ++b) {
    const __m128i hb = _mm_cvtsi32_si128(static_cast<int>(b));
    const float fb = _cvtsh_ss(static_cast<unsigned short>(b));
    for (std::uint32_t a = 0; a < 65536; ++a) {
      const __m128i ha = _mm_cvtsi32_si128(static_cast<int>(a));
      const __m128h p = _mm_mul_sh(_mm_castsi128_ph(ha), _mm_castsi128_ph(hb));  // vmulsh
      const auto bp = static_cast<std::uint16_t>(_mm_cvtsi128_si32(_mm_castph_si128(p)));
      const auto bq = static_cast<std::uint16_t>(_cvtss_sh(_cvtsh_ss(static_cast<unsigned short>(a)) * fb, 0));
      const bool nan_p = (bp & 0x7FFF) > 0x7C00;
      const bool nan_q = (bq & 0x7FFF) > 0x7C00;
      mismatches += nan_p ? !nan_q : bp != bq;  // x86 keeps NaN payloads: any NaN matches any NaN here
    }
  }
  return mismatches;
}
#endif

// Runs rows [0, rows) on every core; returns seconds.
template <class F>
double on_all_cores(std::uint32_t rows, unsigned threads, F rows_fn, std::uint64_t& mismatches) {
  std::atomic<std::uint32_t> next{0};
  std::atomic<std::uint64_t> total{0};
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::uint32_t r = next.fetch_add(16); r < rows; r = next.fetch_add(16)) {
        total += rows_fn(r, std::min(rows, r + 16));
      }
    });
  }
  for (auto& th : pool) th.join();
  mismatches = total;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace bitproof;
  if (argc < 2) {
    std::fprintf(stderr, "usage: bitproof_cpu_sweep_bench SPEC [PEER_ROWS]\n");
    return 2;
  }
  auto spec = load_spec(argv[1]);
  if (!spec) {
    std::fprintf(stderr, "%s\n", spec.error().message.c_str());
    return 2;
  }
  const std::uint32_t peer_rows = argc > 2 ? static_cast<std::uint32_t>(std::atoi(argv[2])) : 4096;
  const unsigned threads = resolve_threads(0);
  BackendOptions options;
  options.engine.threads = 0;  // every core
  const auto start = Clock::now();
  auto run = make_cpu_backend()->prove(*spec, options);
  const double ours = std::chrono::duration<double>(Clock::now() - start).count();
  if (!run) {
    std::fprintf(stderr, "%s\n", run.error().message.c_str());
    return run.error().exit_code;
  }
  std::printf("%s %s (cpu)\n", domain_label(*spec).c_str(),
              claim_summary(spec->claims[0], run->result.claims[0]).c_str());
  std::uint64_t soft_mismatches = 0, native_mismatches = 0;
  const double soft_s = on_all_cores(peer_rows, threads, soft_rows, soft_mismatches);
  Json peers{{"soft_scalar", {{"cases", std::uint64_t{peer_rows} * 65536},
                              {"seconds", soft_s},
                              {"mismatches", soft_mismatches},
                              {"cases_per_second", peer_rows * 65536.0 / soft_s}}}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512fp16")) {
    const double native_s = on_all_cores(peer_rows, threads, native_rows, native_mismatches);
    peers["native_scalar"] = {{"cases", std::uint64_t{peer_rows} * 65536},
                              {"seconds", native_s},
                              {"mismatches_outside_nan_bits", native_mismatches},
                              {"cases_per_second", peer_rows * 65536.0 / native_s}};
  }
#endif
  const Json out{{"spec", spec->name},
                 {"cases", spec->case_count()},
                 {"threads", threads},
                 {"bitproof_cpu", {{"seconds", ours},
                                   {"cases_per_second", static_cast<double>(spec->case_count()) / ours},
                                   {"info", run->info}}},
                 {"peers", peers}};
  std::printf("%s\n", out.dump().c_str());
  return run->result.holds() ? 0 : 1;
}
