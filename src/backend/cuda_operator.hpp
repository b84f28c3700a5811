// A/B arms on the GPU. Each arm is prepared on its own: its own copies of the
// weights (joined buffers built as the fused kernel's loader builds them), its
// own activation, intermediate and output buffers, its own stream, and its
// stages captured once into its own CUDA Graph. Each case writes the case's
// activations into the arm's input buffers, poisons every buffer the arm
// writes with 0xFF bytes (FP16 0xFFFF, a NaN: an element a kernel failed to
// write cannot pass), replays the graph and reads back every tensor it wrote.
// An arm's stages are bitproof's built-in operators (the embedded operator
// image) or the user's kernels (the spec's PTX modules, loaded by the driver's
// JIT into the arm's own CUmodules; src/backend/cuda_operator_arm.hpp).
#pragma once

#include <memory>
#include <vector>

#include "error.hpp"
#include "operator/ab.hpp"
#include "report/report.hpp"

namespace bitproof {

struct CudaAbOptions {
  // The spec's kernels built (backend/kernel_modules.hpp): what kernel arms load.
  const std::vector<op::KernelModule>* modules = nullptr;
  // Each arm's stages captured into its CUDA Graph and replayed (default); off:
  // launched one by one on the arm's stream every case (the same bits expected).
  bool graph = true;
  // Each wait for a kernel arm's work (--user-timeout): a kernel that does not
  // return ends the process with one line, exit 2 (user::Deadline).
  double wait_timeout_s = 60;
};

// Exit 3 when this build or machine has no CUDA; `info` receives the device,
// the image's SHA-256 (and for kernel arms each module's PTX SHA-256) and
// per-case timing once run. A kernel arm's launch that fails, or a kernel that
// faults (an illegal address ...), is exit 2 naming the arm, the stage or case
// and the kernel; an arm mixing kernels and built-in operators is exit 2.
[[nodiscard]] Expected<std::unique_ptr<op::ArmRunner>> make_cuda_ab_runner(const op::AbSpec& spec,
                                                                           const op::Weights& weights, Json& info,
                                                                           const CudaAbOptions& options = {});

}  // namespace bitproof
