// What `bitproof time` times: the two arms of an A/B spec (the built-in
// operators or the user's kernel stages, src/operator/ab_spec.hpp: each arm's
// stages, its own weights and modules, the activations of case 0), or a timing
// spec of user CUDA kernels:
//
// {
//   "bitproof_time": 1,
//   "name": "k-loop",                         identifier
//   "title": "...", "source": "...",          optional prose
//   "fmad": true,                             NVRTC's --fmad (default true, as nvcc)
//   "include_dirs": ["include"],              optional, relative to the spec
//   "buffers": [                              each arm gets its own copy of every buffer
//     {"name": "x", "bytes": 67108864, "fill": "random", "seed": 7},    random bytes from splitmix64(seed)
//     {"name": "y", "bytes": 4096, "fill": "zero"}],
//   "arms": [                                 exactly two: A, then B
//     {"name": "once", "file": "k.cu", "kernel": "k_loop",      an extern "C" __global__ function
//      "grid": [132, 1, 1], "block": [256, 1, 1], "shared_bytes": 0,
//      "args": [{"buffer": "x"}, {"buffer": "y"}, {"u32": 1024}]},   buffer pointers and u32/i32/u64/f32 scalars
//     {"name": "twice", ...}]
// }
//
// Strict like every spec: unknown keys, wrong types, missing files, launch shapes
// past the CUDA limits, buffers never bound: "<file>: <field>: <what>", exit 2.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"

namespace bitproof::timing {

inline constexpr int kTimeSpecVersion = 1;
inline constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{16} << 30;

struct BufferSpec {
  std::string name;
  std::uint64_t bytes = 0;
  bool random = false;
  std::uint64_t seed = 0;
};

struct KernelArg {
  enum class Kind : std::uint8_t { kBuffer, kU32, kI32, kU64, kF32 };
  Kind kind = Kind::kBuffer;
  std::string buffer;       // kBuffer
  std::uint64_t bits = 0;   // the scalar's bytes, little-endian (f32: its binary32 bits)
};

struct KernelArm {
  std::string name;
  std::string file;         // as written
  std::string file_path;    // resolved against the spec's directory
  std::string kernel;
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared_bytes = 0;
  std::vector<KernelArg> args;
};

inline constexpr double kDefaultCompileTimeout = 120;  // seconds, as user::kDefaultCompileTimeout
inline constexpr double kDefaultWaitTimeout = 60;      // seconds

struct TimeSpec {
  std::string path;
  std::string name;
  std::string title;
  std::string source;
  bool fmad = true;
  std::vector<std::string> include_dirs;  // resolved
  std::vector<BufferSpec> buffers;
  std::array<KernelArm, 2> arms;
  std::optional<op::AbSpec> ab;           // set: the arms are this A/B spec's operator arms
  nlohmann::ordered_json json;            // the spec as recorded in reports (canonical)
  // Set by the command line, not the spec (bitproof time): each NVRTC compile
  // and link of a kernel file (--compile-timeout; user recipes' default), and
  // each wait for an arm's work on the device (--user-timeout): a kernel that
  // does not return by then ends the process with one line (exit 2).
  double compile_timeout_s = kDefaultCompileTimeout;
  double wait_timeout_s = kDefaultWaitTimeout;
  // Set by bitproof time for an A/B spec with kernel arms: its kernels built
  // (backend/kernel_modules.hpp), what each kernel arm loads into its own modules.
  std::vector<op::KernelModule> ab_modules;

  [[nodiscard]] std::array<std::string, 2> arm_names() const;
  [[nodiscard]] const BufferSpec* buffer(const std::string& name) const;
};

// A timing spec ("bitproof_time") or an A/B spec ("bitproof_ab"), told apart by that key.
[[nodiscard]] Expected<TimeSpec> parse_time_spec(const std::string& text, const std::string& path);
[[nodiscard]] Expected<TimeSpec> load_time_spec(const std::string& path);

}  // namespace bitproof::timing
