// The executor side of the faithfulness check: runs faith.ptx's kernels (kFaithKernels) in the
// executor on faith_inputs() and compares every word with a GPU's results (faith_gpu.cpp's file, or
// the recording tests/ptx/data/faith_sm90.bin, which ctest ptx.faith_sm90 compares with). A
// recording that ends after a kernel's section (made before the later kernels existed) is compared
// as far as it goes: the missing kernels are named as skipped, not failed.
//
//   faith_compare FAITH.PTX GPU.BIN            exit 0: every recorded word equal; 1: differences (the
//                                              first 40 printed, then a count per word); 2: bad input
//   faith_compare --control FAITH.PTX GPU.BIN  the negative control: the recording with one word
//                                              changed must be reported (exit 0 when it is)
//   faith_compare --write FAITH.PTX OUT.BIN    writes the executor's words in the GPU file's layout
//                                              (to compare by hand, or to check the skip logic)
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "faith_inputs.hpp"
#include "ptx/ptx.hpp"

namespace {

using namespace bitproof::ptx;

// Each kernel's words, in the order its stores write them.
const std::vector<std::vector<const char*>> kWordNames = {
    {"add.rn.f32",
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
     "setp (again)"},
    {"prmt.b32",
     "prmt.b32.f4e",
     "prmt.b32.b4e",
     "prmt.b32.rc8",
     "prmt.b32.ecl",
     "prmt.b32.ecr",
     "prmt.b32.rc16",
     "bfe.u32",
     "bfe.s32",
     "bfi.b32",
     "popc.b32",
     "clz.b32",
     "brev.b32",
     "lop3.b32 0x96",
     "lop3.b32 0xE8",
     "lop3.b32 0x1B",
     "shf.l.wrap.b32",
     "shf.r.wrap.b32",
     "shf.l.clamp.b32",
     "shf.r.clamp.b32",
     "cvt.rn.f16x2.f32",
     "cvt.rz.f16x2.f32",
     "cvt.rn.bf16x2.f32",
     "cvt.f32.bf16",
     "popc.b64",
     "clz.b64",
     "brev.b64 (high)",
     "bfe.s64 (high)",
     "cvt.rni.sat.u8.f32",
     "cvt.rzi.sat.s8.f32",
     "cvt.rni.u16.f32",
     "cvt.rzi.sat.u32.f32"},
};

std::string read_all(const char* path, std::ios::openmode mode = std::ios::in) {
  std::ifstream f(path, mode);
  return {std::istreambuf_iterator<char>(f), {}};
}

// The executor's words of every kernel of faith.ptx, kernel after kernel (the GPU file's layout),
// or "" after printing why not.
std::string executor_words(const char* ptx_path, const std::vector<std::uint32_t>& in) {
  auto m = parse_module(read_all(ptx_path), "faith.ptx");
  if (!m) {
    std::printf("%s\n", m.error().message.c_str());
    return "";
  }
  const auto n = static_cast<unsigned>(in.size() / 3);
  std::vector<std::uint8_t> in_bytes(in.size() * 4);
  std::memcpy(in_bytes.data(), in.data(), in_bytes.size());
  std::string all;
  for (const FaithKernel& fk : kFaithKernels) {
    auto k = find_kernel(*m, fk.name);
    if (!k) {
      std::printf("%s\n", k.error().message.c_str());
      return "";
    }
    Memory mem;
    const auto out = mem.add(std::vector<std::uint8_t>(std::size_t{n} * fk.words * 4));
    const auto in_buffer = mem.add(in_bytes);
    const std::vector<Arg> args = {Arg::buf(out), Arg::buf(in_buffer), Arg::u32(n)};
    LaunchConfig config;
    config.grid = {(n + 127) / 128};
    config.block = {128};
    if (auto r = launch(*m, **k, config, args, mem); !r) {
      std::printf("%s\n", r.error().message.c_str());
      return "";
    }
    const auto& bytes = mem.bytes(out);
    all.append(bytes.begin(), bytes.end());
  }
  return all;
}

// Differences between the executor's and the GPU's words of kernel `ki` (its section starts at
// byte `at` of both), printed; returns their count. `shown` counts printed lines across kernels.
int differences(std::size_t ki, std::size_t at, const std::string& exec, const std::string& gpu,
                const std::vector<std::uint32_t>& in, int& shown) {
  const FaithKernel& fk = kFaithKernels[ki];
  std::vector<int> per_word(fk.words);
  int total = 0;
  for (std::size_t t = 0; t < in.size() / 3; ++t) {
    for (unsigned w = 0; w < fk.words; ++w) {
      std::uint32_t a, b;
      std::memcpy(&a, &exec[at + (t * fk.words + w) * 4], 4);
      std::memcpy(&b, &gpu[at + (t * fk.words + w) * 4], 4);
      if (a == b) continue;
      ++per_word[w];
      ++total;
      if (shown++ < 40) {
        std::printf("%s thread %zu word %u (%s): in %08x %08x %08x executor %08x gpu %08x\n", fk.name, t, w,
                    kWordNames[ki][w], in[3 * t], in[3 * t + 1], in[3 * t + 2], a, b);
      }
    }
  }
  for (unsigned w = 0; w < fk.words; ++w) {
    if (per_word[w] != 0) std::printf("%s word %u (%s): %d differ\n", fk.name, w, kWordNames[ki][w], per_word[w]);
  }
  return total;
}

// Compares every kernel section the recording has; prints what it skipped. -1: a size that ends
// inside a section (bad input).
int compare_all(const std::string& exec, const std::string& gpu, const std::vector<std::uint32_t>& in,
                const char* gpu_path) {
  const std::size_t n = in.size() / 3;
  std::size_t at = 0;
  int total = 0, shown = 0;
  for (std::size_t ki = 0; ki < std::size(kFaithKernels); ++ki) {
    const std::size_t bytes = n * kFaithKernels[ki].words * 4;
    if (at == gpu.size() && ki > 0) {
      std::printf(
          "%s: %s not recorded (the file ends after %zu kernel(s)): %zu threads x %u words skipped; "
          "record again on the GPU (tests/ptx/gpu/README.md)\n",
          gpu_path, kFaithKernels[ki].name, ki, n, kFaithKernels[ki].words);
      at += bytes;
      continue;
    }
    if (gpu.size() < at + bytes) return -1;
    const int d = differences(ki, at, exec, gpu, in, shown);
    std::printf("%s: %s: %zu threads x %u words, %d differ\n", gpu_path, kFaithKernels[ki].name, n,
                kFaithKernels[ki].words, d);
    total += d;
    at += bytes;
  }
  return gpu.size() <= at ? total : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool control = argc == 4 && std::strcmp(argv[1], "--control") == 0;
  const bool write = argc == 4 && std::strcmp(argv[1], "--write") == 0;
  if (argc != 3 && !control && !write) {
    std::printf("usage: faith_compare [--control|--write] FAITH.PTX GPU.BIN\n");
    return 2;
  }
  const char* ptx_path = argv[argc - 2];
  const char* gpu_path = argv[argc - 1];
  const auto in = faith_inputs();
  const std::string exec = executor_words(ptx_path, in);
  if (exec.empty()) return 2;
  if (write) {
    std::ofstream(gpu_path, std::ios::binary).write(exec.data(), static_cast<std::streamsize>(exec.size()));
    std::printf("%s: the executor's %zu bytes\n", gpu_path, exec.size());
    return 0;
  }
  std::string gpu = read_all(gpu_path, std::ios::binary);
  const auto bad_size = [&] {
    std::printf("%s: %zu bytes: not a whole number of faith.ptx's kernel sections (%zu threads; %zu bytes in all)\n",
                gpu_path, gpu.size(), in.size() / 3, exec.size());
    return 2;
  };
  if (control) {
    if (gpu.size() < 48) return bad_size();
    gpu[11 * 4 + 3] ^= 0x80;  // thread 0's neg.f32 with its sign flipped
    const int found = compare_all(exec, gpu, in, gpu_path);
    if (found < 0) return bad_size();
    std::printf("control: %s\n", found == 1 ? "the changed word was reported" : "NOT reported as the one difference");
    return found == 1 ? 0 : 1;
  }
  const int total = compare_all(exec, gpu, in, gpu_path);
  if (total < 0) return bad_size();
  std::printf("%s: %d words differ\n", gpu_path, total);
  return total == 0 ? 0 : 1;
}
