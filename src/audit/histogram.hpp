// Byte histograms at memory speed: the inner loop spreads its increments over
// several sub-histograms so that runs of equal bytes (scale tensors are mostly
// a handful of values) do not serialize on one counter's store-to-load chain.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace bitproof::audit {

using Histogram = std::array<std::uint64_t, 256>;

// Adds the count of every byte value in `bytes` to `h`.
void add_histogram(std::span<const unsigned char> bytes, Histogram& h);

// h += other.
void merge_histogram(Histogram& h, const Histogram& other);

}  // namespace bitproof::audit
