// Runs faith.ptx on the GPU through the driver API and writes the results (8192 x 24 words,
// little-endian) to argv[2]: the hardware side of the faithfulness check.
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
  CUfunction fn;
  CHECK_CU(cuModuleGetFunction(&fn, mod, "faith"));
  CUdeviceptr din, dout;
  CHECK_CU(cuMemAlloc(&din, in.size() * 4));
  CHECK_CU(cuMemAlloc(&dout, std::size_t{n} * 96));
  CHECK_CU(cuMemcpyHtoD(din, in.data(), in.size() * 4));
  void* args[] = {&dout, &din, const_cast<unsigned*>(&n)};
  CHECK_CU(cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  CHECK_CU(cuCtxSynchronize());
  std::string out(std::size_t{n} * 96, '\0');
  CHECK_CU(cuMemcpyDtoH(out.data(), dout, out.size()));
  std::ofstream(argv[2], std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
  std::printf("faith: %u threads written to %s\n", n, argv[2]);
  return 0;
}
