#include "backend/cuda_memory.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include "backend/cuda_driver.hpp"

namespace bitproof {
namespace {

using cuda::Driver;

class CudaMemory final : public DeviceMemory {
 public:
  CudaMemory(const Driver* drv, cuda::DeviceContext dev) : drv_(drv), dev_(std::move(dev)) {}
  ~CudaMemory() override { drv_->cuDevicePrimaryCtxRelease(dev_.device); }

  Expected<Ok> to_device(std::uintptr_t dst, const void* src, std::size_t bytes) override {
    const Driver* drv = drv_;
    BP_CU(drv->cuCtxSetCurrent(dev_.context));
    BP_CU(drv->cuMemcpyHtoD(static_cast<CUdeviceptr>(dst), src, bytes));
    return Ok{};
  }
  Expected<Ok> to_host(void* dst, std::uintptr_t src, std::size_t bytes) override {
    const Driver* drv = drv_;
    BP_CU(drv->cuCtxSetCurrent(dev_.context));
    BP_CU(drv->cuMemcpyDtoH(dst, static_cast<CUdeviceptr>(src), bytes));
    return Ok{};
  }
  Expected<Ok> fill(std::uintptr_t dst, std::uint8_t byte, std::size_t bytes) override {
    const Driver* drv = drv_;
    BP_CU(drv->cuCtxSetCurrent(dev_.context));
    BP_CU(drv->cuMemsetD8(static_cast<CUdeviceptr>(dst), byte, bytes));
    BP_CU(drv->cuCtxSynchronize());  // cuMemsetD8 may return before the fill is done
    return Ok{};
  }
  Expected<Ok> synchronize() override {
    const Driver* drv = drv_;
    BP_CU(drv->cuCtxSetCurrent(dev_.context));
    BP_CU(drv->cuCtxSynchronize());
    return Ok{};
  }
  [[nodiscard]] std::string description() const override { return dev_.info.dump(); }

 private:
  const Driver* drv_;
  cuda::DeviceContext dev_;
};

}  // namespace

Expected<std::unique_ptr<DeviceMemory>> open_device_memory(int ordinal, const std::string& what) {
  auto drv = cuda::driver();
  if (!drv) return drv.error();
  auto dev = cuda::open_device(*drv, what, ordinal);
  if (!dev) return dev.error();
  return std::unique_ptr<DeviceMemory>(std::make_unique<CudaMemory>(*drv, std::move(*dev)));
}

}  // namespace bitproof

#else

namespace bitproof {

Expected<std::unique_ptr<DeviceMemory>> open_device_memory(int, const std::string& what) {
  return Error{what + ": this bitproof was built without the CUDA backend (device=\"cuda\" needs it)", kExitNoBackend};
}

}  // namespace bitproof

#endif
