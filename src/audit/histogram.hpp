// Byte histograms at memory speed. Data is taken in blocks that stay in the
// core's cache. A block whose bytes span at most kNarrowSpan values (scale
// tensors hold a dozen exponents) is counted with AVX2 compares, 8 values a
// pass, when the CPU has AVX2; any other block goes through a portable loop
// that spreads its increments over 8 sub-histograms so that runs of equal
// bytes do not serialize on one counter's store-to-load chain. Both paths
// count exactly; the tests compare each with a plain count.
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

namespace detail {
inline constexpr unsigned kNarrowSpan = 32;
// The portable path alone.
void add_histogram_portable(std::span<const unsigned char> bytes, Histogram& h);
// Whether add_histogram uses the AVX2 path for narrow blocks on this CPU.
[[nodiscard]] bool narrow_path_available();
}  // namespace detail

}  // namespace bitproof::audit
