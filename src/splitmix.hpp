// splitmix64 (Steele, Lea, Flood 2014): the one fully specified random stream
// bitproof draws from (synthetic checkpoints, A/B inputs and case seeds, the
// witness strata, merge's chunk picks), so every generated value is a pure
// function of a seed on any platform.
#pragma once

#include <cstdint>

namespace bitproof {

inline constexpr std::uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;

// The stream's output function: the word a generator in state x gives next.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += kSplitMixGamma;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Returns the next word of the stream in `state` and advances it.
constexpr std::uint64_t splitmix64_next(std::uint64_t& state) {
  const std::uint64_t word = splitmix64(state);
  state += kSplitMixGamma;
  return word;
}

}  // namespace bitproof
