// Kernel arms (issue 47): an A/B arm whose stages launch the user's own kernels, CUDA
// source compiled by NVRTC to PTX or PTX files as written, bound to the spec's tensors,
// outputs and scalars. Parsed and checked by ab_spec.cpp; built by
// backend/kernel_modules.hpp; run by the CPU PTX executor (kernel_cpu.hpp) and the GPU
// runner (backend/cuda_operator.cpp). Shared interface: /work/helpers/design47.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bitproof::op {

// Where an A/B spec's kernels come from: CUDA source compiled by NVRTC to PTX (extern "C" __global__),
// or PTX files as written. Paths resolved against the spec's directory.
struct KernelSources {
  std::vector<std::string> files, file_paths;  // CUDA C++: as written / resolved
  std::vector<std::string> ptx, ptx_paths;     // PTX modules: as written / resolved
  std::vector<std::string> include_dirs;       // resolved
  bool fmad = true;                            // NVRTC --fmad (nvcc's default)
  std::vector<std::string> include_dirs_written;  // include_dirs as written (reports round-trip them)
};

enum class TensorPart : std::uint8_t { kWhole, kCodes, kScales };  // mxfp4 inputs pass codes and scales apart

struct LaunchArg {
  enum class Kind : std::uint8_t { kTensor, kJoined, kOutput, kU32, kI32, kU64, kF32 };
  Kind kind = Kind::kTensor;
  std::vector<std::string> tensors;  // kTensor, kOutput: one name; kJoined: the inputs joined row-wise
  TensorPart part = TensorPart::kWhole;
  std::uint64_t bits = 0;  // scalars: their little-endian bytes (f32: binary32 bits)
};

struct KernelLaunch {
  std::string kernel;  // the entry's name, found in exactly one module
  std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1};
  unsigned shared_bytes = 0;  // dynamic shared memory
  std::vector<LaunchArg> args;
};

// One compiled module: what both backends run (the GPU loads this PTX; the CPU executor parses it),
// so `--backend all` compares the hardware and the executor on the same PTX.
struct KernelModule {
  std::string file;                  // the .cu or .ptx as written in the spec
  std::string ptx;                   // PTX text
  std::vector<std::string> options;  // NVRTC options used ("" for a .ptx file)
  std::vector<std::pair<std::string, std::string>> read_files;  // every file read (source, headers), SHA-256
};

// The element type of a tensor kernel stages write: outputs stay 16-bit, so ArmOutputs
// (name -> vector<uint16_t>) holds them unchanged.
enum class OutputType : std::uint8_t { kF16, kBf16 };

// A tensor kernel stages write, declared in the spec's "outputs":
// {"name": n, "dtype": "f16"|"bf16", "shape": [rows, cols]} (or [cols]: one row).
struct OutputDecl {
  std::string name;
  OutputType dtype = OutputType::kF16;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

// Launch limits checked when the spec is read (CUDA's limits for compute capability 9.0).
inline constexpr unsigned kMaxBlockThreads = 1024;
inline constexpr std::array<std::uint64_t, 3> kMaxBlockDims{1024, 1024, 64};
inline constexpr std::array<std::uint64_t, 3> kMaxGridDims{2147483647, 65535, 65535};
inline constexpr unsigned kMaxDynamicShared = 48 * 1024;  // without an opt-in attribute
inline constexpr std::size_t kMaxLaunchArgs = 64;
inline constexpr std::size_t kMaxKernelFiles = 64;

// The bytes a kernel parameter of `arg` takes: a pointer 8, u32/i32/f32 4, u64 8.
[[nodiscard]] unsigned launch_arg_bytes(const LaunchArg& arg);
// "pointer", "u32", "i32", "u64", "f32" (messages, reports).
[[nodiscard]] const char* launch_arg_kind_name(LaunchArg::Kind kind);

}  // namespace bitproof::op
