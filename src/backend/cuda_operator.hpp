// A/B arms on the GPU. Each arm is prepared on its own: its own copies of the
// weights (joined buffers built as the fused kernel's loader builds them), its
// own activation, intermediate and output buffers, its own stream, and its
// stages captured once into its own CUDA Graph. Each case writes the case's
// activations into the arm's input buffers, poisons every buffer the arm
// writes with 0xFF bytes (FP16 0xFFFF, a NaN: an element a kernel failed to
// write cannot pass), replays the graph and reads back every tensor it wrote.
#pragma once

#include <memory>

#include "error.hpp"
#include "operator/ab.hpp"
#include "report/report.hpp"

namespace bitproof {

// Exit 3 when this build or machine has no CUDA; `info` receives the device,
// the image's SHA-256 and per-case timing once run.
[[nodiscard]] Expected<std::unique_ptr<op::ArmRunner>> make_cuda_ab_runner(const op::AbSpec& spec,
                                                                          const op::Weights& weights, Json& info);

}  // namespace bitproof
