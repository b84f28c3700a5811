// DLPack (https://dmlc.github.io/dlpack/latest/): the structures of the unversioned exchange
// (a PyCapsule named "dltensor" holding a DLManagedTensor), which every producer still gives
// when `__dlpack__()` is called without max_version (PyTorch, NumPy >= 1.22, CuPy, JAX), and the
// versioned one ("dltensor_versioned", DLPack 1.0) where a producer gives that instead.
// Declared here, field for field as dlpack.h v0.6-v1.x lays them out (an ABI, unchanged since
// v0.6), because Debian's libdlpack-dev is not on the GPU machines this module is built on.
// ImportedTensor reads one tensor's pointer, device, dtype and shape; it never takes ownership
// (the capsule, kept alive beside the view, frees the producer's structure when collected).
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bitproof::python {

namespace py = pybind11;

namespace dlpack {
enum DeviceType : std::int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3 };
enum TypeCode : std::uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4 };
struct Device {
  std::int32_t device_type;
  std::int32_t device_id;
};
struct DataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};
// DLPack >= 1.0's capsule "dltensor_versioned" (a producer may give it though none was asked for).
struct ManagedTensorVersioned {
  std::uint32_t major, minor;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  std::uint64_t flags;  // bit 0: read-only
  Tensor dl_tensor;
};
static_assert(sizeof(Device) == 8 && sizeof(DataType) == 4);
static_assert(offsetof(ManagedTensorVersioned, dl_tensor) == 32);
static_assert(offsetof(Tensor, byte_offset) == 40 && sizeof(Tensor) == 48);
static_assert(offsetof(ManagedTensor, deleter) == 56);
}  // namespace dlpack

// One tensor seen through DLPack: where its bytes are, on which device, what they are.
struct ImportedTensor {
  py::object owner;    // the producer's object (the tensor)
  py::object capsule;  // kept alive while `address` is used
  std::uintptr_t address = 0;
  int device_type = 0;  // dlpack::kCPU or kCUDA
  int device_id = 0;
  std::uint8_t code = 0, bits = 0;
  std::vector<std::int64_t> shape;
  std::size_t bytes = 0;
};

// `object.__dlpack__()`, checked to be a C-contiguous tensor of `code`/`bits` (one lane) and
// shape (rows, cols) on the CPU or a CUDA device; else BadInput starting with `field`.
[[nodiscard]] ImportedTensor import_tensor(const py::object& object, const std::string& field, std::uint8_t code,
                                           std::uint8_t bits, std::int64_t rows, std::int64_t cols);

}  // namespace bitproof::python
