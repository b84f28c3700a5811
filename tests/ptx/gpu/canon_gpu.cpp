// Runs canon.ptx on the GPU through the driver API and writes its words to argv[2],
// little-endian, thread after thread (kCanonWords words a thread over canon_inputs()): the
// hardware side of the canonical forms' check (tests/ptx/gpu/README.md).
//   g++ -O2 -I/usr/local/cuda/include canon_gpu.cpp -lcuda -o canon_gpu && ./canon_gpu canon.ptx out.bin
#include <cuda.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "canon_inputs.hpp"

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
  const auto in = canon_inputs();
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
  CHECK_CU(cuModuleGetFunction(&fn, mod, "canon"));
  CUdeviceptr din, dout;
  CHECK_CU(cuMemAlloc(&din, in.size() * 4));
  CHECK_CU(cuMemcpyHtoD(din, in.data(), in.size() * 4));
  const std::size_t bytes = std::size_t{n} * kCanonWords * 4;
  CHECK_CU(cuMemAlloc(&dout, bytes));
  CHECK_CU(cuMemsetD8(dout, 0xAB, bytes));
  void* args[] = {&dout, &din, const_cast<unsigned*>(&n)};
  CHECK_CU(cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  CHECK_CU(cuCtxSynchronize());
  std::string out(bytes, '\0');
  CHECK_CU(cuMemcpyDtoH(out.data(), dout, out.size()));
  int major = 0, minor = 0, driver = 0;
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  cuDriverGetVersion(&driver);
  std::ofstream(argv[2], std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
  std::printf("canon: %u threads x %u words written to %s (sm_%d%d, driver %d)\n", n, kCanonWords, argv[2], major,
              minor, driver);
  return 0;
}
