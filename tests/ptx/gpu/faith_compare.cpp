// Runs faith.ptx in the executor on faith_inputs() and compares every word with the GPU's
// results (faith_gpu.cpp's file): the executor side of the faithfulness check. Exit 0: every
// word equal; 1: a difference (the first 40 printed, then a count per word); 2: bad input.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "faith_inputs.hpp"
#include "ptx/ptx.hpp"
using namespace bitproof::ptx;
int main(int argc, char** argv) {
  std::ifstream f(argv[1]);
  std::string t{std::istreambuf_iterator<char>(f), {}};
  auto m = parse_module(t, "faith.ptx");
  if (!m) {
    printf("%s\n", m.error().message.c_str());
    return 2;
  }
  auto in = faith_inputs();
  unsigned n = in.size() / 3;
  Memory mem;
  auto bo = mem.add(std::vector<uint8_t>(n * 96));
  std::vector<uint8_t> ib(in.size() * 4);
  memcpy(ib.data(), in.data(), ib.size());
  auto bi = mem.add(ib);
  std::vector<Arg> args = {Arg::buf(bo), Arg::buf(bi), Arg::u32(n)};
  LaunchConfig c;
  c.grid = {(n + 127) / 128};
  c.block = {128};
  auto r = launch(*m, m->kernels[0], c, args, mem);
  if (!r) {
    printf("%s\n", r.error().message.c_str());
    return 2;
  }
  if (argc > 2) {
    int total = 0;
    std::ifstream g(argv[2], std::ios::binary);
    std::string gpu{std::istreambuf_iterator<char>(g), {}};
    if (gpu.size() != n * 96) {
      printf("gpu file size %zu\n", gpu.size());
      return 2;
    }
    int bad[24] = {};
    int shown = 0;
    for (unsigned i = 0; i < n; ++i)
      for (int w = 0; w < 24; ++w) {
        uint32_t a, b;
        memcpy(&a, &mem.bytes(bo)[i * 96 + w * 4], 4);
        memcpy(&b, &gpu[i * 96 + w * 4], 4);
        if (a != b) {
          bad[w]++;
          if (shown++ < 40)
            printf("t%u word %d: in %08x %08x %08x exec %08x gpu %08x\n", i, w, in[3 * i], in[3 * i + 1], in[3 * i + 2],
                   a, b);
        }
      }
    for (int w = 0; w < 24; ++w) printf("word %d: %d differ\n", w, bad[w]), total += bad[w];
    return total == 0 ? 0 : 1;
  } else
    printf("ok %lu\n", r->thread_steps);
}
