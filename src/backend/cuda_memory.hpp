// Device memory for callers above the backend that hold device pointers they did not
// allocate: the Python face's GPU arms (python/src/device.cpp), whose tensors are the user's
// framework's (torch) and reach bitproof as DLPack pointers of a device's primary context.
// Every call is synchronous (it returns when the copy or fill is done) and makes the
// device's primary context current first (the framework shares it). Errors are exit 3.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "error.hpp"

namespace bitproof {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual Expected<Ok> to_device(std::uintptr_t dst, const void* src, std::size_t bytes) = 0;
  virtual Expected<Ok> to_host(void* dst, std::uintptr_t src, std::size_t bytes) = 0;
  // Every byte of [dst, dst + bytes) set to `byte`.
  virtual Expected<Ok> fill(std::uintptr_t dst, std::uint8_t byte, std::size_t bytes) = 0;
  // Waits for all work of the context, every stream (the arm's launches on the framework's streams).
  virtual Expected<Ok> synchronize() = 0;
  // The device's name, compute capability, memory, driver (for reports).
  [[nodiscard]] virtual std::string description() const = 0;
};

// Device `ordinal`'s primary context; `what` names the request in errors ("bitproof.ab").
// Exit 3 when this build has no CUDA backend or the machine no such device.
[[nodiscard]] Expected<std::unique_ptr<DeviceMemory>> open_device_memory(int ordinal, const std::string& what);

}  // namespace bitproof
