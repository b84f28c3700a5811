// Which 2^32-case blocks of a large GPU sweep the soft model checks case by case.
//
// The CUDA backend compares the hardware's words with the soft model compiled for the
// device. On every block up to kEveryBlockCases cases; above that the model would take
// hours (2^48 cases), so it checks
//   - the first block and one block in stride(): one in 64, at most kMostSampledBlocks;
//   - every block whose constant input codes (the inputs that do not vary inside a
//     block) hold an edge code of their format: ±0, ±the smallest subnormal, ±the
//     largest finite, the next code (±Inf or a NaN), the first and last signalling
//     and quiet NaNs. There compiled code is likeliest to part from the model: which
//     NaN an FP64 FMA returns was the compiler's choice and differed between kernels
//     (docs/fma.md), on blocks the stride alone never sampled.
// The choice depends on the block index and the domain only, so every shard of a split
// checks the blocks a whole run checks.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/sweep_abi.hpp"
#include "error.hpp"
#include "proof/engine.hpp"
#include "proof/spec.hpp"

namespace bitproof {

inline constexpr std::uint64_t kEveryBlockCases = std::uint64_t{1} << 36;
inline constexpr std::uint64_t kMostSampledBlocks = 256;

class ModelBlocks {
 public:
  explicit ModelBlocks(const Spec& spec);

  // Whether the model checks block `block` (cases block·2^32 .. (block + 1)·2^32).
  [[nodiscard]] bool checked(std::uint64_t block) const;
  // One block in stride() is sampled (above kEveryBlockCases cases).
  [[nodiscard]] std::uint64_t stride() const { return stride_; }
  [[nodiscard]] bool every_block() const { return every_block_; }

 private:
  struct Constant {       // an input whose code does not change inside a block
    std::uint64_t place;  // cases per step of this input's code (a multiple of 2^32)
    InputDomain input;    // a copy: the object does not hold on to the spec
  };
  bool every_block_;
  std::uint64_t stride_;
  std::vector<Constant> constants_;
};

// Whether `code` is one of its format's edge codes (above).
[[nodiscard]] bool edge_code(FormatId format, std::uint32_t code);

// The words of a model check (bp_sweep_check: one abi::ModelWords a chunk, from
// chunk `first_chunk`) into `part`: the differing cases counted, each chunk's
// first one kept (while fewer than `keep` are) with its codes, the CPU soft
// model's bits and the device's. Words that do not add up (a count past the
// chunk, a record without a count or a count without one, a slot or case past
// the spec's, a recorded case where the CPU's soft model gives the device's
// bits) are an error, and `part` is then left as far as it got.
[[nodiscard]] Expected<Ok> count_model_words(const Spec& spec, const CaseEvaluator& evaluator,
                                             const std::vector<abi::ModelWords>& words, std::uint64_t first_chunk,
                                             std::size_t keep, SweepPart& part);

}  // namespace bitproof
