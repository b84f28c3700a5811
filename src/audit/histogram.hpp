// Code histograms at memory speed, for 8-, 16- and 32-bit codes.
//
// Bytes (8-bit codes): data is taken in blocks that stay in the core's cache.
// A block whose bytes span at most kNarrowSpan values (scale tensors hold a
// dozen exponents) is counted 16 values a pass, with vector compares on
// AVX-512BW or with one-hot masks and a carry-save positional popcount on
// AVX2, when the CPU has them; any other block goes through
// a portable loop that spreads its increments over 8 sub-histograms so that
// runs of equal bytes do not serialize on one counter's store-to-load chain.
// Each block is first tried in the windows of the block before it, on this
// thread (also when it belongs to another tensor): no range pass while the
// span stays put.
//
// 16-bit codes (FP16, BF16 group scales): 65,536 bins. A block's range comes
// from a vector min/max pass (or the previous block's windows, as for bytes);
// a narrow block (at most kNarrowSpan codes) is counted with vector compares
// on 16-bit lanes, 16 values a pass; a wide one with a two-lane scalar loop
// into 32-bit bins that stay in L2. 32-bit codes (FP32 global scales, a few
// per tensor) are sorted and run-length counted.
//
// Every path counts exactly; the tests compare each with a plain count.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace bitproof::audit {

using Histogram = std::array<std::uint64_t, 256>;

// Adds the count of every byte value in `bytes` to `h`.
void add_histogram(std::span<const unsigned char> bytes, Histogram& h);

// h += other.
void merge_histogram(Histogram& h, const Histogram& other);

// A histogram of codes of any width: (code, count) pairs, codes ascending,
// every count positive.
using CodeCounts = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

// into += from (both ascending; the result ascending).
void merge_counts(CodeCounts& into, const CodeCounts& from);
// The same, taking `from` over when `into` is empty (no copy).
void merge_counts(CodeCounts& into, CodeCounts&& from);
// The nonzero bins of a byte histogram.
[[nodiscard]] CodeCounts counts_of(const Histogram& h);

// Adds the count of every little-endian code of `code_bits` bits (8, 16 or
// 32) in `bytes` (a whole number of codes) to `out`.
void count_codes(std::span<const unsigned char> bytes, int code_bits, CodeCounts& out);

namespace detail {
enum class HistogramIsa : std::uint8_t;
}

// Counts little-endian codes of `code_bits` bits (8, 16 or 32) piece by
// piece, with nothing allocated per piece: 16-bit codes go into 65,536 bins
// that stay with the calling thread (one 16-bit counter at a time a thread),
// read out only by take(), which adds every count so far to `out` and starts
// again. Each piece must be a whole number of codes.
class CodeCounter {
 public:
  explicit CodeCounter(int code_bits);
  CodeCounter(int code_bits, detail::HistogramIsa isa);
  CodeCounter(const CodeCounter&) = delete;
  CodeCounter& operator=(const CodeCounter&) = delete;
  ~CodeCounter();
  void add(std::span<const unsigned char> bytes);
  void take(CodeCounts& out);

 private:
  int bits_;
  detail::HistogramIsa isa_;
  Histogram bytes8_{};
  std::vector<std::uint32_t> codes32_;
  CodeCounts spill_;
};

namespace detail {
inline constexpr unsigned kNarrowSpan = 32;
// The portable path alone.
void add_histogram_portable(std::span<const unsigned char> bytes, Histogram& h);
// The vector path for narrow blocks: AVX-512BW where the CPU has it, else
// AVX2, else none (16 values a pass on both). add_histogram uses the
// best; the tests run each one this CPU has against a plain count.
enum class HistogramIsa : std::uint8_t { kPortable, kAvx2, kAvx512 };  // declared above
[[nodiscard]] bool isa_available(HistogramIsa isa);
[[nodiscard]] HistogramIsa best_isa();
void add_histogram_with(std::span<const unsigned char> bytes, Histogram& h, HistogramIsa isa);
// 16-bit codes with the given path (kAvx2/kAvx512: the vector range pass and
// narrow counter); `bytes` a whole number of codes.
void count_codes16_with(std::span<const unsigned char> bytes, CodeCounts& out, HistogramIsa isa);
}  // namespace detail

}  // namespace bitproof::audit
