// The TurboMind-style MXFP4 GEMV example (examples/turbomind-mxfp4-gemv/gemv.cu -> gemv.ptx) run
// by the executor: both kernels against a host reference in the kernel's order through SoftArith;
// with scale bytes 114..126 the ordinary and the folded dequant write the same bits, and one
// scale byte 129 (a + 14 = 31: an Inf scale) makes the folded kernel differ in that row only.
// This is the example's evidence on the CPU; its A/B spec (ab.json) runs the same PTX.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arith/soft_arith.hpp"
#include "ptx/ptx.hpp"
#include "ptx_support.hpp"
#include "splitmix.hpp"
#include "support.hpp"

using namespace bitproof;
using namespace bitproof::test;
using ptx::Arg;

namespace {

constexpr unsigned kMxRows = 12, kMxK = 256;  // 3 blocks of 4 rows; 8 scale blocks a row

struct PtxMxfp4Case {
  std::vector<std::uint8_t> codes, scales;  // [rows, k/2], [rows, k/32]
  std::vector<std::uint16_t> x;             // [k] f16
};

PtxMxfp4Case ptx_mxfp4_case(std::uint64_t seed, unsigned lo, unsigned hi) {
  PtxMxfp4Case c;
  c.codes.resize(kMxRows * kMxK / 2), c.scales.resize(kMxRows * kMxK / 32), c.x.resize(kMxK);
  for (auto& b : c.codes) b = static_cast<std::uint8_t>(splitmix64_next(seed));
  for (auto& s : c.scales) s = static_cast<std::uint8_t>(lo + splitmix64_next(seed) % (hi - lo + 1));
  for (auto& h : c.x) {
    const std::uint64_t r = splitmix64_next(seed);
    h = static_cast<std::uint16_t>((r & 0x8000u) | ((8 + (r >> 20) % 9) << 10) | (r & 0x3FF));
  }
  return c;
}

// The kernel's dequant, written from gemv.cu's comment: raw = E2M1 bits as FP16 x 2^-14.
std::uint16_t ptx_mxfp4_dequant(unsigned code, unsigned s, bool folded) {
  const auto raw = static_cast<std::uint16_t>(((code << 12) & 0x8000u) | ((code << 9) & 0x0E00u));
  const int a0 = static_cast<int>(s) - 112;
  const unsigned a = static_cast<unsigned>(a0 < 0 ? 0 : a0 > 30 ? 30 : a0);
  if (folded) return SoftArith::hmul(raw, static_cast<std::uint16_t>((a + 14) << 10));
  return SoftArith::hmul(SoftArith::hmul(raw, 0x7400), static_cast<std::uint16_t>(a << 10));
}

// y[row]: lane j's FMA chain over bytes j, j + 32, ... (low nibble, then high), a butterfly sum
// over the 32 lanes (offsets 16..1), one rounding to f16.
std::vector<std::uint16_t> ptx_mxfp4_reference(const PtxMxfp4Case& c, bool folded) {
  std::vector<std::uint16_t> y(kMxRows);
  for (unsigned row = 0; row < kMxRows; ++row) {
    std::vector<std::uint32_t> acc(32, 0);
    for (unsigned lane = 0; lane < 32; ++lane) {
      for (unsigned j = lane; j < kMxK / 2; j += 32) {
        const unsigned byte = c.codes[row * kMxK / 2 + j], s = c.scales[row * kMxK / 32 + j / 16];
        acc[lane] = SoftArith::ffma(SoftArith::half2float(ptx_mxfp4_dequant(byte & 0xF, s, folded)),
                                    SoftArith::half2float(c.x[2 * j]), acc[lane]);
        acc[lane] = SoftArith::ffma(SoftArith::half2float(ptx_mxfp4_dequant(byte >> 4, s, folded)),
                                    SoftArith::half2float(c.x[2 * j + 1]), acc[lane]);
      }
    }
    for (unsigned o = 16; o > 0; o >>= 1) {
      std::vector<std::uint32_t> next(32);
      for (unsigned l = 0; l < 32; ++l) next[l] = SoftArith::fadd(acc[l], acc[l ^ o]);
      acc = next;
    }
    y[row] = SoftArith::float2half_rn(acc[0]);
  }
  return y;
}

std::vector<std::uint16_t> ptx_mxfp4_run(const std::string& kernel, const PtxMxfp4Case& c) {
  const std::string text = read_text(BITPROOF_SOURCE_DIR "/examples/turbomind-mxfp4-gemv/gemv.ptx");
  REQUIRE(!text.empty());
  ptx::Memory mem;
  const auto bc = mem.add(c.codes), bs = mem.add(c.scales), bx = mem.add(ptx_bytes_of(c.x));
  const auto by = mem.add(std::vector<std::uint8_t>(2 * kMxRows, 0xFF));  // poisoned
  auto r = run_ptx(text, kernel, {kMxRows / 4}, {128},
                   {Arg::buf(bc), Arg::buf(bs), Arg::buf(bx), Arg::buf(by), Arg::u32(kMxRows), Arg::u32(kMxK)}, mem,
                   "gemv.ptx");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return ptx_values_of<std::uint16_t>(mem.bytes(by));
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("TurboMind-style MXFP4 GEMV: ordinary and folded dequant equal on scales 114..126, differ at 129") {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const auto c = ptx_mxfp4_case(seed, 114, 126);
      const auto ordinary = ptx_mxfp4_run("gemv_ordinary", c), folded = ptx_mxfp4_run("gemv_folded", c);
      CHECK(ordinary == ptx_mxfp4_reference(c, false));
      CHECK(folded == ptx_mxfp4_reference(c, true));
      CHECK_MESSAGE(ordinary == folded, fmt::format("seed {}", seed));
    }
    // One scale byte 129 (row 5, its third block): the folded scale is +Inf there, the ordinary
    // one 2^2; only row 5 may differ, and it does.
    auto c = ptx_mxfp4_case(4, 114, 126);
    c.scales[5 * kMxK / 32 + 2] = 129;
    const auto ordinary = ptx_mxfp4_run("gemv_ordinary", c), folded = ptx_mxfp4_run("gemv_folded", c);
    CHECK(ordinary == ptx_mxfp4_reference(c, false));
    CHECK(folded == ptx_mxfp4_reference(c, true));
    for (unsigned row = 0; row < kMxRows; ++row) {
      CHECK_MESSAGE((ordinary[row] != folded[row]) == (row == 5),
                    fmt::format("row {}: ordinary {:04x} folded {:04x}", row, ordinary[row], folded[row]));
    }
    // The folded row is not finite (an Inf scale), the ordinary one is.
    CHECK((folded[5] & 0x7C00) == 0x7C00);
    CHECK((ordinary[5] & 0x7C00) != 0x7C00);
  }

  TEST_CASE("TurboMind-style MXFP4 GEMV: the A/B specs' stages name gemv.ptx's kernels with their parameter count") {
    // ab.json / ab-129.json are run by `bitproof ab` (kernel arms); here only what the executor's
    // side can check: each stage's kernel exists once and takes as many parameters as it has args,
    // the grid covers the rows (4 a block of 128), and the two specs differ in checkpoint and expect.
    auto m = ptx::parse_module(read_text(BITPROOF_SOURCE_DIR "/examples/turbomind-mxfp4-gemv/gemv.ptx"), "gemv.ptx");
    REQUIRE(m.ok());
    std::vector<std::string> expects;
    for (const char* file : {"ab.json", "ab-129.json"}) {
      const auto spec =
          nlohmann::json::parse(read_text(std::string(BITPROOF_SOURCE_DIR "/examples/turbomind-mxfp4-gemv/") + file));
      expects.push_back(spec.at("expect").get<std::string>());
      const auto rows = spec.at("outputs").at(0).at("shape").at(1).get<unsigned>();
      REQUIRE(spec.at("arms").size() == 2);
      for (const auto& arm : spec.at("arms")) {
        for (const auto& stage : arm.at("stages")) {
          auto k = ptx::find_kernel(*m, stage.at("kernel").get<std::string>());
          REQUIRE_MESSAGE(k.ok(), file);
          CHECK((*k)->params.size() == stage.at("args").size());
          CHECK(stage.at("grid").at(0).get<unsigned>() * stage.at("block").at(0).get<unsigned>() / 32 == rows);
          CHECK(stage.at("args").at(4).at("u32").get<unsigned>() == rows);
        }
      }
    }
    CHECK(expects == std::vector<std::string>{"equal", "differ"});
  }

  TEST_CASE("TurboMind-style MXFP4 GEMV: the PTX executes whole (no refused instruction) and lists its mul.f16") {
    auto m = ptx::parse_module(read_text(BITPROOF_SOURCE_DIR "/examples/turbomind-mxfp4-gemv/gemv.ptx"), "gemv.ptx");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
    for (const char* name : {"gemv_ordinary", "gemv_folded"}) {
      auto k = ptx::find_kernel(*m, name);
      REQUIRE(k.ok());
      // __hmul is mul.f16 without a rounding modifier: contractible, so listed for the caller.
      CHECK(!(*k)->contractible_lines.empty());
    }
  }
}
