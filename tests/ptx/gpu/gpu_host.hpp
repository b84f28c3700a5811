// What the recorders of tests/ptx/gpu share (faith_gpu.cpp, canon_gpu.cpp): the driver-call check,
// and a kernel of a PTX file run over one input array, one thread per 3 input words, 128 threads a
// block, writing `words` words a thread. Standalone (g++ ... -lcuda), no bitproof code.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define CHECK_CU(x)                                      \
  do {                                                   \
    CUresult e = (x);                                    \
    if (e != CUDA_SUCCESS) {                             \
      const char* s = nullptr;                           \
      cuGetErrorString(e, &s);                           \
      std::fprintf(stderr, "%s: %s\n", #x, s ? s : "?"); \
      return e;                                          \
    }                                                    \
  } while (0)

// Loads the PTX at `path` into device 0's primary context.
inline CUresult load_ptx(const char* path, CUdevice* dev, CUmodule* mod) {
  std::ifstream f(path, std::ios::binary);
  const std::string ptx{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  CHECK_CU(cuInit(0));
  CHECK_CU(cuDeviceGet(dev, 0));
  CUcontext ctx;
  CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, *dev));
  CHECK_CU(cuCtxSetCurrent(ctx));
  CHECK_CU(cuModuleLoadData(mod, ptx.c_str()));
  return CUDA_SUCCESS;
}

// Runs kernel `name(out, in, n)` over n = in.size() / 3 threads and appends its n * words words
// (little-endian bytes, thread after thread) to `file`. The output starts as 0xAB bytes.
inline CUresult run_recorder(CUmodule mod, const char* name, const std::vector<std::uint32_t>& in, unsigned words,
                             std::string& file) {
  const unsigned n = static_cast<unsigned>(in.size() / 3);
  CUfunction fn;
  CHECK_CU(cuModuleGetFunction(&fn, mod, name));
  CUdeviceptr din, dout;
  CHECK_CU(cuMemAlloc(&din, in.size() * 4));
  CHECK_CU(cuMemcpyHtoD(din, in.data(), in.size() * 4));
  const std::size_t bytes = std::size_t{n} * words * 4;
  CHECK_CU(cuMemAlloc(&dout, bytes));
  CHECK_CU(cuMemsetD8(dout, 0xAB, bytes));
  void* args[] = {&dout, &din, const_cast<unsigned*>(&n)};
  CHECK_CU(cuLaunchKernel(fn, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  CHECK_CU(cuCtxSynchronize());
  std::string out(bytes, '\0');
  CHECK_CU(cuMemcpyDtoH(out.data(), dout, out.size()));
  CHECK_CU(cuMemFree(dout));
  CHECK_CU(cuMemFree(din));
  file += out;
  return CUDA_SUCCESS;
}
