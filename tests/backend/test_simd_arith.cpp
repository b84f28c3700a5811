// The CPU backend's vector policy (cpu_simd_avx512.cpp) against the oracle
// arithmetic, op by op: every FP16 code × 256 edge codes plus a million random
// pairs for the FP16 multiplies (integer SIMD code); every FP16 code for
// half2float, edge and random FP32 codes for fmul and float2half (the CPU's
// F16C / AVX-512 float units, NaNs made canonical). Each comparison also runs
// once against a deliberately wrong reference, which it must reject.
// Run for every vector sweep the CPU has (AVX-512, AVX2); skipped where it has none. The
// sanitizer build takes every k-th FP16 code, edge row and random operand
// (tests/sweep_stride.hpp); half2float stays whole.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <functional>
#include <random>
#include <thread>
#include <vector>

#include "arith/soft_arith.hpp"
#include "proof/cpu_simd.hpp"
#include "oracle/fma_exact.hpp"
#include "oracle/oracle_arith.hpp"
#include "report/report.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"
#include "support.hpp"

using namespace bitproof;
using bitproof::test::stepped_count;
using bitproof::test::sweep_stride;

namespace {

enum Op : int {
  kHmul = 0,
  kHmulRz = 1,
  kHmulFtz = 2,
  kHalf2Float = 3,
  kFmul = 4,
  kF2hRn = 5,
  kF2hRz = 6,
  kHfma = 7,
  kFfma = 8
};

// Each exponent field with mantissas 0, 1, 0x200, 0x3FF, both signs: ±0,
// subnormals, every binade's ends, max, Inf, signalling and quiet NaNs. 256 codes.
std::vector<std::uint32_t> half_edges() {
  std::vector<std::uint32_t> codes;
  for (std::uint32_t sign : {0u, 0x8000u}) {
    for (std::uint32_t e = 0; e < 32; ++e) {
      for (std::uint32_t m : {0u, 1u, 0x200u, 0x3FFu}) codes.push_back(sign | (e << 10) | m);
    }
  }
  return codes;
}

// The same for binary32: 2048 codes.
// Around every FP16 value in FP32: the value, one FP32 ulp either side, and
// the midpoints to the next FP16 value (exact tie, tie ± 1 ulp).
std::vector<std::uint32_t> float_near_halves() {
  std::vector<std::uint32_t> codes;
  for (std::uint32_t h = 0; h < 65536; h += sweep_stride()) {
    const std::uint32_t f = OracleArith::half2float(static_cast<std::uint16_t>(h));
    const std::uint32_t next = OracleArith::half2float(static_cast<std::uint16_t>(h + 1));
    for (std::uint32_t c : {f, f + 1, f - 1}) codes.push_back(c);
    if ((h & 0x7FFF) < 0x7C00 && (next & 0x7FFFFFFF) > (f & 0x7FFFFFFF) && ((h + 1) & 0x7FFF) <= 0x7C00) {
      const std::uint32_t mid = f + ((next - f) >> 1);
      for (std::uint32_t c : {mid, mid + 1, mid - 1}) codes.push_back(c);
    }
  }
  return codes;
}

using Ref = std::function<std::uint32_t(std::uint32_t, std::uint32_t)>;
using Ref3 = std::function<std::uint32_t(std::uint32_t, std::uint32_t, std::uint32_t)>;

struct Outcome {
  std::uint64_t cases = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::string> first;
};

// Runs `op` on every (a[i], b[i], c[i]) (c empty: two operands) in vectors of
// 16 and compares with ref, on two threads; keeps the first mismatches
// described field by field.
Outcome compare3(const simd::SimdImpl& impl, int op, const std::vector<std::uint32_t>& a,
                 const std::vector<std::uint32_t>& b, const std::vector<std::uint32_t>& c, const Ref3& ref, FormatId in,
                 FormatId out) {
  const std::size_t n = a.size();
  constexpr unsigned kThreads = 2;
  std::array<Outcome, kThreads> parts;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      Outcome& o = parts[t];
      std::uint32_t x[16], y[16], z[16] = {}, r[16];
      for (std::size_t base = t * 16; base < n; base += 16 * kThreads) {
        const std::size_t lanes = std::min<std::size_t>(16, n - base);
        for (std::size_t i = 0; i < 16; ++i) {
          x[i] = a[base + (i < lanes ? i : 0)];
          y[i] = b[base + (i < lanes ? i : 0)];
          if (!c.empty()) z[i] = c[base + (i < lanes ? i : 0)];
        }
        impl.apply(op, x, y, c.empty() ? nullptr : z, r);
        for (std::size_t i = 0; i < lanes; ++i) {
          ++o.cases;
          const std::uint32_t want = ref(x[i], y[i], z[i]);
          if (r[i] == want) continue;
          if (++o.mismatches <= 4) {
            o.first.push_back(fmt::format("op {} a={} b={}{}: vector {} oracle {}", op, describe_code(in, x[i]),
                                          describe_code(in, y[i]),
                                          c.empty() ? "" : fmt::format(" c={}", describe_code(in, z[i])),
                                          describe_code(out, r[i]), describe_code(out, want)));
          }
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  Outcome all;
  for (Outcome& o : parts) {
    all.cases += o.cases;
    all.mismatches += o.mismatches;
    all.first.insert(all.first.end(), o.first.begin(), o.first.end());
  }
  return all;
}

Outcome compare(const simd::SimdImpl& impl, int op, const std::vector<std::uint32_t>& a,
                const std::vector<std::uint32_t>& b, const Ref& ref, FormatId in, FormatId out) {
  return compare3(
      impl, op, a, b, {}, [&ref](std::uint32_t x, std::uint32_t y, std::uint32_t) { return ref(x, y); }, in, out);
}

void expect_equal(const Outcome& o, const char* what) {
  for (const std::string& line : o.first) FAIL_CHECK(line);
  CHECK_MESSAGE(o.mismatches == 0, what);
  MESSAGE(fmt::format("{}: {} cases compared", what, o.cases));
}

// Every FP16 code × the edge codes, plus a million random pairs.
void half_pairs(std::vector<std::uint32_t>& a, std::vector<std::uint32_t>& b) {
  const auto edges = half_edges();
  for (std::uint32_t x = 0; x < 65536; x += sweep_stride()) {
    for (std::uint32_t e : edges) {
      a.push_back(x);
      b.push_back(e);
    }
  }
  std::uint64_t seed = 20260101;
  for (std::uint64_t i = 0; i < stepped_count(1000000); ++i) {
    const std::uint64_t r = splitmix64_next(seed);
    a.push_back(static_cast<std::uint32_t>(r & 0xFFFF));
    b.push_back(static_cast<std::uint32_t>((r >> 16) & 0xFFFF));
  }
}

// FMA triples: the edge codes cubed; every a against sampled (b, c); random
// triples; and triples near cancellation and near FP16 midpoints (c close to
// −a·b, or to a·b's distance from a midpoint), where a second rounding shows.
void half_triples(std::vector<std::uint32_t>& a, std::vector<std::uint32_t>& b, std::vector<std::uint32_t>& c) {
  const auto push = [&](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
    a.push_back(x);
    b.push_back(y);
    c.push_back(z);
  };
  const auto edges = half_edges();
  for (std::size_t i = 0; i < edges.size(); i += sweep_stride()) {
    for (std::uint32_t y : edges) {
      for (std::uint32_t z : edges) push(edges[i], y, z);
    }
  }
  std::uint64_t seed = 20261204;
  for (int pair = 0; pair < 48; ++pair) {
    const auto y = static_cast<std::uint32_t>(splitmix64_next(seed) & 0xFFFF);
    const auto z = static_cast<std::uint32_t>(splitmix64_next(seed) & 0xFFFF);
    for (std::uint32_t x = 0; x < 65536; x += sweep_stride()) push(x, y, z);
  }
  for (std::uint64_t i = 0; i < stepped_count(1000000); ++i) {
    const std::uint64_t r = splitmix64_next(seed);
    const auto x = static_cast<std::uint32_t>(r & 0xFFFF);
    const auto y = static_cast<std::uint32_t>((r >> 16) & 0xFFFF);
    push(x, y, static_cast<std::uint32_t>((r >> 32) & 0xFFFF));
    // c = −(a·b rounded) + k: the sum cancels to a few bits, or to a product's last bits
    const std::uint32_t negated =
        OracleArith::hmul(static_cast<std::uint16_t>(x), static_cast<std::uint16_t>(y)) ^ 0x8000u;
    push(x, y, (negated + static_cast<std::uint32_t>((r >> 48) & 7) - 3) & 0xFFFF);
  }
  push(0x520b, 0x00e9, 0x2ff6);  // LLVM issue 98389: the FP32 route double-rounds
}

// An op on FP16 codes as a reference over the test's 32-bit lanes.
template <class Op>
Ref3 on_halves(Op op) {
  return [op](std::uint32_t x, std::uint32_t y, std::uint32_t z) -> std::uint32_t {
    return op(static_cast<std::uint16_t>(x), static_cast<std::uint16_t>(y), static_cast<std::uint16_t>(z));
  };
}

// Every vector sweep this CPU runs (AVX-512 and AVX2 on an AVX-512 CPU).
std::vector<const simd::SimdImpl*> impls_or_skip() {
  auto impls = simd::usable_impls();
  if (impls.empty()) MESSAGE("skipped: no vector sweep on this CPU (AVX-512, or AVX2 with FMA and F16C)");
  return impls;
}

}  // namespace

TEST_SUITE("backend") {
  TEST_CASE("vector FP16 multiplies equal the oracle: every FP16 code x 256 edge codes + 10^6 random pairs") {
    for (const simd::SimdImpl* impl : impls_or_skip()) {
      INFO("vector sweep: " << std::string(impl->name));
      std::vector<std::uint32_t> a, b;
      half_pairs(a, b);
      const auto h = [](std::uint32_t x) { return static_cast<std::uint16_t>(x); };
      expect_equal(compare(
                       *impl, kHmul, a, b, [&](auto x, auto y) { return OracleArith::hmul(h(x), h(y)); },
                       FormatId::fp16, FormatId::fp16),
                   "hmul");
      expect_equal(compare(
                       *impl, kHmulRz, a, b, [&](auto x, auto y) { return OracleArith::hmul_rz(h(x), h(y)); },
                       FormatId::fp16, FormatId::fp16),
                   "hmul_rz");
      expect_equal(compare(
                       *impl, kHmulFtz, a, b, [&](auto x, auto y) { return OracleArith::hmul_ftz(h(x), h(y)); },
                       FormatId::fp16, FormatId::fp16),
                   "hmul_ftz");
      // Negative control: the comparison rejects a multiply that truncates.
      const Outcome wrong = compare(
          *impl, kHmulRz, a, b, [&](auto x, auto y) { return OracleArith::hmul(h(x), h(y)); }, FormatId::fp16,
          FormatId::fp16);
      CHECK(wrong.mismatches > 0);
      REQUIRE_FALSE(wrong.first.empty());
      CHECK(wrong.first[0].find("vector 0x") != std::string::npos);
    }
  }

  TEST_CASE("vector half2float equals the oracle on all 65536 codes (NaNs canonical)") {
    for (const simd::SimdImpl* impl : impls_or_skip()) {
      INFO("vector sweep: " << std::string(impl->name));
      std::vector<std::uint32_t> a(65536), b(65536, 0);
      for (std::uint32_t x = 0; x < 65536; ++x) a[x] = x;
      expect_equal(compare(
                       *impl, kHalf2Float, a, b,
                       [](auto x, auto) { return OracleArith::half2float(static_cast<std::uint16_t>(x)); },
                       FormatId::fp16, FormatId::fp32),
                   "half2float");
      // Negative control: x86's own NaN (payload kept) is not the model's.
      const Outcome wrong = compare(
          *impl, kHalf2Float, a, b,
          [](auto x, auto) {
            const std::uint32_t f = OracleArith::half2float(static_cast<std::uint16_t>(x));
            return (f & 0x7FFFFFFF) > 0x7F800000 ? 0x7FC00000u : f;
          },
          FormatId::fp16, FormatId::fp32);
      CHECK(wrong.mismatches == 2 * 1023);  // every FP16 NaN: 1023 mantissas, two signs
    }
  }

  TEST_CASE("vector fmul equals the oracle: FP16 products, FP32 edge codes squared, 10^6 random pairs") {
    for (const simd::SimdImpl* impl : impls_or_skip()) {
      INFO("vector sweep: " << std::string(impl->name));
      std::vector<std::uint32_t> a, b;
      std::vector<std::uint32_t> ha, hb;
      half_pairs(ha, hb);
      for (std::size_t i = 0; i < ha.size(); i += 7) {  // a seventh of the FP16 pairs, widened
        a.push_back(OracleArith::half2float(static_cast<std::uint16_t>(ha[i])));
        b.push_back(OracleArith::half2float(static_cast<std::uint16_t>(hb[i])));
      }
      const auto edges = test::float32_edges();
      for (std::size_t i = 0; i < edges.size(); i += sweep_stride()) {
        for (std::uint32_t y : edges) {
          a.push_back(edges[i]);
          b.push_back(y);
        }
      }
      std::uint64_t seed = 7;
      for (std::uint64_t i = 0; i < stepped_count(1000000); ++i) {
        a.push_back(static_cast<std::uint32_t>(splitmix64_next(seed)));
        b.push_back(static_cast<std::uint32_t>(splitmix64_next(seed)));
      }
      expect_equal(compare(
                       *impl, kFmul, a, b, [](auto x, auto y) { return OracleArith::fmul(x, y); }, FormatId::fp32,
                       FormatId::fp32),
                   "fmul");
      // Negative control: a reference that flushes subnormal results to zero.
      const Outcome wrong = compare(
          *impl, kFmul, a, b,
          [](auto x, auto y) {
            const std::uint32_t r = OracleArith::fmul(x, y);
            return (r & 0x7F800000u) == 0 ? (r & 0x80000000u) : r;
          },
          FormatId::fp32, FormatId::fp32);
      CHECK(wrong.mismatches > 0);
    }
  }

  TEST_CASE("vector float2half (nearest even, toward zero) equals the oracle around every FP16 value and at random") {
    for (const simd::SimdImpl* impl : impls_or_skip()) {
      INFO("vector sweep: " << std::string(impl->name));
      std::vector<std::uint32_t> a = float_near_halves();
      const auto edges = test::float32_edges();
      a.insert(a.end(), edges.begin(), edges.end());
      std::uint64_t seed = 11;
      for (std::uint64_t i = 0; i < stepped_count(1000000); ++i)
        a.push_back(static_cast<std::uint32_t>(splitmix64_next(seed)));
      const std::vector<std::uint32_t> b(a.size(), 0);
      expect_equal(compare(
                       *impl, kF2hRn, a, b, [](auto x, auto) { return OracleArith::float2half_rn(x); }, FormatId::fp32,
                       FormatId::fp16),
                   "float2half_rn");
      expect_equal(compare(
                       *impl, kF2hRz, a, b, [](auto x, auto) { return OracleArith::float2half_rz(x); }, FormatId::fp32,
                       FormatId::fp16),
                   "float2half_rz");
      const Outcome wrong = compare(
          *impl, kF2hRn, a, b, [](auto x, auto) { return OracleArith::float2half_rz(x); }, FormatId::fp32,
          FormatId::fp16);
      CHECK(wrong.mismatches > 0);
    }
  }

  TEST_CASE("vector hfma (the CPU's FP64 FMA, rounded once by integer code) equals the exact oracle") {
    for (const simd::SimdImpl* impl : impls_or_skip()) {
      INFO("vector sweep: " << std::string(impl->name));
      std::vector<std::uint32_t> a, b, c;
      half_triples(a, b, c);
      const auto check = [&](const char* what, std::size_t last, const Ref3& ref) {
        const auto tail = [last](const std::vector<std::uint32_t>& v) {
          return std::vector<std::uint32_t>(v.end() - static_cast<std::ptrdiff_t>(std::min(last, v.size())), v.end());
        };
        expect_equal(compare3(*impl, kHfma, tail(a), tail(b), tail(c), ref, FormatId::fp16, FormatId::fp16), what);
      };
      const auto exact = [](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
        return oracle::fast::fma_fp16(x, y, z);
      };
      check("hfma", a.size(), exact);
      // The soft model it twins, and the slow Boost oracle, on the last (random) triples.
      check("hfma vs SoftArith", 20000, on_halves(&SoftArith::hfma));
      check("hfma vs the Boost oracle", 2000, on_halves(&OracleArith::hfma));
      // Negative controls: the FP32 route double-rounds (LLVM issue 98389 among them), and a
      // reference keeping x86's NaN (payload and sign kept) is not the model's.
      const Outcome fp32_route =
          compare3(*impl, kHfma, a, b, c, on_halves([](std::uint16_t x, std::uint16_t y, std::uint16_t z) {
            return OracleArith::float2half_rn(
                OracleArith::ffma(OracleArith::half2float(x), OracleArith::half2float(y), OracleArith::half2float(z)));
          }),
                   FormatId::fp16, FormatId::fp16);
      CHECK(fp32_route.mismatches > 0);
      MESSAGE(
          fmt::format("negative control, the FP32 route: {} of {} differ", fp32_route.mismatches, fp32_route.cases));
      const Outcome payload = compare3(
          *impl, kHfma, a, b, c,
          [&exact](std::uint32_t x, std::uint32_t y, std::uint32_t z) {
            return (x & 0x7FFF) > 0x7C00 ? x | 0x0200 : exact(x, y, z);
          },
          FormatId::fp16, FormatId::fp16);
      CHECK(payload.mismatches > 0);
    }
  }

  TEST_CASE("vector ffma equals the oracle: widened FP16 triples, FP32 edge codes, 10^6 random triples") {
    for (const simd::SimdImpl* impl : impls_or_skip()) {
      INFO("vector sweep: " << std::string(impl->name));
      std::vector<std::uint32_t> ha, hb, hc;
      half_triples(ha, hb, hc);
      std::vector<std::uint32_t> a, b, c;
      const auto w = [](std::uint32_t h) { return OracleArith::half2float(static_cast<std::uint16_t>(h)); };
      for (std::size_t i = 0; i < ha.size(); i += 31) {  // a 31st of the FP16 triples, widened
        a.push_back(w(ha[i]));
        b.push_back(w(hb[i]));
        c.push_back(w(hc[i]));
      }
      const auto edges = test::float32_edges();
      std::uint64_t seed = 13;
      for (std::size_t i = 0; i < edges.size(); i += sweep_stride()) {
        for (std::size_t j = 0; j < edges.size(); j += 8) {
          a.push_back(edges[i]);
          b.push_back(edges[j]);
          c.push_back(edges[splitmix64_next(seed) % edges.size()]);
        }
      }
      for (std::uint64_t i = 0; i < stepped_count(1000000); ++i) {
        a.push_back(static_cast<std::uint32_t>(splitmix64_next(seed)));
        b.push_back(static_cast<std::uint32_t>(splitmix64_next(seed)));
        c.push_back(static_cast<std::uint32_t>(splitmix64_next(seed)));
      }
      const auto ffma = [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return SoftArith::ffma(x, y, z); };
      expect_equal(compare3(*impl, kFfma, a, b, c, ffma, FormatId::fp32, FormatId::fp32), "ffma");
      std::vector<std::uint32_t> sa(a.end() - 2000, a.end()), sb(b.end() - 2000, b.end()), sc(c.end() - 2000, c.end());
      expect_equal(compare3(
                       *impl, kFfma, sa, sb, sc,
                       [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return OracleArith::ffma(x, y, z); },
                       FormatId::fp32, FormatId::fp32),
                   "ffma vs the Boost oracle");
      // Negative control: an unfused multiply-add rounds twice.
      const Outcome unfused = compare3(
          *impl, kFfma, a, b, c,
          [](std::uint32_t x, std::uint32_t y, std::uint32_t z) { return SoftArith::fadd(SoftArith::fmul(x, y), z); },
          FormatId::fp32, FormatId::fp32);
      CHECK(unfused.mismatches > 0);
    }
  }
}
