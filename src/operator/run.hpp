// Running the arms of an A/B spec: stages prepared once (joined weights built, as
// a fused kernel's loader builds its joined buffer after loading the checkpoint),
// then case after case. The CPU backend evaluates the operator templates with the
// soft model; the GPU backend (src/backend/cuda_operator.hpp) the same templates
// with the CUDA instructions; both produce ArmOutputs, compared bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"
#include "operator/tensors.hpp"

namespace bitproof::op {

// A stage with its operands resolved: the (joined) weight and where each row
// block of the joined output goes.
struct PreparedStage {
  const Stage* stage = nullptr;
  HostTensor joined;                   // several weights: their rows concatenated; else empty
  const HostTensor* single = nullptr;  // one weight: the input itself
  // The weight the kernel reads: the joined buffer or the single input (swiglu: none).
  [[nodiscard]] const HostTensor* weight() const {
    return single != nullptr ? single : stage->weights.size() > 1 ? &joined : nullptr;
  }
  std::vector<std::uint64_t> first_rows;  // per output: its first row in the joined weight
  std::vector<std::uint64_t> rows;        // per output: its rows
  std::uint64_t m = 1;                    // activation rows
  std::uint64_t k = 0;                    // reduction length (swiglu: columns)
};

struct PreparedArm {
  std::vector<PreparedStage> stages;
  std::map<std::string, TensorShape> shapes;  // every tensor the arm reads or writes
};

// A kernel stage (Stage::launch) is prepared as its stage alone: run_arm_cpu runs built-in
// stages only (kernel arms run through make_cpu_kernel_runner, kernel_cpu.hpp).
[[nodiscard]] PreparedArm prepare_arm(const AbSpec& spec, std::size_t arm, const Weights& weights);

// The FP16 bits of every tensor an arm wrote in one case, by name (row-major).
using ArmOutputs = std::map<std::string, std::vector<std::uint16_t>>;

// The two-fill check of outputs that must not follow their fill (kernel arms on the executor,
// Python callables): an arm runs a case with every output filled with 0xFF bytes; where an
// element may have come from that fill (0xFFFF, or a NaN of the output's format: computed from
// it), it runs the case again under 0x00 bytes, and an element that differs between the two runs
// was never written (0xFFFF, then 0x0000) or was computed from the output's earlier contents.
[[nodiscard]] bool may_follow_fill(const ArmOutputs& outputs, const std::function<bool(const std::string&)>& is_bf16);
struct FillFollower {
  std::string output;
  std::size_t index = 0;  // the first such element, row-major
  std::size_t count = 0;  // how many elements of this output differ between the runs
  std::uint16_t under_ff = 0, under_00 = 0;
  [[nodiscard]] bool unwritten() const { return under_ff == 0xFFFF && under_00 == 0x0000; }
};
[[nodiscard]] std::optional<FillFollower> first_fill_follower(const ArmOutputs& under_ff, const ArmOutputs& under_00);

// The two-fill check of one case of kernel arm `arm` (the CPU executor's and the GPU's runner):
// `run(fill)` runs the case with every output filled with `fill` bytes first. Runs it under 0xFF;
// where an output may follow that fill, again under 0x00. Returns the 0xFF run's outputs, or the
// Error (exit 2) naming the first element that follows its fill: never written (it would be
// compared as the poison, on which two arms that both leave it agree) or computed from the
// output buffer's contents before the launch.
[[nodiscard]] Expected<ArmOutputs> run_two_fill(const AbSpec& spec, std::size_t arm,
                                                const std::function<Expected<ArmOutputs>(std::uint8_t)>& run);

// One case's activations, by input name.
using Activations = std::map<std::string, HostTensor>;
[[nodiscard]] Activations make_activations(const AbSpec& spec, std::uint64_t case_index);

// The CPU's arithmetic: the soft model throughout, or binary32 add, multiply and
// FMA on the host's IEEE unit (operator/host_float.hpp: the same bits, checked).
enum class CpuArith : std::uint8_t { kSoft, kHostFloat };

// Runs every stage of `arm` on the CPU, on `threads` threads.
[[nodiscard]] ArmOutputs run_arm_cpu(const PreparedArm& arm, const Weights& weights, const Activations& activations,
                                     unsigned threads, CpuArith arith);

}  // namespace bitproof::op
