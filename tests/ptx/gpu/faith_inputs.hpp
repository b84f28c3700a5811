// The operand triples of faith.ptx, shared by the GPU run and the executor's comparison:
// binary32 edges (every exponent, both signs, mantissas 0/1/middle/max; so NaN payloads and
// infinities), f16 edges in both halves of a word, and splitmix64 words, 3 x 8192 triples.
#pragma once

#include <cstdint>
#include <vector>

// faith.ptx's kernels, in the order of the GPU's file: each writes `words` 32-bit words a thread.
struct FaithKernel {
  const char* name;
  unsigned words;
};
inline constexpr FaithKernel kFaithKernels[] = {{"faith", 24}, {"faith_bits", 32}};

inline std::vector<std::uint32_t> faith_inputs() {
  std::vector<std::uint32_t> edges;
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t e = 0; e < 256; ++e) {
      for (std::uint32_t m : {0u, 1u, 0x400000u, 0x7FFFFFu}) edges.push_back(sign | (e << 23) | m);
    }
  }
  static const std::uint16_t h[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00,
                                    0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0x3BFF, 0x3555};
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) edges.push_back(std::uint32_t{h[i]} | std::uint32_t{h[j]} << 16);
  }
  const std::size_t n = edges.size();
  std::uint64_t s = 12345;
  const auto next = [&] {
    s += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  std::vector<std::uint32_t> in;
  for (std::size_t t = 0; t < 8192; ++t) {
    for (int k = 0; k < 3; ++k) {
      const std::uint64_t r = next();
      in.push_back(t < 6144 ? edges[r % n] : static_cast<std::uint32_t>(r));
    }
  }
  return in;
}
