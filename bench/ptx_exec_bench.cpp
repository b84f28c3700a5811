// The PTX executor's speed (issue 47: >= 1e8 PTX instructions a second a core): the fused aux
// GEMV of tests/ptx/data/kernels.ptx (gemv_fused: one warp a row, 4 rows a block of 128) over
// N0 + N1 + N2 rows of K random f16 weights, one launch, on one core. Prints one JSON line:
// thread instructions (each instruction counted once per thread that ran it), warp
// instructions (one per issue to a warp), wall and CPU seconds, and their rates (the CPU-time rate
// is the one to read on a loaded machine). bench/ptx_exec.sh runs it.
//
//   bitproof_ptx_bench [N0 N1 N2 K]     (default 2048 512 64 4096, the shape)
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ptx/ptx.hpp"
#include "splitmix.hpp"

int main(int argc, char** argv) {
  using namespace bitproof;
  const auto arg = [&](int i, unsigned dflt) {
    return argc > i ? static_cast<unsigned>(std::strtoul(argv[i], nullptr, 10)) : dflt;
  };
  const unsigned n0 = arg(1, 2048), n1 = arg(2, 512), n2 = arg(3, 64), k = arg(4, 4096), rows = n0 + n1 + n2;
  std::ifstream in(BITPROOF_SOURCE_DIR "/tests/ptx/data/kernels.ptx", std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto m = ptx::parse_module(text, "kernels.ptx");
  if (!m) return fmt::print(stderr, "{}\n", m.error().message), 2;
  auto kernel = ptx::find_kernel(*m, "gemv_fused");
  if (!kernel) return fmt::print(stderr, "{}\n", kernel.error().message), 2;
  std::uint64_t seed = 1;
  const auto halves = [&](std::size_t n) {
    std::vector<std::uint8_t> b(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t r = splitmix64_next(seed);
      const auto h = static_cast<std::uint16_t>((r & 0x8000u) | ((5 + (r >> 20) % 11) << 10) | (r & 0x3FF));
      b[2 * i] = static_cast<std::uint8_t>(h), b[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
    }
    return b;
  };
  ptx::Memory mem;
  const auto x = mem.add(halves(k)), w = mem.add(halves(std::size_t{rows} * k));
  const auto y0 = mem.add(std::vector<std::uint8_t>(2 * n0)), y1 = mem.add(std::vector<std::uint8_t>(2 * n1)),
             y2 = mem.add(std::vector<std::uint8_t>(2 * n2));
  const std::vector<ptx::Arg> args = {ptx::Arg::buf(x),  ptx::Arg::buf(w),  ptx::Arg::buf(y0),
                                      ptx::Arg::buf(y1), ptx::Arg::buf(y2), ptx::Arg::u32(n0),
                                      ptx::Arg::u32(n1), ptx::Arg::u32(n2), ptx::Arg::u32(k)};
  ptx::LaunchConfig cfg;
  cfg.grid = {(rows + 3) / 4}, cfg.block = {128};
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  auto r = ptx::launch(*m, **kernel, cfg, args, mem);
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!r) return fmt::print(stderr, "{}\n", r.error().message), 2;
  fmt::print(
      "{{\"rows\": {}, \"k\": {}, \"thread_instructions\": {}, \"warp_instructions\": {}, \"seconds\": {:.4f}, "
      "\"cpu_seconds\": {:.4f}, "
      "\"thread_instructions_per_second\": {:.4g}, \"warp_instructions_per_second\": {:.4g}, "
      "\"thread_instructions_per_cpu_second\": {:.4g}}}\n",
      rows, k, r->thread_steps, r->warp_steps, s, cpu, static_cast<double>(r->thread_steps) / s,
      static_cast<double>(r->warp_steps) / s, static_cast<double>(r->thread_steps) / cpu);
  return 0;
}
