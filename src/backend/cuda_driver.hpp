// The CUDA driver API, loaded at run time: libcuda.so.1 is opened with dlopen
// and every function resolved with cuGetProcAddress, so the bitproof binary
// starts (and its CPU backend runs) on machines with no NVIDIA driver at all.
// Every call goes through BP_CU, which turns a failure into an Error naming
// the file, the line, the call and the driver's error (exit 3).
#pragma once

#if defined(BITPROOF_HAVE_CUDA)

#include <cuda.h>
#include <cudaTypedefs.h>

#include <nlohmann/json.hpp>
#include <string>

#include "error.hpp"

namespace bitproof::cuda {

// Each function with the driver ABI version whose signature cuda.h declares
// (cudaTypedefs.h's PFN_<name>_v<version>). cuGetProcAddress is asked for
// exactly that version: asking for CUDA_VERSION instead returns the newest ABI,
// and for cuCtxSynchronize that is CUDA 13's cuCtxSynchronize_v2(CUcontext),
// which cuda.h's cuCtxSynchronize(void) would call with a garbage argument (it
// crashed under compute-sanitizer on an H200).
// A table of (function, version) entries, a few a line; clang-format would stagger them.
// clang-format off
#define BITPROOF_CUDA_FUNCTIONS(X)                                                                         \
  X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuDeviceGetCount, 2000) X(cuDeviceGet, 2000)               \
  X(cuDeviceGetName, 2000) X(cuDeviceGetAttribute, 2000) X(cuDeviceTotalMem, 3020)                         \
  X(cuDevicePrimaryCtxRetain, 7000) X(cuDevicePrimaryCtxRelease, 11000) X(cuCtxSetCurrent, 4000)           \
  X(cuCtxSynchronize, 2000) X(cuModuleLoadData, 2000) X(cuModuleUnload, 2000)                              \
  X(cuModuleGetFunction, 2000) X(cuModuleGetGlobal, 3020) X(cuMemAlloc, 3020) X(cuMemFree, 3020)           \
  X(cuMemcpyHtoD, 3020) X(cuMemcpyDtoH, 3020) X(cuMemsetD8, 3020) X(cuLaunchKernel, 4000)                  \
  X(cuEventCreate, 2000) X(cuEventRecord, 2000) X(cuEventSynchronize, 2000) X(cuEventElapsedTime, 2000)    \
  X(cuEventDestroy, 4000) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000)                                \
  X(cuStreamCreate, 2000) X(cuStreamDestroy, 4000) X(cuStreamSynchronize, 2000) X(cuStreamWaitEvent, 3020) \
  X(cuStreamBeginCapture, 10010) X(cuStreamEndCapture, 10000) X(cuGraphInstantiateWithFlags, 11040)        \
  X(cuGraphLaunch, 10000) X(cuGraphDestroy, 10000) X(cuGraphExecDestroy, 10000)                            \
  X(cuMemcpyHtoDAsync, 3020) X(cuMemcpyDtoHAsync, 3020) X(cuMemsetD8Async, 3020)                           \
  X(cuMemsetD32Async, 3020) X(cuMemHostAlloc, 2020) X(cuMemHostGetDevicePointer, 3020)                     \
  X(cuMemFreeHost, 2000) X(cuFuncSetAttribute, 9000) X(cuModuleLoadDataEx, 2010)                        \
  X(cuFuncGetParamInfo, 12040)
// clang-format on

struct Driver {
#define BITPROOF_CUDA_MEMBER(f, version) PFN_##f##_v##version f = nullptr;
  BITPROOF_CUDA_FUNCTIONS(BITPROOF_CUDA_MEMBER)
#undef BITPROOF_CUDA_MEMBER
};

// The process's driver table, loaded once; Error (exit 3) when there is none.
[[nodiscard]] Expected<const Driver*> driver();

// The first device of the machine with its primary context current, described.
struct DeviceContext {
  CUdevice device = 0;
  CUcontext context = nullptr;
  int major = 0;
  int minor = 0;
  std::string label;           // "cuda sm_90"
  nlohmann::ordered_json info;  // name, compute capability, multiprocessors, memory, driver and runtime versions
};
// Exit 3 when there is no device; `what` names the request in that message ("--backend cuda").
[[nodiscard]] Expected<DeviceContext> open_first_device(const Driver* drv, const std::string& what);
// Device `ordinal` (exit 2 when the machine has no such device; exit 3 when it has none).
[[nodiscard]] Expected<DeviceContext> open_device(const Driver* drv, const std::string& what, int ordinal);
// The CUDA devices of this machine (exit 3 when none).
[[nodiscard]] Expected<int> device_count(const Driver* drv, const std::string& what);

// "file:line: call: CUDA_ERROR_X (text)" as an Error with exit code 3.
[[nodiscard]] Error failure(const Driver& d, CUresult rc, const char* call, const char* file, int line);

}  // namespace bitproof::cuda

// Evaluates a driver call; on failure returns the Error from the enclosing
// function (which returns Expected<...> or Error). `drv` must be in scope.
#define BP_CU(call)                                                                  \
  do {                                                                               \
    const CUresult bp_cu_rc_ = (call);                                               \
    if (bp_cu_rc_ != CUDA_SUCCESS) {                                                 \
      return ::bitproof::cuda::failure(*drv, bp_cu_rc_, #call, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)

#endif
