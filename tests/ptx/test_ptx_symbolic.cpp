// The executor's symbolic policy (src/ptx/symbolic.hpp, issue 48): kernels traced into a node
// graph. The cross-check every test makes: each traced output node, evaluated on random leaf
// values by an evaluator written here (ConcretePolicy::alu on each node's instruction, not
// Graph's own), equals the concrete launch's bits on those values. And the proof's two
// directions: the same computation traced twice is one node; another order is another node.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ptx/concrete.hpp"
#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"
#include "ptx/symbolic.hpp"
#include "ptx_support.hpp"
#include "splitmix.hpp"

using namespace bitproof;
using namespace bitproof::test;
using ptx::Arg;
using ptx::sym::Graph;
using ptx::sym::NodeId;
using ptx::sym::NodeKind;

namespace {

// The bits of a node for leaf values leaf(index), by ConcretePolicy::alu on each instruction
// node (the executor's semantics), and `table(snapshot, address, width)` for kLoad nodes.
class SymEval {
 public:
  SymEval(const Graph& g, std::function<std::uint64_t(std::uint64_t)> leaf,
          std::function<std::uint64_t(std::uint64_t, std::uint64_t, unsigned)> table = {})
      : g_(g), leaf_(std::move(leaf)), table_(std::move(table)) {}

  std::uint64_t operator()(NodeId id) {
    if (const auto it = memo_.find(id); it != memo_.end()) return it->second;
    const ptx::sym::Node& n = g_.node(id);
    const auto mask = [](unsigned w) { return w >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << w) - 1; };
    std::uint64_t v = 0;
    switch (n.kind) {
      case NodeKind::kConst: v = n.aux64; break;
      case NodeKind::kLeaf: v = leaf_(n.aux64); break;
      case NodeKind::kExtract: v = ((*this)(n.ops[0]) >> n.aux64) & mask(n.width); break;
      case NodeKind::kConcat: v = (*this)(n.ops[0]) | (*this)(n.ops[1]) << g_.node(n.ops[0]).width; break;
      case NodeKind::kLoad:
        REQUIRE(table_);
        v = table_(n.aux64, (*this)(n.ops[0]), n.width);
        break;
      case NodeKind::kInst: {
        const ptx::Inst in = n.key.to_inst();
        std::uint64_t s[5] = {}, d[4] = {};
        for (int i = 0; i < n.nops; ++i) s[i] = (*this)(n.ops[static_cast<std::size_t>(i)]);
        const char* why = ptx::ConcretePolicy::alu(in, s, d);
        REQUIRE_MESSAGE(why == nullptr, why);
        v = d[n.aux64];
        break;
      }
      case NodeKind::kTable: FAIL("no lemma tables in these traces"); break;
      case NodeKind::kTuple: FAIL("no opaque mma in these traces"); break;
    }
    memo_[id] = v;
    return v;
  }

 private:
  const Graph& g_;
  std::function<std::uint64_t(std::uint64_t)> leaf_;
  std::function<std::uint64_t(std::uint64_t, std::uint64_t, unsigned)> table_;
  std::unordered_map<NodeId, std::uint64_t> memo_;
};

ptx::sym::LeafTensor sym_tensor(std::string name, std::uint64_t elements, std::uint8_t bits) {
  ptx::sym::LeafTensor t;
  t.name = std::move(name), t.elements = elements, t.element_bits = bits;
  return t;
}

// Random f16 bits, mostly |x| < 1 with varied exponents, every 16th any pattern (NaN, Inf, subnormal).
std::uint16_t sym_random_half(std::uint64_t& seed) {
  const std::uint64_t r = splitmix64_next(seed);
  if ((r & 15) == 0) return static_cast<std::uint16_t>(r >> 16);
  return static_cast<std::uint16_t>((r & 0x8000u) | ((5 + (r >> 20) % 10) << 10) | ((r >> 32) & 0x3FF));
}
std::uint32_t sym_random_float(std::uint64_t& seed) {
  const std::uint64_t r = splitmix64_next(seed);
  return static_cast<std::uint32_t>((r & 0x80000000u) | ((110 + (r >> 32) % 20) << 23) | (r & 0x7FFFFF));
}

template <class T>
std::vector<std::uint8_t> sym_bytes(const std::vector<T>& v) {
  return ptx_bytes_of(v);
}

ptx::LaunchConfig sym_config(ptx::Dim3 grid, ptx::Dim3 block) {
  ptx::LaunchConfig c;
  c.grid = grid, c.block = block, c.max_warp_steps = 10'000'000;
  return c;
}

int sym_line_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  REQUIRE(at != std::string::npos);
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// A dot product of two f32 vectors by one thread, k ascending (dot_fwd) or descending (dot_rev).
const std::string kSymDot = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry dot_fwd(
	.param .u64 dot_fwd_param_0,
	.param .u64 dot_fwd_param_1,
	.param .u64 dot_fwd_param_2,
	.param .u32 dot_fwd_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [dot_fwd_param_0];
	ld.param.u64 	%rd2, [dot_fwd_param_1];
	ld.param.u64 	%rd3, [dot_fwd_param_2];
	ld.param.u32 	%r1, [dot_fwd_param_3];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	cvta.to.global.u64 	%rd3, %rd3;
	mov.f32 	%f1, 0f00000000;
	mov.u32 	%r2, 0;
$L__fwd:
	mul.wide.u32 	%rd4, %r2, 4;
	add.s64 	%rd5, %rd1, %rd4;
	ld.global.f32 	%f2, [%rd5];
	add.s64 	%rd6, %rd2, %rd4;
	ld.global.f32 	%f3, [%rd6];
	fma.rn.f32 	%f1, %f2, %f3, %f1;
	add.s32 	%r2, %r2, 1;
	setp.lt.u32 	%p1, %r2, %r1;
	@%p1 bra 	$L__fwd;
	st.global.f32 	[%rd3], %f1;
	ret;
}

.visible .entry dot_rev(
	.param .u64 dot_rev_param_0,
	.param .u64 dot_rev_param_1,
	.param .u64 dot_rev_param_2,
	.param .u32 dot_rev_param_3
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [dot_rev_param_0];
	ld.param.u64 	%rd2, [dot_rev_param_1];
	ld.param.u64 	%rd3, [dot_rev_param_2];
	ld.param.u32 	%r1, [dot_rev_param_3];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd2, %rd2;
	cvta.to.global.u64 	%rd3, %rd3;
	mov.f32 	%f1, 0f00000000;
	add.s32 	%r2, %r1, -1;
$L__rev:
	mul.wide.u32 	%rd4, %r2, 4;
	add.s64 	%rd5, %rd1, %rd4;
	ld.global.f32 	%f2, [%rd5];
	add.s64 	%rd6, %rd2, %rd4;
	ld.global.f32 	%f3, [%rd6];
	fma.rn.f32 	%f1, %f2, %f3, %f1;
	setp.ne.u32 	%p1, %r2, 0;
	add.s32 	%r2, %r2, -1;
	@%p1 bra 	$L__rev;
	st.global.f32 	[%rd3], %f1;
	ret;
}
)";

// A one-thread kernel k(out, in) around `body` (nvcc's register names): %rd1 = out, %rd2 = in
// (global addresses), `decls` before the entry.
std::string sym_kernel(const std::string& body, const std::string& decls = "") {
  return ".version 8.0\n.target sm_90\n.address_size 64\n" + decls +
         "\n.visible .entry k(\n\t.param .u64 k_out,\n\t.param .u64 k_in\n)\n{\n"
         "\t.reg .pred %p<8>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n\t.reg .f32 %f<16>;\n\t.reg .b16 %h<8>;\n"
         "\tld.param.u64 %rd1, [k_out];\n\tld.param.u64 %rd2, [k_in];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
         "\tcvta.to.global.u64 %rd2, %rd2;\n" +
         body + "\n\tret;\n}\n";
}

// Traces k(out, in) with `in` the leaves of one tensor of `n` elements of `bits` bits and out
// `out_bytes` bytes of 0xFF; the Error when the trace is refused.
struct SymOne {
  Graph g;
  ptx::SymMemory mem;
  std::uint32_t tensor = 0;
  std::size_t out = 0;
};
Expected<ptx::LaunchResult> sym_trace_one(SymOne& t, const std::string& text, std::uint64_t n, std::uint8_t bits,
                                          std::size_t out_bytes) {
  auto m = ptx::parse_module(text, "sym.ptx");
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
  t.tensor = t.g.add_tensor(sym_tensor("in", n, bits));
  t.out = t.mem.add_plain(std::vector<std::uint8_t>(out_bytes, 0xFF));
  auto in = t.mem.add_input(t.g, t.tensor);
  REQUIRE(in.ok());
  const std::vector<Arg> args = {Arg::buf(t.out), Arg::buf(*in)};
  return ptx::trace_launch(*m, m->kernels.at(0), sym_config({1}, {1}), args, t.mem, t.g, 0);
}

// The concrete run of k(out, in) on `in`'s bytes: out's bytes.
std::vector<std::uint8_t> sym_run_one(const std::string& text, std::vector<std::uint8_t> in, std::size_t out_bytes) {
  ptx::Memory mem;
  const auto bo = mem.add(std::vector<std::uint8_t>(out_bytes, 0xFF)), bi = mem.add(std::move(in));
  auto r = run_ptx(text, "k", {1}, {1}, {Arg::buf(bo), Arg::buf(bi)}, mem, "sym.ptx");
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  return mem.bytes(bo);
}

// The fused aux GEMV pair of examples/fused-aux-gemv at a small size, traced (arm 0: three
// gemv_sep launches; arm 1: one gemv_fused over the joined weight, `fused_block` threads).
struct SymGemv {
  static constexpr unsigned kRows[3] = {3, 2, 1};
  static constexpr unsigned kK = 256;
  Graph g;
  std::uint32_t x = 0, w[3] = {};
  std::vector<NodeId> y[2][3];  // [arm][output][row]
};

void sym_trace_gemv(SymGemv& s, unsigned sep_block, unsigned fused_block) {
  const std::string text = ptx_fixture("fused_gemv.ptx");
  auto m = ptx::parse_module(text, "fused_gemv.ptx");
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
  auto sep = ptx::find_kernel(*m, "gemv_sep");
  auto fused = ptx::find_kernel(*m, "gemv_fused");
  REQUIRE((sep.ok() && fused.ok()));
  s.x = s.g.add_tensor(sym_tensor("x", SymGemv::kK, 16));
  for (int i = 0; i < 3; ++i)
    s.w[i] = s.g.add_tensor(sym_tensor(fmt::format("w{}", i), SymGemv::kRows[i] * SymGemv::kK, 16));
  const auto outputs = [&](ptx::SymMemory& mem, int arm, const std::size_t* y) {
    for (int i = 0; i < 3; ++i) {
      for (unsigned r = 0; r < SymGemv::kRows[i]; ++r) {
        auto n = mem.element(s.g, y[i], 2 * r, 2);
        REQUIRE(n.ok());
        s.y[arm][i].push_back(*n);
      }
    }
  };
  {  // the separate arm: three launches on one SymMemory
    ptx::SymMemory mem;
    const std::size_t bx = *mem.add_input(s.g, s.x);
    std::size_t y[3];
    for (int i = 0; i < 3; ++i) {
      const std::size_t bw = *mem.add_input(s.g, s.w[i]);
      y[i] = mem.add_plain(std::vector<std::uint8_t>(2 * SymGemv::kRows[i], 0xFF));
      const std::vector<Arg> args = {Arg::buf(bx), Arg::buf(bw), Arg::buf(y[i]), Arg::u32(SymGemv::kK)};
      auto r = ptx::trace_launch(*m, **sep, sym_config({SymGemv::kRows[i]}, {sep_block}), args, mem, s.g, 0);
      REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    }
    outputs(mem, 0, y);
  }
  {  // the fused arm
    ptx::SymMemory mem;
    const std::size_t bx = *mem.add_input(s.g, s.x);
    auto bw = mem.add_joined(s.g, {s.w[0], s.w[1], s.w[2]});
    REQUIRE(bw.ok());
    std::size_t y[3];
    for (int i = 0; i < 3; ++i) y[i] = mem.add_plain(std::vector<std::uint8_t>(2 * SymGemv::kRows[i], 0xFF));
    const std::vector<Arg> args = {Arg::buf(bx),
                                   Arg::buf(*bw),
                                   Arg::buf(y[0]),
                                   Arg::buf(y[1]),
                                   Arg::buf(y[2]),
                                   Arg::u32(SymGemv::kRows[0]),
                                   Arg::u32(SymGemv::kRows[1]),
                                   Arg::u32(SymGemv::kK)};
    const unsigned n = SymGemv::kRows[0] + SymGemv::kRows[1] + SymGemv::kRows[2];
    auto r = ptx::trace_launch(*m, **fused, sym_config({n}, {fused_block}), args, mem, s.g, 1);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    outputs(mem, 1, y);
  }
}

// Both arms run concretely on random x and w, and every traced output node evaluated on the same
// values: equal bits, for `cases` cases.
void sym_check_gemv(SymGemv& s, unsigned sep_block, unsigned fused_block, int cases) {
  auto m = ptx::parse_module(ptx_fixture("fused_gemv.ptx"), "fused_gemv.ptx");
  REQUIRE(m.ok());
  std::uint64_t seed = 4801;
  int checked = 0;
  for (int c = 0; c < cases; ++c) {
    std::vector<std::uint16_t> x(SymGemv::kK), w[3];
    for (auto& v : x) v = sym_random_half(seed);
    for (int i = 0; i < 3; ++i) {
      w[i].resize(SymGemv::kRows[i] * SymGemv::kK);
      for (auto& v : w[i]) v = sym_random_half(seed);
    }
    const auto leaf = [&](std::uint64_t l) -> std::uint64_t {
      const auto ref = s.g.leaf_ref(l);
      if (ref.tensor == s.x) return x[ref.element];
      for (int i = 0; i < 3; ++i) {
        if (ref.tensor == s.w[i]) return w[i][ref.element];
      }
      FAIL("a leaf of no tensor");
      return 0;
    };
    SymEval eval(s.g, leaf);
    std::vector<std::uint16_t> got[2][3];
    {
      ptx::Memory mem;
      const auto bx = mem.add(sym_bytes(x));
      for (int i = 0; i < 3; ++i) {
        const auto bw = mem.add(sym_bytes(w[i]));
        const auto by = mem.add(std::vector<std::uint8_t>(2 * SymGemv::kRows[i], 0xFF));
        const std::vector<Arg> args = {Arg::buf(bx), Arg::buf(bw), Arg::buf(by), Arg::u32(SymGemv::kK)};
        REQUIRE(
            ptx::launch(*m, **ptx::find_kernel(*m, "gemv_sep"), sym_config({SymGemv::kRows[i]}, {sep_block}), args, mem)
                .ok());
        got[0][i] = ptx_values_of<std::uint16_t>(mem.bytes(by));
      }
    }
    {
      ptx::Memory mem;
      std::vector<std::uint16_t> joined;
      for (int i = 0; i < 3; ++i) joined.insert(joined.end(), w[i].begin(), w[i].end());
      const auto bx = mem.add(sym_bytes(x)), bw = mem.add(sym_bytes(joined));
      std::size_t by[3];
      for (int i = 0; i < 3; ++i) by[i] = mem.add(std::vector<std::uint8_t>(2 * SymGemv::kRows[i], 0xFF));
      const std::vector<Arg> args = {Arg::buf(bx),
                                     Arg::buf(bw),
                                     Arg::buf(by[0]),
                                     Arg::buf(by[1]),
                                     Arg::buf(by[2]),
                                     Arg::u32(SymGemv::kRows[0]),
                                     Arg::u32(SymGemv::kRows[1]),
                                     Arg::u32(SymGemv::kK)};
      const unsigned n = SymGemv::kRows[0] + SymGemv::kRows[1] + SymGemv::kRows[2];
      REQUIRE(ptx::launch(*m, **ptx::find_kernel(*m, "gemv_fused"), sym_config({n}, {fused_block}), args, mem).ok());
      for (int i = 0; i < 3; ++i) got[1][i] = ptx_values_of<std::uint16_t>(mem.bytes(by[i]));
    }
    // Graph::evaluate (what the prove command uses) on the same values, leaf by leaf.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> leaves;
    for (const auto& t : s.g.tensors()) {
      for (std::uint64_t e = 0; e < t.elements; ++e) leaves.emplace_back(t.first_leaf + e, leaf(t.first_leaf + e));
    }
    for (int arm = 0; arm < 2; ++arm) {
      for (int i = 0; i < 3; ++i) {
        for (unsigned r = 0; r < SymGemv::kRows[i]; ++r) {
          const NodeId y = s.y[arm][i][r];
          CHECK_MESSAGE(eval(y) == got[arm][i][r], fmt::format("case {} arm {} output {} row {}", c, arm, i, r));
          const auto by_graph = s.g.evaluate(y, leaves);
          REQUIRE(by_graph.ok());
          CHECK(*by_graph == got[arm][i][r]);
          ++checked;
        }
      }
    }
  }
  CHECK(checked == cases * 2 * 6);
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("symbolic: a dot product traced twice in one order is one node, reversed another; both evaluate right") {
    auto m = ptx::parse_module(kSymDot, "dot.ptx");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
    const unsigned k = 24;
    Graph g;
    const auto tx = g.add_tensor(sym_tensor("x", k, 32)), tw = g.add_tensor(sym_tensor("w", k, 32));
    const auto trace = [&](const char* kernel, int arm) -> NodeId {
      ptx::SymMemory mem;
      const std::size_t bx = *mem.add_input(g, tx), bw = *mem.add_input(g, tw);
      const std::size_t by = mem.add_plain(std::vector<std::uint8_t>(4, 0xFF));
      const std::vector<Arg> args = {Arg::buf(bx), Arg::buf(bw), Arg::buf(by), Arg::u32(k)};
      auto r = ptx::trace_launch(*m, **ptx::find_kernel(*m, kernel), sym_config({1}, {1}), args, mem, g, arm);
      REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
      auto y = mem.element(g, by, 0, 4);
      REQUIRE(y.ok());
      return *y;
    };
    const NodeId fwd = trace("dot_fwd", 0);
    const std::size_t nodes = g.size();
    const NodeId again = trace("dot_fwd", 1);
    CHECK(again == fwd);
    CHECK(g.size() == nodes);  // hash-consed: the second trace made no node
    const NodeId rev = trace("dot_rev", 1);
    CHECK(rev != fwd);
    CHECK(g.node(fwd).kind == NodeKind::kInst);
    CHECK(g.node(fwd).key.op == ptx::Op::kFma);
    CHECK(g.origin(fwd, 0) == static_cast<std::uint32_t>(sym_line_of(kSymDot, "fma.rn.f32")));
    // The cross-check: the nodes' values on random leaves are the concrete launches' bits.
    std::uint64_t seed = 17;
    for (int c = 0; c < 8; ++c) {
      std::vector<std::uint32_t> x(k), w(k);
      for (auto& v : x) v = sym_random_float(seed);
      for (auto& v : w) v = sym_random_float(seed);
      SymEval eval(g, [&](std::uint64_t l) -> std::uint64_t {
        const auto ref = g.leaf_ref(l);
        return ref.tensor == tx ? x[ref.element] : w[ref.element];
      });
      for (const auto& [kernel, node] : {std::pair{"dot_fwd", fwd}, std::pair{"dot_rev", rev}}) {
        ptx::Memory mem;
        const auto bx = mem.add(sym_bytes(x)), bw = mem.add(sym_bytes(w)), by = mem.add({0, 0, 0, 0});
        REQUIRE(run_ptx(kSymDot, kernel, {1}, {1}, {Arg::buf(bx), Arg::buf(bw), Arg::buf(by), Arg::u32(k)}, mem).ok());
        CHECK(eval(node) == ptx_values_of<std::uint32_t>(mem.bytes(by))[0]);
      }
    }
  }

  TEST_CASE(
      "symbolic: the fused aux GEMV pair (nvcc's PTX, shared memory, shfl.down, bar.sync) is equal node for node") {
    // examples/fused-aux-gemv/gemv.cu at 3 + 2 + 1 rows, K = 256, 128 threads a block: three
    // gemv_sep launches on one SymMemory against one gemv_fused over the joined weight. Every
    // output element is the same node in both arms; every node evaluates to both arms' bits.
    SymGemv s;
    sym_trace_gemv(s, 128, 128);
    int same = 0;
    for (int i = 0; i < 3; ++i) {
      for (unsigned r = 0; r < SymGemv::kRows[i]; ++r) {
        same += s.y[0][i][r] == s.y[1][i][r];
        CHECK(s.g.node(s.y[0][i][r]).kind == NodeKind::kInst);  // cvt.rn.f16.f32 of the sum, not a constant
      }
    }
    CHECK(same == 6);
    // Rows differ from each other (each row's own weights).
    CHECK(s.y[0][0][0] != s.y[0][0][1]);
    sym_check_gemv(s, 128, 128, 3);
  }

  TEST_CASE(
      "symbolic: the fused GEMV with 64 threads a block (another K split) is another node, still evaluated right") {
    SymGemv s;
    sym_trace_gemv(s, 128, 64);
    int same = 0;
    for (int i = 0; i < 3; ++i) {
      for (unsigned r = 0; r < SymGemv::kRows[i]; ++r) same += s.y[0][i][r] == s.y[1][i][r];
    }
    CHECK(same == 0);
    sym_check_gemv(s, 128, 64, 3);
  }

  TEST_CASE("symbolic: launches in a row: the second reads the first's output as nodes") {
    // gemv_sep twice: y = W1 x (4 rows), then z = W2 y (K = 4): z's node is built on y's nodes.
    const std::string text = ptx_fixture("fused_gemv.ptx");
    auto m = ptx::parse_module(text, "fused_gemv.ptx");
    REQUIRE(m.ok());
    const auto& sep = **ptx::find_kernel(*m, "gemv_sep");
    const unsigned k = 64, n = 4;
    Graph g;
    const auto tx = g.add_tensor(sym_tensor("x", k, 16)), t1 = g.add_tensor(sym_tensor("w1", n * k, 16)),
               t2 = g.add_tensor(sym_tensor("w2", n, 16));
    ptx::SymMemory mem;
    const std::size_t bx = *mem.add_input(g, tx), b1 = *mem.add_input(g, t1), b2 = *mem.add_input(g, t2);
    const std::size_t by = mem.add_plain(std::vector<std::uint8_t>(2 * n, 0xFF));
    const std::size_t bz = mem.add_plain(std::vector<std::uint8_t>(2, 0xFF));
    const std::vector<Arg> a1 = {Arg::buf(bx), Arg::buf(b1), Arg::buf(by), Arg::u32(k)};
    const std::vector<Arg> a2 = {Arg::buf(by), Arg::buf(b2), Arg::buf(bz), Arg::u32(n)};
    REQUIRE(ptx::trace_launch(*m, sep, sym_config({n}, {32}), a1, mem, g, 0).ok());
    REQUIRE(ptx::trace_launch(*m, sep, sym_config({1}, {32}), a2, mem, g, 0).ok());
    const NodeId z = *mem.element(g, bz, 0, 2);
    std::uint64_t seed = 99;
    for (int c = 0; c < 4; ++c) {
      std::vector<std::uint16_t> x(k), w1(n * k), w2(n);
      for (auto* v : {&x, &w1, &w2}) {
        for (auto& e : *v) e = sym_random_half(seed);
      }
      SymEval eval(g, [&](std::uint64_t l) -> std::uint64_t {
        const auto ref = g.leaf_ref(l);
        return ref.tensor == tx ? x[ref.element] : ref.tensor == t1 ? w1[ref.element] : w2[ref.element];
      });
      ptx::Memory cm;
      const auto cx = cm.add(sym_bytes(x)), c1 = cm.add(sym_bytes(w1)), c2 = cm.add(sym_bytes(w2));
      const auto cy = cm.add(std::vector<std::uint8_t>(2 * n, 0xFF)), cz = cm.add({0xFF, 0xFF});
      const std::vector<Arg> r1 = {Arg::buf(cx), Arg::buf(c1), Arg::buf(cy), Arg::u32(k)};
      const std::vector<Arg> r2 = {Arg::buf(cy), Arg::buf(c2), Arg::buf(cz), Arg::u32(n)};
      REQUIRE(ptx::launch(*m, sep, sym_config({n}, {32}), r1, cm).ok());
      REQUIRE(ptx::launch(*m, sep, sym_config({1}, {32}), r2, cm).ok());
      CHECK(eval(z) == ptx_values_of<std::uint16_t>(cm.bytes(cz))[0]);
    }
  }

  TEST_CASE("symbolic: a branch, an address, a vote on tensor data are refused with their line") {
    struct Refusal {
      const char* what;
      std::string body;
      const char* line_of;
    };
    const std::vector<Refusal> cases = {
        {"branch",
         "\tld.global.f32 %f1, [%rd2];\n\tsetp.gt.f32 %p1, %f1, 0f00000000;\n\t@%p1 bra $L__skip;\n"
         "\tst.global.f32 [%rd1], %f1;\n$L__skip:",
         "@%p1 bra"},
        {"address",
         "\tld.global.u32 %r1, [%rd2];\n\tand.b32 %r2, %r1, 7;\n\tmul.wide.u32 %rd3, %r2, 4;\n"
         "\tadd.s64 %rd4, %rd2, %rd3;\n\tld.global.u32 %r3, [%rd4];\n\tst.global.u32 [%rd1], %r3;",
         "ld.global.u32 %r3"},
        {"store address",
         "\tld.global.u32 %r1, [%rd2];\n\tand.b32 %r2, %r1, 7;\n\tmul.wide.u32 %rd3, %r2, 4;\n"
         "\tadd.s64 %rd4, %rd1, %rd3;\n\tst.global.u32 [%rd4], %r1;",
         "st.global.u32 [%rd4]"},
        {"vote",
         "\tld.global.u32 %r1, [%rd2];\n\tsetp.ne.u32 %p1, %r1, 0;\n\tvote.sync.any.pred %p2, %p1, 1;\n"
         "\tselp.u32 %r2, 1, 0, %p2;\n\tst.global.u32 [%rd1], %r2;",
         "vote.sync"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.what);
      const std::string text = sym_kernel(c.body);
      SymOne t;
      auto r = sym_trace_one(t, text, 8, 32, 32);
      REQUIRE(!r.ok());
      CHECK_MESSAGE(r.error().message.find(fmt::format("sym.ptx:{}:", sym_line_of(text, c.line_of))) == 0,
                    r.error().message);
      CHECK_MESSAGE(r.error().message.find("not provable by tracing") != std::string::npos, r.error().message);
      // The same kernel runs concretely (the refusal is the trace's, not the program's).
      sym_run_one(text, std::vector<std::uint8_t>(32, 1), 32);
    }
  }

  TEST_CASE("symbolic: a table lookup kvalues[x & 15] is a kLoad node over the table, evaluated right") {
    const std::string decls =
        ".global .align 4 .b32 kvalues[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3000000000};\n";
    const std::string body =
        "\tld.global.u32 %r1, [%rd2];\n\tand.b32 %r2, %r1, 15;\n\tmul.wide.u32 %rd3, %r2, 4;\n"
        "\tmov.u64 %rd5, kvalues;\n\tadd.s64 %rd4, %rd5, %rd3;\n\tld.global.u32 %r3, [%rd4];\n"
        "\tst.global.u32 [%rd1], %r3;";
    const std::string text = sym_kernel(body, decls);
    SymOne t;
    auto r = sym_trace_one(t, text, 1, 32, 4);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    const NodeId y = *t.mem.element(t.g, t.out, 0, 4);
    REQUIRE(t.g.node(y).kind == NodeKind::kLoad);
    CHECK(t.g.origin(y, 0) == static_cast<std::uint32_t>(sym_line_of(text, "ld.global.u32 %r3")));
    const std::uint32_t table[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3000000000u};
    const std::uint64_t base = ptx::kGlobalVarWindow << ptx::kWindowShift;
    for (std::uint32_t x : {0u, 5u, 15u, 16u, 0xFFFFFFFFu, 0x12345678u}) {
      SymEval eval(
          t.g, [&](std::uint64_t) -> std::uint64_t { return x; },
          [&](std::uint64_t, std::uint64_t address, unsigned width) -> std::uint64_t {
            REQUIRE(width == 32);
            REQUIRE(address >= base);
            REQUIRE(address - base < 64);
            return table[(address - base) / 4];
          });
      const auto out = sym_run_one(text, sym_bytes(std::vector<std::uint32_t>{x}), 4);
      CHECK(eval(y) == ptx_values_of<std::uint32_t>(out)[0]);
      const auto by_graph = t.g.evaluate(y, {{t.g.tensors()[t.tensor].first_leaf, x}});  // its own snapshot
      REQUIRE(by_graph.ok());
      CHECK(*by_graph == ptx_values_of<std::uint32_t>(out)[0]);
    }
    // A launch that writes the table after reading it through a data-dependent address: refused.
    const std::string writes = sym_kernel(body + "\n\tst.global.u32 [%rd5], %r2;", decls);
    SymOne w;
    auto rw = sym_trace_one(w, writes, 1, 32, 4);
    REQUIRE(!rw.ok());
    CHECK_MESSAGE(rw.error().message.find("not provable by tracing") != std::string::npos, rw.error().message);
  }

  TEST_CASE("symbolic: a .v4 load of 8 f16 leaves, unpacked, stores the 8 leaves themselves") {
    // ld.global.v4.u32 gives four concat(leaf 2i, leaf 2i+1); mov.b32 {lo, hi} unpacks them (the
    // graph's slice simplification), and each u16 store then load reads back one leaf.
    std::string body = "\tld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd2];\n";
    for (int i = 0; i < 4; ++i) {
      body += fmt::format("\tmov.b32 {{%h{}, %h{}}}, %r{};\n", 2 * i, 2 * i + 1, i + 1);
    }
    for (int i = 0; i < 8; ++i) body += fmt::format("\tst.global.u16 [%rd1+{}], %h{};\n", 2 * i, i);
    const std::string text = sym_kernel(body);
    SymOne t;
    auto r = sym_trace_one(t, text, 8, 16, 16);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (unsigned i = 0; i < 8; ++i) {
      CHECK(*t.mem.element(t.g, t.out, 2 * i, 2) == t.g.leaf(t.tensor, i));
    }
    // Two elements read as one u32: the concat of their leaves (low first).
    const NodeId pair = *t.mem.element(t.g, t.out, 4, 4);
    REQUIRE(t.g.node(pair).kind == NodeKind::kConcat);
    CHECK(t.g.node(pair).ops[0] == t.g.leaf(t.tensor, 2));
    CHECK(t.g.node(pair).ops[1] == t.g.leaf(t.tensor, 3));
  }

  TEST_CASE(
      "symbolic: shadow memory keeps a stored node's bytes, a concrete overwrite, and the zeros above a narrow value") {
    // st.u32 of a node, then a u16 concrete store over its upper half, read back whole: the concat of
    // the node's low half and the constant; a predicate's selp stored as u32; half of a stored node
    // loaded and stored again; ld.s16 of a leaf's upper half (sign-extended, as the register holds it).
    const std::string body =
        "\tld.global.u32 %r1, [%rd2];\n\tadd.s32 %r2, %r1, 1;\n\tst.global.u32 [%rd1], %r2;\n"
        "\tmov.u16 %h1, 7;\n\tst.global.u16 [%rd1+2], %h1;\n"
        "\tsetp.ne.u32 %p1, %r1, 0;\n\tselp.u32 %r3, 1, 0, %p1;\n\tst.global.u32 [%rd1+4], %r3;\n"
        "\tst.global.u32 [%rd1+8], %r1;\n\tld.global.u16 %h2, [%rd1+8];\n\tst.global.u16 [%rd1+12], %h2;\n"
        "\tld.global.s16 %r5, [%rd2+2];\n\tst.global.u32 [%rd1+16], %r5;";
    const std::string text = sym_kernel(body);
    SymOne t;
    auto r = sym_trace_one(t, text, 1, 32, 20);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    for (std::uint32_t x : {0u, 1u, 0xFFFFu, 0xFFFFFFFFu, 0x12345678u}) {
      SymEval eval(t.g, [&](std::uint64_t) -> std::uint64_t { return x; });
      const auto want = ptx_values_of<std::uint32_t>(sym_run_one(text, sym_bytes(std::vector<std::uint32_t>{x}), 20));
      for (unsigned i = 0; i < 5; ++i) {
        CHECK_MESSAGE(eval(*t.mem.element(t.g, t.out, 4 * i, 4)) == want[i], fmt::format("x {:#x} word {}", x, i));
      }
    }
    // The untouched bytes 14..15 are the buffer's 0xFF fill: concrete.
    CHECK(t.g.node(*t.mem.element(t.g, t.out, 14, 2)).kind == NodeKind::kConst);
  }
}

// ---- If-conversion (issue 48: data-dependent guards and short forward branches) ----

namespace {

// k(out, in): thread t reads the E2M1 code in[t] (a u8 leaf) for t < 16 and uses t & 15 (concrete)
// for t >= 16, decodes it to f16 bits by `decode` (%rs1 the code, the result in %rs8), and stores
// them at out[t]. Lanes 16..31 make the group's predicates concrete beside the data lanes.
std::string ifc_e2m1_kernel(const std::string& decode) {
  return ".version 8.0\n.target sm_90\n.address_size 64\n"
         "\n.visible .entry k(\n\t.param .u64 k_out,\n\t.param .u64 k_in\n)\n{\n"
         "\t.reg .pred %p<8>;\n\t.reg .b16 %rs<16>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<16>;\n"
         "\tld.param.u64 %rd1, [k_out];\n\tld.param.u64 %rd2, [k_in];\n\tcvta.to.global.u64 %rd1, %rd1;\n"
         "\tcvta.to.global.u64 %rd2, %rd2;\n\tmov.u32 %r1, %tid.x;\n\tcvt.u64.u32 %rd3, %r1;\n"
         "\tadd.s64 %rd4, %rd2, %rd3;\n\tmul.wide.u32 %rd5, %r1, 2;\n\tadd.s64 %rd6, %rd1, %rd5;\n"
         "\tcvt.u16.u32 %rs1, %r1;\n\tand.b16 %rs1, %rs1, 15;\n\tsetp.lt.u32 %p7, %r1, 16;\n"
         "\t@%p7 ld.global.u8 %rs1, [%rd4];\n" +
         decode + "\tst.global.u16 [%rd6], %rs8;\n\tret;\n}\n";
}

// The decode with branches: a diamond (e == 0: zero or 0.5; else the normal formula) and a
// hammock giving code 8 (-0) the f16 NaN `nan`.
std::string ifc_branchy(const char* nan) {
  return fmt::format(
      "\tand.b16 %rs2, %rs1, 7;\n\tshr.u16 %rs3, %rs2, 1;\n\tsetp.eq.s16 %p1, %rs3, 0;\n\t@%p1 bra $L__sub;\n"
      "\tadd.s16 %rs4, %rs3, 14;\n\tshl.b16 %rs4, %rs4, 10;\n\tand.b16 %rs5, %rs2, 1;\n\tshl.b16 %rs5, %rs5, 9;\n"
      "\tor.b16 %rs6, %rs4, %rs5;\n\tbra.uni $L__join;\n$L__sub:\n\tmul.lo.u16 %rs6, %rs2, 14336;\n$L__join:\n"
      "\tand.b16 %rs7, %rs1, 8;\n\tshl.b16 %rs7, %rs7, 12;\n\tor.b16 %rs8, %rs6, %rs7;\n"
      "\tsetp.ne.s16 %p2, %rs1, 8;\n\t@%p2 bra $L__done;\n\tmov.b16 %rs8, {};\n$L__done:\n",
      nan);
}

// The same function without branches: both values computed, selp'd (on the negated predicates).
const char* const kIfcSelp =
    "\tand.b16 %rs2, %rs1, 7;\n\tshr.u16 %rs3, %rs2, 1;\n\tadd.s16 %rs4, %rs3, 14;\n\tshl.b16 %rs4, %rs4, 10;\n"
    "\tand.b16 %rs5, %rs2, 1;\n\tshl.b16 %rs5, %rs5, 9;\n\tor.b16 %rs6, %rs4, %rs5;\n"
    "\tmul.lo.u16 %rs9, %rs2, 14336;\n\tsetp.ne.s16 %p1, %rs3, 0;\n\tselp.b16 %rs6, %rs6, %rs9, %p1;\n"
    "\tand.b16 %rs7, %rs1, 8;\n\tshl.b16 %rs7, %rs7, 12;\n\tor.b16 %rs8, %rs6, %rs7;\n"
    "\tsetp.eq.s16 %p2, %rs1, 8;\n\tselp.b16 %rs8, 0x7E00, %rs8, %p2;\n";

std::uint16_t ifc_e2m1_f16(unsigned code, std::uint16_t nan) {
  static constexpr std::uint16_t kMagnitude[8] = {0x0000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200, 0x4400, 0x4600};
  if (code == 8) return nan;
  return static_cast<std::uint16_t>(((code & 8u) << 12) | kMagnitude[code & 7u]);
}

// Both arms traced into one graph (16 E2M1 leaves each, domain 0..15); the outputs' nodes.
struct IfcPair {
  Graph g;
  std::vector<NodeId> a, b;
};
void ifc_trace(IfcPair& p, const std::string& text, int arm, std::vector<NodeId>& out) {
  auto m = ptx::parse_module(text, "ifc.ptx");
  REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error().message));
  ptx::sym::LeafTensor t = sym_tensor(arm == 0 ? "a.codes" : "b.codes", 16, 8);
  for (std::uint64_t c = 0; c < 16; ++c) t.domain.push_back(c);
  const auto tensor = p.g.add_tensor(t);
  ptx::SymMemory mem;
  const auto o = mem.add_plain(std::vector<std::uint8_t>(64, 0xFF));
  auto in = mem.add_input(p.g, tensor);
  REQUIRE(in.ok());
  const std::vector<Arg> args = {Arg::buf(o), Arg::buf(*in)};
  auto r = ptx::trace_launch(*m, m->kernels.at(0), sym_config({1}, {32}), args, mem, p.g, arm);
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
  for (unsigned t2 = 0; t2 < 32; ++t2) out.push_back(*mem.element(p.g, o, 2 * t2, 2));
}

}  // namespace

TEST_SUITE("ptx") {
  TEST_CASE("if-conversion: an E2M1 decode with a diamond and a hammock on the code equals the selp decode") {
    const std::string branchy = ifc_e2m1_kernel(ifc_branchy("0x7E00")), selp = ifc_e2m1_kernel(kIfcSelp);
    // Concretely both decode every code right (the executor's branches, unchanged).
    for (const std::string* text : {&branchy, &selp}) {
      std::vector<std::uint8_t> codes(16);
      for (unsigned c = 0; c < 16; ++c) codes[c] = static_cast<std::uint8_t>(15 - c);
      ptx::Memory mem;
      const auto bo = mem.add(std::vector<std::uint8_t>(64, 0xFF)), bi = mem.add(codes);
      REQUIRE(run_ptx(*text, "k", {1}, {32}, {Arg::buf(bo), Arg::buf(bi)}, mem, "ifc.ptx").ok());
      const auto got = ptx_values_of<std::uint16_t>(mem.bytes(bo));
      for (unsigned t = 0; t < 32; ++t) CHECK(got[t] == ifc_e2m1_f16(t < 16 ? 15 - t : t & 15, 0x7E00));
    }
    IfcPair p;
    ifc_trace(p, branchy, 0, p.a);
    ifc_trace(p, selp, 1, p.b);
    // Lanes 16..31: concrete predicates inside the if-converted group, concrete results.
    for (unsigned t = 16; t < 32; ++t) {
      REQUIRE(p.g.node(p.a[t]).kind == NodeKind::kConst);
      CHECK(p.g.node(p.a[t]).aux64 == ifc_e2m1_f16(t & 15, 0x7E00));
      CHECK(p.a[t] == p.b[t]);
    }
    // The data lanes: selp nodes, different shapes in the two arms, right on every code.
    const std::uint64_t leaf_a = p.g.tensors()[0].first_leaf, leaf_b = p.g.tensors()[1].first_leaf;
    for (unsigned t = 0; t < 16; ++t) {
      CHECK(p.a[t] != p.b[t]);
      CHECK(p.g.origin(p.a[t], 0) != 0);
      for (unsigned c = 0; c < 16; ++c) {
        const auto va = p.g.evaluate(p.a[t], {{leaf_a + t, c}}), vb = p.g.evaluate(p.b[t], {{leaf_b + t, c}});
        REQUIRE(va.ok());
        REQUIRE(vb.ok());
        CHECK_MESSAGE(*va == ifc_e2m1_f16(c, 0x7E00), fmt::format("lane {} code {}", t, c));
        CHECK(*vb == *va);
      }
    }
    // Lemmas: each output becomes a table over its one code; equal tables, and lane t of both arms
    // reads the same function of its own leaf (a table node per arm: the supports differ, the lemma
    // is one).
    std::vector<NodeId> roots = p.a;
    roots.insert(roots.end(), p.b.begin(), p.b.end());
    auto after = p.g.apply_lemmas(roots);
    REQUIRE_MESSAGE(after.ok(), (after.ok() ? std::string() : after.error().message));
    for (unsigned t = 0; t < 16; ++t) {
      const auto& na = p.g.node((*after)[t]);
      const auto& nb = p.g.node((*after)[32 + t]);
      REQUIRE(na.kind == NodeKind::kTable);
      REQUIRE(nb.kind == NodeKind::kTable);
      CHECK(na.aux64 == nb.aux64);  // one lemma: both arms' shapes gave the same table
    }
    CHECK(p.g.lemmas().size() == 1);
    CHECK(p.g.lemmas()[0].patterns.size() >= 2);
  }

  TEST_CASE("if-conversion: the same leaves in both arms: one table node; a branchy arm off on one code: refuted") {
    // Both arms over ONE code tensor: equal tables give one node; the negative control (code 8's
    // NaN 0x7C01 instead of 0x7E00) gives another table, and the counterexample names code 8.
    for (const bool wrong : {false, true}) {
      CAPTURE(wrong);
      Graph g;
      ptx::sym::LeafTensor t = sym_tensor("codes", 16, 8);
      for (std::uint64_t c = 0; c < 16; ++c) t.domain.push_back(c);
      const auto tensor = g.add_tensor(t);
      std::vector<NodeId> outs[2];
      const std::string texts[2] = {ifc_e2m1_kernel(ifc_branchy(wrong ? "0x7C01" : "0x7E00")),
                                    ifc_e2m1_kernel(kIfcSelp)};
      for (int arm = 0; arm < 2; ++arm) {
        auto m = ptx::parse_module(texts[arm], "ifc.ptx");
        REQUIRE(m.ok());
        ptx::SymMemory mem;
        const auto o = mem.add_plain(std::vector<std::uint8_t>(64, 0xFF));
        auto in = mem.add_input(g, tensor);
        REQUIRE(in.ok());
        const std::vector<Arg> args = {Arg::buf(o), Arg::buf(*in)};
        auto r = ptx::trace_launch(*m, m->kernels.at(0), sym_config({1}, {32}), args, mem, g, arm);
        REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
        for (unsigned l = 0; l < 16; ++l) outs[arm].push_back(*mem.element(g, o, 2 * l, 2));
      }
      std::vector<NodeId> roots = outs[0];
      roots.insert(roots.end(), outs[1].begin(), outs[1].end());
      auto after = g.apply_lemmas(roots);
      REQUIRE_MESSAGE(after.ok(), (after.ok() ? std::string() : after.error().message));
      for (unsigned l = 0; l < 16; ++l) {
        const NodeId a = (*after)[l], b = (*after)[16 + l];
        if (!wrong) {
          CHECK(a == b);
          continue;
        }
        REQUIRE(a != b);
        const auto d = g.first_difference(a, b);
        REQUIRE(d.counterexample.has_value());
        CHECK(*d.counterexample == std::vector<std::uint64_t>{8});
        CHECK(d.result_a == 0x7C01);
        CHECK(d.result_b == 0x7E00);
      }
    }
  }

  TEST_CASE("if-conversion: guarded ALU instructions under a data guard, a hammock writing its own predicate") {
    // @p add, @!p setp with two destinations, @p mul.wide, a division guarded against zero (the
    // untaken division by zero is never evaluated: lazy selp), and a hammock that negates the
    // branch's own predicate register inside it.
    const std::string body =
        "\tld.global.u8 %h1, [%rd2];\n\tmov.b16 %h2, 100;\n\tsetp.gt.u16 %p1, %h1, 200;\n"
        "\t@%p1 add.u16 %h2, %h1, 3;\n\t@!%p1 setp.eq.u16 %p2|%p3, %h1, 7;\n"
        "\tselp.u16 %h3, 1, 0, %p2;\n\tselp.u16 %h4, 1, 0, %p3;\n\t@%p1 mul.wide.u16 %r3, %h1, %h1;\n"
        "\tsetp.ne.u16 %p4, %h1, 0;\n\tmov.b16 %h5, 9;\n\t@%p4 div.u16 %h5, 1000, %h1;\n"
        "\tsetp.lt.u16 %p5, %h1, 50;\n\tmov.b16 %h6, 0;\n\t@%p5 bra $L__h;\n\tnot.pred %p5, %p5;\n"
        "\tadd.u16 %h6, %h1, 1;\n\tselp.u16 %h6, %h6, 77, %p5;\n$L__h:\n"
        "\tst.global.u16 [%rd1], %h2;\n\tst.global.u16 [%rd1+2], %h3;\n\tst.global.u16 [%rd1+4], %h4;\n"
        "\tst.global.u32 [%rd1+8], %r3;\n\tst.global.u16 [%rd1+12], %h5;\n\tst.global.u16 [%rd1+14], %h6;\n";
    const std::string text = sym_kernel(body);
    SymOne t;
    auto r = sym_trace_one(t, text, 1, 8, 16);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message));
    const unsigned offsets[6] = {0, 2, 4, 8, 12, 14}, sizes[6] = {2, 2, 2, 4, 2, 2};
    std::vector<NodeId> outs;
    for (int i = 0; i < 6; ++i) outs.push_back(*t.mem.element(t.g, t.out, offsets[i], sizes[i]));
    CHECK(t.g.node(outs[0]).kind == NodeKind::kInst);
    CHECK(t.g.node(outs[0]).key.op == ptx::Op::kSelp);
    CHECK(t.g.origin(outs[0], 0) == static_cast<std::uint32_t>(sym_line_of(text, "@%p1 add.u16")));
    const std::uint64_t leaf = t.g.tensors()[t.tensor].first_leaf;
    for (unsigned x = 0; x < 256; ++x) {
      const auto want = sym_run_one(text, {static_cast<std::uint8_t>(x)}, 16);
      for (int i = 0; i < 6; ++i) {
        const auto v = t.g.evaluate(outs[static_cast<std::size_t>(i)], {{leaf, x}});
        REQUIRE_MESSAGE(v.ok(), (v.ok() ? std::string() : v.error().message));
        std::uint64_t w = 0;
        for (unsigned b = 0; b < sizes[i]; ++b) w |= std::uint64_t{want[offsets[i] + b]} << (8 * b);
        CHECK_MESSAGE(*v == w, fmt::format("x {} output {}", x, i));
      }
    }
    // The lemma pass enumerates x = 0 too: the division's untaken side does not make it fail.
    auto after = t.g.apply_lemmas(outs);
    REQUIRE_MESSAGE(after.ok(), (after.ok() ? std::string() : after.error().message));
    for (const NodeId n : *after) CHECK(t.g.node(n).kind == NodeKind::kTable);
    // A division by zero that the selp chooses is still an error.
    const std::string chosen = sym_kernel(
        "\tld.global.u8 %h1, [%rd2];\n\tsetp.eq.u16 %p4, %h1, 0;\n\tmov.b16 %h5, 9;\n"
        "\t@%p4 div.u16 %h5, 1000, %h1;\n\tst.global.u16 [%rd1], %h5;\n");
    SymOne c;
    REQUIRE(sym_trace_one(c, chosen, 1, 8, 2).ok());
    const NodeId y = *c.mem.element(c.g, c.out, 0, 2);
    const std::uint64_t cl = c.g.tensors()[c.tensor].first_leaf;
    CHECK(c.g.evaluate(y, {{cl, 5}}).ok());
    const auto bad = c.g.evaluate(y, {{cl, 0}});
    REQUIRE(!bad.ok());
    CHECK_MESSAGE(bad.error().message.find("division by zero") != std::string::npos, bad.error().message);
    const auto lemma = c.g.apply_lemmas({y});
    REQUIRE(!lemma.ok());
    CHECK_MESSAGE(lemma.error().message.find("undefined at") != std::string::npos, lemma.error().message);
  }

  TEST_CASE("if-conversion refusals: a store, a loop, a load in a diamond, a guarded store, an exit") {
    struct Refusal {
      const char* what;
      std::string body;
      const char* line_of;
      const char* says;
    };
    const std::vector<Refusal> cases = {
        {"branch around a store",
         "\tld.global.u32 %r1, [%rd2];\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra $L__skip;\n"
         "\tst.global.u32 [%rd1], %r1;\n$L__skip:",
         "@%p1 bra", "skips st at line"},
        {"backward branch (a data-dependent loop)",
         "\tld.global.u32 %r1, [%rd2];\n\tand.b32 %r2, %r1, 3;\n\tmov.u32 %r3, 0;\n$L__loop:\n"
         "\tadd.u32 %r3, %r3, 1;\n\tsetp.lt.u32 %p1, %r3, %r2;\n\t@%p1 bra $L__loop;\n\tst.global.u32 [%rd1], %r3;",
         "@%p1 bra", "a backward branch"},
        {"diamond whose block loads",
         "\tld.global.u32 %r1, [%rd2];\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra $L__b;\n\tmov.u32 %r2, 1;\n"
         "\tbra.uni $L__end;\n$L__b:\n\tld.global.u32 %r2, [%rd2+4];\n$L__end:\n\tst.global.u32 [%rd1], %r2;",
         "@%p1 bra", "skips ld at line"},
        {"guarded store", "\tld.global.u32 %r1, [%rd2];\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 st.global.u32 [%rd1], %r1;",
         "@%p1 st", "a guarded st"},
        {"guarded exit",
         "\tld.global.u32 %r1, [%rd2];\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 ret;\n\tst.global.u32 [%rd1], %r1;",
         "@%p1 ret", "a guarded exit"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.what);
      const std::string text = sym_kernel(c.body);
      SymOne t;
      auto r = sym_trace_one(t, text, 8, 32, 32);
      REQUIRE(!r.ok());
      const std::string& msg = r.error().message;
      CHECK_MESSAGE(msg.find(fmt::format("sym.ptx:{}:", sym_line_of(text, c.line_of))) == 0, msg);
      CHECK_MESSAGE(msg.find("not provable by tracing") != std::string::npos, msg);
      CHECK_MESSAGE(msg.find(c.says) != std::string::npos, msg);
      sym_run_one(text, std::vector<std::uint8_t>(32, 1), 32);  // concretely it runs
    }
  }
}
