// The PTX executor on the CPU (issue 47; docs/ptx-executor.md): parse a PTX module as nvcc -ptx
// or NVRTC emit it, and run a kernel's launch bit-exactly (every block, warps of 32 in lockstep,
// bar.sync, shared memory, shuffles and votes, IEEE arithmetic through src/arith's soft model).
//
//   Expected<Module> m = parse_module(text, "fused.ptx");
//   Expected<const Kernel*> k = find_kernel(*m, "gemv_fused");
//   Memory mem;  auto x = mem.add(bytes);  ...
//   Expected<LaunchResult> r = launch(*m, **k, {grid, block}, args, mem);
//
// Contracts:
// - parse_module refuses, with "NAME:LINE: ..." (exit 2), text it cannot read and every
//   instruction the executor does not implement exactly (atom/red, mma/wgmma, tex, call, .rm/.rp
//   rounding, .approx forms other than module.hpp's Approx, ...): it never approximates. The
//   approximate forms it decodes (Op::kApprox) are refused where they run: launch stops there with
//   an Error ("...: ex2.approx.f32: approximate, runs on the GPU only"); one on a path not taken
//   costs nothing.
// - launch runs blocks in order x, then y, then z; within a block, warps run until each thread
//   is at a barrier or has exited (docs/ptx-executor.md: reconvergence). Every memory access is
//   bounds-checked against its buffer; an access outside one is an Error naming the block, the
//   thread, the PTX line and the address; nothing undefined is executed. On an Error the buffers
//   may be partly written.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "ptx/module.hpp"

namespace bitproof::ptx {

Expected<Module> parse_module(std::string_view text, std::string name);
Expected<const Kernel*> find_kernel(const Module& module, std::string_view name);

// Global buffers a launch reads and writes; Arg::buffer(i) passes buffer i's address.
class Memory {
 public:
  std::size_t add(std::vector<std::uint8_t> bytes) {
    buffers_.push_back(std::move(bytes));
    return buffers_.size() - 1;
  }
  std::vector<std::uint8_t>& bytes(std::size_t i) { return buffers_.at(i); }
  const std::vector<std::uint8_t>& bytes(std::size_t i) const { return buffers_.at(i); }
  std::size_t size() const { return buffers_.size(); }

 private:
  std::vector<std::vector<std::uint8_t>> buffers_;
};

// A kernel argument: a buffer's address (a pointer parameter) or a scalar's bits, which must
// have the parameter's size.
struct Arg {
  bool is_buffer = false;
  std::size_t buffer = 0;
  std::uint64_t bits = 0;
  std::uint32_t size = 0;
  static Arg buf(std::size_t index) { return {true, index, 0, 8}; }
  static Arg u32(std::uint32_t v) { return {false, 0, v, 4}; }
  static Arg u64(std::uint64_t v) { return {false, 0, v, 8}; }
  static Arg f32_bits(std::uint32_t v) { return {false, 0, v, 4}; }
};

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t count() const { return std::uint64_t{x} * y * z; }
};

struct LaunchConfig {
  Dim3 grid, block;
  std::uint32_t dynamic_shared = 0;
  // The most warp instructions the launch may execute (a loop that never ends is an Error).
  std::uint64_t max_warp_steps = std::uint64_t{1} << 32;
};

struct LaunchResult {
  std::uint64_t warp_steps = 0;    // instructions issued to a warp (one per active group)
  std::uint64_t thread_steps = 0;  // instructions executed, summed over the threads that ran them
};

Expected<LaunchResult> launch(const Module& module, const Kernel& kernel, const LaunchConfig& config,
                              std::span<const Arg> args, Memory& memory);

// The address windows of the executor's 64-bit address space (generic addresses): buffer i at
// (i + 1) << 40, the module's .global variables at (0xF0 + j) << 40, the thread's local memory at
// kLocalWindow, the block's shared memory at kSharedWindow, the parameters at kParamWindow.
// A .shared/.local/.param address is an offset from 0 in its own window.
inline constexpr int kWindowShift = 40;
inline constexpr std::uint64_t kWindowMask = (std::uint64_t{1} << kWindowShift) - 1;
inline constexpr std::uint64_t kGlobalVarWindow = 0xF0;
inline constexpr std::uint64_t kLocalWindow = std::uint64_t{0xFD} << kWindowShift;
inline constexpr std::uint64_t kSharedWindow = std::uint64_t{0xFE} << kWindowShift;
inline constexpr std::uint64_t kParamWindow = std::uint64_t{0xFF} << kWindowShift;

}  // namespace bitproof::ptx
