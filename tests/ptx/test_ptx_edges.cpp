// The executor on hand-written PTX: shuffle modes and widths, votes, divergence and the
// convergence check, conversions, min/max/.sat/.ftz, vectors, immediates, local/dynamic shared/
// module globals; what it refuses (with the line) and the launch's limits.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "arith/soft_arith.hpp"
#include "ptx/ptx.hpp"
#include "ptx_support.hpp"

using namespace bitproof;
using namespace bitproof::test;
using ptx::Arg;

namespace {

// A kernel k(out, in) around `body`: %r0 = the thread's index in the grid (x only), %r29 =
// tid.x, %rd4 = &out[%r0] and %rd5 = &in[%r0] (4-byte elements), %rd1/%rd2 the global
// addresses of out/in.
std::string ptx_edge_kernel(const std::string& body, const std::string& decls = "") {
  return ".version 8.0\n.target sm_90\n.address_size 64\n" + decls +
         "\n.visible .entry k(\n\t.param .u64 k_out,\n\t.param .u64 k_in\n)\n.maxntid 1024, 1, 1\n{\n"
         "\t.reg .pred %p<8>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n\t.reg .f32 %f<16>;\n\t.reg .b16 %h<8>;\n"
         "\tld.param.u64 %rd1, [k_out];\n\tld.param.u64 %rd2, [k_in];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
         "\tcvta.to.global.u64 %rd2, %rd2;\n\tmov.u32 %r29, %tid.x;\n\tmov.u32 %r30, %ctaid.x;\n\tmov.u32 %r31, "
         "%ntid.x;\n"
         "\tmad.lo.u32 %r0, %r30, %r31, %r29;\n\tmul.wide.u32 %rd3, %r0, 4;\n"
         "\tadd.s64 %rd4, %rd1, %rd3;\n\tadd.s64 %rd5, %rd2, %rd3;\n" +
         body + "\n\tret;\n}\n";
}

int ptx_line_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// Runs k over `threads` threads in blocks of `block`; out has `out_words` u32 per thread.
Expected<std::vector<std::uint32_t>> ptx_run_edge(const std::string& text, const std::vector<std::uint32_t>& in,
                                                  unsigned threads, unsigned out_words = 1, unsigned block = 0,
                                                  std::uint32_t dyn_shared = 0) {
  ptx::Memory mem;
  const auto bo = mem.add(std::vector<std::uint8_t>(std::size_t{threads} * out_words * 4, 0xAB));
  const auto bi = mem.add(ptx_bytes_of(in));
  auto m = ptx::parse_module(text, "edge.ptx");
  if (!m) return m.error();
  ptx::LaunchConfig cfg;
  if (block == 0) block = threads;
  cfg.grid = {threads / block}, cfg.block = {block}, cfg.dynamic_shared = dyn_shared, cfg.max_warp_steps = 100000;
  const std::vector<Arg> args = {Arg::buf(bo), Arg::buf(bi)};
  auto r = ptx::launch(*m, m->kernels.at(0), cfg, args, mem);
  if (!r) return r.error();
  return ptx_values_of<std::uint32_t>(mem.bytes(bo));
}

std::string ptx_error_of(const std::string& text, unsigned threads = 32) {
  auto r = ptx_run_edge(text, std::vector<std::uint32_t>(threads, 0), threads);
  REQUIRE(!r.ok());
  return r.error().message;
}

// Each (instruction, reason) in a kernel of its own must be refused at parse time, with the
// instruction's PTX line and the reason in the message. (No structured binding: clang 14
// cannot capture one in doctest's message lambdas.)
void expect_refused_with_line(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& entry : cases) {
    const std::string& inst = entry.first;
    const std::string& why = entry.second;
    const std::string text = ptx_edge_kernel(inst);
    auto m = ptx::parse_module(text, "edge.ptx");
    REQUIRE_MESSAGE(!m.ok(), inst);
    CHECK_MESSAGE(contains(m.error().message, fmt::format("edge.ptx:{}: ", ptx_line_of(text, inst.substr(1)))),
                  m.error().message);
    CHECK_MESSAGE(contains(m.error().message, why), m.error().message);
  }
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("shfl.sync: up/down/idx/bfly at widths 32 and 8 give CUDA's __shfl_*_sync lanes") {
    // value = 100 + lane; c = ((32 - width) << 8) | clamp, as CUDA's intrinsics encode it.
    const std::string text = ptx_edge_kernel(
        "\tadd.u32 %r1, %r0, 100;\n"
        "\tshfl.sync.up.b32 %r2|%p1, %r1, 3, 0, -1;\n"
        "\tshfl.sync.down.b32 %r3, %r1, 5, 31, -1;\n"
        "\tshfl.sync.idx.b32 %r4, %r1, 13, 6175, -1;\n"  // width 8: c = 0x1800 | 31
        "\tshfl.sync.up.b32 %r5, %r1, 3, 6144, -1;\n"    // width 8: c = 0x1800
        "\tshfl.sync.down.b32 %r6, %r1, 5, 6175, -1;\n"
        "\tshfl.sync.bfly.b32 %r7, %r1, 6, 31, -1;\n"
        "\tselp.u32 %r8, 1, 0, %p1;\n"
        "\tmul.wide.u32 %rd6, %r0, 32;\n\tadd.s64 %rd7, %rd1, %rd6;\n"
        "\tst.global.v4.u32 [%rd7], {%r2, %r3, %r4, %r5};\n\tst.global.v4.u32 [%rd7+16], {%r6, %r7, %r8, %r8};");
    auto r = ptx_run_edge(text, {}, 32, 8);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned l = 0; l < 32; ++l) {
      const std::uint32_t* o = r->data() + l * 8;
      CHECK(o[0] == 100 + (l >= 3 ? l - 3 : l));
      CHECK(o[1] == 100 + (l + 5 <= 31 ? l + 5 : l));
      CHECK(o[2] == 100 + (l / 8 * 8 + 13 % 8));
      CHECK(o[3] == 100 + (l % 8 >= 3 ? l - 3 : l));
      CHECK(o[4] == 100 + (l % 8 + 5 < 8 ? l + 5 : l));
      CHECK(o[5] == 100 + (l ^ 6));
      CHECK(o[6] == (l >= 3 ? 1u : 0u));
    }
  }

  TEST_CASE("vote.sync all/any/ballot, on all lanes and on a guarded half") {
    const std::string text = ptx_edge_kernel(
        "\tsetp.lt.u32 %p1, %r0, 20;\n"
        "\tvote.sync.ballot.b32 %r1, %p1, -1;\n"
        "\tvote.sync.all.pred %p2, %p1, -1;\n\tselp.u32 %r2, 1, 0, %p2;\n"
        "\tvote.sync.any.pred %p3, !%p1, -1;\n\tselp.u32 %r3, 1, 0, %p3;\n"
        "\tmov.u32 %r4, 7;\n\tsetp.lt.u32 %p4, %r0, 16;\n"
        "\t@%p4 vote.sync.all.pred %p5, %p1, 65535;\n"
        "\t@%p4 selp.u32 %r4, 1, 0, %p5;\n"
        "\tmul.wide.u32 %rd6, %r0, 16;\n\tadd.s64 %rd7, %rd1, %rd6;\n"
        "\tst.global.v4.u32 [%rd7], {%r1, %r2, %r3, %r4};");
    auto r = ptx_run_edge(text, {}, 32, 4);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned l = 0; l < 32; ++l) {
      const std::uint32_t* o = r->data() + l * 4;
      CHECK(o[0] == 0xFFFFFu);
      CHECK(o[1] == 0);
      CHECK(o[2] == 1);
      CHECK(o[3] == (l < 16 ? 1u : 7u));
    }
  }

  TEST_CASE("divergent branches reconverge before a shuffle; a shuffle inside a branch is refused") {
    const std::string good = ptx_edge_kernel(
        "\tand.b32 %r1, %r0, 1;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra $EVEN;\n"
        "\tmul.lo.u32 %r2, %r0, 3;\n\tbra.uni $JOIN;\n$EVEN:\n\tadd.u32 %r2, %r0, 1000;\n"
        "$JOIN:\n\tshfl.sync.bfly.b32 %r3, %r2, 1, 31, -1;\n\tst.global.u32 [%rd4], %r3;");
    auto r = ptx_run_edge(good, {}, 32);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned l = 0; l < 32; ++l) {
      const unsigned src = l ^ 1;
      CHECK((*r)[l] == (src % 2 == 0 ? src + 1000 : src * 3));
    }
    const std::string bad = ptx_edge_kernel(
        "\tand.b32 %r1, %r0, 1;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra $EVEN;\n"
        "\tshfl.sync.bfly.b32 %r3, %r0, 1, 31, -1;\n$EVEN:\n\tst.global.u32 [%rd4], %r0;");
    const std::string m = ptx_error_of(bad);
    CHECK(contains(
        m, fmt::format("edge.ptx:{}: block (0,0,0) thread (1,0,0): member mask 0xffffffff names lanes not converged",
                       ptx_line_of(bad, "shfl.sync"))));
  }

  TEST_CASE("bar.sync over warps of a block with a partial last warp; shared and dynamic shared memory") {
    // Thread t writes t+1 to static and dynamic shared memory; after the barrier it reads thread
    // (t + 17) % 40's words: every warp must have written before any reads.
    const std::string text = ptx_edge_kernel(
        "\tshl.b32 %r1, %r29, 2;\n\tmov.u32 %r2, st_s;\n\tadd.u32 %r3, %r2, %r1;\n\tadd.u32 %r4, %r29, 1;\n"
        "\tst.shared.u32 [%r3], %r4;\n\tmov.u64 %rd8, dyn_s;\n\tcvta.shared.u64 %rd9, %rd8;\n"
        "\tmul.wide.u32 %rd10, %r29, 4;\n\tadd.s64 %rd11, %rd9, %rd10;\n\tmul.lo.u32 %r9, %r4, 3;\n\tst.u32 [%rd11], "
        "%r9;\n"
        "\tbar.sync 0;\n"
        "\tadd.u32 %r5, %r29, 17;\n\trem.u32 %r6, %r5, 40;\n\tshl.b32 %r7, %r6, 2;\n\tadd.u32 %r8, %r2, %r7;\n"
        "\tld.shared.u32 %r10, [%r8];\n\tmul.wide.u32 %rd12, %r6, 4;\n\tadd.s64 %rd13, %rd9, %rd12;\n\tld.u32 %r11, "
        "[%rd13];\n"
        "\tadd.u32 %r12, %r10, %r11;\n\tst.global.u32 [%rd4], %r12;",
        ".shared .align 4 .b8 st_s[160];\n.extern .shared .align 16 .b8 dyn_s[];\n");
    auto r = ptx_run_edge(text, {}, 80, 1, 40, 160);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned t = 0; t < 80; ++t) CHECK((*r)[t] == 4 * ((t % 40 + 17) % 40 + 1));
    // Without enough dynamic shared memory the read past it is refused.
    auto small = ptx_run_edge(text, {}, 80, 1, 40, 64);
    REQUIRE(!small.ok());
    CHECK(contains(small.error().message, "outside the block's 224 bytes of shared memory"));
    // Without the barrier, warp 0 reads words warp 1 has not written yet.
    auto raced = ptx_run_edge(ptx_mutate(text, "\tbar.sync 0;\n", ""), {}, 80, 1, 40, 160);
    REQUIRE(raced.ok());
    CHECK((*raced)[20] != 4 * 38);
  }

  TEST_CASE("conversions: float->int saturating with .rzi/.rni, int->float rounding, int widths") {
    const std::vector<std::uint32_t> in = {0x4F32D05Eu /*3e9*/, 0xCF32D05Eu,          0x7FC00000u, 0xBFC00000u /*-1.5*/,
                                           0x40200000u /*2.5*/, 0x3F400000u /*0.75*/, 0x4B800001u, 0xFFFFFFFFu};
    const std::string text = ptx_edge_kernel(
        "\tld.global.u32 %r1, [%rd5];\n\tmov.b32 %f1, %r1;\n"
        "\tcvt.rzi.s32.f32 %r2, %f1;\n\tcvt.rni.s32.f32 %r3, %f1;\n\tcvt.rzi.u32.f32 %r4, %f1;\n"
        "\tcvt.rn.f32.s32 %f2, %r1;\n\tmov.b32 %r5, %f2;\n\tcvt.rz.f32.u32 %f3, %r1;\n\tmov.b32 %r6, %f3;\n"
        "\tcvt.u16.u32 %h1, %r1;\n\tcvt.s32.s16 %r7, %h1;\n\tcvt.rn.f16.f32 %h2, %f1;\n\tcvt.u32.u16 %r8, %h2;\n"
        "\tmul.wide.u32 %rd6, %r0, 32;\n\tadd.s64 %rd7, %rd1, %rd6;\n"
        "\tst.global.v4.u32 [%rd7], {%r2, %r3, %r4, %r5};\n\tst.global.v4.u32 [%rd7+16], {%r6, %r7, %r8, %r8};");
    auto r = ptx_run_edge(text, in, 8, 8);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    const auto at = [&](unsigned t, unsigned i) { return (*r)[t * 8 + i]; };
    CHECK(at(0, 0) == 0x7FFFFFFFu);  // 3e9 saturates
    CHECK(at(1, 0) == 0x80000000u);  // -3e9
    CHECK(at(2, 0) == 0);            // NaN -> 0
    CHECK(at(3, 0) == 0xFFFFFFFFu);  // -1.5 -> -1 toward zero
    CHECK(at(3, 1) == 0xFFFFFFFEu);  // -1.5 -> -2 nearest even
    CHECK(at(4, 1) == 2);            // 2.5 -> 2 nearest even
    CHECK(at(5, 1) == 1);            // 0.75 -> 1
    CHECK(at(3, 2) == 0);            // unsigned: negative saturates to 0
    CHECK(at(0, 2) == 3000000000u);
    CHECK(at(7, 3) == 0xBF800000u);  // s32 -1 -> -1.0f
    CHECK(at(7, 4) == 0x4F7FFFFFu);  // u32 0xFFFFFFFF toward zero: 2^32 - 256
    CHECK(at(6, 3) == 0x4E970000u);  // 0x4B800001 = 1266679809 -> nearest float
    CHECK(at(7, 5) == 0xFFFFFFFFu);  // u16 0xFFFF sign-extended
    CHECK(at(0, 6) == SoftArith::float2half_rn(0x4F32D05Eu));
    CHECK(at(5, 6) == 0x3A00);  // 0.75 in f16
  }

  TEST_CASE("min/max NaN and signed zeros, .sat, .ftz, f32 add/fma NaN canonical, immediates") {
    const std::vector<std::uint32_t> in = {0x7FC00001u, 0x80000000u, 0x00000001u,
                                           0x3F000000u, 0xFF800000u, 0x40000000u};
    const std::string text = ptx_edge_kernel(
        "\tld.global.u32 %r1, [%rd5];\n\tmov.b32 %f1, %r1;\n"
        "\tmin.f32 %f2, %f1, 0f3F800000;\n\tmax.f32 %f3, %f1, 0f00000000;\n"
        "\tadd.rn.sat.f32 %f4, %f1, 0f3F000000;\n\tmul.rn.ftz.f32 %f5, %f1, 0f4B000000;\n"
        "\tfma.rn.f32 %f6, %f1, 0f00000000, 0fBF800000;\n\tadd.f32 %f7, %f1, 0f7F800000;\n"
        "\tmul.wide.u32 %rd6, %r0, 32;\n\tadd.s64 %rd7, %rd1, %rd6;\n"
        "\tst.global.v4.f32 [%rd7], {%f2, %f3, %f4, %f5};\n\tst.global.v2.f32 [%rd7+16], {%f6, %f7};");
    auto r = ptx_run_edge(text, in, 6, 8);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    const auto at = [&](unsigned t, unsigned i) { return (*r)[t * 8 + i]; };
    CHECK(at(0, 0) == 0x3F800000u);  // min(NaN, 1) = 1
    CHECK(at(0, 1) == 0x00000000u);  // max(NaN, 0) = 0
    CHECK(at(1, 0) == 0x80000000u);  // min(-0, 1) = -0
    CHECK(at(1, 1) == 0x00000000u);  // max(-0, +0) = +0
    CHECK(at(0, 2) == 0);            // NaN + 0.5 saturated: +0
    CHECK(at(4, 2) == 0);            // -Inf saturated: +0
    CHECK(at(5, 2) == 0x3F800000u);  // 2.5 saturated: 1
    CHECK(at(3, 2) == 0x3F800000u);  // 0.5 + 0.5 = 1
    CHECK(at(2, 3) == 0);            // subnormal input flushed: 0 * 2^23 = 0
    CHECK(at(0, 4) == 0x7FFFFFFFu);  // NaN payloads do not propagate: canonical NaN
    CHECK(at(4, 4) == 0x7FFFFFFFu);  // -Inf * 0 - 1 = NaN, canonical
    CHECK(at(4, 5) == 0x7FFFFFFFu);  // -Inf + Inf
    CHECK(at(5, 4) == 0xBF800000u);
  }

  TEST_CASE(
      "mul.rn.ftz.f16 equals SoftArith::hmul_ftz (the H200's tininess rule) on every a x 64 b; add.rn.f32 equals "
      "fadd") {
    std::vector<std::uint32_t> in;
    for (std::uint32_t a = 0; a < 65536; ++a) in.push_back(a | (((a * 2654435761u) >> 10) & 0x3FF) << 16);
    const std::string text = ptx_edge_kernel(
        "\tld.global.u32 %r1, [%rd5];\n\tmov.b32 {%h1, %h2}, %r1;\n\tmul.rn.ftz.f16 %h3, %h1, %h2;\n"
        "\tmul.rn.f16 %h4, %h1, %h2;\n\tmov.b32 %r2, {%h3, %h4};\n\tst.global.u32 [%rd4], %r2;");
    auto r = ptx_run_edge(text, in, 65536, 1, 1024);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    int ftz_bad = 0, rn_bad = 0, flushed = 0;
    for (std::uint32_t t = 0; t < 65536; ++t) {
      const auto a = static_cast<std::uint16_t>(in[t]), b = static_cast<std::uint16_t>(in[t] >> 16);
      ftz_bad += ((*r)[t] & 0xFFFF) != SoftArith::hmul_ftz(a, b);
      rn_bad += ((*r)[t] >> 16) != SoftArith::hmul(a, b);
      flushed += ((*r)[t] & 0xFFFF) != ((*r)[t] >> 16);
    }
    CHECK(ftz_bad == 0);
    CHECK(rn_bad == 0);
    CHECK(flushed > 100);  // the two modes do differ on these pairs
    const auto edges = float32_edges();
    std::vector<std::uint32_t> pairs;
    for (std::size_t i = 0; i < edges.size(); ++i)
      pairs.push_back(edges[i]), pairs.push_back(edges[(i * 7919) % edges.size()]);
    const std::string add = ptx_edge_kernel(
        "\tmul.wide.u32 %rd6, %r0, 8;\n\tadd.s64 %rd7, %rd2, %rd6;\n\tld.global.v2.f32 {%f1, %f2}, [%rd7];\n"
        "\tadd.rn.f32 %f3, %f1, %f2;\n\tst.global.f32 [%rd4], %f3;");
    const unsigned n = static_cast<unsigned>(edges.size());
    auto ra = ptx_run_edge(add, pairs, n, 1, 512);
    REQUIRE_MESSAGE(ra.ok(), (ra.ok() ? std::string() : ra.error().message));
    int add_bad = 0;
    for (unsigned i = 0; i < n; ++i) add_bad += (*ra)[i] != SoftArith::fadd(pairs[2 * i], pairs[2 * i + 1]);
    CHECK(add_bad == 0);
  }

  TEST_CASE("local memory, module .global tables and setp.and with a negated predicate") {
    const std::string text = ptx_edge_kernel(
        "\tmov.u64 %rd8, __local_depot0;\n\tcvta.local.u64 %rd9, %rd8;\n\tst.u32 [%rd9+4], %r0;\n"
        "\tld.local.u32 %r1, [__local_depot0+4];\n"
        "\tand.b32 %r2, %r0, 3;\n\tmul.wide.u32 %rd10, %r2, 4;\n\tmov.u64 %rd11, table;\n\tadd.s64 %rd12, %rd11, "
        "%rd10;\n"
        "\tld.global.u32 %r3, [%rd12];\n\tsetp.gt.u32 %p1, %r0, 2;\n\tsetp.lt.and.u32 %p2, %r0, 6, !%p1;\n"
        "\tselp.u32 %r4, 1000, 0, %p2;\n\tadd.u32 %r5, %r3, %r4;\n\tadd.u32 %r5, %r5, %r1;\n\tst.global.u32 [%rd4], "
        "%r5;",
        ".global .align 4 .u32 table[4] = {10, 20, 30, 40};\n");
    const std::string with_depot =
        ptx_mutate(text, "\tmov.u64 %rd8", "\t.local .align 4 .b8 __local_depot0[8];\n\tmov.u64 %rd8");
    auto r = ptx_run_edge(with_depot, {}, 8);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned t = 0; t < 8; ++t) CHECK((*r)[t] == 10 * (t % 4 + 1) + (t <= 2 ? 1000 : 0) + t);
  }

  TEST_CASE("refused with the instruction and its line: atomics, mma, undecoded .approx, textures, calls, .rm") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"\tatom.global.add.u32 %r1, [%rd4], 1;", "atomics are not implemented"},
        {"\tred.global.add.u32 [%rd4], 1;", "atomic reductions are not implemented"},
        {"\tmma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
         "{%f5,%f6,%f7,%f8};",
         "this mma form is not implemented"},
        // The approximate forms PTX defines on f32/f16/bf16 decode (opaque: test_ptx_opaque.cpp);
        // the rest stay refused at parse time.
        {"\trsqrt.approx.f64 %rd6, %rd7;", "rsqrt.approx.f64: not an approximate form PTX defines (or one not decoded"},
        {"\tlg2.full.f32 %f1, %f2;", "lg2.full.f32: approximate instructions are not implemented"},
        {"\tcvt.approx.f32.f16 %f1, %h1;", "cvt.approx.f32.f16: approximate instructions are not implemented"},
        {"\ttex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [%rd4, {%f5,%f6}];", "textures are not implemented"},
        {"\tadd.rm.f32 %f1, %f2, %f3;", "rounding .rm is not implemented"},
        {"\tbfind.u32 %r1, %r2;", "bfind.u32: instruction not implemented"},
        {"\tactivemask.b32 %r1;", "the scheduler's choice"},
        {"\tcall.uni foo, (%r1);", "calls are not implemented"},
        {"\tadd.f64 %rd6, %rd7, %rd8;", "f64 arithmetic is not implemented"},
    };
    expect_refused_with_line(cases);
  }

  TEST_CASE("parse errors name the line: registers, labels, numbers, comments, operands") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"\tmov.u32 %r1, %q9;", "'%q9' is not a declared register"},
        {"\tbra.uni $NOWHERE;", "label '$NOWHERE' is not defined"},
        {"\tmov.u32 %r1, 12zz;", "'12zz' is not a number"},
        {"\tmov.u32 %r1 %r2;", "expected ',' or ';'"},
        {"\tadd.u32 %r1, %r2;", "3 operands expected, 2 given"},
        {"\tmov.u32 %tid.x, %r2;", "not a register it may write"},
        {"\tadd.f32 %f1, %f2, 5;", "an integer immediate for a float operand"},
        {"\tld.global.v4.u32 {%r1, %r2}, [%rd4];", "a 4-element vector expected"},
        {"\tld.global.u32 {%r1, %r2}, [%rd4];", "a vector needs .v2 or .v4"},
        {"\tst.global.u32 [%rd4], {%r1, %r2};", "a vector needs .v2 or .v4"},
        {"\tshfl.bfly.b32 %r1, %r2, 1, 31;", "only shfl.sync"},
        {"\tbar.sync 0, 64;", "a thread count is not implemented"},
        {"\tadd.u32 %r1, %r2, %r3 /* never closed", "unterminated comment"},
    };
    expect_refused_with_line(cases);
  }

  TEST_CASE("Triton's parameter attributes (.ptr .global .align) and .reqntid are read") {
    const std::string text = ptx_mutate(ptx_mutate(ptx_edge_kernel("\tst.global.u32 [%rd4], %r0;"), ".param .u64 k_out",
                                                   ".param .u64 .ptr .global .align 16 k_out"),
                                        ".maxntid 1024, 1, 1", ".reqntid 32");
    auto r = ptx_run_edge(text, {}, 32);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    CHECK((*r)[31] == 31);
  }

  TEST_CASE("stmatrix.m8n8.x2.b16: row r of matrix m at lane 8m + r's address, its bytes 4k.. from lane 4r + k") {
    // Rows given in reverse order (lane r of each 8 names row 7 - r), so the layout is not the identity:
    // memory at matrix m + 16 (7 - r) + 4k must be lane 4r + k's register m (PTX ISA, stmatrix).
    const std::string body =
        "\tshl.b32 %r2, %r29, 1;\n\tadd.u32 %r3, %r2, 1;\n\tshl.b32 %r3, %r3, 16;\n\tor.b32 %r4, %r2, %r3;\n"
        "\tor.b32 %r5, %r4, 16777472;\n"
        "\tand.b32 %r6, %r29, 7;\n\tsub.u32 %r7, 7, %r6;\n\tshl.b32 %r7, %r7, 4;\n\tshr.u32 %r8, %r29, 3;\n"
        "\tand.b32 %r8, %r8, 1;\n\tshl.b32 %r8, %r8, 7;\n\tadd.u32 %r7, %r7, %r8;\n\tmov.b32 %r9, sm;\n"
        "\tadd.u32 %r9, %r9, %r7;\n"
        "\tstmatrix.sync.aligned.m8n8.x2.shared.b16 [%r9], {%r4, %r5};\n\tbar.sync 0;\n"
        "\tmov.b32 %r10, sm;\n\tshl.b32 %r11, %r29, 2;\n\tadd.u32 %r10, %r10, %r11;\n"
        "\tld.shared.u32 %r12, [%r10];\n\tld.shared.u32 %r13, [%r10+128];\n"
        "\tmul.wide.u32 %rd6, %r29, 8;\n\tadd.s64 %rd7, %rd1, %rd6;\n"
        "\tst.global.u32 [%rd7], %r12;\n\tst.global.u32 [%rd7+4], %r13;";
    const std::string text = ptx_edge_kernel(body, ".shared .align 16 .b8 sm[256];\n");
    auto r = ptx_run_edge(text, {}, 32, 2);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned o = 0; o < 32; ++o) {  // o: the 4-byte word of each matrix (row o / 4, piece o % 4)
      const unsigned row = o / 4, k = o % 4, lane = 4 * (7 - row) + k;
      const std::uint32_t reg0 = (2 * lane + 1) << 16 | 2 * lane;
      CHECK_MESSAGE((*r)[2 * o] == reg0, o);
      CHECK_MESSAGE((*r)[2 * o + 1] == (reg0 | 0x01000100u), o);
    }
    // Negative control: half a warp issuing it (a guard on the lane) is refused, and so is .trans.
    const std::string half = ptx_mutate(ptx_mutate(text, "\tstmatrix", "\tsetp.lt.u32 %p1, %r29, 16;\n\t@%p1 stmatrix"),
                                        "x2.shared", "x2.shared");
    auto h = ptx_run_edge(half, {}, 32, 2);
    REQUIRE(!h.ok());
    CHECK_MESSAGE(contains(h.error().message, "stmatrix needs the whole warp"), h.error().message);
    auto t = ptx::parse_module(ptx_mutate(text, "m8n8.x2", "m8n8.trans.x2"), "edge.ptx");
    REQUIRE(!t.ok());
    CHECK_MESSAGE(contains(t.error().message, ".trans is not implemented"), t.error().message);
  }

  TEST_CASE("Triton's braced single register ({ %r1 } without .v2/.v4) is that register, in ld and st") {
    // Triton 3.6's inline PTX: `ld.global.b32 { %r46 }, [ %rd14 + 0 ]`, `@%p4 st.global.b16 [ %rd16 + 0 ], { %rs41 }`.
    const std::string text = ptx_edge_kernel(
        "\tst.global.u32 [%rd4], %r0;\n\tld.global.b32 { %r1 }, [ %rd4 + 0 ];\n\tadd.u32 %r1, %r1, 100;\n"
        "\tst.global.b32 [ %rd4 + 0 ], { %r1 };");
    auto r = ptx_run_edge(text, {}, 32);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned t = 0; t < 32; ++t) CHECK((*r)[t] == t + 100);
  }

  TEST_CASE("DWARF sections (nvcc -lineinfo, Triton) are skipped to their closing brace; a broken one is refused") {
    const std::string kernel = ptx_edge_kernel("\tst.global.u32 [%rd4], %r0;");
    const std::string sections =
        "\n.section .debug_abbrev\n{\n.b8 1\n.b8 17\n.b8 1\n$L__info_string0:\n.b32 4294967295\n}\n"
        ".section .debug_str\n{\n.b8 103,101,109,118\n}\n.section .debug_macinfo { }\n.section .nv.empty\n";
    auto r = ptx_run_edge(kernel + sections, {}, 32);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    CHECK((*r)[31] == 31);
    auto open = ptx::parse_module(kernel + "\n.section .debug_info\n{\n.b8 1\n", "edge.ptx");
    REQUIRE(!open.ok());
    CHECK_MESSAGE(contains(open.error().message, ".section: no closing '}'"), open.error().message);
    auto nested = ptx::parse_module(kernel + "\n.section .debug_info\n{\n.b8 1\n{\n}\n}\n", "edge.ptx");
    REQUIRE(!nested.ok());
    CHECK_MESSAGE(contains(nested.error().message, "a '{' inside a section"), nested.error().message);
  }

  TEST_CASE("launch limits and argument checks; a loop that never ends; undefined values are errors") {
    const std::string text = ptx_edge_kernel("\tst.global.u32 [%rd4], %r0;");
    auto m = ptx::parse_module(text, "edge.ptx");
    REQUIRE(m.ok());
    const ptx::Kernel& k = m->kernels[0];
    ptx::Memory mem;
    const auto b = mem.add(std::vector<std::uint8_t>(4 * 64));
    ptx::LaunchConfig cfg;
    cfg.grid = {1}, cfg.block = {64};
    const auto fails = [&](const ptx::LaunchConfig& c, std::vector<Arg> args, const std::string& why) {
      auto r = ptx::launch(*m, k, c, args, mem);
      REQUIRE(!r.ok());
      CHECK_MESSAGE(contains(r.error().message, why), r.error().message);
    };
    CHECK(ptx::launch(*m, k, cfg, std::vector<Arg>{Arg::buf(b), Arg::buf(b)}, mem).ok());
    fails(cfg, {Arg::buf(b)}, "2 parameters, 1 arguments");
    fails(cfg, {Arg::buf(b), Arg::u32(3)}, "argument 1: 4 bytes for k_in, which has 8");
    fails(cfg, {Arg::buf(b), Arg::buf(9)}, "argument 1: no buffer 9");
    ptx::LaunchConfig big = cfg;
    big.block = {2048};
    fails(big, {Arg::buf(b), Arg::buf(b)}, "the block is past the limits");
    big = cfg;
    big.dynamic_shared = 300000;
    fails(big, {Arg::buf(b), Arg::buf(b)}, "past the 227 KiB limit");
    const std::string spin = ptx_edge_kernel("$L:\n\tadd.u32 %r1, %r1, 1;\n\tbra.uni $L;");
    const std::string m1 = ptx_error_of(spin);
    CHECK(contains(m1, "more than 100000 warp instructions"));
    const std::string div0 = ptx_edge_kernel("\tdiv.u32 %r1, %r0, 0;");
    CHECK(
        contains(ptx_error_of(div0), fmt::format("edge.ptx:{}: block (0,0,0) thread (0,0,0): integer division by zero",
                                                 ptx_line_of(div0, "div.u32"))));
  }
}
