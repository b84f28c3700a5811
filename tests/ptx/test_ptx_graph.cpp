// The node table of the PTX proof (src/ptx/graph.hpp): hash-consing, the canonical forms and
// their negative control, every bit-slice simplification checked exhaustively against
// ConcretePolicy on a 16-bit input, evaluate() on deep graphs, lemmas (the MXFP4 ordinary and
// folded dequants merge on scales 113..128 and not with 129; a form that differs on one code
// never merges), first_difference and describe. ctest ptx.graph.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "arith/soft_arith.hpp"
#include "ptx/concrete.hpp"
#include "ptx/gpu/canon_inputs.hpp"
#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"
#include "recipes/turbomind_mxfp4.hpp"
#include "splitmix.hpp"
#include "sweep_stride.hpp"

// Everything in a namespace of its own: the unity build (tests/layout/check_unity.py) compiles
// this file with the other suites, whose file-local helpers have the same short names.
namespace bitproof::ptx_graph_test {

namespace {

using bitproof::ptx::ConcretePolicy;
using bitproof::ptx::Inst;
using namespace bitproof::ptx::sym;
using Leaves = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// One instruction as the parser decodes it (so the tests use the executor's own Inst fields).
Inst gi(const std::string& line) {
  const std::string text = fmt::format(
      ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry t()\n{{\n"
      ".reg .pred %p<8>;\n.reg .b16 %h<16>;\n.reg .b32 %r<16>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n"
      ".reg .b16 %s<16>;\n.reg .b32 %o<8>;\n.reg .f32 %of<4>;\n.reg .b16 %oh<4>;\n"
      "{};\nret;\n}}\n",
      line);
  auto m = bitproof::ptx::parse_module(text, "graph_test.ptx");
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
  REQUIRE(!m->kernels.empty());
  REQUIRE(!m->kernels[0].code.empty());
  return m->kernels[0].code[0];
}

NodeId one(Graph& g, const std::string& line, std::vector<NodeId> ops) {
  NodeId out[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
  g.inst(gi(line), ops.data(), out);
  return out[0];
}

std::uint64_t eval(const Graph& g, NodeId n, const Leaves& leaves) {
  auto r = g.evaluate(n, leaves);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return *r;
}

std::uint64_t concrete(const std::string& line, std::vector<std::uint64_t> s, int result = 0) {
  const Inst in = gi(line);
  s.resize(5, 0);
  std::uint64_t d[4] = {};
  const char* why = ConcretePolicy::alu(in, s.data(), d);
  REQUIRE(why == nullptr);
  return d[result];
}

// A graph with tensors x (16-bit) and y, z, w (32-bit), one element each, for the small tests.
struct Small {
  Graph g;
  NodeId x, y, z, w;
  Small() {
    g.add_tensor({"x", 4, 16, {}, 0});
    g.add_tensor({"y", 4, 32, {}, 0});
    g.add_tensor({"z", 4, 32, {}, 0});
    g.add_tensor({"w", 4, 32, {}, 0});
    x = g.leaf(0, 0), y = g.leaf(1, 0), z = g.leaf(2, 0), w = g.leaf(3, 0);
  }
  std::uint64_t leaf_index(std::uint32_t t, std::uint64_t e) const { return g.tensors()[t].first_leaf + e; }
};

// A simplification checked on every 16-bit x: the graph's node (whose kind must be a slice, a
// concatenation or a constant: the rule fired) against ConcretePolicy on the instruction. The
// operand is x in both halves of a 32-bit word (every bit of the word varies), or x itself.
void exhaustive(const std::string& line, std::vector<std::uint64_t> consts, bool doubled, bool expect_simplified) {
  Small s;
  const NodeId a = doubled ? s.g.concat(s.x, s.x) : s.x;
  std::vector<NodeId> ops = {a};
  for (const std::uint64_t c : consts) ops.push_back(s.g.constant(c, 32));
  const NodeId n = one(s.g, line, ops);
  const NodeKind k = s.g.node(n).kind;
  INFO(line, " -> ", s.g.describe(n, 3));
  CHECK((k != NodeKind::kInst) == expect_simplified);
  const std::uint64_t leaf = s.leaf_index(0, 0);
  const Inst in = gi(line);
  // Every input in Release; every k-th under the sanitizers (tests/sweep_stride.hpp), the ends kept.
  const std::uint64_t stride = bitproof::test::sweep_stride();
  for (std::uint64_t v = 0; v < 65536; v = v + stride < 65536 || v == 65535 ? v + stride : 65535) {
    std::uint64_t src[5] = {doubled ? v | v << 16 : v}, d[4] = {};
    for (std::size_t i = 0; i < consts.size(); ++i) src[i + 1] = consts[i];
    const std::uint64_t want = ConcretePolicy::alu(in, src, d) == nullptr ? d[0] : ~std::uint64_t{0};
    const auto r = s.g.evaluate(n, {{leaf, v}});
    const std::uint64_t got = r.ok() ? *r : ~want;
    if (want != got) {
      FAIL_CHECK(fmt::format("{}: x = 0x{:x}: graph 0x{:x}, concrete 0x{:x}", line, v, got, want));
      return;
    }
  }
}

}  // namespace

TEST_SUITE("ptx_graph") {
  TEST_CASE("hash-consing: equal nodes are one id") {
    Small s;
    CHECK(s.g.leaf(0, 0) == s.x);
    CHECK(s.g.leaf(0, 1) != s.x);
    CHECK(s.g.constant(0x7400, 16) == s.g.constant(0x7400, 16));
    CHECK(s.g.constant(0x7400, 16) != s.g.constant(0x7400, 32));
    CHECK(s.g.constant(0x17400, 16) == s.g.constant(0x7400, 16));  // masked to the width
    const NodeId a = one(s.g, "sub.rn.f32 %f1, %f2, %f3", {s.y, s.z});
    const std::size_t size = s.g.size();
    CHECK(one(s.g, "sub.rn.f32 %f1, %f2, %f3", {s.y, s.z}) == a);
    CHECK(s.g.size() == size);
    CHECK(one(s.g, "sub.rz.f32 %f1, %f2, %f3", {s.y, s.z}) != a);
    CHECK(s.g.node(a).kind == NodeKind::kInst);
    CHECK(s.g.node(a).width == 32);
    // Many nodes: the table grows and keeps every id.
    std::vector<NodeId> ids;
    const std::size_t before = s.g.size();
    for (std::uint64_t i = 0; i < 100000; ++i) ids.push_back(s.g.constant(i, 32));
    int lost = 0;
    for (std::uint64_t i = 0; i < 100000; ++i) lost += s.g.constant(i, 32) != ids[i];
    CHECK(lost == 0);
    CHECK(s.g.size() == before + 100000 - 1);  // constant(0x7400, 32) was there before
    CHECK(s.g.leaf_ref(s.leaf_index(2, 3)).tensor == 2);
    CHECK(s.g.leaf_ref(s.leaf_index(2, 3)).element == 3);
  }

  TEST_CASE("setp: p's node does not depend on whether q is written") {
    Small s;
    NodeId pq[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
    s.g.inst(gi("setp.lt.f32 %p1|%p2, %f1, %f2"), std::vector<NodeId>{s.y, s.z}.data(), pq);
    CHECK(one(s.g, "setp.lt.f32 %p1, %f1, %f2", {s.y, s.z}) == pq[0]);
    CHECK(pq[1] != pq[0]);
    const std::uint64_t y = s.leaf_index(1, 0), z = s.leaf_index(2, 0);
    CHECK(eval(s.g, pq[0], {{y, 0x3F800000}, {z, 0x40000000}}) == 1);
    CHECK(eval(s.g, pq[1], {{y, 0x3F800000}, {z, 0x40000000}}) == 0);
  }

  TEST_CASE("canonical forms: operand order forgotten exactly where the table says") {
    Small s;
    const auto same = [&](const std::string& line, std::vector<NodeId> a, std::vector<NodeId> b) {
      return one(s.g, line, a) == one(s.g, line, b);
    };
    for (const char* line :
         {"add.rn.f32 %f1, %f2, %f3", "add.rz.ftz.sat.f32 %f1, %f2, %f3", "mul.rn.f32 %f1, %f2, %f3",
          "mul.rn.ftz.f16 %h1, %h2, %h3", "add.rn.f16x2 %r1, %r2, %r3", "mul.rn.bf16 %h1, %h2, %h3",
          "add.rn.bf16x2 %r1, %r2, %r3", "add.u32 %r1, %r2, %r3", "mul.lo.s32 %r1, %r2, %r3", "and.b32 %r1, %r2, %r3",
          "or.b32 %r1, %r2, %r3", "xor.b32 %r1, %r2, %r3", "min.s32 %r1, %r2, %r3", "max.u32 %r1, %r2, %r3",
          "setp.eq.f32 %p1, %f1, %f2", "setp.ne.ftz.f32 %p1, %f1, %f2", "setp.eq.u32 %p1, %r1, %r2"}) {
      INFO(line);
      CHECK(same(line, {s.y, s.z}, {s.z, s.y}));
    }
    for (const char* line : {"sub.rn.f32 %f1, %f2, %f3", "div.rn.f32 %f1, %f2, %f3", "sub.u32 %r1, %r2, %r3",
                             "shl.b32 %r1, %r2, %r3", "setp.lt.f32 %p1, %f1, %f2", "setp.ge.u32 %p1, %r1, %r2",
                             "mul.hi.u32 %r1, %r2, %r3", "min.f32 %f1, %f2, %f3"}) {
      INFO(line);
      CHECK(!same(line, {s.y, s.z}, {s.z, s.y}));
    }
    // fma: the product operands commute, the addend does not.
    const std::string fma = "fma.rn.f32 %f1, %f2, %f3, %f4";
    CHECK(same(fma, {s.y, s.z, s.w}, {s.z, s.y, s.w}));
    CHECK(!same(fma, {s.y, s.z, s.w}, {s.y, s.w, s.z}));
    CHECK(!same(fma, {s.y, s.z, s.w}, {s.w, s.z, s.y}));
    CHECK(same("mad.rn.f32 %f1, %f2, %f3, %f4", {s.y, s.z, s.w}, {s.z, s.y, s.w}));
    CHECK(same("fma.rn.f16 %h1, %h2, %h3, %h4", {s.y, s.z, s.w}, {s.z, s.y, s.w}));
    // setp.and: the combining predicate keeps its place.
    const NodeId p = one(s.g, "setp.lt.f32 %p1, %f1, %f2", {s.y, s.z});
    CHECK(same("setp.eq.and.f32 %p1, %f1, %f2, %p2", {s.y, s.z, p}, {s.z, s.y, p}));
    CHECK(!same("setp.eq.and.f32 %p1, %f1, %f2, %p2", {s.y, s.z, p}, {s.y, p, s.z}));
    // Every rule of the table has its card.
    for (const CanonRule& r : canon_rules()) {
      CHECK(std::string(r.isa).find("PTX ISA") != std::string::npos);
      CHECK(std::string(r.why).size() > 20);
      CHECK(std::string(r.gpu_check).find("canon.ptx") != std::string::npos);
    }
  }

  TEST_CASE("negative control: a rule that also swapped fma's addend would prove a wrong equality") {
    // Two kernels: fma(a, b, c) and fma(a, c, b). With the unsound rule they become one node, so
    // a proof would call them equal; the executor's concrete results (and the GPU's, canon.ptx
    // words fma_acb) differ on a case, which the canon test below turns into a failure.
    for (const bool unsound : {false, true}) {
      Small s;
      s.g.set_unsound_fma_addend_for_test(unsound);
      const std::string fma = "fma.rn.f32 %f1, %f2, %f3, %f4";
      const NodeId k1 = one(s.g, fma, {s.y, s.z, s.w});
      const NodeId k2 = one(s.g, fma, {s.y, s.w, s.z});
      CHECK((k1 == k2) == unsound);
      const Leaves leaves = {{s.leaf_index(1, 0), 0x40000000},
                             {s.leaf_index(2, 0), 0x40400000},
                             {s.leaf_index(3, 0), 0x3F800000}};                  // 2, 3, 1
      CHECK(concrete(fma, {0x40000000, 0x40400000, 0x3F800000}) == 0x40E00000);  // 2 * 3 + 1 = 7
      CHECK(concrete(fma, {0x40000000, 0x3F800000, 0x40400000}) == 0x40A00000);  // 2 * 1 + 3 = 5
      // The graph's own evaluation of kernel 2 is wrong exactly when the rule is unsound.
      CHECK((eval(s.g, k2, leaves) == 0x40A00000) == !unsound);
    }
  }

  TEST_CASE("extract and concat identities") {
    Small s;
    Graph& g = s.g;
    CHECK(g.extract(s.y, 0, 32) == s.y);
    const NodeId lo = g.extract(s.y, 0, 16), hi = g.extract(s.y, 16, 16);
    CHECK(g.concat(lo, hi) == s.y);  // adjacent slices of one node join
    CHECK(g.extract(g.extract(s.y, 8, 16), 4, 8) == g.extract(s.y, 12, 8));
    const NodeId c = g.concat(s.x, g.concat(g.extract(s.y, 0, 8), g.extract(s.z, 0, 8)));
    CHECK(g.node(c).width == 32);
    CHECK(g.extract(c, 0, 16) == s.x);
    CHECK(g.extract(c, 16, 8) == g.extract(s.y, 0, 8));
    CHECK(g.concat(g.concat(s.x, lo), hi) == g.concat(s.x, g.concat(lo, hi)));  // right-nested
    CHECK(g.concat(g.constant(1, 8), g.constant(2, 8)) == g.constant(0x201, 16));
    CHECK(g.extract(g.constant(0xABCD, 16), 4, 8) == g.constant(0xBC, 8));
    CHECK(g.extract(s.x, 8, 16) == g.concat(g.extract(s.x, 8, 8), g.constant(0, 8)));  // above the width: zeros
    // Exhaustive: a straddling slice of a concatenation, on every 16-bit x.
    const NodeId cat = g.concat(g.extract(s.x, 0, 8), g.concat(s.x, g.extract(s.x, 8, 8)));
    const NodeId mid = g.extract(cat, 4, 16);
    int wrong = 0;
    for (std::uint64_t v = 0; v < 65536; ++v) {
      const std::uint64_t whole = (v & 0xFF) | v << 8 | (v >> 8) << 24;
      wrong += eval(g, mid, {{s.leaf_index(0, 0), v}}) != ((whole >> 4) & 0xFFFF);
    }
    CHECK(wrong == 0);
  }

  TEST_CASE("bit-slice simplifications: both sides on every 16-bit input") {
    for (const std::uint64_t m : {0xFFull, 0xFF00ull, 0x0E00ull, 0x8000ull, 0x0ull, 0xFFFFFFFFull, 0x00FFFF00ull}) {
      exhaustive("and.b32 %r1, %r2, %r3", {m}, true, true);
    }
    exhaustive("and.b32 %r1, %r2, %r3", {0x0F0Full}, true, false);  // two runs: left as it is
    for (const std::uint64_t n : {0ull, 3ull, 9ull, 12ull, 31ull, 32ull, 40ull}) {
      exhaustive("shl.b32 %r1, %r2, %r3", {n}, true, true);
      exhaustive("shr.u32 %r1, %r2, %r3", {n}, true, true);
      exhaustive("shr.b32 %r1, %r2, %r3", {n}, true, true);
    }
    exhaustive("shr.s32 %r1, %r2, %r3", {8}, true, false);  // sign fill: not a slice
    exhaustive("shl.b64 %rd1, %rd2, %r3", {20}, true, true);
    for (const auto& [pos, len] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
             {0, 8}, {4, 4}, {8, 8}, {28, 8}, {0, 32}, {5, 0}, {33, 4}, {16, 255}}) {
      exhaustive("bfe.u32 %r1, %r2, %r3, %r4", {pos, len}, true, true);
    }
    exhaustive("bfe.s32 %r1, %r2, %r3, %r4", {4, 4}, true, false);
    for (const std::uint64_t sel : {0x3210ull, 0x5410ull, 0x7632ull, 0x1010ull, 0x4444ull, 0x0123ull}) {
      exhaustive("prmt.b32 %r1, %r2, %r3, %r4", {0x12345678, sel}, true, true);
    }
    exhaustive("prmt.b32 %r1, %r2, %r3, %r4", {0x12345678, 0x8210}, true, false);  // sign replication
    for (const char* mode : {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}) {
      for (const std::uint64_t c : {0ull, 1ull, 2ull, 3ull}) {
        exhaustive(fmt::format("prmt.b32.{} %r1, %r2, %r3, %r4", mode), {0x9ABCDEF0, c}, true, true);
      }
    }
    exhaustive("cvt.u32.u8 %r1, %r2", {}, true, true);
    exhaustive("cvt.u8.u32 %r1, %r2", {}, true, true);
    exhaustive("cvt.u16.u32 %h1, %r2", {}, true, true);
    exhaustive("cvt.u64.u32 %rd1, %r2", {}, true, true);
    exhaustive("cvt.u32.u16 %r1, %h2", {}, false, true);
    exhaustive("cvt.s8.s32 %r1, %r2", {}, true, false);  // sign-extended into the register (faith word 29): not a slice
    exhaustive("cvt.s32.s8 %r1, %r2", {}, true, false);  // sign extension: not a slice
    exhaustive("mov.b32 %r1, %r2", {}, true, true);
    exhaustive("mov.b16 %h1, %h2", {}, true, true);
    // Disjoint or/xor/add: each side's set bits where the other has known zeros.
    exhaustive("or.b32 %r1, %r2, %r3", {0}, false, true);
    exhaustive("add.u32 %r1, %r2, %r3", {0x00FF0000}, false, true);
    exhaustive("xor.b32 %r1, %r2, %r3", {0xFF000000}, false, true);
    exhaustive("add.u32 %r1, %r2, %r3", {0x80}, false, false);  // overlapping bits: a carry
  }

  TEST_CASE("pack, unpack and the E2M1 placement become slices, exactly") {
    Small s;
    Graph& g = s.g;
    NodeId halves[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
    const NodeId word = g.concat(s.x, g.extract(s.y, 0, 16));
    g.inst(gi("mov.b32 {%h1, %h2}, %r1"), &word, halves);
    CHECK(halves[0] == s.x);
    CHECK(halves[1] == g.extract(s.y, 0, 16));
    CHECK(one(g, "mov.b32 %r1, {%h1, %h2}", {halves[0], halves[1]}) == word);
    // raw = ((x << 12) & 0x8000) | ((x << 9) & 0x0E00) on the code nibble of x: bits of x only.
    const NodeId nib = one(g, "and.b32 %r1, %r2, %r3", {one(g, "cvt.u32.u16 %r1, %h1", {s.x}), g.constant(0xF, 32)});
    const NodeId hi = one(g, "and.b32 %r1, %r2, %r3",
                          {one(g, "shl.b32 %r1, %r2, %r3", {nib, g.constant(12, 32)}), g.constant(0x8000, 32)});
    const NodeId lo = one(g, "and.b32 %r1, %r2, %r3",
                          {one(g, "shl.b32 %r1, %r2, %r3", {nib, g.constant(9, 32)}), g.constant(0x0E00, 32)});
    const NodeId raw = one(g, "or.b32 %r1, %r2, %r3", {hi, lo});
    CHECK(g.node(raw).kind == NodeKind::kConcat);
    int wrong = 0;
    for (std::uint64_t v = 0; v < 65536; ++v) {
      wrong += eval(g, raw, {{s.leaf_index(0, 0), v}}) != bitproof::turbomind::raw_bits(static_cast<std::uint32_t>(v));
    }
    CHECK(wrong == 0);
  }

  TEST_CASE("evaluate: a chain 20000 deep, iteratively, against the concrete policy") {
    Small s;
    NodeId acc = s.y;
    const std::string fma = "fma.rn.f32 %f1, %f2, %f3, %f4";
    for (int i = 0; i < 20000; ++i) acc = one(s.g, fma, {s.z, s.w, acc});
    const std::uint64_t y = 0x3F800000, z = 0x3DCCCCCD, w = 0x3F8CCCCD;
    std::uint64_t want = y;
    for (int i = 0; i < 20000; ++i) want = concrete(fma, {z, w, want});
    CHECK(eval(s.g, acc, {{s.leaf_index(1, 0), y}, {s.leaf_index(2, 0), z}, {s.leaf_index(3, 0), w}}) == want);
    auto missing = s.g.evaluate(acc, {{s.leaf_index(1, 0), y}});
    REQUIRE(!missing.ok());
    CHECK(missing.error().message.find("has no value") != std::string::npos);
  }
}

namespace {

// The MXFP4 dequant of the issue written as two kernels' graphs over code bytes (two E2M1 codes
// each) and UE8M0 scale bytes, as a GEMV's inner step: fma(dequant(code, scale), f32(x), acc).
//   ordinary: hmul(hmul(raw, 2^14), half_bits(a << 10))   (turbomind.mxfp4_fp16.ordinary)
//   folded:   hmul(raw, half_bits((a + 14) << 10))        (turbomind.mxfp4_fp16.folded)
//   control:  folded, with bit 0 flipped where the code is 3 (differs on one code)
// a = clamp(s - 112, 0, 30), raw = ((x << 12) & 0x8000) | ((x << 9) & 0x0E00).
enum class Form { kOrdinary, kFolded, kControl };

struct Mxfp4 {
  Graph g;
  std::uint32_t codes, scales, xs, accs;
  static constexpr int kBytes = 3;
  explicit Mxfp4(std::vector<std::uint64_t> scale_domain) {
    codes = g.add_tensor({"w.q", kBytes, 8, {}, 0});
    scales = g.add_tensor({"w.scales", 2, 8, std::move(scale_domain), 0});
    xs = g.add_tensor({"x", 2 * kBytes, 16, {}, 0});
    accs = g.add_tensor({"acc", 1, 32, {}, 0});
  }
  NodeId c32(std::uint32_t v) { return g.constant(v, 32); }
  NodeId op(const std::string& line, std::vector<NodeId> ops) { return one(g, line, std::move(ops)); }
  // The dequantised f16 of code nibble `half` of byte `b`.
  NodeId dequant(Form form, int b, int half) {
    NodeId v = op("cvt.u32.u8 %r1, %r2", {g.leaf(codes, static_cast<std::uint64_t>(b))});
    if (half == 1) v = op("shr.u32 %r1, %r2, %r3", {v, c32(4)});
    const NodeId nib = op("and.b32 %r1, %r2, %r3", {v, c32(0xF)});
    const NodeId hi = op("and.b32 %r1, %r2, %r3", {op("shl.b32 %r1, %r2, %r3", {nib, c32(12)}), c32(0x8000)});
    const NodeId lo = op("and.b32 %r1, %r2, %r3", {op("shl.b32 %r1, %r2, %r3", {nib, c32(9)}), c32(0x0E00)});
    const NodeId raw = op("cvt.u16.u32 %h1, %r1", {op("or.b32 %r1, %r2, %r3", {hi, lo})});
    NodeId a = op("cvt.u32.u8 %r1, %r2", {g.leaf(scales, static_cast<std::uint64_t>(b / 2))});
    a = op("add.s32 %r1, %r2, %r3", {a, c32(static_cast<std::uint32_t>(-112))});
    a = op("min.s32 %r1, %r2, %r3", {op("max.s32 %r1, %r2, %r3", {a, c32(0)}), c32(30)});
    if (form == Form::kOrdinary) {
      const NodeId scale = op("cvt.u16.u32 %h1, %r1", {op("shl.b32 %r1, %r2, %r3", {a, c32(10)})});
      const NodeId elem = op("mul.rn.f16 %h1, %h2, %h3", {raw, g.constant(0x7400, 16)});
      return op("mul.rn.f16 %h1, %h2, %h3", {elem, scale});
    }
    const NodeId a14 = op("add.s32 %r1, %r2, %r3", {a, c32(14)});
    const NodeId scale = op("cvt.u16.u32 %h1, %r1", {op("shl.b32 %r1, %r2, %r3", {a14, c32(10)})});
    NodeId out = op("mul.rn.f16 %h1, %h2, %h3", {raw, scale});
    if (form == Form::kControl) {
      const NodeId is3 = op("setp.eq.u32 %p1, %r1, %r2", {nib, c32(3)});
      const NodeId flip = op("selp.b16 %h1, %h2, %h3, %p1", {g.constant(1, 16), g.constant(0, 16), is3});
      out = op("xor.b16 %h1, %h2, %h3", {out, flip});
    }
    return out;
  }
  std::vector<NodeId> roots(Form form) {
    std::vector<NodeId> r;
    for (int b = 0; b < kBytes; ++b) {
      for (int half = 0; half < 2; ++half) {
        const NodeId w = op("cvt.f32.f16 %f1, %h1", {dequant(form, b, half)});
        const NodeId x = op("cvt.f32.f16 %f1, %h1", {g.leaf(xs, static_cast<std::uint64_t>(2 * b + half))});
        r.push_back(op("fma.rn.f32 %f1, %f2, %f3, %f4", {w, x, g.leaf(accs, 0)}));
      }
    }
    return r;
  }
  // Random leaf values inside the domains.
  Leaves random_case(std::uint64_t& seed) const {
    const auto next = [&] { return bitproof::splitmix64_next(seed); };
    Leaves l;
    for (std::uint32_t t = 0; t < g.tensors().size(); ++t) {
      const LeafTensor& lt = g.tensors()[t];
      for (std::uint64_t e = 0; e < lt.elements; ++e) {
        const std::uint64_t r = next();
        l.emplace_back(lt.first_leaf + e, lt.domain.empty() ? r & ((std::uint64_t{1} << lt.element_bits) - 1)
                                                            : lt.domain[r % lt.domain.size()]);
      }
    }
    return l;
  }
};

std::vector<std::uint64_t> range(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

// Lemmas must not change any root's bits: old and new roots on random admitted cases.
void same_bits(const Mxfp4& m, const std::vector<NodeId>& before, const std::vector<NodeId>& after) {
  std::uint64_t seed = 7;
  for (int i = 0; i < 200; ++i) {
    const Leaves l = m.random_case(seed);
    auto b = m.g.evaluate_many(before, l);
    auto a = m.g.evaluate_many(after, l);
    REQUIRE(b.ok());
    REQUIRE(a.ok());
    REQUIRE(*a == *b);
  }
}

}  // namespace

TEST_SUITE("ptx_graph") {
  TEST_CASE("the graphs compute the catalogue recipes' bits") {
    Mxfp4 m(range(0, 255));
    const NodeId ord = m.dequant(Form::kOrdinary, 0, 0), fold = m.dequant(Form::kFolded, 0, 0);
    const std::uint64_t c = m.g.tensors()[m.codes].first_leaf, s = m.g.tensors()[m.scales].first_leaf;
    int wrong = 0;
    for (std::uint32_t code = 0; code < 256; code += 3) {
      for (std::uint32_t scale = 0; scale < 256; ++scale) {
        const Leaves l = {{c, code}, {s, scale}};
        wrong += eval(m.g, ord, l) != bitproof::turbomind::Ordinary::eval<bitproof::SoftArith>(code & 0xF, scale);
        wrong += eval(m.g, fold, l) != bitproof::turbomind::Folded::eval<bitproof::SoftArith>(code & 0xF, scale);
      }
    }
    CHECK(wrong == 0);
  }

  TEST_CASE("lemmas: ordinary and folded merge on scales 113..128") {
    Mxfp4 m(range(113, 128));
    const auto ord = m.roots(Form::kOrdinary), fold = m.roots(Form::kFolded);
    for (std::size_t i = 0; i < ord.size(); ++i) CHECK(ord[i] != fold[i]);
    std::vector<NodeId> all = ord;
    all.insert(all.end(), fold.begin(), fold.end());
    auto after = m.g.apply_lemmas(all);
    REQUIRE_MESSAGE(after.ok(), (after.ok() ? std::string() : after.error().message));
    for (std::size_t i = 0; i < ord.size(); ++i) {
      CHECK((*after)[i] == (*after)[ord.size() + i]);
      CHECK((*after)[i] != ord[i]);
    }
    // Three lemmas: the low-nibble and high-nibble dequants (each with the shapes of both arms;
    // operand order by NodeId varies between bytes, so there are more than two) and f32(x).
    REQUIRE(m.g.lemmas().size() == 3);
    int merged = 0;
    for (const Lemma& lm : m.g.lemmas()) {
      CHECK(lm.digest.size() == 64);
      CHECK(lm.uses > 0);
      if (lm.entries == 256 * 16) {
        ++merged;
        CHECK(lm.patterns.size() >= 2);
        const auto folded_shape = [](const std::string& p) { return p.find("0x7400") == std::string::npos; };
        CHECK(std::any_of(lm.patterns.begin(), lm.patterns.end(), folded_shape));
        CHECK(!std::all_of(lm.patterns.begin(), lm.patterns.end(), folded_shape));
        CHECK(lm.tensors == std::vector<std::uint32_t>{m.codes, m.scales});
        CHECK(lm.uses == 6);  // 3 bytes x (ordinary + folded)
        CHECK(lm.pattern.find("#0") != std::string::npos);
        CHECK(lm.pattern.find("#1") != std::string::npos);
      } else {
        CHECK(lm.entries == 65536);
        CHECK(lm.pattern == "cvt.f32.f16(#0)");
      }
    }
    CHECK(merged == 2);
    same_bits(m, all, *after);
    // Applying again changes nothing.
    auto again = m.g.apply_lemmas(*after);
    REQUIRE(again.ok());
    CHECK(*again == *after);
  }

  TEST_CASE("lemmas: with scale 129 admitted they differ, and the counterexample is (code 0, scale 129)") {
    Mxfp4 m(range(113, 129));
    const auto ord = m.roots(Form::kOrdinary), fold = m.roots(Form::kFolded);
    std::vector<NodeId> all = ord;
    all.insert(all.end(), fold.begin(), fold.end());
    auto after = m.g.apply_lemmas(all);
    REQUIRE(after.ok());
    CHECK((*after)[0] != (*after)[ord.size()]);
    same_bits(m, all, *after);
    const Difference d = m.g.first_difference((*after)[0], (*after)[ord.size()]);
    REQUIRE(d.a != kNoNode);
    CHECK(d.depth == 1);
    CHECK(m.g.node(d.a).kind == NodeKind::kTable);
    CHECK(m.g.node(d.b).kind == NodeKind::kTable);
    REQUIRE(d.counterexample.has_value());
    CHECK(*d.counterexample == std::vector<std::uint64_t>{0, 129});
    CHECK(d.result_a == 0x00000000);  // ordinary: 0 * 2^2, as f32
    // folded: 0 * Inf (half_bits(31 << 10)) = the canonical f16 NaN, then as f32
    CHECK(d.result_b == concrete("cvt.f32.f16 %f1, %h1", {0x7FFF}));
    // The concrete side agrees: the two arms' first roots on that case.
    std::uint64_t seed = 1;
    Leaves l = m.random_case(seed);
    for (auto& [leaf, v] : l) {
      if (leaf == m.g.tensors()[m.codes].first_leaf) v = 0;
      if (leaf == m.g.tensors()[m.scales].first_leaf) v = 129;
    }
    CHECK(eval(m.g, ord[0], l) != eval(m.g, fold[0], l));
    CHECK(m.g.describe(d.a, 1).find("lemma#") == 0);
  }

  TEST_CASE("lemmas: a form that differs on one code never merges (negative control)") {
    Mxfp4 m(range(113, 128));
    const auto fold = m.roots(Form::kFolded), ctl = m.roots(Form::kControl);
    std::vector<NodeId> all = fold;
    all.insert(all.end(), ctl.begin(), ctl.end());
    auto after = m.g.apply_lemmas(all);
    REQUIRE(after.ok());
    for (std::size_t i = 0; i < fold.size(); ++i) CHECK((*after)[i] != (*after)[fold.size() + i]);
    same_bits(m, all, *after);
    const Difference d = m.g.first_difference((*after)[0], (*after)[fold.size()]);
    REQUIRE(d.counterexample.has_value());
    CHECK(((*d.counterexample)[0] & 0xF) == 3);
    CHECK((*d.counterexample)[1] >= 113);
    CHECK((d.result_a ^ d.result_b) != 0);
  }

  TEST_CASE("lemmas: the support cap and the domain limit") {
    Graph g;
    const auto t = g.add_tensor({"b", 8, 8, range(0, 63), 0});
    // Three 64-value leaves: 2^18 combinations (the limit here) make a table; a fourth is too many.
    NodeId s3 = one(g, "add.u16 %h1, %h2, %h3", {g.leaf(t, 0), g.leaf(t, 1)});
    s3 = one(g, "mul.lo.u16 %h1, %h2, %h3", {s3, g.leaf(t, 2)});
    const NodeId s4 = one(g, "sub.u16 %h1, %h2, %h3", {s3, g.leaf(t, 3)});
    auto r = g.apply_lemmas({s4}, std::uint64_t{1} << 18);
    REQUIRE(r.ok());
    const Node top = g.node((*r)[0]);
    CHECK(top.kind == NodeKind::kInst);
    CHECK(g.node(top.ops[0]).kind == NodeKind::kTable);
    CHECK(g.node(top.ops[0]).nops == 3);
    CHECK(g.lemmas().back().entries == std::uint64_t{1} << 18);
    CHECK(g.node(top.ops[1]) == g.node(g.leaf(t, 3)));
    // At most 4 leaves a table (a node's operands): five 1-bit leaves make a 4-leaf table below.
    const auto bits = g.add_tensor({"bit", 5, 1, {}, 0});
    NodeId x = g.leaf(bits, 0);
    for (std::uint64_t i = 1; i < 5; ++i) x = one(g, "xor.b16 %h1, %h2, %h3", {x, g.leaf(bits, i)});
    auto r5 = g.apply_lemmas({x});
    REQUIRE(r5.ok());
    CHECK(g.node((*r5)[0]).kind == NodeKind::kInst);
    CHECK(g.node(g.node((*r5)[0]).ops[0]).nops + g.node(g.node((*r5)[0]).ops[1]).nops == 4);
  }

  TEST_CASE("first_difference walks to the first node one side computes; describe names leaves") {
    Small s;
    Graph& g = s.g;
    const std::string fma = "fma.rn.f32 %f1, %f2, %f3, %f4";
    const NodeId h = one(g, "cvt.f32.f16 %f1, %h1", {s.x});
    const NodeId a = one(g, fma, {h, s.y, one(g, "add.rn.f32 %f1, %f2, %f3", {s.z, s.w})});
    const NodeId b = one(g, fma, {h, s.y, one(g, "sub.rn.f32 %f1, %f2, %f3", {s.z, s.w})});
    const Difference d = g.first_difference(a, b);
    CHECK(d.depth == 1);
    CHECK(g.describe(d.a) == "add.rn.f32(z[0], w[0])");
    CHECK(g.describe(d.b) == "sub.rn.f32(z[0], w[0])");
    CHECK(!d.counterexample.has_value());
    CHECK(g.first_difference(a, a).a == kNoNode);
    CHECK(g.describe(a, 2) == "fma.rn.f32(y[0], cvt.f32.f16(x[0]), add.rn.f32(z[0], w[0]))");
    CHECK(g.describe(a, 1) == "fma.rn.f32(y[0], cvt.f32.f16(…), add.rn.f32(…))");
    // Commutative operands sorted apart ({y, z} against {z, w}): the walk pairs y with w.
    const NodeId p = one(g, "mul.rn.f32 %f1, %f2, %f3", {s.z, s.y});
    const NodeId q = one(g, "mul.rn.f32 %f1, %f2, %f3", {s.w, s.z});
    const Difference e = g.first_difference(p, q);
    CHECK(e.a == s.y);
    CHECK(e.b == s.w);
    g.note_origin(a, 0, 17);
    g.note_origin(a, 0, 99);
    g.note_origin(a, 1, 5);
    CHECK(g.origin(a, 0) == 17);
    CHECK(g.origin(a, 1) == 5);
    CHECK(g.origin(b, 0) == 0);
  }
}

namespace {

// ---- The canonical forms against the GPU (canon.ptx; tests/ptx/gpu/README.md) ----

struct CanonWord {
  unsigned k = 0;
  std::string name, order, line;  // line: the instruction as canon.ptx writes it
};

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
const std::string kCanonPtx = BITPROOF_SOURCE_DIR "/tests/ptx/gpu/canon.ptx";
const std::string kCanonData = BITPROOF_SOURCE_DIR "/tests/ptx/data/canon_sm90.bin";

// canon.ptx's words, from its `// canon K NAME ORDER` markers.
std::vector<CanonWord> canon_words(const std::string& text) {
  std::vector<CanonWord> words;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    const auto at = l.find("// canon ");
    if (at == std::string::npos) continue;
    CanonWord w;
    std::istringstream marker(l.substr(at + 9));
    marker >> w.k >> w.name >> w.order;
    w.line = l.substr(0, l.find(';'));
    REQUIRE(w.k == words.size());
    words.push_back(w);
  }
  return words;
}

// The executor's words of canon.ptx on canon_inputs(), thread after thread.
std::vector<std::uint32_t> canon_executor(const std::string& text, const std::vector<std::uint32_t>& in) {
  auto m = bitproof::ptx::parse_module(text, "canon.ptx");
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
  auto k = bitproof::ptx::find_kernel(*m, "canon");
  REQUIRE(k.ok());
  const auto n = static_cast<unsigned>(in.size() / 3);
  bitproof::ptx::Memory mem;
  const auto out = mem.add(std::vector<std::uint8_t>(std::size_t{n} * kCanonWords * 4, 0xAB));
  std::vector<std::uint8_t> bytes(in.size() * 4);
  std::memcpy(bytes.data(), in.data(), bytes.size());
  const auto inb = mem.add(std::move(bytes));
  bitproof::ptx::LaunchConfig cfg;
  cfg.grid = {(n + 127) / 128};
  cfg.block = {128};
  const std::vector<bitproof::ptx::Arg> args = {bitproof::ptx::Arg::buf(out), bitproof::ptx::Arg::buf(inb),
                                                bitproof::ptx::Arg::u32(n)};
  auto r = bitproof::ptx::launch(*m, **k, cfg, args, mem);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  std::vector<std::uint32_t> words(mem.bytes(out).size() / 4);
  std::memcpy(words.data(), mem.bytes(out).data(), words.size() * 4);
  return words;
}

struct CanonCheck {
  std::vector<std::string> failures;  // a pair the graph identifies whose words differ
  std::vector<bool> rule_checked;     // per canon_rules() entry: some identified pair exercised it
  int identified = 0, distinct = 0;   // pairs of orders the graph made one node / kept apart
};

// For every instruction of canon.ptx, each later operand order against its first: where a
// Graph (with its canonical forms; `unsound`: plus the test hook's wrong rule) makes the two
// orders one node, every thread's two words must be equal in `data`.
CanonCheck canon_check(const std::vector<CanonWord>& words, const std::vector<std::uint32_t>& data,
                       const std::vector<std::uint32_t>& in, bool unsound) {
  CanonCheck c;
  c.rule_checked.assign(canon_rules().size(), false);
  Graph g;
  g.set_unsound_fma_addend_for_test(unsound);
  const NodeId abc[3] = {g.leaf(g.add_tensor({"a", 1, 32, {}, 0}), 0), g.leaf(g.add_tensor({"b", 1, 32, {}, 0}), 0),
                         g.leaf(g.add_tensor({"c", 1, 32, {}, 0}), 0)};
  const unsigned threads = static_cast<unsigned>(in.size() / 3);
  std::vector<NodeId> node(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::vector<NodeId> ops;
    for (const char ch : words[i].order) ops.push_back(abc[ch - 'a']);
    node[i] = one(g, words[i].line, ops);
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::size_t first = i;
    while (first > 0 && words[first - 1].name == words[i].name) --first;
    if (first == i) continue;
    if (node[i] != node[first]) {
      ++c.distinct;
      continue;
    }
    ++c.identified;
    const InstKey key = InstKey::of(gi(words[i].line));
    for (std::size_t r = 0; r < canon_rules().size(); ++r)
      c.rule_checked[r] = c.rule_checked[r] || canon_rules()[r].applies(key);
    for (unsigned t = 0; t < threads; ++t) {
      const std::uint32_t x = data[std::size_t{t} * kCanonWords + first], y = data[std::size_t{t} * kCanonWords + i];
      if (x == y) continue;
      c.failures.push_back(fmt::format("{} {} vs {}: thread {} (a, b, c = {:08x} {:08x} {:08x}): {:08x} vs {:08x}",
                                       words[i].name, words[first].order, words[i].order, t, in[3 * t], in[3 * t + 1],
                                       in[3 * t + 2], x, y));
      break;  // the first thread per pair
    }
  }
  return c;
}

// Whether the words of `name` in orders o1 and o2 differ in some thread.
bool orders_differ(const std::vector<CanonWord>& words, const std::vector<std::uint32_t>& data, const std::string& name,
                   const std::string& o1, const std::string& o2) {
  std::size_t i1 = words.size(), i2 = words.size();
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].name == name && words[i].order == o1) i1 = i;
    if (words[i].name == name && words[i].order == o2) i2 = i;
  }
  REQUIRE(i1 < words.size());
  REQUIRE(i2 < words.size());
  for (std::size_t t = 0; t < data.size() / kCanonWords; ++t) {
    if (data[t * kCanonWords + i1] != data[t * kCanonWords + i2]) return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("ptx_graph") {
  TEST_CASE("canon: every rule against the executor's words of canon.ptx") {
    const std::string text = read_file(kCanonPtx);
    REQUIRE(!text.empty());
    const auto words = canon_words(text);
    REQUIRE(words.size() == kCanonWords);
    const auto in = canon_inputs();
    const auto exec = canon_executor(text, in);
    const CanonCheck c = canon_check(words, exec, in, false);
    for (const auto& f : c.failures) FAIL_CHECK(f);
    CHECK(c.identified > 50);
    for (std::size_t r = 0; r < c.rule_checked.size(); ++r) CHECK_MESSAGE(c.rule_checked[r], canon_rules()[r].name);
    // The controls: order matters for these, and the data shows it.
    CHECK(orders_differ(words, exec, "fma.rn.f32", "abc", "acb"));
    CHECK(orders_differ(words, exec, "fma.rn.f16", "abc", "acb"));
    CHECK(orders_differ(words, exec, "sub.rn.f32", "ab", "ba"));
    CHECK(orders_differ(words, exec, "setp.lt.f32", "ab", "ba"));
    // The unsound rule is caught by the same check.
    const CanonCheck bad = canon_check(words, exec, in, true);
    CHECK(bad.failures.size() >= 8);  // fma's acb words of every type
    for (const auto& f : bad.failures) CHECK((f.find("fma") == 0 || f.find("mad") == 0));
  }

  TEST_CASE("canon: recorded on the GPU (tests/ptx/data/canon_sm90.bin)") {
    if (!std::filesystem::exists(kCanonData)) {
      MESSAGE(
          "skipped: tests/ptx/data/canon_sm90.bin is not recorded yet (tests/ptx/gpu/README.md: canon_gpu on the "
          "GPU machine); the executor-side check above still ran");
      return;
    }
    const std::string text = read_file(kCanonPtx);
    const auto words = canon_words(text);
    const auto in = canon_inputs();
    const std::string raw = read_file(kCanonData);
    REQUIRE(raw.size() == in.size() / 3 * kCanonWords * 4);
    std::vector<std::uint32_t> gpu(raw.size() / 4);
    std::memcpy(gpu.data(), raw.data(), raw.size());
    // (a) both orders equal on the GPU wherever the graph identifies them.
    const CanonCheck c = canon_check(words, gpu, in, false);
    for (const auto& f : c.failures) FAIL_CHECK(f);
    for (std::size_t r = 0; r < c.rule_checked.size(); ++r) CHECK_MESSAGE(c.rule_checked[r], canon_rules()[r].name);
    // (b) the executor computes the GPU's bits, word for word.
    const auto exec = canon_executor(text, in);
    int shown = 0, wrong = 0;
    for (std::size_t i = 0; i < gpu.size(); ++i) {
      if (gpu[i] == exec[i]) continue;
      ++wrong;
      const std::size_t t = i / kCanonWords, w = i % kCanonWords;
      if (shown++ < 20) {
        FAIL_CHECK(fmt::format("{} {}: thread {} (a, b, c = {:08x} {:08x} {:08x}): executor {:08x}, gpu {:08x}",
                               words[w].name, words[w].order, t, in[3 * t], in[3 * t + 1], in[3 * t + 2], exec[i],
                               gpu[i]));
      }
    }
    CHECK(wrong == 0);
    // (c) the negative control: fma's addend swapped with a product operand differs on the GPU,
    // so a rule that swapped it is caught by (a).
    CHECK(orders_differ(words, gpu, "fma.rn.f32", "abc", "acb"));
    CHECK(orders_differ(words, gpu, "sub.rn.f32", "ab", "ba"));
    const CanonCheck bad = canon_check(words, gpu, in, true);
    CHECK(bad.failures.size() >= 8);
  }
}

}  // namespace bitproof::ptx_graph_test
