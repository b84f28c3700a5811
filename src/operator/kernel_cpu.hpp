// Kernel arms on the CPU (issue 47): the spec's kernel stages run through the PTX executor
// (src/ptx, docs/ptx-executor.md) on buffers made from the A/B spec's inputs, the same PTX
// the GPU runner loads (KernelModule). An arm of built-in stages in the same spec runs on
// the soft model (run_arm_cpu): a user kernel A/B'd against bitproof's model of its order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab.hpp"
#include "operator/kernel_spec.hpp"
#include "ptx/module.hpp"

namespace bitproof::op {

// The parsed modules of a spec and where each kernel a stage launches lives.
struct KernelSet {
  std::vector<ptx::Module> modules;  // one per KernelModule, same order
  struct Used {
    std::string kernel;
    std::size_t module = 0;
    std::size_t index = 0;  // in modules[module].kernels
  };
  std::vector<Used> used;  // each kernel a stage launches, once, in order of first launch
  [[nodiscard]] const Used* find(const std::string& kernel) const;
  [[nodiscard]] const ptx::Kernel& kernel(const Used& u) const { return modules[u.module].kernels[u.index]; }
};

// Parses every module's PTX (ptx::parse_module: an instruction the executor does not run exactly
// is refused with its line, exit 2) and checks every kernel stage against it: the kernel is in
// exactly one module, and its parameters match the stage's args in count and size (a pointer
// 8 bytes, u32/i32/f32 4, u64 8). Errors: "<spec>: arms[i].stages[s].args[a]: ..." naming
// both types, exit 2.
[[nodiscard]] Expected<KernelSet> parse_kernel_modules(const AbSpec& spec, const std::vector<KernelModule>& modules);

// The CPU runner of a spec with kernel arms: per case, each kernel arm's buffers (inputs as
// the spec's tensors: f16 words, mxfp4 codes two a byte low nibble first and UE8M0 scale
// bytes, as synth-checkpoint writes them; joined inputs' rows concatenated), every output
// poisoned with 0xFF bytes, the stages launched in order (ptx::launch: bounds-checked, an
// access outside a buffer is exit 2 naming the block, thread, PTX line and address), the
// outputs read back as 16-bit words. A built-in arm runs on the soft model with `arith`.
// The two arms run on two threads when `threads` > 1 (the executor runs one launch's
// blocks in order on one thread: src/ptx has no parallel launch).
[[nodiscard]] Expected<std::unique_ptr<ArmRunner>> make_cpu_kernel_runner(const AbSpec& spec, const Weights& weights,
                                                                          const std::vector<KernelModule>& modules,
                                                                          unsigned threads, CpuArith arith);

}  // namespace bitproof::op
