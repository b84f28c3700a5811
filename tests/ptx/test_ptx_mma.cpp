// Opaque tensor-core mma (issue 48; module.hpp's kMma card and kMmaForms): decoded with its registers,
// refused by the concrete executor where it runs, traced by the symbolic policy into one node per
// lane and D register over every lane's A, B and C registers (a tuple tree), never evaluated and
// never inside a lemma. The kernels are tests/cli/data/kernel_prove/mma.cu's PTX: the same product
// through shared memory is the same node; exchanged k halves, two chained k8 products and shifted
// rows are not. The negative control of the lemma rule: a tuple over narrow leaves must not become
// a table (every tuple's table would be zeros, and two permuted operand lists would merge).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"
#include "ptx/symbolic.hpp"
#include "ptx_support.hpp"

namespace bitproof::ptx_mma_test {

namespace {

using ptx::sym::Graph, ptx::sym::NodeId, ptx::sym::NodeKind, ptx::sym::kNoNode, ptx::Arg;

std::string mma_ptx() {
  std::ifstream in(std::string(BITPROOF_SOURCE_DIR) + "/tests/cli/data/kernel_prove/mma.ptx");
  std::stringstream s;
  s << in.rdbuf();
  REQUIRE(!s.str().empty());
  return s.str();
}

bool is_mma(const Graph& g, NodeId id) {
  const auto& n = g.node(id);
  return n.kind == NodeKind::kInst && n.key.op == ptx::Op::kMma;
}

// mma.ptx's kernels traced over one graph: a (16x16 f16) and b (8x16 f16) leaves, y's 128 f16 nodes.
class Tracer {
 public:
  Tracer() {
    auto m = ptx::parse_module(mma_ptx(), "mma.ptx");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
    module_ = std::move(*m);
    a_ = graph.add_tensor({"a", 256, 16, {}, 0});
    b_ = graph.add_tensor({"b", 128, 16, {}, 0});
  }
  Expected<std::vector<NodeId>> trace(const std::string& kernel, unsigned threads = 32) {
    auto k = ptx::find_kernel(module_, kernel);
    REQUIRE(k.ok());
    ptx::SymMemory mem;
    auto ba = mem.add_input(graph, a_);
    auto bb = mem.add_input(graph, b_);
    REQUIRE((ba.ok() && bb.ok()));
    const std::size_t by = mem.add_plain(std::vector<std::uint8_t>(256, 0xFF));
    ptx::LaunchConfig cfg;
    cfg.grid = {1}, cfg.block = {threads}, cfg.max_warp_steps = 100000;
    const std::vector<Arg> args = {Arg::buf(*ba), Arg::buf(*bb), Arg::buf(by)};
    auto r = ptx::trace_launch(module_, **k, cfg, args, mem, graph, 0);
    if (!r) return r.error();
    std::vector<NodeId> out;
    for (unsigned e = 0; e < 128; ++e) {
      auto n = mem.element(graph, by, 2 * e, 2);
      REQUIRE(n.ok());
      out.push_back(*n);
    }
    return out;
  }
  Graph graph;

 private:
  ptx::Module module_;
  std::uint32_t a_ = 0, b_ = 0;
};

// The mma node under an output element (y = cvt.rn.f16.f32(d)).
NodeId mma_under(const Graph& g, NodeId y) {
  const auto& n = g.node(y);
  REQUIRE(n.kind == NodeKind::kInst);
  REQUIRE(n.key.op == ptx::Op::kCvt);
  return n.ops[0];
}

const std::string kHead = ".version 8.0\n.target sm_90\n.address_size 64\n\n";

std::string parse_error(const std::string& line) {
  const std::string text =
      kHead + ".visible .entry k()\n{\n\t.reg .b32 %r<16>;\n\t.reg .f32 %f<16>;\n" + line + "\n\tret;\n}\n";
  auto m = ptx::parse_module(text, "forms.ptx");
  return m.ok() ? std::string() : m.error().message;
}

// tests/ptx/data/ldmatrix.ptx's kernel run on the executor with x[e] = e + 1 (e = 0..255): y's
// 128 words (4 per lane, unwritten ones 0).
std::vector<std::uint32_t> ldmatrix_run(const std::string& kernel) {
  std::ifstream in(std::string(BITPROOF_SOURCE_DIR) + "/tests/ptx/data/ldmatrix.ptx");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::uint16_t> x(256);
  for (unsigned e = 0; e < 256; ++e) x[e] = static_cast<std::uint16_t>(e + 1);
  ptx::Memory mem;
  const auto bx = mem.add(test::ptx_bytes_of(x));
  const auto by = mem.add(std::vector<std::uint8_t>(512, 0));
  auto r = test::run_ptx(text.str(), kernel, {1}, {32}, {Arg::buf(bx), Arg::buf(by)}, mem, "ldmatrix.ptx");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return test::ptx_values_of<std::uint32_t>(mem.bytes(by));
}

// The PTX ISA's layout (9.7.14.5.15), written out: matrix m, lane l = 4a + k. Without .trans, row a's
// elements 2k, 2k + 1; with .trans, column a's elements of rows 2k, 2k + 1. x[e] = e + 1.
std::uint32_t ldmatrix_expected(unsigned m, unsigned l, bool trans) {
  const unsigned a = l / 4, k = l % 4;
  const unsigned lo = trans ? 64 * m + 8 * (2 * k) + a : 64 * m + 8 * a + 2 * k;
  const unsigned hi = trans ? lo + 8 : lo + 1;
  return (lo + 1) | (hi + 1) << 16;
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("ldmatrix: .x1, .x2 and .x4, with and without .trans, give each lane the words the PTX ISA says") {
    const struct {
      const char* kernel;
      unsigned matrices;
      bool trans;
    } forms[] = {{"ldm_x4", 4, false}, {"ldm_x4_trans", 4, true}, {"ldm_x1", 1, false}, {"ldm_x2_trans", 2, true}};
    for (const auto& f : forms) {
      const auto y = ldmatrix_run(f.kernel);
      int shown = 0;
      for (unsigned l = 0; l < 32; ++l) {
        for (unsigned m = 0; m < 4; ++m) {
          const std::uint32_t want = m < f.matrices ? ldmatrix_expected(m, l, f.trans) : 0;
          if (y[4 * l + m] != want && shown++ < 4)
            FAIL_CHECK(
                fmt::format("{}: lane {} r{}: 0x{:08x}, the ISA's 0x{:08x}", f.kernel, l, m, y[4 * l + m], want));
        }
      }
      CHECK_MESSAGE(shown == 0, f.kernel);
    }
    // Negative control: the non-.trans layout is not the .trans one (the test tells them apart).
    CHECK(ldmatrix_expected(0, 5, false) != ldmatrix_expected(0, 5, true));
  }

  TEST_CASE("mma: the forms decode with their registers (D, A, B, C); others are refused with the line") {
    auto m = ptx::parse_module(mma_ptx(), "mma.ptx");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
    int seen = 0;
    for (const auto& k : m->kernels) {
      for (const ptx::Inst& in : k.code) {
        if (in.op != ptx::Op::kMma) continue;
        ++seen;
        const ptx::MmaForm& f = ptx::kMmaForms[in.mode];
        CHECK(in.ndst == f.d);
        CHECK(in.nsrc == f.a + f.b + f.c);
        CHECK(in.list + in.ndst + in.nsrc <= k.lists.size());
        CHECK(ptx::sym::inst_name(ptx::sym::InstKey::of(in)).starts_with("mma.sync.aligned.m16n8k"));
      }
    }
    CHECK(seen == 8);
    const std::vector<std::pair<std::string, std::string>> refused = {
        {"\tmma.sync.aligned.m16n8k16.row.row.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
         "{%f5,%f6,%f7,%f8};",
         "this mma form is not implemented"},
        {"\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3}, {%r5,%r6}, "
         "{%f5,%f6,%f7,%f8};",
         "4 registers in braces expected for A"},
        {"\tmma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r5,%r6}, "
         "{%f5,%f6,%f7,%f8};",
         "1 registers in braces expected for B"},
        {"\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,_,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
         "{%f5,%f6,%f7,%f8};",
         "'_' in D"},
        {"\tmma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%f1,%f2}, {%f3}, {%f4}, {%f5,%f6};",
         "this mma form is not implemented"},
        {"\twgmma.fence.sync.aligned;", "wgmma is not implemented"},
    };
    for (const auto& [line, why] : refused) {
      const std::string e = parse_error(line);
      CHECK_MESSAGE(test::contains(e, "forms.ptx:9: "), e);
      CHECK_MESSAGE(test::contains(e, why), e);
    }
  }

  TEST_CASE("mma: the concrete executor refuses it where it runs, naming the form and its line") {
    ptx::Memory mem;
    const auto ba = mem.add(std::vector<std::uint8_t>(512, 0));
    const auto bb = mem.add(std::vector<std::uint8_t>(256, 0));
    const auto by = mem.add(std::vector<std::uint8_t>(256, 0));
    auto r =
        test::run_ptx(mma_ptx(), "mma_direct", {1}, {32}, {Arg::buf(ba), Arg::buf(bb), Arg::buf(by)}, mem, "mma.ptx");
    REQUIRE(!r.ok());
    const std::string& why = r.error().message;
    const std::string text = mma_ptx();  // mma_direct's mma is the file's first
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(text.find("mma.sync")), '\n');
    CHECK_MESSAGE(test::contains(why, fmt::format("mma.ptx:{}: ", line)), why);
    CHECK_MESSAGE(test::contains(why,
                                 "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: tensor-core accumulation, runs on "
                                 "the GPU only"),
                  why);
    CHECK(test::contains(why, std::string(ptx::kGpuOnly)));
    CHECK(std::count(why.begin(), why.end(), '\n') == 0);
  }

  TEST_CASE("mma: the same product through shared memory is the same node; three other computations are not") {
    Tracer t;
    auto direct = t.trace("mma_direct");
    auto shared = t.trace("mma_shared");
    REQUIRE_MESSAGE(direct.ok(), (direct.ok() ? std::string() : direct.error().message));
    REQUIRE_MESSAGE(shared.ok(), (shared.ok() ? std::string() : shared.error().message));
    for (unsigned e = 0; e < 128; ++e) CHECK((*direct)[e] == (*shared)[e]);
    // y[g][2t] is lane 4g + t's d0: its node says so; the operands are one tuple tree.
    const NodeId d = mma_under(t.graph, (*direct)[8 * 3 + 2 * 1]);
    REQUIRE(is_mma(t.graph, d));
    CHECK(t.graph.describe(d, 0) == "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32[lane 13, d0](…)");
    CHECK(t.graph.node(t.graph.node(d).ops[0]).kind == NodeKind::kTuple);
    CHECK(mma_under(t.graph, (*direct)[0]) != mma_under(t.graph, (*direct)[1]));  // d0 and d1 of lane 0
    // The fragments through ldmatrix (and B's through ldmatrix.trans from a k-major copy): the same.
    for (const char* same : {"mma_ldmatrix", "mma_ldmatrix_trans"}) {
      auto o = t.trace(same);
      REQUIRE_MESSAGE(o.ok(), (o.ok() ? std::string() : o.error().message));
      for (unsigned e = 0; e < 128; ++e) CHECK_MESSAGE((*o)[e] == (*direct)[e], same);
    }
    // Negative controls: the same sum in another order, another instruction, other rows.
    for (const char* other : {"mma_k_swapped", "mma_two_k8", "mma_shifted"}) {
      auto o = t.trace(other);
      REQUIRE(o.ok());
      for (unsigned e = 0; e < 128; ++e) CHECK_MESSAGE((*o)[e] != (*direct)[e], other);
    }
    // evaluate: no value on the CPU, the reason named.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> zeros;  // every leaf 0
    for (const auto& lt : t.graph.tensors()) {
      for (std::uint64_t e = 0; e < lt.elements; ++e) zeros.emplace_back(lt.first_leaf + e, 0);
    }
    const auto v = t.graph.evaluate(d, zeros);
    REQUIRE(!v.ok());
    CHECK_MESSAGE(test::contains(v.error().message, "tensor-core accumulation, runs on the GPU only"),
                  v.error().message);
  }

  TEST_CASE("mma and ldmatrix: the whole warp must issue them") {
    Tracer t;
    auto r = t.trace("mma_direct", 16);  // a block of 16 threads: half a warp
    REQUIRE(!r.ok());
    CHECK_MESSAGE(test::contains(r.error().message, "mma needs the whole warp converged here (issuing 0x0000ffff)"),
                  r.error().message);
    auto l = t.trace("mma_ldmatrix", 16);
    REQUIRE(!l.ok());
    CHECK_MESSAGE(test::contains(l.error().message, "ldmatrix needs the whole warp converged here (issuing 0x0000ffff)"),
                  l.error().message);
  }

  TEST_CASE("mma: the lemma pass never tables a tuple or an mma; narrow operands below may become tables") {
    Graph g;
    const auto q = g.add_tensor({"q", 8, 8, {}, 0});
    auto m = ptx::parse_module(mma_ptx(), "mma.ptx");
    REQUIRE(m.ok());
    const ptx::Inst* mma = nullptr;
    for (const ptx::Inst& in : m->kernels[0].code) {
      if (in.op == ptx::Op::kMma) mma = &in;
    }
    REQUIRE(mma != nullptr);
    auto xr = ptx::parse_module(
        kHead + ".visible .entry x()\n{\n\t.reg .b32 %r<4>;\n\txor.b32 %r1, %r2, 85;\n\tret;\n}\n", "x.ptx");
    REQUIRE(xr.ok());
    const ptx::Inst& xor_in = xr->kernels[0].code[0];
    const auto xor85 = [&](NodeId x32) {
      NodeId out[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
      const NodeId ops[2] = {x32, g.constant(85, 32)};
      g.inst(xor_in, ops, out);
      return out[0];
    };
    const auto group = [&](std::vector<NodeId> operands) {
      std::vector<NodeId> out(std::size_t{32} * mma->ndst);
      operands.resize(std::size_t{32} * mma->nsrc, g.constant(0, 32));
      g.opaque_group(*mma, operands, out);
      return out[0];
    };
    const NodeId l0 = g.leaf(q, 0), l1 = g.leaf(q, 1);
    const NodeId wide0 = g.concat(l0, g.constant(0, 24)), wide1 = g.concat(l1, g.constant(0, 24));
    // Two operand lists over the same narrow leaves, in another order: every tuple's "value" is 0,
    // so a table of one would merge them. They must stay apart.
    const NodeId ab = group({wide0, wide1}), ba = group({wide1, wide0});
    REQUIRE(ab != ba);
    auto r = g.apply_lemmas({ab, ba});
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    CHECK((*r)[0] != (*r)[1]);
    CHECK(is_mma(g, (*r)[0]));
    // Different operand nodes with equal tables (x ^ 85 ^ 85 and x): one node after the pass.
    const NodeId twice = group({xor85(xor85(wide0)), wide1});
    REQUIRE(twice != ab);
    auto s = g.apply_lemmas({ab, twice});
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
    CHECK((*s)[0] == (*s)[1]);
    CHECK(is_mma(g, (*s)[0]));
    for (const auto& l : g.lemmas()) {
      for (const auto& p : l.patterns) CHECK_MESSAGE(!test::contains(p, "mma"), p);
    }
  }
}

}  // namespace bitproof::ptx_mma_test
