// The node table's speed and size (src/ptx/graph.hpp; issue 48's yardstick: the operator trace
// interns the fused GEMV template's 33.6 M nodes in 0.77 s). Builds a GEMV's graph as the
// symbolic executor would: out[n] = fma chain over k of f32(x[k]) * f32(w[n][k]), every f32 an
// f16 converted (cvt.f32.f16), then re-interns every node once more (all hits), and reports
// nodes, intern calls a second, bytes a node and the peak resident set.
//   cmake --build build --target bitproof_ptx_graph_bench && build/bitproof_ptx_graph_bench [N K]
#include <sys/resource.h>

#include <ctime>
#include <cstdio>
#include <cstdlib>

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
  return 0;
}
