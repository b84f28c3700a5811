// Synthetic checkpoints in the DeepSeek V4 layout, for tests, fuzz seeds and
// benchmarks. Per layer L and routed expert E, for w in w1, w2, w3:
//   layers.L.ffn.experts.E.w.weight   I8       [rows, cols/2]   two E2M1 codes a byte, random
//   layers.L.ffn.experts.E.w.scale    F8_E8M0  [rows, cols/32]  bytes uniform in scale_range
// plus per layer layers.L.attn_norm.weight (BF16 [cols]) and layers.L.ffn_norm.weight
// (F16 [cols]), and norm.weight (BF16 [cols]) in the last file. All three
// expert matrices have the same shape (a simplification of the real w2).
// Every scale tensor of two or more bytes starts with the bytes LO, HI, so each
// tensor's range is exactly scale_range. nan_bytes bytes 0xFF are placed at
// distinct positions after those two, round-robin over the scale tensors.
// Output is a pure function of the options (seed included): a splitmix64
// stream, no library distributions. Files are written through a temporary
// name and a rename; with shards > 1, layers are split into contiguous groups
// model-0000i-of-0000S.safetensors and model.safetensors.index.json is written.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "audit/histogram.hpp"
#include "error.hpp"

namespace bitproof::audit {

struct SynthOptions {
  std::string out_dir;
  std::uint32_t layers = 2;
  std::uint32_t experts = 2;
  std::uint64_t rows = 8;
  std::uint64_t cols = 64;  // a multiple of 32
  std::uint32_t scale_lo = 114;
  std::uint32_t scale_hi = 126;
  std::uint32_t shards = 1;
  std::uint64_t seed = 1;
  std::uint64_t nan_bytes = 0;
  bool weights = true;  // false: leave the I8 expert weights out (scale-only benchmarks)
};

struct SynthResult {
  std::vector<std::string> files;  // paths written, index last when sharded
  std::uint64_t total_bytes = 0;
  std::uint64_t scale_bytes = 0;
  // Every scale tensor with the histogram of the bytes written, counted as they
  // were generated (independently of the audit's reader and histogram).
  std::vector<std::pair<std::string, Histogram>> scales;
};

[[nodiscard]] Expected<SynthResult> synthesize_checkpoint(const SynthOptions& options);

}  // namespace bitproof::audit
