// Runs faith.ptx's kernels on the GPU through the driver API and writes their results to argv[2],
// little-endian: faith's 8192 x 24 words, then faith_bits' 8192 x 32 words (the kernels of
// faith_inputs.hpp's kFaithKernels, in order): the hardware side of the faithfulness check.
//   g++ -O2 -I/usr/local/cuda/include faith_gpu.cpp -lcuda -o faith_gpu && ./faith_gpu faith.ptx out.bin
#include <cuda.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "faith_inputs.hpp"

#define CHECK_CU(x)                                      \
  do {                                                   \
    CUresult e = (x);                                    \
    if (e != CUDA_SUCCESS) {                             \
      const char* s = nullptr;                           \
      cuGetErrorString(e, &s);                           \
      std::fprintf(stderr, "%s: %s\n", #x, s ? s : "?"); \
      return 1;                                          \
    }                                                    \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  std::ifstream f(argv[1], std::ios::binary);
  const std::string ptx{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  const auto in = faith_inputs();
  const unsigned n = static_cast<unsigned>(in.size() / 3);
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CHECK_CU(cuModuleLoadData(&mod, ptx.c_str()));
  CUdeviceptr din;
  CHECK_CU(cuMemAlloc(&din, in.size() * 4));
  CHECK_CU(cuMemcpyHtoD(din, in.data(), in.size() * 4));
  std::string file;
  for (const FaithKernel& k : kFaithKernels) {
    CUfunction fn;
    CHECK_CU(cuModuleGetFunction(&fn, mod, k.name));
    const std::size_t bytes = std::size_t{n} * k.words * 4;
    CUdeviceptr dout;
    CHECK_CU(cuMemAlloc(&dout, bytes));
    void* args[] = {&dout, &din, const_cast<unsigned*>(&n)};
    CHECK_CU(cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
    CHECK_CU(cuCtxSynchronize());
    std::string out(bytes, '\0');
    CHECK_CU(cuMemcpyDtoH(out.data(), dout, out.size()));
    CHECK_CU(cuMemFree(dout));
    file += out;
  }
  std::ofstream(argv[2], std::ios::binary).write(file.data(), static_cast<std::streamsize>(file.size()));
  std::printf("faith: %u threads x %zu kernels written to %s\n", n, std::size(kFaithKernels), argv[2]);
  return 0;
}
