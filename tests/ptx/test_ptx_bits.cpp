// The bit manipulation and packing instructions (prmt in every mode, bfe, bfi, popc, clz, brev,
// lop3, shf, cvt.rn.f16x2/bf16x2.f32, cvt.f32.bf16) on nvcc's PTX (data/bits.cu -> data/bits.ptx)
// against host references written from the CUDA intrinsics' and the PTX ISA's definitions, on the
// faithfulness inputs (edges and random words) and on hand-checked constants; what stays refused;
// and the executor's per-instruction lane loops (ConcretePolicy::select) against alu() lane by lane.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "arith/soft_arith.hpp"
#include "ptx/concrete.hpp"
#include "ptx/gpu/faith_inputs.hpp"
#include "ptx/ptx.hpp"
#include "ptx_support.hpp"
#include "splitmix.hpp"

using namespace bitproof;
using namespace bitproof::test;
using ptx::Arg;

namespace {

// Runs bits.ptx (or a mutation of it) on triples `in`; 24 words a thread.
std::vector<std::uint32_t> ptx_bits_run(const std::string& text, const std::vector<std::uint32_t>& in) {
  const auto n = static_cast<unsigned>(in.size() / 3);
  ptx::Memory mem;
  const auto bi = mem.add(ptx_bytes_of(in));
  const auto bo = mem.add(std::vector<std::uint8_t>(std::size_t{n} * 24 * 4, 0xAB));
  auto r = run_ptx(text, "bits", {(n + 127) / 128}, {128}, {Arg::buf(bi), Arg::buf(bo), Arg::u32(n)}, mem, "bits.ptx");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return ptx_values_of<std::uint32_t>(mem.bytes(bo));
}

// The PTX ISA's prmt mode tables as the ISA prints them: per mode, per c[1:0], the source byte
// of d.b3 d.b2 d.b1 d.b0 (written out again here, apart from src/ptx's table).
const char* const kPtxBitsModes[6][4] = {
    {"3210", "4321", "5432", "6543"},  // f4e
    {"5670", "6701", "7012", "0123"},  // b4e
    {"0000", "1111", "2222", "3333"},  // rc8
    {"3210", "3211", "3222", "3333"},  // ecl
    {"0000", "1110", "2210", "3210"},  // ecr
    {"1010", "3232", "1010", "3232"},  // rc16
};

// mode -1: prmt.b32 without a mode (selector nibble pos; its bit 3 replicates the byte's sign);
// -2: CUDA's __byte_perm, which takes only each nibble's low 3 bits (nvcc masks c with 0x7777).
std::uint32_t ptx_bits_prmt_ref(std::uint32_t a, std::uint32_t b, std::uint32_t c, int mode) {
  const std::uint64_t src = (std::uint64_t{b} << 32) | a;
  if (mode == -2) c &= 0x7777;
  std::uint32_t d = 0;
  for (int pos = 0; pos < 4; ++pos) {
    std::uint32_t byte = 0;
    if (mode < 0) {
      const std::uint32_t sel = (c >> (4 * pos)) & 0xF;
      byte = static_cast<std::uint32_t>(src >> (8 * (sel & 7))) & 0xFF;
      if (sel & 8) byte = (byte >> 7) ? 0xFF : 0;
    } else {
      const int which = kPtxBitsModes[mode][c & 3][3 - pos] - '0';
      byte = static_cast<std::uint32_t>(src >> (8 * which)) & 0xFF;
    }
    d |= byte << (8 * pos);
  }
  return d;
}

std::uint64_t ptx_bits_reverse(std::uint64_t v, int width) {
  std::uint64_t r = 0;
  for (int i = 0; i < width; ++i) r = (r << 1) | ((v >> i) & 1);
  return r;
}

// bfe/bfi as the ISA defines them: bits [pos, pos + len) of a, the rest the sign (bfe.s) or 0.
std::uint32_t ptx_bits_bfe_ref(std::uint32_t a, std::uint32_t b, std::uint32_t c, bool sgn) {
  const unsigned pos = b & 0xFF, len = c & 0xFF;
  if (len == 0) return 0;
  const unsigned last = std::min(pos + len - 1, 31u);
  const std::uint32_t fill = sgn && ((a >> last) & 1) ? 0xFFFFFFFFu : 0;
  std::uint32_t d = fill;
  for (unsigned i = 0; i < 32; ++i) {
    if (i < len && pos + i < 32) d = (d & ~(1u << i)) | (((a >> (pos + i)) & 1) << i);
  }
  return d;
}
std::uint32_t ptx_bits_bfi_ref(std::uint32_t a, std::uint32_t b, std::uint32_t pos, std::uint32_t len) {
  pos &= 0xFF, len &= 0xFF;
  for (unsigned i = 0; i < len && pos + i < 32; ++i) b = (b & ~(1u << (pos + i))) | (((a >> i) & 1) << (pos + i));
  return b;
}

// CUDA's __funnelshift_{l,r}[c]: hi:lo shifted by s & 31 (or min(s, 32)); l keeps the upper word.
std::uint32_t ptx_bits_funnel(std::uint32_t lo, std::uint32_t hi, std::uint32_t s, bool right, bool clamp) {
  const std::uint64_t n = clamp ? std::min(s, 32u) : s & 31;
  const std::uint64_t v = (std::uint64_t{hi} << 32) | lo;
  return static_cast<std::uint32_t>(right ? v >> n : (v << n) >> 32);
}

// The expected 24 words of bits.cu for one triple.
std::vector<std::uint32_t> ptx_bits_expected(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  const std::uint64_t ab = (std::uint64_t{b} << 32) | a;
  std::vector<std::uint32_t> o(24);
  o[0] = ptx_bits_prmt_ref(a, b, c, -2);
  for (int m = 0; m < 6; ++m) o[1 + m] = ptx_bits_prmt_ref(a, b, c, m);
  o[7] = static_cast<std::uint32_t>(std::popcount(a));
  o[8] = static_cast<std::uint32_t>(std::countl_zero(a));
  o[9] = static_cast<std::uint32_t>(ptx_bits_reverse(a, 32));
  o[10] = static_cast<std::uint32_t>(std::popcount(ab)) | (static_cast<std::uint32_t>(std::countl_zero(ab)) << 8);
  o[11] = static_cast<std::uint32_t>(ptx_bits_reverse(ab, 64) >> 16);
  o[12] = ptx_bits_funnel(a, b, c, false, false);
  o[13] = ptx_bits_funnel(a, b, c, true, false);
  o[14] = ptx_bits_funnel(a, b, c, false, true);
  o[15] = ptx_bits_funnel(a, b, c, true, true);
  o[16] = ptx_bits_bfe_ref(a, b, c, false);
  o[17] = ptx_bits_bfe_ref(a, b, c, true);
  o[18] = ptx_bits_bfi_ref(a, b, c, c >> 8);
  o[19] = (a & b) | (a & c) | (b & c);
  o[20] = ((a >> (c & 31)) & 0xF) | (static_cast<std::uint32_t>(static_cast<std::int32_t>(b << 4) >> 28) << 4);
  // __floats2half2_rn(a, b): .x = a in the low half (nvcc: cvt.rn.f16x2.f32 d, b, a).
  o[21] = SoftArith::float2half_rn(a) | (std::uint32_t{SoftArith::float2half_rn(b)} << 16);
  o[22] = SoftArith::float2bfloat16_rn(a) | (std::uint32_t{SoftArith::float2bfloat16_rn(b)} << 16);
  // cvt.f32.bf16 is the exact widening, NaN payloads kept (measured on an H100: faith_sm90.bin word 23).
  o[23] = (c & 0xFFFFu) << 16;
  return o;
}

// Words that differ from the expected ones: "thread t word w: got x expected y", at most 10.
std::vector<std::string> ptx_bits_differences(const std::vector<std::uint32_t>& in,
                                              const std::vector<std::uint32_t>& got) {
  std::vector<std::string> out;
  for (std::size_t t = 0; t < in.size() / 3 && out.size() < 10; ++t) {
    const auto e = ptx_bits_expected(in[3 * t], in[3 * t + 1], in[3 * t + 2]);
    for (int w = 0; w < 24; ++w) {
      if (got[t * 24 + w] != e[w]) {
        out.push_back(fmt::format("thread {} word {}: in {:08x} {:08x} {:08x} got {:08x} expected {:08x}", t, w,
                                  in[3 * t], in[3 * t + 1], in[3 * t + 2], got[t * 24 + w], e[w]));
      }
    }
  }
  return out;
}

// The faithfulness inputs plus hand-picked triples: byte-distinct words for the permutes (every
// c[1:0] and sign-replicating selectors), shifts 0, 31, 32, 33, fields at and past bit 31.
std::vector<std::uint32_t> ptx_bits_inputs() {
  std::vector<std::uint32_t> in = faith_inputs();
  const std::uint32_t a = 0x83020180, b = 0x07F60504;
  for (std::uint32_t c : {0u, 1u, 2u, 3u, 0x7531u, 0x89ABu, 0xFEDCu, 0x3210u, 0x7654u, 31u, 32u, 33u, 0x1F04u, 0x0820u,
                          0x00FFu, 0xFF00u}) {
    in.insert(in.end(), {a, b, c});
  }
  return in;
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("bit instructions on nvcc's PTX: prmt (all modes), bfe, bfi, popc, clz, brev, lop3, shf, f16x2 packs") {
    const std::string text = ptx_fixture("bits.ptx");
    const auto in = ptx_bits_inputs();
    const auto got = ptx_bits_run(text, in);
    const auto diff = ptx_bits_differences(in, got);
    CHECK_MESSAGE(diff.empty(), (diff.empty() ? std::string() : diff.front()));

    // prmt.b32 without __byte_perm's mask: the selectors' bit 3 replicates a byte's sign.
    {
      const auto raw = ptx_bits_run(ptx_mutate(text, "and.b32  \t%r69, %r9, 30583;", "mov.b32 \t%r69, %r9;"), in);
      int differ = 0, replicated = 0;
      for (std::size_t t = 0; t < in.size() / 3; ++t) {
        const std::uint32_t a = in[3 * t], b = in[3 * t + 1], c = in[3 * t + 2];
        differ += raw[t * 24] != ptx_bits_prmt_ref(a, b, c, -1);
        replicated += ptx_bits_prmt_ref(a, b, c, -1) != ptx_bits_prmt_ref(a, b, c, -2);
      }
      CHECK(differ == 0);
      CHECK(replicated > 1000);  // the inputs exercise the sign replication
    }
    // Hand-checked constants (CUB's PRMT example; a sign-replicating selector; an f4e window).
    CHECK(ptx_bits_prmt_ref(0x03020100, 0x07060504, 0x7531, -1) == 0x07050301u);
    CHECK(ptx_bits_prmt_ref(0x00800000, 0, 0x000A, -1) == 0x000000FFu);
    CHECK(ptx_bits_prmt_ref(0x03020100, 0x07060504, 1, 0) == 0x04030201u);
    CHECK(ptx_bits_prmt_ref(0x03020100, 0x07060504, 0, 1) == 0x05060700u);

    // Negative controls: a mode swapped, bfe.s read as bfe.u, lop3's table changed, the f16x2
    // pack's operands exchanged: each changes words the references check.
    for (const auto& mutation : std::vector<std::pair<std::string, std::string>>{
             {"prmt.b32.f4e", "prmt.b32.b4e"},
             {"prmt.b32.ecl", "prmt.b32.ecr"},
             {"bfe.s32", "bfe.u32"},
             {"0xE8;", "0xE9;"},
             {"shf.l.clamp.b32", "shf.l.wrap.b32"},
             {"cvt.rn.f16x2.f32 %r63, %f4, %f3;", "cvt.rn.f16x2.f32 %r63, %f3, %f4;"}}) {
      const std::string what = mutation.first + " -> " + mutation.second + " went unnoticed";
      const auto mutated = ptx_bits_run(ptx_mutate(text, mutation.first, mutation.second), in);
      CHECK_MESSAGE(!ptx_bits_differences(in, mutated).empty(), what);
    }
  }

  TEST_CASE("cvt.rni.sat.u8.f32 (TurboMind's quantizer): .sat on float-to-integer is the default clamp") {
    // out[i] = {cvt.rni.sat.u8.f32, cvt.rni.u8.f32, cvt.rzi.sat.s32.f32} of in[i]; ties to even,
    // clamped to the destination's range, NaN to 0 (PTX ISA, cvt: .sat is redundant there).
    const std::string text =
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_out, .param .u64 k_in)\n{\n"
        "\t.reg .b32 %r<8>;\n\t.reg .f32 %f<2>;\n\t.reg .b64 %rd<8>;\n"
        "\tld.param.u64 %rd1, [k_out];\n\tld.param.u64 %rd2, [k_in];\n\tmov.u32 %r1, %tid.x;\n"
        "\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tld.global.f32 %f1, [%rd4];\n"
        "\tcvt.rni.sat.u8.f32 %r2, %f1;\n\tcvt.rni.u8.f32 %r3, %f1;\n\tcvt.rzi.sat.s32.f32 %r4, %f1;\n"
        "\tmul.wide.u32 %rd5, %r1, 12;\n\tadd.s64 %rd6, %rd1, %rd5;\n"
        "\tst.global.u32 [%rd6], %r2;\n\tst.global.u32 [%rd6+4], %r3;\n\tst.global.u32 [%rd6+8], %r4;\n\tret;\n}\n";
    // -1.5, 0.5, 1.5, 2.5, 255.5, 256, 1e10, -1e10, NaN, +Inf, -Inf, -0, 127.49
    const std::vector<std::uint32_t> in = {0xBFC00000, 0x3F000000, 0x3FC00000, 0x40200000, 0x437F8000,
                                           0x43800000, 0x501502F9, 0xD01502F9, 0x7FC00000, 0x7F800000,
                                           0xFF800000, 0x80000000, 0x42FEFAE1};
    const std::vector<std::uint32_t> u8 = {0, 0, 2, 2, 255, 255, 255, 0, 0, 255, 0, 0, 127};
    const std::vector<std::uint32_t> s32 = {0xFFFFFFFF, 0, 1,          2,          255, 256, 0x7FFFFFFF,
                                            0x80000000, 0, 0x7FFFFFFF, 0x80000000, 0,   127};
    const auto n = static_cast<unsigned>(in.size());
    ptx::Memory mem;
    const auto bo = mem.add(std::vector<std::uint8_t>(std::size_t{n} * 12, 0xAB)), bi = mem.add(ptx_bytes_of(in));
    auto r = run_ptx(text, "k", {1}, {n}, {Arg::buf(bo), Arg::buf(bi)}, mem, "sat.ptx");
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    const auto out = ptx_values_of<std::uint32_t>(mem.bytes(bo));
    for (unsigned i = 0; i < n; ++i) {
      CHECK_MESSAGE(out[3 * i] == u8[i], fmt::format("in {:08x}: sat.u8 {}", in[i], out[3 * i]));
      CHECK(out[3 * i + 1] == out[3 * i]);  // .sat changes nothing
      CHECK_MESSAGE(out[3 * i + 2] == s32[i], fmt::format("in {:08x}: sat.s32 {:08x}", in[i], out[3 * i + 2]));
    }
    // Still refused: .ftz on float-to-integer, .sat on an integer narrowing.
    for (const char* inst : {"cvt.rni.ftz.u8.f32 %r2, %f1;", "cvt.sat.u8.s32 %r2, %r1;"}) {
      CHECK_MESSAGE(!ptx::parse_module(ptx_mutate(text, "cvt.rni.sat.u8.f32 %r2, %f1;", inst), "sat.ptx").ok(), inst);
    }
  }

  TEST_CASE("bit instructions: forms that stay refused, with their line") {
    const std::string head =
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_p)\n{\n"
        "\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<4>;\n";
    for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
             {"lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0x80, %p2;", "predicate output"},
             {"lop3.b32 %r1, %r2, %r3, %r4, %r5;", "must be an immediate"},
             {"prmt.b32.xyz %r1, %r2, %r3, %r4;", "modifier .xyz"},
             {"bfe.b32 %r1, %r2, %r3, %r4;", ".u32, .s32"},
             {"shf.l.b32 %r1, %r2, %r3, %r4;", ".clamp/.wrap"},
             {"cvt.rm.f16x2.f32 %r1, %f1, %f2;", "rounding .rm"},
             {"cvt.rn.relu.f16x2.f32 %r1, %f1, %f2;", "modifier .relu"},
             {"cvt.rz.bf16x2.f32 %r1, %f1, %f2;", "only .rn"}}) {
      const std::string& inst = entry.first;
      const std::string& why = entry.second;
      const std::string text = head + "\t" + inst + "\n\tret;\n}\n";
      auto m = ptx::parse_module(text, "bits.ptx");
      REQUIRE_MESSAGE(!m.ok(), inst);
      CHECK_MESSAGE(contains(m.error().message, "bits.ptx:9: "), m.error().message);
      CHECK_MESSAGE(contains(m.error().message, why), m.error().message);
    }
  }

  TEST_CASE(
      "the executor's lane loops (ConcretePolicy::select) equal alu() lane by lane on every fixture instruction") {
    // Every ALU instruction of the nvcc fixtures, on random registers and partial lane masks: the
    // loop select() picks (special or generic) must write what alu() computes for each lane and
    // leave the other lanes alone.
    int checked = 0;
    std::uint64_t seed = 47;
    for (const char* file : {"kernels.ptx", "bits.ptx"}) {
      auto m = ptx::parse_module(ptx_fixture(file), file);
      REQUIRE(m.ok());
      for (const auto& k : m->kernels) {
        for (const auto& inst : k.code) {
          const auto loop = ptx::ConcretePolicy::select(inst);
          if (loop == nullptr) continue;  // memory, control and warp instructions
          for (std::uint32_t exec : {0xFFFFFFFFu, 0x0000FFFFu, 0x80000001u}) {
            std::vector<std::uint64_t> regs(k.slots.size() * 32);
            for (auto& r : regs) {
              const std::uint64_t x = splitmix64_next(seed);
              r = (x & 7) == 0 ? 0 : (x & 7) == 1 ? ~std::uint64_t{0} : x;  // zeros, all ones, random
            }
            std::vector<std::uint64_t> want = regs;
            bool undefined = false;  // e.g. a division by zero: alu() names it, no value to compare
            for (int l = 0; l < 32; ++l) {
              if (!(exec >> l & 1)) continue;
              std::uint64_t s[5] = {}, d[4] = {};
              for (int i = 0; i < inst.nsrc; ++i) s[i] = regs[std::size_t{inst.src[i]} * 32 + l];
              if (ptx::ConcretePolicy::alu(inst, s, d) != nullptr) undefined = true;
              for (int i = 0; i < inst.ndst; ++i) {
                if (inst.dst[i] != ptx::kNoSlot) want[std::size_t{inst.dst[i]} * 32 + l] = d[i];
              }
            }
            if (undefined) continue;
            int bad = -1;
            ptx::ConcretePolicy policy;
            REQUIRE(loop(policy, inst, regs.data(), exec, &bad) == nullptr);
            CHECK_MESSAGE(regs == want, fmt::format("{} line {}: op {} lanes {:08x}", file, inst.line,
                                                    static_cast<int>(inst.op), exec));
            ++checked;
          }
        }
      }
    }
    MESSAGE(fmt::format("{} instruction x mask cases checked", checked));
    CHECK(checked > 300);
  }
}
