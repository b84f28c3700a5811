// The tensors an A/B run reads: weights (once: synthetic from the spec's seed, or
// a checkpoint's tensors by name) and activations (new for every case, from the
// case seed). Every byte is a pure function of the spec, its seed and the
// checkpoint: a splitmix64 stream, no library distributions.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"

namespace bitproof::op {

// One tensor in host memory. f16: rows × cols words. mxfp4: rows × cols E2M1 codes,
// two a byte (low nibble first), and rows × cols/32 UE8M0 scale bytes.
struct HostTensor {
  DType dtype = DType::kF16;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::vector<std::uint16_t> f16;
  std::vector<std::uint8_t> codes;
  std::vector<std::uint8_t> scales;
};

// Which scale bytes an mxfp4 weight holds: 256 flags, and where they came from.
struct ScaleSet {
  std::array<bool, 256> present{};
  std::string origin;  // "synthetic 113..128", "checkpoint tensor X.scale", "audit A.json"
  [[nodiscard]] bool within(CodeRange r) const;
  [[nodiscard]] std::uint32_t lo() const;
  [[nodiscard]] std::uint32_t hi() const;
  // The first byte outside r, if any (for messages).
  [[nodiscard]] int first_outside(CodeRange r) const;
};

// The weights of a spec, loaded once. `checkpoint`: the path to read checkpoint
// tensors from (the spec's own, or --checkpoint); SHA-256 of every checkpoint
// tensor read, so a report names the bytes it compared.
struct Weights {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, ScaleSet> scale_sets;  // mxfp4 weights read from the checkpoint: the bytes they hold
  std::vector<std::pair<std::string, std::string>> checkpoint_digests;  // tensor -> sha256
};

[[nodiscard]] Expected<Weights> load_weights(const AbSpec& spec, const std::string& checkpoint);

// Case `c`'s activation `in` (role activation).
[[nodiscard]] HostTensor make_activation(const AbSpec& spec, const InputSpec& in, std::uint64_t case_index);

// FP16 bits of a synthetic value for draw `r` (a splitmix64 word).
[[nodiscard]] std::uint16_t draw_f16(const ValueSpec& values, std::uint64_t r);

}  // namespace bitproof::op
