#include "backend/cuda_driver.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

namespace bitproof::cuda {
namespace {

Expected<const Driver*> load() {
  static Driver d;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return Error{"--backend cuda: no NVIDIA driver on this machine (libcuda.so.1 not found)", kExitNoBackend};
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get == nullptr) return Error{"--backend cuda: the NVIDIA driver is too old (no cuGetProcAddress_v2)", kExitNoBackend};
  // cuInit first, the rest after it: tools that hook the driver (compute-sanitizer)
  // install themselves during cuInit, the way the CUDA runtime sequences it.
  {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
    if (get("cuInit", &fn, 2000, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || fn == nullptr) {
      return Error{"--backend cuda: the NVIDIA driver lacks cuInit", kExitNoBackend};
    }
    reinterpret_cast<PFN_cuInit_v2000>(fn)(0);  // its result is checked again by the backend
  }
#define BITPROOF_CUDA_RESOLVE(f, version)                                                                      \
  {                                                                                                            \
    CUdriverProcAddressQueryResult status{};                                                                   \
    void* fn = nullptr;                                                                                        \
    if (get(#f, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || fn == nullptr) {        \
      return Error{fmt::format("--backend cuda: the NVIDIA driver lacks {} (ABI of CUDA {})", #f, version),     \
                   kExitNoBackend};                                                                            \
    }                                                                                                          \
    d.f = reinterpret_cast<decltype(d.f)>(fn);                                                                 \
  }
  BITPROOF_CUDA_FUNCTIONS(BITPROOF_CUDA_RESOLVE)
#undef BITPROOF_CUDA_RESOLVE
  return static_cast<const Driver*>(&d);
}

}  // namespace

Expected<const Driver*> driver() {
  static std::once_flag once;
  static Expected<const Driver*> loaded = Error{"unreachable"};
  std::call_once(once, [] { loaded = load(); });
  return loaded;
}

Expected<int> device_count(const Driver* drv, const std::string& what) {
  const CUresult rc = drv->cuInit(0);
  if (rc == CUDA_ERROR_NO_DEVICE) return Error{what + ": no CUDA device on this machine", kExitNoBackend};
  BP_CU(rc);
  int count = 0;
  BP_CU(drv->cuDeviceGetCount(&count));
  if (count == 0) return Error{what + ": no CUDA device on this machine", kExitNoBackend};
  return count;
}

Expected<DeviceContext> open_first_device(const Driver* drv, const std::string& what) {
  return open_device(drv, what, 0);
}

Expected<DeviceContext> open_device(const Driver* drv, const std::string& what, int ordinal) {
  DeviceContext c;
  auto count = device_count(drv, what);
  if (!count) return count.error();
  if (ordinal < 0 || ordinal >= *count) {
    return Error{fmt::format("{}: no CUDA device {} (this machine has {}: 0 to {})", what, ordinal, *count, *count - 1)};
  }
  BP_CU(drv->cuDeviceGet(&c.device, ordinal));
  BP_CU(drv->cuDevicePrimaryCtxRetain(&c.context, c.device));
  BP_CU(drv->cuCtxSetCurrent(c.context));
  char name[256] = {};
  BP_CU(drv->cuDeviceGetName(name, sizeof name - 1, c.device));
  int sms = 0, driver_version = 0;
  BP_CU(drv->cuDeviceGetAttribute(&c.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c.device));
  BP_CU(drv->cuDeviceGetAttribute(&c.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c.device));
  BP_CU(drv->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c.device));
  BP_CU(drv->cuDriverGetVersion(&driver_version));
  std::size_t memory = 0;
  BP_CU(drv->cuDeviceTotalMem(&memory, c.device));
  c.label = fmt::format("cuda sm_{}{}", c.major, c.minor);
  c.info = {{"name", std::string(name)},
            {"compute_capability", fmt::format("{}.{}", c.major, c.minor)},
            {"multiprocessors", sms},
            {"memory_bytes", memory},
            {"driver_version", fmt::format("{}.{}", driver_version / 1000, (driver_version % 1000) / 10)},
            {"runtime_version", fmt::format("{}.{} (driver API; the CUDA toolkit the host code was built with)",
                                            CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10)}};
  return c;
}

Error failure(const Driver& d, CUresult rc, const char* call, const char* file, int line) {
  const char* name = "CUDA_ERROR_?";
  const char* text = "unknown error";
  if (d.cuGetErrorName != nullptr) d.cuGetErrorName(rc, &name);
  if (d.cuGetErrorString != nullptr) d.cuGetErrorString(rc, &text);
  return Error{fmt::format("cuda backend: {}:{}: {}: {} ({})", file, line, call, name, text), kExitNoBackend};
}

}  // namespace bitproof::cuda

#endif
