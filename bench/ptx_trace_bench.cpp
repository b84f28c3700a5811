// The symbolic trace of the fused aux GEMV pair at full size (issue 48's target: N = 2048 + 512 +
// 64 rows, K = 4096 traced, with the comparison, in < 60 s on 2 cores and < 4 GiB): the PTX of
// examples/fused-aux-gemv/gemv.cu (tests/ptx/data/fused_gemv.ptx, nvcc -ptx -arch=compute_90), the
// separate arm (three gemv_sep launches on one SymMemory) then the fused arm (one gemv_fused over
// the joined weight) traced into one sym::Graph, and every output element's nodes compared. Prints
// one JSON line: each arm's wall and CPU seconds, the graph's nodes after each arm, the elements
// whose nodes are equal, and the process's peak RSS (getrusage). Runs on one thread.
//
//   bitproof_ptx_trace_bench [N0 N1 N2 K SEP_BLOCK FUSED_BLOCK RESERVE]
//   (default 2048 512 64 4096 128 128 0; RESERVE: Graph::reserve(RESERVE) nodes before tracing,
//   which spares the node vector's last doubling: 34.0 M nodes at full size)
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ptx/graph.hpp"
#include "ptx/ptx.hpp"
#include "ptx/symbolic.hpp"

namespace {

using namespace bitproof;

struct Clock {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
  [[nodiscard]] double wall_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  }
  [[nodiscard]] double cpu_s() const { return static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC; }
};

ptx::sym::LeafTensor tensor(std::string name, std::uint64_t elements) {
  ptx::sym::LeafTensor t;
  t.name = std::move(name), t.elements = elements, t.element_bits = 16;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const auto arg = [&](int i, unsigned dflt) {
    return argc > i ? static_cast<unsigned>(std::strtoul(argv[i], nullptr, 10)) : dflt;
  };
  const unsigned rows[3] = {arg(1, 2048), arg(2, 512), arg(3, 64)}, k = arg(4, 4096);
  const unsigned sep_block = arg(5, 128), fused_block = arg(6, 128), reserve = arg(7, 0);
  std::ifstream in(BITPROOF_SOURCE_DIR "/tests/ptx/data/fused_gemv.ptx", std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto m = ptx::parse_module(text, "fused_gemv.ptx");
  if (!m) return fmt::print(stderr, "{}\n", m.error().message), 2;
  auto sep = ptx::find_kernel(*m, "gemv_sep");
  auto fused = ptx::find_kernel(*m, "gemv_fused");
  if (!sep || !fused) return fmt::print(stderr, "no gemv_sep/gemv_fused\n"), 2;
  const auto config = [](unsigned grid, unsigned block) {
    ptx::LaunchConfig c;
    c.grid = {grid}, c.block = {block};
    return c;
  };
  ptx::sym::Graph g;
  if (reserve > 0) g.reserve(reserve);
  const std::uint32_t x = g.add_tensor(tensor("x", k));
  std::uint32_t w[3];
  for (int i = 0; i < 3; ++i) w[i] = g.add_tensor(tensor(fmt::format("w{}", i), std::uint64_t{rows[i]} * k));
  std::vector<ptx::sym::NodeId> y[2];
  const auto read = [&](ptx::SymMemory& mem, const std::size_t* by, std::vector<ptx::sym::NodeId>& out) {
    for (int i = 0; i < 3; ++i) {
      for (unsigned r = 0; r < rows[i]; ++r) out.push_back(*mem.element(g, by[i], 2 * r, 2));
    }
  };
  const Clock c0;
  {
    ptx::SymMemory mem;
    const std::size_t bx = *mem.add_input(g, x);
    std::size_t by[3];
    for (int i = 0; i < 3; ++i) {
      const std::size_t bw = *mem.add_input(g, w[i]);
      by[i] = mem.add_plain(std::vector<std::uint8_t>(2 * rows[i], 0xFF));
      const std::vector<ptx::Arg> args = {ptx::Arg::buf(bx), ptx::Arg::buf(bw), ptx::Arg::buf(by[i]), ptx::Arg::u32(k)};
      auto r = ptx::trace_launch(*m, **sep, config(rows[i], sep_block), args, mem, g, 0);
      if (!r) return fmt::print(stderr, "{}\n", r.error().message), 2;
    }
    read(mem, by, y[0]);
  }
  const double sep_wall = c0.wall_s(), sep_cpu = c0.cpu_s();
  const std::size_t sep_nodes = g.size();
  const Clock c1;
  {
    ptx::SymMemory mem;
    const std::size_t bx = *mem.add_input(g, x);
    const std::size_t bw = *mem.add_joined(g, {w[0], w[1], w[2]});
    std::size_t by[3];
    for (int i = 0; i < 3; ++i) by[i] = mem.add_plain(std::vector<std::uint8_t>(2 * rows[i], 0xFF));
    const std::vector<ptx::Arg> args = {ptx::Arg::buf(bx),      ptx::Arg::buf(bw),    ptx::Arg::buf(by[0]),
                                        ptx::Arg::buf(by[1]),   ptx::Arg::buf(by[2]), ptx::Arg::u32(rows[0]),
                                        ptx::Arg::u32(rows[1]), ptx::Arg::u32(k)};
    auto r = ptx::trace_launch(*m, **fused, config(rows[0] + rows[1] + rows[2], fused_block), args, mem, g, 1);
    if (!r) return fmt::print(stderr, "{}\n", r.error().message), 2;
    read(mem, by, y[1]);
  }
  const double fused_wall = c1.wall_s(), fused_cpu = c1.cpu_s();
  std::size_t equal = 0;
  for (std::size_t e = 0; e < y[0].size(); ++e) equal += y[0][e] == y[1][e];
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print(
      "{{\"rows\": {}, \"k\": {}, \"blocks\": [{}, {}], \"separate_seconds\": {:.3f}, \"separate_cpu_seconds\": "
      "{:.3f}, "
      "\"fused_seconds\": {:.3f}, \"fused_cpu_seconds\": {:.3f}, \"nodes_after_separate\": {}, \"nodes\": {}, "
      "\"elements\": {}, \"equal_elements\": {}, \"max_rss_mib\": {:.1f}}}\n",
      rows[0] + rows[1] + rows[2], k, sep_block, fused_block, sep_wall, sep_cpu, fused_wall, fused_cpu, sep_nodes,
      g.size(), y[0].size(), equal, static_cast<double>(ru.ru_maxrss) / 1024.0);
  return equal == y[0].size() ? 0 : 1;
}
