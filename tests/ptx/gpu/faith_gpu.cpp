// Runs faith.ptx's kernels on the GPU through the driver API and writes their results to argv[2],
// little-endian: faith's 8192 x 24 words, then faith_bits' 8192 x 32 words (the kernels of
// faith_inputs.hpp's kFaithKernels, in order): the hardware side of the faithfulness check.
//   g++ -O2 -I/usr/local/cuda/include faith_gpu.cpp -lcuda -o faith_gpu && ./faith_gpu faith.ptx out.bin
#include <cstdio>
#include <fstream>
#include <string>

#include "faith_inputs.hpp"
#include "gpu_host.hpp"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  CUdevice dev;
  CUmodule mod;
  if (load_ptx(argv[1], &dev, &mod) != CUDA_SUCCESS) return 1;
  const auto in = faith_inputs();
  std::string file;
  for (const FaithKernel& k : kFaithKernels) {
    if (run_recorder(mod, k.name, in, k.words, file) != CUDA_SUCCESS) return 1;
  }
  std::ofstream(argv[2], std::ios::binary).write(file.data(), static_cast<std::streamsize>(file.size()));
  std::printf("faith: %zu threads x %zu kernels written to %s\n", in.size() / 3, std::size(kFaithKernels), argv[2]);
  return 0;
}
