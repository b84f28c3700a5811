// The node table's speed and size (src/ptx/graph.hpp; issue 48's yardstick: the operator trace
// interns the fused GEMV template's 33.6 M nodes in 0.77 s). Builds a GEMV's graph as the
// symbolic executor would: out[n] = fma chain over k of f32(x[k]) * f32(w[n][k]), every f32 an
// f16 converted (cvt.f32.f16), then re-interns every node once more (all hits), and reports
// nodes, intern calls a second, bytes a node and the peak resident set.
//   cmake --build build --target bitproof_ptx_graph_bench && build/bitproof_ptx_graph_bench [N K [ROWS K2]]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "ptx/graph.hpp"

using namespace bitproof::ptx;
using namespace bitproof::ptx::sym;

namespace {

Inst make(Op op, Type type, Type src, Rnd rnd, int nsrc) {
  Inst in;
  in.op = op, in.type = type, in.src_type = src, in.rnd = rnd, in.nsrc = static_cast<std::uint8_t>(nsrc), in.ndst = 1;
  return in;
}

// CPU seconds of this process (the machine may be shared: wall time would measure the others).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// Two arms of an MXFP4 GEMV (ordinary and folded dequant, test_ptx_graph.cpp's forms) over
// rows x k weights, then apply_lemmas on both arms' roots: the pattern cache's speed.
void lemma_bench(std::uint64_t rows, std::uint64_t k) {
  const Type f32{Kind::kFloat, 32}, f16{Kind::kFloat, 16}, u32{Kind::kUnsigned, 32}, b32{Kind::kBits, 32};
  const Type s32{Kind::kSigned, 32}, u16{Kind::kUnsigned, 16}, u8{Kind::kUnsigned, 8};
  const Inst cvt8 = make(Op::kCvt, u32, u8, Rnd::kNone, 1), cvt16 = make(Op::kCvt, u16, u32, Rnd::kNone, 1);
  const Inst shr = make(Op::kShr, u32, {}, Rnd::kNone, 2), shl = make(Op::kShl, b32, {}, Rnd::kNone, 2);
  const Inst band = make(Op::kAnd, b32, {}, Rnd::kNone, 2), bor = make(Op::kOr, b32, {}, Rnd::kNone, 2);
  const Inst add = make(Op::kAdd, s32, {}, Rnd::kNone, 2), mx = make(Op::kMax, s32, {}, Rnd::kNone, 2);
  const Inst mn = make(Op::kMin, s32, {}, Rnd::kNone, 2), hmul = make(Op::kMul, f16, {}, Rnd::kRn, 2);
  const Inst h2f = make(Op::kCvt, f32, f16, Rnd::kNone, 1), fma = make(Op::kFma, f32, {}, Rnd::kRn, 3);
  Graph g;
  const auto codes = g.add_tensor({"w.q", rows * k / 2, 8, {}, 0});
  std::vector<std::uint64_t> admitted;
  for (std::uint64_t v = 113; v <= 128; ++v) admitted.push_back(v);
  const auto scales = g.add_tensor({"w.scales", rows * k / 32, 8, admitted, 0});
  const auto xs = g.add_tensor({"x", k, 16, {}, 0});
  const auto c = [&](std::uint64_t v) { return g.constant(v, 32); };
  const auto op = [&](const Inst& in, std::vector<NodeId> ops) {
    NodeId out = kNoNode;
    g.inst(in, ops.data(), &out);
    return out;
  };
  double t0 = cpu_seconds();
  std::vector<NodeId> roots;
  for (int folded = 0; folded < 2; ++folded) {
    for (std::uint64_t r = 0; r < rows; ++r) {
      NodeId acc = g.constant(0, 32);
      for (std::uint64_t i = 0; i < k; ++i) {
        const std::uint64_t e = r * k + i;
        NodeId v = op(cvt8, {g.leaf(codes, e / 2)});
        if (e % 2 == 1) v = op(shr, {v, c(4)});
        const NodeId nib = op(band, {v, c(0xF)});
        const NodeId raw =
            op(cvt16,
               {op(bor, {op(band, {op(shl, {nib, c(12)}), c(0x8000)}), op(band, {op(shl, {nib, c(9)}), c(0x0E00)})})});
        NodeId a = op(add, {op(cvt8, {g.leaf(scales, e / 32)}), c(0xFFFFFF90)});
        a = op(mn, {op(mx, {a, c(0)}), c(30)});
        NodeId w;
        if (folded == 0) {
          w = op(hmul, {op(hmul, {raw, g.constant(0x7400, 16)}), op(cvt16, {op(shl, {a, c(10)})})});
        } else {
          w = op(hmul, {raw, op(cvt16, {op(shl, {op(add, {a, c(14)}), c(10)})})});
        }
        acc = op(fma, {op(h2f, {w}), op(h2f, {g.leaf(xs, i)}), acc});
      }
      roots.push_back(acc);
    }
  }
  const double built = cpu_seconds() - t0;
  const std::size_t nodes = g.size();
  t0 = cpu_seconds();
  auto after = g.apply_lemmas(roots);
  const double lemmas = cpu_seconds() - t0;
  std::size_t equal = 0;
  for (std::uint64_t r = 0; after.ok() && r < rows; ++r) equal += (*after)[r] == (*after)[rows + r];
  std::printf(
      "lemmas: %llu x %llu MXFP4 weights, two arms: %zu nodes built in %.2f CPU s; apply_lemmas %.2f CPU s "
      "(%zu lemmas, %zu nodes after); %zu of %llu rows proven equal; peak RSS %ld MiB\n",
      static_cast<unsigned long long>(rows), static_cast<unsigned long long>(k), nodes, built, lemmas,
      g.lemmas().size(), g.size(), equal, static_cast<unsigned long long>(rows), peak_rss_mib());
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 2 ? std::strtoull(argv[1], nullptr, 10) : 2624;
  const std::uint64_t k = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2048;
  const Type f32{Kind::kFloat, 32}, f16{Kind::kFloat, 16};
  const Inst cvt = make(Op::kCvt, f32, f16, Rnd::kNone, 1);
  const Inst fma = make(Op::kFma, f32, {}, Rnd::kRn, 3);
  Graph g;
  const auto x = g.add_tensor({"x", k, 16, {}, 0});
  const auto w = g.add_tensor({"w", n * k, 16, {}, 0});
  const double t0 = cpu_seconds();
  std::uint64_t calls = 0;
  std::vector<NodeId> roots;
  for (int pass = 0; pass < 2; ++pass) {
    const double tp = cpu_seconds();
    const std::size_t before = g.size();
    for (std::uint64_t row = 0; row < n; ++row) {
      NodeId acc = g.constant(0, 32);
      for (std::uint64_t i = 0; i < k; ++i) {
        NodeId ops[3] = {g.leaf(x, i), kNoNode, kNoNode}, a = kNoNode, b = kNoNode;
        g.inst(cvt, ops, &a);
        ops[0] = g.leaf(w, row * k + i);
        g.inst(cvt, ops, &b);
        ops[0] = a, ops[1] = b, ops[2] = acc;
        g.inst(fma, ops, &acc);
        calls += 5;  // leaf, cvt, leaf, cvt, fma (and the constant once a row, not counted)
      }
      if (pass == 0) roots.push_back(acc);
    }
    const double s = cpu_seconds() - tp;
    std::printf("pass %d (%s): %zu new nodes, %.2f CPU s, %.1f M intern calls/s, %.1f M new nodes/s\n", pass,
                pass == 0 ? "building" : "all hits", g.size() - before, s, 5.0 * static_cast<double>(n * k) / s / 1e6,
                static_cast<double>(g.size() - before) / s / 1e6);
  }
  std::printf("N = %llu, K = %llu: %zu nodes in %.2f CPU s; sizeof(Node) = %zu; peak RSS %ld MiB (%.1f bytes a node)\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(k), g.size(), cpu_seconds() - t0,
              sizeof(Node), peak_rss_mib(), peak_rss_mib() * 1048576.0 / static_cast<double>(g.size()));
  (void)calls;
  lemma_bench(argc > 4 ? std::strtoull(argv[3], nullptr, 10) : 64,
              argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 4096);
  return 0;
}
