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

}  // namespace bitproof::op
