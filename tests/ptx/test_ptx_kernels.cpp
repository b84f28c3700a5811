// The executor on nvcc's PTX (data/kernels.cu -> data/kernels.ptx): each kernel against a host
// reference computed in the same operation order through SoftArith, and the negative controls:
// a mutated rounding mode, a wrong shuffle mode, barriers removed must each change the result.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "arith/soft_arith.hpp"
#include "ptx/ptx.hpp"
#include "ptx_support.hpp"
#include "splitmix.hpp"

using namespace bitproof;
using namespace bitproof::test;
using ptx::Arg;

namespace {

// Random binary32 values in about [-4, 4], every exponent of that range (sums are order-sensitive).
std::vector<std::uint32_t> ptx_random_floats(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) {
    const std::uint64_t r = splitmix64_next(seed);
    x = static_cast<std::uint32_t>((r & 0x80000000u) | ((100 + (r >> 32) % 30) << 23) | (r & 0x7FFFFF));
  }
  return v;
}

std::vector<std::uint16_t> ptx_random_halves(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) {
    const std::uint64_t r = splitmix64_next(seed);
    x = static_cast<std::uint16_t>((r & 0x8000u) | ((5 + (r >> 20) % 11) << 10) | (r & 0x3FF));  // |x| < 1
  }
  return v;
}

// The ptx_butterfly sum each lane of a warp holds after offsets 16, 8, 4, 2, 1 (v += shfl_xor(v, o)).
std::vector<std::uint32_t> ptx_butterfly(std::vector<std::uint32_t> v) {
  for (unsigned o = 16; o > 0; o >>= 1) {
    std::vector<std::uint32_t> next(32);
    for (unsigned l = 0; l < 32; ++l) next[l] = SoftArith::fadd(v[l], v[l ^ o]);
    v = next;
  }
  return v;
}

// y[row] of the fixture's gemv_row: lane-strided FMA chains, a ptx_butterfly, one rounding to f16.
std::uint16_t ptx_gemv_row_reference(const std::vector<std::uint16_t>& x, const std::uint16_t* w, unsigned k) {
  std::vector<std::uint32_t> acc(32, 0);
  for (unsigned lane = 0; lane < 32; ++lane) {
    for (unsigned j = lane; j < k; j += 32)
      acc[lane] = SoftArith::ffma(SoftArith::half2float(w[j]), SoftArith::half2float(x[j]), acc[lane]);
  }
  return SoftArith::float2half_rn(ptx_butterfly(acc)[0]);
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("nvcc's saxpy equals a*x+y with one rounding, every element; .rz instead of .rn differs") {
    const std::string text = ptx_fixture("kernels.ptx");
    const unsigned n = 1000;
    const auto x = ptx_random_floats(n, 1), y = ptx_random_floats(n, 2);
    const std::uint32_t a = 0x3FC00001u;  // 1.5 + 2^-22: products need rounding
    for (const bool mutated : {false, true}) {
      ptx::Memory mem;
      const auto bx = mem.add(ptx_bytes_of(x)), by = mem.add(ptx_bytes_of(y));
      const std::string t = mutated ? ptx_mutate(text, "fma.rn.f32 \t%f4", "fma.rz.f32 \t%f4") : text;
      auto r = run_ptx(t, "saxpy", {8}, {128}, {Arg::f32_bits(a), Arg::buf(bx), Arg::buf(by), Arg::u32(n)}, mem,
                       "kernels.ptx");
      REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
      const auto out = ptx_values_of<std::uint32_t>(mem.bytes(by));
      int differ = 0;
      for (unsigned i = 0; i < n; ++i) differ += out[i] != SoftArith::ffma(x[i], a, y[i]);
      if (mutated)
        CHECK(differ > 100);
      else
        CHECK(differ == 0);
      CHECK(r->thread_steps > n * 10);
    }
  }

  TEST_CASE("nvcc's warp reduce (shfl.sync.bfly) equals the ptx_butterfly order; .up instead of .bfly differs") {
    const std::string text = ptx_fixture("kernels.ptx");
    const auto in = ptx_random_floats(256, 3);
    for (const bool mutated : {false, true}) {
      ptx::Memory mem;
      const auto bi = mem.add(ptx_bytes_of(in)), bo = mem.add(std::vector<std::uint8_t>(8 * 4, 0xEE));
      const std::string t = mutated ? ptx_mutate(text, "shfl.sync.bfly.b32 \t%r9", "shfl.sync.up.b32 \t%r9") : text;
      auto r = run_ptx(t, "warp_reduce", {2}, {128}, {Arg::buf(bi), Arg::buf(bo)}, mem);
      REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
      const auto out = ptx_values_of<std::uint32_t>(mem.bytes(bo));
      int differ = 0;
      for (unsigned wp = 0; wp < 8; ++wp) {
        const std::vector<std::uint32_t> lanes(in.begin() + wp * 32, in.begin() + wp * 32 + 32);
        differ += out[wp] != ptx_butterfly(lanes)[0];
      }
      CHECK(differ == (mutated ? 8 : 0));
    }
  }

  TEST_CASE("nvcc's shared-memory block reduce (bar.sync) equals the tree order; without bar.sync it differs") {
    const std::string text = ptx_fixture("kernels.ptx");
    const auto in = ptx_random_floats(3 * 128, 4);
    for (const bool mutated : {false, true}) {
      ptx::Memory mem;
      const auto bi = mem.add(ptx_bytes_of(in)), bo = mem.add(std::vector<std::uint8_t>(3 * 4));
      const std::string t = mutated ? ptx_mutate(text, "bar.sync \t0;", "") : text;
      auto r = run_ptx(t, "block_reduce", {3}, {128}, {Arg::buf(bi), Arg::buf(bo)}, mem);
      REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
      const auto out = ptx_values_of<std::uint32_t>(mem.bytes(bo));
      int differ = 0;
      for (unsigned b = 0; b < 3; ++b) {
        std::vector<std::uint32_t> s(in.begin() + b * 128, in.begin() + b * 128 + 128);
        for (unsigned w = 64; w > 0; w >>= 1) {
          for (unsigned t2 = 0; t2 < w; ++t2) s[t2] = SoftArith::fadd(s[t2 + w], s[t2]);
        }
        differ += out[b] != s[0];
      }
      CHECK(differ == (mutated ? 3 : 0));
    }
  }

  TEST_CASE(
      "nvcc's f16 GEMV: fused (one launch over joined rows) == separate == the host order; a .rz output conversion "
      "differs") {
    const std::string text = ptx_fixture("kernels.ptx");
    const unsigned n0 = 64, n1 = 16, n2 = 8, k = 256, rows = n0 + n1 + n2;
    const auto x = ptx_random_halves(k, 5), w = ptx_random_halves(std::size_t{rows} * k, 6);
    std::vector<std::uint16_t> expect(rows);
    for (unsigned r = 0; r < rows; ++r) expect[r] = ptx_gemv_row_reference(x, w.data() + std::size_t{r} * k, k);
    // Fused: one launch, 4 rows a block of 128 threads.
    ptx::Memory fm;
    const auto fx = fm.add(ptx_bytes_of(x)), fw = fm.add(ptx_bytes_of(w));
    const auto y0 = fm.add(std::vector<std::uint8_t>(n0 * 2)), y1 = fm.add(std::vector<std::uint8_t>(n1 * 2)),
               y2 = fm.add(std::vector<std::uint8_t>(n2 * 2));
    auto r = run_ptx(text, "gemv_fused", {rows / 4}, {128},
                     {Arg::buf(fx), Arg::buf(fw), Arg::buf(y0), Arg::buf(y1), Arg::buf(y2), Arg::u32(n0), Arg::u32(n1),
                      Arg::u32(n2), Arg::u32(k)},
                     fm);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    std::vector<std::uint16_t> fused;
    for (auto b : {y0, y1, y2}) {
      const auto v = ptx_values_of<std::uint16_t>(fm.bytes(b));
      fused.insert(fused.end(), v.begin(), v.end());
    }
    CHECK(fused == expect);
    // Separate: three launches, each over its own rows.
    std::vector<std::uint16_t> separate;
    unsigned first = 0;
    for (const unsigned n : {n0, n1, n2}) {
      ptx::Memory sm;
      const std::vector<std::uint16_t> part(w.begin() + std::size_t{first} * k, w.begin() + std::size_t{first + n} * k);
      const auto sx = sm.add(ptx_bytes_of(x)), sw = sm.add(ptx_bytes_of(part)),
                 sy = sm.add(std::vector<std::uint8_t>(n * 2));
      auto rs = run_ptx(text, "gemv_sep", {(n + 3) / 4}, {128},
                        {Arg::buf(sx), Arg::buf(sw), Arg::buf(sy), Arg::u32(n), Arg::u32(k)}, sm);
      REQUIRE_MESSAGE(rs.ok(), (rs.ok() ? std::string() : rs.error().message));
      const auto v = ptx_values_of<std::uint16_t>(sm.bytes(sy));
      separate.insert(separate.end(), v.begin(), v.end());
      first += n;
    }
    CHECK(separate == expect);
    // The negative control: the fused kernel's first arm rounding its sums to f16 with .rz.
    ptx::Memory mm;
    const auto mx = mm.add(ptx_bytes_of(x)), mw = mm.add(ptx_bytes_of(w));
    const auto m0 = mm.add(std::vector<std::uint8_t>(n0 * 2)), m1 = mm.add(std::vector<std::uint8_t>(n1 * 2)),
               m2 = mm.add(std::vector<std::uint8_t>(n2 * 2));
    auto rm = run_ptx(ptx_mutate(text, "cvt.rn.f16.f32 %rs9", "cvt.rz.f16.f32 %rs9"), "gemv_fused", {rows / 4}, {128},
                      {Arg::buf(mx), Arg::buf(mw), Arg::buf(m0), Arg::buf(m1), Arg::buf(m2), Arg::u32(n0), Arg::u32(n1),
                       Arg::u32(n2), Arg::u32(k)},
                      mm);
    REQUIRE_MESSAGE(rm.ok(), (rm.ok() ? std::string() : rm.error().message));
    const auto mut0 = ptx_values_of<std::uint16_t>(mm.bytes(m0));
    int differ = 0;
    for (unsigned i = 0; i < n0; ++i) differ += mut0[i] != expect[i];
    CHECK(differ > 0);
    CHECK(ptx_values_of<std::uint16_t>(mm.bytes(m1)) ==
          std::vector<std::uint16_t>(expect.begin() + n0, expect.begin() + n0 + n1));
  }

  TEST_CASE("nvcc's half2 kernel: fma/add/mul.f16x2 lane-wise through SoftArith, and vote.sync.ballot") {
    const std::string text = ptx_fixture("kernels.ptx");
    std::vector<std::uint32_t> a(64), b(64), c(64);
    std::uint64_t seed = 7;
    for (unsigned i = 0; i < 64; ++i) {
      const std::uint64_t r = splitmix64_next(seed);
      a[i] = static_cast<std::uint32_t>(r) & 0xBBFFBBFFu, b[i] = static_cast<std::uint32_t>(r >> 32) & 0xBBFFBBFFu;
      c[i] = static_cast<std::uint32_t>(splitmix64_next(seed)) & 0xBBFFBBFFu;
    }
    ptx::Memory mem;
    const auto ba = mem.add(ptx_bytes_of(a)), bb = mem.add(ptx_bytes_of(b)), bc = mem.add(ptx_bytes_of(c)),
               bm = mem.add(std::vector<std::uint8_t>(4));
    auto r = run_ptx(text, "half_ops", {1}, {32}, {Arg::buf(ba), Arg::buf(bb), Arg::buf(bc), Arg::buf(bm)}, mem);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    const auto out = ptx_values_of<std::uint32_t>(mem.bytes(bc));
    std::uint32_t ballot = 0;
    const auto lane2 = [](auto f, std::uint32_t x, std::uint32_t y) {
      return std::uint32_t{f(static_cast<std::uint16_t>(x), static_cast<std::uint16_t>(y))} |
             std::uint32_t{f(static_cast<std::uint16_t>(x >> 16), static_cast<std::uint16_t>(y >> 16))} << 16;
    };
    for (unsigned i = 0; i < 32; ++i) {
      const std::uint32_t f = SoftArith::hfma2(a[i], b[i], c[i]);
      const std::uint32_t s = lane2(SoftArith::hadd, f, a[i]);
      CHECK(out[i] == lane2(SoftArith::hmul, s, b[i]));
      const std::uint32_t low = SoftArith::half2float(static_cast<std::uint16_t>(s));
      if ((low & 0x80000000u) == 0 && (low & 0x7FFFFFFFu) != 0 && (low & 0x7FFFFFFFu) <= 0x7F800000u) ballot |= 1u << i;
    }
    CHECK(ptx_values_of<std::uint32_t>(mem.bytes(bm))[0] == ballot);
    CHECK(ballot != 0);
    CHECK(ballot != 0xFFFFFFFFu);
  }

  TEST_CASE("an access past a buffer is an Error naming block, thread, PTX line and address") {
    const std::string text = ptx_fixture("kernels.ptx");
    ptx::Memory mem;
    const auto bx = mem.add(std::vector<std::uint8_t>(4 * 100)), by = mem.add(std::vector<std::uint8_t>(4 * 100));
    auto r = run_ptx(text, "saxpy", {1}, {128}, {Arg::f32_bits(0), Arg::buf(bx), Arg::buf(by), Arg::u32(128)}, mem,
                     "kernels.ptx");
    REQUIRE(!r.ok());
    const std::string& m = r.error().message;
    CHECK(contains(m, "kernels.ptx:44: block (0,0,0) thread (100,0,0): ld.global of 4 bytes at 0x10000000190"));
    CHECK(contains(m, "past the end of buffer 0 (400 bytes)"));
  }
}
