// Synthetic checkpoints for tests, fuzz seeds and benchmarks, in three
// layouts (one row each in synth.cpp), per layer L, routed expert E and w in
// w1, w2, w3 (all three matrices the same shape, a simplification of w2):
//
//   dsv4   (DeepSeek V4, MXFP4)  layers.L.ffn.experts.E.w.weight       I8       [rows, cols/2]  two E2M1 codes a byte
//                                layers.L.ffn.experts.E.w.scale        F8_E8M0  [rows, cols/32] UE8M0 block scales
//   nvfp4  (ModelOpt NVFP4)      layers.L.ffn.experts.E.w.weight       U8       [rows, cols/2]
//                                layers.L.ffn.experts.E.w.weight_scale F8_E4M3  [rows, cols/16] UE4M3 block scales
//                                layers.L.ffn.experts.E.w.weight_scale_2 F32    []              the FP32 global scale
//   gptq   (GPTQ INT4, group 128) layers.L.ffn.experts.E.w.qweight     I32      [cols/8, rows]  eight INT4 a word
//                                layers.L.ffn.experts.E.w.qzeros       I32      [cols/128, rows/8]
//                                layers.L.ffn.experts.E.w.scales       F16      [cols/128, rows] FP16 group scales
//
// plus per layer layers.L.attn_norm.weight (BF16 [cols]) and layers.L.ffn_norm.weight
// (F16 [cols]), and norm.weight (BF16 [cols]) in the last file. Block and
// group scales are codes uniform in scale_range (default per layout), except
// that every scale tensor of two or more codes starts with the codes LO, HI, so
// each tensor's range is exactly scale_range; nan_bytes codes are set to the
// format's NaN (UE8M0 0xFF, E4M3 0x7F, FP16 0x7E00) at distinct positions after
// those two, round-robin over the block/group scale tensors. Global scales are
// FP32 2^-11 (0x3A000000). Weights (random) are left out with weights = false.
// Output is a pure function of the options (seed included): a splitmix64
// stream, no library distributions. Files are written through a temporary
// name and a rename; with shards > 1, layers are split into contiguous groups
// model-0000i-of-0000S.safetensors and model.safetensors.index.json is written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "audit/histogram.hpp"
#include "error.hpp"

namespace bitproof::audit {

enum class SynthLayout : std::uint8_t { kDsv4, kNvfp4, kGptq };

struct SynthLayoutInfo {
  SynthLayout id;
  std::string_view name;         // --layout NAME
  std::uint32_t scale_lo, scale_hi;  // the default scale_range: codes of the block/group scale format
  std::uint64_t cols_multiple;   // --cols must be a multiple of this
  std::uint64_t rows_multiple;   // --rows must be a multiple of this
};
[[nodiscard]] const SynthLayoutInfo* synth_layout(std::string_view name);
[[nodiscard]] const SynthLayoutInfo& synth_layout(SynthLayout id);

struct SynthOptions {
  std::string out_dir;
  SynthLayout layout = SynthLayout::kDsv4;
  std::uint32_t layers = 2;
  std::uint32_t experts = 2;
  std::uint64_t rows = 8;
  std::uint64_t cols = 64;  // a multiple of the layout's cols_multiple
  std::uint32_t scale_lo = 114;  // codes of the layout's scale format (set both from synth_layout for another layout)
  std::uint32_t scale_hi = 126;
  std::uint32_t shards = 1;
  std::uint64_t seed = 1;
  std::uint64_t nan_bytes = 0;  // scale codes set to the format's NaN
  bool weights = true;  // false: leave the I8 expert weights out (scale-only benchmarks)
};

struct SynthResult {
  std::vector<std::string> files;  // paths written, index last when sharded
  std::uint64_t total_bytes = 0;
  std::uint64_t scale_bytes = 0;
  // Every scale tensor (global scales too) with the histogram of the codes
  // written, counted as they were generated (independently of the audit's
  // reader and histogram).
  std::vector<std::pair<std::string, CodeCounts>> scales;
};

[[nodiscard]] Expected<SynthResult> synthesize_checkpoint(const SynthOptions& options);

}  // namespace bitproof::audit
