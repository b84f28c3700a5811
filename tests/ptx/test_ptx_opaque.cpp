// Opaque approximate instructions (issue 48: `.approx`, `div.full`; module.hpp's Approx card):
// decoded, refused by the concrete executor where they run (and only there), traced by the
// symbolic policy into hash-consed kInst nodes that are never folded, never evaluated and never
// inside a lemma. The proof's two directions: the same instruction on the same operand nodes is
// one node; another form, another .ftz, another operand node or swapped div operands are not.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"
#include "ptx/symbolic.hpp"
#include "ptx_support.hpp"

// A namespace of its own: the unity build compiles this file with the other suites.
namespace bitproof::ptx_opaque_test {

namespace {

using ptx::Arg;
using ptx::sym::Graph;
using ptx::sym::kNoNode;
using ptx::sym::NodeId;
using ptx::sym::NodeKind;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A kernel NAME(out, x, y) of one thread per element: %f1 = x[tid], %f2 = y[tid]; `body` leaves
// the result in %f9, stored to out[tid].
std::string opaque_kernel(const std::string& name, const std::string& body) {
  return fmt::format(
      ".visible .entry {0}(\n\t.param .u64 {0}_out,\n\t.param .u64 {0}_x,\n\t.param .u64 {0}_y\n)\n{{\n"
      "\t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<16>;\n\t.reg .b64 %rd<16>;\n"
      "\tld.param.u64 %rd1, [{0}_out];\n\tld.param.u64 %rd2, [{0}_x];\n\tld.param.u64 %rd3, [{0}_y];\n"
      "\tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;\n\tcvta.to.global.u64 %rd3, %rd3;\n"
      "\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd4, %r1, 4;\n"
      "\tadd.s64 %rd5, %rd2, %rd4;\n\tld.global.f32 %f1, [%rd5];\n"
      "\tadd.s64 %rd6, %rd3, %rd4;\n\tld.global.f32 %f2, [%rd6];\n"
      "{1}\n"
      "\tadd.s64 %rd7, %rd1, %rd4;\n\tst.global.f32 [%rd7], %f9;\n\tret;\n}}\n",
      name, body);
}

const std::string kOpaqueHead = ".version 8.0\n.target sm_90\n.address_size 64\n\n";

// Every kernel the tests trace: pairs computing the same thing in other words, and the negative
// controls (one property changed each).
const std::string kOpaqueModule =
    kOpaqueHead +
    // ex2.approx.f32(x * log2(e)), as __expf compiles, and the same with other registers and a
    // detour through a move.
    opaque_kernel("expf_a", "\tmul.rn.f32 %f3, %f1, 0f3FB8AA3B;\n\tex2.approx.f32 %f9, %f3;") +
    opaque_kernel("expf_b", "\tmov.f32 %f7, %f1;\n\tmul.rn.f32 %f5, %f7, 0f3FB8AA3B;\n\tex2.approx.f32 %f9, %f5;") +
    opaque_kernel("lg2", "\tmul.rn.f32 %f3, %f1, 0f3FB8AA3B;\n\tlg2.approx.f32 %f9, %f3;") +
    opaque_kernel("expf_ftz", "\tmul.rn.f32 %f3, %f1, 0f3FB8AA3B;\n\tex2.approx.ftz.f32 %f9, %f3;") +
    opaque_kernel("ex2_x", "\tex2.approx.f32 %f9, %f1;") +
    opaque_kernel("ex2_x_plus_0", "\tadd.rn.f32 %f3, %f1, 0f00000000;\n\tex2.approx.f32 %f9, %f3;") +
    opaque_kernel("div_xy", "\tdiv.approx.f32 %f9, %f1, %f2;") +
    opaque_kernel("div_yx", "\tdiv.approx.f32 %f9, %f2, %f1;") +
    opaque_kernel("div_full_xy", "\tdiv.full.f32 %f9, %f1, %f2;") +
    // An approx on constants only: a node over constant nodes, not a folded value.
    opaque_kernel("ex2_const", "\tex2.approx.f32 %f9, 0f3F800000;") +
    // An approx on a path no thread takes: the concrete executor runs the kernel.
    opaque_kernel("untaken", "\tmov.f32 %f9, %f1;\n\tsetp.gt.u32 %p1, %r1, 1000;\n\t@%p1 ex2.approx.f32 %f9, %f1;");

// Each kernel's output nodes, traced over one graph (arm 0) on leaves x[0..3], y[0..3] (f32).
class Tracer {
 public:
  Tracer() {
    auto m = ptx::parse_module(kOpaqueModule, "opaque.ptx");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
    module_ = std::move(*m);
    x_ = graph.add_tensor(tensor("x"));
    y_ = graph.add_tensor(tensor("y"));
  }
  std::vector<NodeId> trace(const std::string& kernel) {
    auto k = ptx::find_kernel(module_, kernel);
    REQUIRE(k.ok());
    ptx::SymMemory mem;
    const std::size_t bo = mem.add_plain(std::vector<std::uint8_t>(16, 0));
    auto bx = mem.add_input(graph, x_);
    auto by = mem.add_input(graph, y_);
    REQUIRE((bx.ok() && by.ok()));
    ptx::LaunchConfig cfg;
    cfg.grid = {1}, cfg.block = {4}, cfg.max_warp_steps = 100000;
    const std::vector<Arg> args = {Arg::buf(bo), Arg::buf(*bx), Arg::buf(*by)};
    auto r = ptx::trace_launch(module_, **k, cfg, args, mem, graph, 0);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    std::vector<NodeId> out;
    for (unsigned e = 0; e < 4; ++e) {
      auto n = mem.element(graph, bo, 4 * e, 4);
      REQUIRE(n.ok());
      out.push_back(*n);
    }
    return out;
  }
  const ptx::Module& module() const { return module_; }
  Graph graph;

 private:
  static ptx::sym::LeafTensor tensor(const std::string& name) {
    ptx::sym::LeafTensor t;
    t.name = name, t.elements = 4, t.element_bits = 32;
    return t;
  }
  ptx::Module module_;
  std::uint32_t x_ = 0, y_ = 0;
};

bool is_approx(const Graph& g, NodeId id) {
  const auto& n = g.node(id);
  return n.kind == NodeKind::kInst && n.key.op == ptx::Op::kApprox;
}

// Runs `kernel` of kOpaqueModule concretely on 4 threads; the Error's message, or "" when it ran.
std::string run_concrete(const std::string& kernel) {
  ptx::Memory mem;
  const auto bo = mem.add(std::vector<std::uint8_t>(16, 0));
  const auto bx = mem.add(test::ptx_bytes_of(std::vector<std::uint32_t>{0x3F800000u, 0x40000000u, 0, 0xBF800000u}));
  const auto by = mem.add(test::ptx_bytes_of(std::vector<std::uint32_t>{0x3F800000u, 0x3F800000u, 0x3F800000u, 1}));
  auto r =
      test::run_ptx(kOpaqueModule, kernel, {1}, {4}, {Arg::buf(bo), Arg::buf(bx), Arg::buf(by)}, mem, "opaque.ptx");
  if (!r) return r.error().message;
  CHECK(test::ptx_values_of<std::uint32_t>(mem.bytes(bo)) ==
        std::vector<std::uint32_t>{0x3F800000u, 0x40000000u, 0, 0xBF800000u});  // untaken: out = x
  return "";
}

int opaque_line_of(const std::string& needle) {
  const auto at = kOpaqueModule.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(
                 std::count(kOpaqueModule.begin(), kOpaqueModule.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("opaque: the approximate forms decode to Op::kApprox with their form, type and .ftz") {
    const std::string body =
        "\tex2.approx.ftz.f32 %f9, %f1;\n\tdiv.full.f32 %f9, %f1, %f2;\n\ttanh.approx.f32 %f9, %f1;\n"
        "\trsqrt.approx.f32 %f9, %f1;\n";
    auto m = ptx::parse_module(kOpaqueHead + opaque_kernel("k", body), "forms.ptx");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
    std::vector<const ptx::Inst*> approx;
    for (const ptx::Inst& in : m->kernels[0].code) {
      if (in.op == ptx::Op::kApprox) approx.push_back(&in);
    }
    REQUIRE(approx.size() == 4);
    CHECK(approx[0]->mode == static_cast<std::uint8_t>(ptx::Approx::kEx2));
    CHECK(approx[0]->ftz);
    CHECK((approx[0]->type == ptx::Type{ptx::Kind::kFloat, 32}));
    CHECK(approx[1]->mode == static_cast<std::uint8_t>(ptx::Approx::kDivFull));
    CHECK(approx[1]->nsrc == 2);
    CHECK(approx[2]->mode == static_cast<std::uint8_t>(ptx::Approx::kTanh));
    CHECK(approx[3]->mode == static_cast<std::uint8_t>(ptx::Approx::kRsqrt));
    CHECK(ptx::sym::inst_name(ptx::sym::InstKey::of(*approx[0])) == "ex2.approx.ftz.f32");
    CHECK(ptx::sym::inst_name(ptx::sym::InstKey::of(*approx[1])) == "div.full.f32");
    // Half precision where PTX has it (registers .b16 / .b32).
    const std::string half = kOpaqueHead +
                             ".visible .entry h()\n{\n\t.reg .b16 %h<4>;\n\t.reg .b32 %r<4>;\n"
                             "\tex2.approx.f16 %h1, %h2;\n\tex2.approx.ftz.bf16x2 %r1, %r2;\n"
                             "\ttanh.approx.f16x2 %r1, %r2;\n\ttanh.approx.bf16 %h1, %h2;\n\tret;\n}\n";
    auto mh = ptx::parse_module(half, "half.ptx");
    REQUIRE_MESSAGE(mh.ok(), (mh.ok() ? std::string() : mh.error().message));
    CHECK(ptx::sym::inst_name(ptx::sym::InstKey::of(mh->kernels[0].code[0])) == "ex2.approx.f16");
    CHECK(ptx::sym::inst_name(ptx::sym::InstKey::of(mh->kernels[0].code[1])) == "ex2.approx.ftz.bf16x2");
    // Forms PTX does not define, or that are not decoded, stay refused at parse time with the line.
    const std::vector<std::pair<std::string, std::string>> refused = {
        {"\tlg2.full.f32 %f9, %f1;", "lg2.full.f32: approximate instructions are not implemented"},
        {"\tex2.approx.ftz.f16 %f9, %f1;", "not an approximate form PTX defines"},  // .ftz is bf16's
        {"\ttanh.approx.ftz.f32 %f9, %f1;", "not an approximate form PTX defines"},
        {"\tsin.approx.f16 %f9, %f1;", "not an approximate form PTX defines"},
    };
    for (const auto& entry : refused) {
      const std::string text = kOpaqueHead + opaque_kernel("k", entry.first);
      auto r = ptx::parse_module(text, "forms.ptx");
      REQUIRE_MESSAGE(!r.ok(), entry.first);
      const auto at = text.find(entry.first.substr(1));
      const int line =
          1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
      CHECK_MESSAGE(has(r.error().message, fmt::format("forms.ptx:{}: ", line)), r.error().message);
      CHECK_MESSAGE(has(r.error().message, entry.second), r.error().message);
    }
  }

  TEST_CASE("opaque: the concrete executor refuses an approx where it runs, with its line; untaken, it runs") {
    const std::string why = run_concrete("expf_a");
    CHECK_MESSAGE(has(why, fmt::format("opaque.ptx:{}: ", opaque_line_of("ex2.approx.f32 %f9, %f3;"))), why);
    CHECK_MESSAGE(has(why, "ex2.approx.f32: approximate, runs on the GPU only"), why);
    CHECK_MESSAGE(has(why, std::string(ptx::kGpuOnly)), why);
    CHECK(std::count(why.begin(), why.end(), '\n') == 0);
    const std::string full = run_concrete("div_full_xy");
    CHECK_MESSAGE(has(full, "div.full.f32: approximate, runs on the GPU only"), full);
    CHECK(run_concrete("untaken").empty());
  }

  TEST_CASE("opaque: the same approx on the same operand nodes is one node; every other is another") {
    Tracer t;
    const auto a = t.trace("expf_a");
    const auto b = t.trace("expf_b");
    for (unsigned e = 0; e < 4; ++e) {
      CHECK(is_approx(t.graph, a[e]));
      CHECK(a[e] == b[e]);  // the same instruction on the same operand node
      CHECK(t.graph.describe(a[e], 1) == "ex2.approx.f32(mul.rn.f32(…))");
    }
    CHECK(a[0] != a[1]);  // other leaves, other nodes
    // Negative controls: each one property changed gives another node.
    const auto lg2 = t.trace("lg2");
    const auto ftz = t.trace("expf_ftz");
    const auto ex2_x = t.trace("ex2_x");
    const auto ex2_plus = t.trace("ex2_x_plus_0");
    const auto xy = t.trace("div_xy");
    const auto yx = t.trace("div_yx");
    const auto full = t.trace("div_full_xy");
    for (unsigned e = 0; e < 4; ++e) {
      CHECK(lg2[e] != a[e]);
      CHECK(ftz[e] != a[e]);
      CHECK(ex2_plus[e] != ex2_x[e]);  // x + 0 is not simplified (it is not x for x = -0)
      CHECK(xy[e] != yx[e]);           // div's operands are ordered: no canonical form
      CHECK(full[e] != xy[e]);
      CHECK(is_approx(t.graph, xy[e]));
      // first_difference walks to the approx heads (same operands, other form).
      const auto d = t.graph.first_difference(lg2[e], a[e]);
      CHECK(d.a == lg2[e]);
      CHECK(d.b == a[e]);
    }
    // Constant sources: never folded, one node for every thread.
    const auto c = t.trace("ex2_const");
    CHECK(is_approx(t.graph, c[0]));
    CHECK(t.graph.node(t.graph.node(c[0]).ops[0]).kind == NodeKind::kConst);
    for (unsigned e = 1; e < 4; ++e) CHECK(c[e] == c[0]);
    // Untaken: no approx node, the output is x itself.
    const auto u = t.trace("untaken");
    for (unsigned e = 0; e < 4; ++e) CHECK(t.graph.node(u[e]).kind == NodeKind::kLeaf);
  }

  TEST_CASE("opaque: evaluate is an error at an approx; the lemma pass stops at it, its operands may be tables") {
    Graph g;
    ptx::sym::LeafTensor lt;
    lt.name = "x", lt.elements = 2, lt.element_bits = 16;
    const auto x = g.add_tensor(lt);
    const NodeId x0 = g.leaf(x, 0);
    ptx::Inst cvt, ex2, xr, add;
    {
      auto m = ptx::parse_module(kOpaqueHead +
                                     ".visible .entry g()\n{\n\t.reg .b16 %h<4>;\n\t.reg .f32 %f<8>;\n"
                                     "\tcvt.f32.f16 %f1, %h1;\n\tex2.approx.f32 %f2, %f1;\n"
                                     "\txor.b16 %h2, %h1, 4660;\n\tadd.rn.f32 %f3, %f2, %f1;\n\tret;\n}\n",
                                 "g.ptx");
      REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
      cvt = m->kernels[0].code[0], ex2 = m->kernels[0].code[1], xr = m->kernels[0].code[2];
      add = m->kernels[0].code[3];
    }
    const auto one = [&](const ptx::Inst& in, std::vector<NodeId> ops) {
      NodeId out[4] = {kNoNode, kNoNode, kNoNode, kNoNode};
      g.inst(in, ops.data(), out);
      return out[0];
    };
    // Arm A: ex2(cvt(x)) + cvt(x); arm B: ex2(cvt(x ^ 0x1234 ^ 0x1234)) + cvt(x): different nodes
    // below the approx, equal tables (the xors cancel): the lemma pass makes them one node.
    const NodeId ca = one(cvt, {x0});
    const NodeId k = g.constant(0x1234, 16);
    const NodeId cb = one(cvt, {one(xr, {one(xr, {x0, k}), k})});
    REQUIRE(ca != cb);
    const NodeId ea = one(ex2, {ca}), eb = one(ex2, {cb});
    const NodeId ra = one(add, {ea, ca}), rb = one(add, {eb, ca});
    REQUIRE(ra != rb);
    REQUIRE(is_approx(g, ea));
    // evaluate: an error naming the instruction, not a value.
    const auto v = g.evaluate(ea, {{g.node(x0).aux64, 0x3C00}});
    REQUIRE(!v.ok());
    CHECK_MESSAGE(has(v.error().message, "ex2.approx.f32: approximate, runs on the GPU only"), v.error().message);
    CHECK(!g.evaluate(ra, {{g.node(x0).aux64, 0x3C00}}).ok());
    CHECK(g.evaluate(ca, {{g.node(x0).aux64, 0x3C00}}).ok());  // below it: a value (1.0f)
    // The lemma pass: no lemma holds the approx (it would have failed to evaluate), the roots'
    // approx nodes survive, over one table node for both arms.
    auto roots = g.apply_lemmas({ra, rb});
    REQUIRE_MESSAGE(roots.ok(), (roots.ok() ? std::string() : roots.error().message));
    CHECK((*roots)[0] == (*roots)[1]);
    const auto& root = g.node((*roots)[0]);
    CHECK(root.kind == NodeKind::kInst);
    CHECK(root.key.op == ptx::Op::kAdd);
    // add's operands in canonical (NodeId) order: the approx and the table of cvt(x).
    const NodeId ap = is_approx(g, root.ops[0]) ? root.ops[0] : root.ops[1];
    REQUIRE(is_approx(g, ap));
    CHECK(g.node(ap == root.ops[0] ? root.ops[1] : root.ops[0]).kind == NodeKind::kTable);
    CHECK(g.node(g.node(ap).ops[0]).kind == NodeKind::kTable);
    CHECK(!g.lemmas().empty());
    for (const auto& l : g.lemmas()) {
      for (const auto& p : l.patterns) CHECK_MESSAGE(!has(p, "approx"), p);
    }
    // A root that is an approx over a narrow operand: the approx stays, never tabled.
    auto only = g.apply_lemmas({ea});
    REQUIRE(only.ok());
    CHECK(is_approx(g, (*only)[0]));
  }
}

}  // namespace bitproof::ptx_opaque_test
