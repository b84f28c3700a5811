// Runs canon.ptx on the GPU through the driver API and writes its words to argv[2],
// little-endian, thread after thread (kCanonWords words a thread over canon_inputs()): the
// hardware side of the canonical forms' check (tests/ptx/gpu/README.md).
//   g++ -O2 -I/usr/local/cuda/include canon_gpu.cpp -lcuda -o canon_gpu && ./canon_gpu canon.ptx out.bin
#include <cstdio>
#include <fstream>
#include <string>

#include "canon_inputs.hpp"
#include "gpu_host.hpp"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  CUdevice dev;
  CUmodule mod;
  std::string out;
  const auto in = canon_inputs();
  if (load_ptx(argv[1], &dev, &mod) != CUDA_SUCCESS || run_recorder(mod, "canon", in, kCanonWords, out) != CUDA_SUCCESS)
    return 1;
  int major = 0, minor = 0, driver = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cuDriverGetVersion(&driver);
  std::ofstream(argv[2], std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
  std::printf("canon: %zu threads x %u words written to %s (sm_%d%d, driver %d)\n", in.size() / 3, kCanonWords, argv[2],
              major, minor, driver);
  return 0;
}
