// Byte histograms at memory speed. Data is taken in blocks that stay in the
// core's cache. A block whose bytes span at most kNarrowSpan values (scale
// tensors hold a dozen exponents) is counted with vector compares, 16 values
// a pass with AVX-512BW or 8 with AVX2, when the CPU has them; any other block goes through a portable loop
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
// The vector path for narrow blocks: AVX-512BW (16 values a pass) where the
// CPU has it, else AVX2 (8 values a pass), else none. add_histogram uses the
// best; the tests run each one this CPU has against a plain count.
enum class HistogramIsa : std::uint8_t { kPortable, kAvx2, kAvx512 };
[[nodiscard]] bool isa_available(HistogramIsa isa);
[[nodiscard]] HistogramIsa best_isa();
void add_histogram_with(std::span<const unsigned char> bytes, Histogram& h, HistogramIsa isa);
}  // namespace detail

}  // namespace bitproof::audit
