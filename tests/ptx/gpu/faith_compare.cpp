// The executor side of the faithfulness check: runs faith.ptx in the executor on
// faith_inputs() and compares every word with a GPU's results (faith_gpu.cpp's file, or
// the recording tests/ptx/data/faith_sm90.bin, which ctest ptx.faith_sm90 compares with).
//
//   faith_compare FAITH.PTX GPU.BIN            exit 0: every word equal; 1: differences (the
//                                              first 40 printed, then a count per word); 2: bad input
//   faith_compare --control FAITH.PTX GPU.BIN  the negative control: the recording with one word
//                                              changed must be reported (exit 0 when it is)
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "faith_inputs.hpp"
#include "ptx/ptx.hpp"

namespace {

using namespace bitproof::ptx;

constexpr int kWords = 24;  // results a thread writes (faith.ptx's stores, in order)
constexpr const char* kWordNames[kWords] = {"add.rn.f32",
                                            "sub.rn.f32",
                                            "mul.rn.f32",
                                            "fma.rn.f32",
                                            "fma.rz.f32",
                                            "add.rn.ftz.f32",
                                            "mul.rn.ftz.f32",
                                            "fma.rn.ftz.sat.f32",
                                            "min.f32",
                                            "max.f32",
                                            "abs.f32",
                                            "neg.f32",
                                            "cvt.rn|rz.f16.f32",
                                            "add.rn.f16|mul.rn.ftz.f16",
                                            "fma.rn.f16|min.f16",
                                            "max.f16|neg.f16",
                                            "fma.rn.sat.f16|mul.rn.f16",
                                            "cvt.rzi.s32.f32",
                                            "cvt.rni.s32.f32",
                                            "fma.rn.f16x2",
                                            "cvt.f32.f16",
                                            "cvt.rn.f32.s32",
                                            "setp lt|geu|ne.ftz",
                                            "setp (again)"};

std::string read_all(const char* path, std::ios::openmode mode = std::ios::in) {
  std::ifstream f(path, mode);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The executor's words for every thread of faith.ptx, or "" after printing why not.
std::string executor_words(const char* ptx_path, const std::vector<std::uint32_t>& in) {
  auto m = parse_module(read_all(ptx_path), "faith.ptx");
  if (!m) {
    std::printf("%s\n", m.error().message.c_str());
    return "";
  }
  const auto n = static_cast<unsigned>(in.size() / 3);
  Memory mem;
  const auto out = mem.add(std::vector<std::uint8_t>(std::size_t{n} * kWords * 4));
  std::vector<std::uint8_t> in_bytes(in.size() * 4);
  std::memcpy(in_bytes.data(), in.data(), in_bytes.size());
  const auto in_buffer = mem.add(in_bytes);
  const std::vector<Arg> args = {Arg::buf(out), Arg::buf(in_buffer), Arg::u32(n)};
  LaunchConfig config;
  config.grid = {(n + 127) / 128};
  config.block = {128};
  if (auto r = launch(*m, m->kernels[0], config, args, mem); !r) {
    std::printf("%s\n", r.error().message.c_str());
    return "";
  }
  const auto& bytes = mem.bytes(out);
  return {bytes.begin(), bytes.end()};
}

// Differences between the executor's and the GPU's words, printed; returns their count.
int differences(const std::string& exec, const std::string& gpu, const std::vector<std::uint32_t>& in) {
  std::array<int, kWords> per_word{};
  int shown = 0, total = 0;
  for (std::size_t t = 0; t < in.size() / 3; ++t) {
    for (int w = 0; w < kWords; ++w) {
      std::uint32_t a, b;
      std::memcpy(&a, &exec[(t * kWords + w) * 4], 4);
      std::memcpy(&b, &gpu[(t * kWords + w) * 4], 4);
      if (a == b) continue;
      ++per_word[w];
      ++total;
      if (shown++ < 40) {
        std::printf("thread %zu word %d (%s): in %08x %08x %08x executor %08x gpu %08x\n", t, w, kWordNames[w],
                    in[3 * t], in[3 * t + 1], in[3 * t + 2], a, b);
      }
    }
  }
  for (int w = 0; w < kWords; ++w) {
    if (per_word[w] != 0) std::printf("word %d (%s): %d differ\n", w, kWordNames[w], per_word[w]);
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  const bool control = argc == 4 && std::strcmp(argv[1], "--control") == 0;
  if (argc != 3 && !control) {
    std::printf("usage: faith_compare [--control] FAITH.PTX GPU.BIN\n");
    return 2;
  }
  const char* ptx_path = argv[control ? 2 : 1];
  const char* gpu_path = argv[control ? 3 : 2];
  const auto in = faith_inputs();
  const std::string exec = executor_words(ptx_path, in);
  if (exec.empty()) return 2;
  std::string gpu = read_all(gpu_path, std::ios::binary);
  if (gpu.size() != exec.size()) {
    std::printf("%s: %zu bytes, not the %zu of %zu threads x %d words\n", gpu_path, gpu.size(), exec.size(),
                in.size() / 3, kWords);
    return 2;
  }
  if (control) {
    gpu[11 * 4 + 3] ^= 0x80;  // thread 0's neg.f32 with its sign flipped
    const int found = differences(exec, gpu, in);
    std::printf("control: %s\n", found == 1 ? "the changed word was reported" : "NOT reported as the one difference");
    return found == 1 ? 0 : 1;
  }
  const int total = differences(exec, gpu, in);
  std::printf("%s: %zu threads x %d words, %d differ\n", gpu_path, in.size() / 3, kWords, total);
  return total == 0 ? 0 : 1;
}
