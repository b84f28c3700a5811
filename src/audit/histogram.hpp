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
// into 32-bit bins that stay in L2. After a wide block the next is counted
// wide at once, its range taken in the same pass (AVX2; the store a code bounds
// that loop, so the min/max rides along for free); its range decides whether
// the block after it tries the narrow windows again. 32-bit codes (FP32 global scales, a few
// per tensor) are sorted and run-length counted.
//
// Every path counts exactly; the tests compare each with a plain count.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <utility>
#include <variant>
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

// A histogram kept per tensor, in less memory than CodeCounts' 16 bytes a
// code: the counts of a window of consecutive codes, zeros included, each in
// the fewest of 1, 2 or 4 bytes that hold the window's largest count, where
// every count fits in 32 bits and the window takes at most the memory of the
// pairs; else the pairs themselves. Reads as CodeCounts does: (code, count)
// pairs with positive counts, codes ascending. (A checkpoint's thousands of
// FP16 scale tensors each hold ~2,000 codes at counts below 256: 2 KB a tensor
// where 32-bit counts took 8 KB, and fresh memory is costly on some hosts.)
class CompactCounts {
 public:
  using value_type = std::pair<std::uint32_t, std::uint64_t>;
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = CompactCounts::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = value_type;
    Iterator() = default;
    value_type operator*() const {
      if (!owner_->is_window()) return owner_->pairs_[at_];
      return {static_cast<std::uint32_t>(owner_->base_ + at_), owner_->count_at(at_)};
    }
    Iterator& operator++() {
      *this = Iterator(owner_, at_ + 1);
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const Iterator&, const Iterator&) = default;

   private:
    friend class CompactCounts;
    Iterator(const CompactCounts* owner, std::size_t at) : owner_(owner), at_(at) {  // moves on past zero counts
      while (owner_->is_window() && at_ < owner_->window_size() && owner_->count_at(at_) == 0) ++at_;
    }
    const CompactCounts* owner_ = nullptr;
    std::size_t at_ = 0;
  };

  CompactCounts() = default;
  explicit CompactCounts(CodeCounts pairs);
  // counts[k]: the count of code base + k (zero allowed; base + counts.size() <= 2^32).
  CompactCounts(std::uint32_t base, std::span<const std::uint32_t> counts);
  [[nodiscard]] Iterator begin() const { return {this, 0}; }
  [[nodiscard]] Iterator end() const { return {this, stored()}; }
  [[nodiscard]] bool empty() const { return begin() == end(); }
  [[nodiscard]] bool is_window() const { return window_size() != 0; }
  // Entries held (a window's zero counts included): at least the pairs read.
  [[nodiscard]] std::size_t stored() const { return is_window() ? window_size() : pairs_.size(); }
  // Bytes a count of the window (1, 2 or 4; 0 when the counts are pairs).
  [[nodiscard]] unsigned count_bytes() const { return is_window() ? 1u << window_.index() : 0; }
  [[nodiscard]] CodeCounts pairs() const;
  // Whether pred(code) holds for a code with a positive count (a loop over the
  // window itself, without the iterators' checks).
  template <class P>
  [[nodiscard]] bool any_code(P&& pred) const {
    return visit_window([&](const auto* counts, std::size_t n) {
             for (std::size_t k = 0; k < n; ++k) {
               if (counts[k] != 0 && pred(static_cast<std::uint32_t>(base_ + k))) return true;
             }
             return false;
           }) ||
           std::any_of(pairs_.begin(), pairs_.end(), [&pred](const auto& p) { return pred(p.first); });
  }
  // *this += other.
  void merge(CompactCounts&& other);
  // Adds the count of each code below 2^16 to dense[code], growing `dense` to
  // 256 bins (codes below 256) or 2^16 as needed, and appends the other pairs
  // to `wide`, in order.
  void add_into(std::vector<std::uint64_t>& dense, CodeCounts& wide) const;
  friend bool operator==(const CompactCounts& a, const CompactCounts& b) { return a.pairs() == b.pairs(); }
  friend bool operator==(const CompactCounts& a, const CodeCounts& b) { return a.pairs() == b; }

 private:
  [[nodiscard]] std::size_t window_size() const {
    return std::visit([](const auto& counts) { return counts.size(); }, window_);
  }
  [[nodiscard]] std::uint32_t count_at(std::size_t k) const {
    return std::visit([k](const auto& counts) { return std::uint32_t{counts[k]}; }, window_);
  }
  // f(counts, n): the window's n counts in their own width (n = 0 when the counts are pairs).
  template <class F>
  decltype(auto) visit_window(F&& f) const {
    return std::visit([&f](const auto& counts) -> decltype(auto) { return f(counts.data(), counts.size()); }, window_);
  }
  std::uint32_t base_ = 0;
  // The window's counts, in the narrowest type that holds them; empty: the counts are in pairs_.
  std::variant<std::vector<std::uint8_t>, std::vector<std::uint16_t>, std::vector<std::uint32_t>> window_;
  CodeCounts pairs_;
};

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
  // The same into a compact histogram (16-bit codes: straight from the bins).
  void take(CompactCounts& out);

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
