// The one-hot count (onehot.hpp) over a vector ISA's operations `Ops`; included
// only by the sources compiled for that ISA. No out-of-line function is defined
// here outside an anonymous namespace, and nothing from the standard library
// is instantiated, so no ISA-specific code can be shared with other objects.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "audit/onehot.hpp"

namespace bitproof::audit::onehot {
namespace {

inline constexpr unsigned kNibbleSteps = 15;  // steps a nibble counter holds
inline constexpr std::size_t kCacheLine = 64;  // one prefetch a line of `ahead`

// Ops provides: V (the vector), kBytes, load, zero, set1 (a byte), table (16
// bytes repeated in every 128-bit lane), lookup (a byte shuffle within lanes,
// zero where the index's top bit is set), sub, adds_u8, add8, and_, srli16,
// carry_save(high, low, a, b, c) (high: the majority, low: the xor) and
// byte_sum (the sum of every byte).
template <class Ops>
struct BitCounts {
  using V = typename Ops::V;
  V ones, twos, fours, eights;
  V nibbles[4];  // sixteens: bit k in nibbles[k]'s low nibbles, bit k + 4 in its high ones
  std::uint64_t total[8];

  BitCounts() : ones(Ops::zero()), twos(ones), fours(ones), eights(ones), nibbles{ones, ones, ones, ones}, total{} {}

  // Adds 16 masks: two trees of 8 (ones, twos, fours), then their eights and one sixteens.
  void add_step(const V (&m)[16]) {
    V eight[2], sixteens;
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {
      V four[2];
#pragma GCC unroll 2
      for (int quarter = 0; quarter < 2; ++quarter) {
        const V* q = m + 8 * half + 4 * quarter;
        V two_a, two_b;
        Ops::carry_save(two_a, ones, ones, q[0], q[1]);
        Ops::carry_save(two_b, ones, ones, q[2], q[3]);
        Ops::carry_save(four[quarter], twos, twos, two_a, two_b);
      }
      Ops::carry_save(eight[half], fours, fours, four[0], four[1]);
    }
    Ops::carry_save(sixteens, eights, eights, eight[0], eight[1]);
    const V pair = Ops::set1(0x11);
    for (int k = 0; k < 4; ++k) nibbles[k] = Ops::add8(nibbles[k], Ops::and_(Ops::srli16(sixteens, k), pair));
  }

  // Empties the nibble counters into the totals (weight 16).
  void empty_nibbles() {
    const V low = Ops::set1(0x0F);
    for (int k = 0; k < 4; ++k) {
      total[k] += 16 * Ops::byte_sum(Ops::and_(nibbles[k], low));
      total[k + 4] += 16 * Ops::byte_sum(Ops::and_(Ops::srli16(nibbles[k], 4), low));
      nibbles[k] = Ops::zero();
    }
  }

  // The totals with the carry-save state added in.
  void finish() {
    empty_nibbles();
    const V one = Ops::set1(1);
    const V state[4] = {ones, twos, fours, eights};
    for (int w = 0; w < 4; ++w) {
      for (int k = 0; k < 8; ++k)
        total[k] += (std::uint64_t{1} << w) * Ops::byte_sum(Ops::and_(Ops::srli16(state[w], k), one));
    }
  }
};

// kHigh: values 8..15 counted too (values > 8).
template <class Ops, bool kHigh>
void count_window(const unsigned char* p, std::size_t n, unsigned first, unsigned values, std::uint64_t* bins,
                  const unsigned char* ahead) {
  using V = typename Ops::V;
  constexpr std::size_t kStep = 16 * Ops::kBytes;
  alignas(16) unsigned char table[2][16] = {};
  for (unsigned k = 0; k < values && k < kValues && first + k < 256; ++k) {
    table[k / 8][k] = static_cast<unsigned char>(1u << (k % 8));
  }
  const V low_table = Ops::table(table[0]);
  const V high_table = Ops::table(table[1]);
  const V base = Ops::set1(static_cast<unsigned char>(first));
  const V past_window = Ops::set1(0x70);  // x - first >= 16 saturates to >= 0x80: the lookup gives 0
  BitCounts<Ops> low, high;
  unsigned steps = 0;
  for (std::size_t i = 0; i < n; i += kStep) {
    V low_masks[16], high_masks[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) {
      const V index = Ops::adds_u8(Ops::sub(Ops::load(p + i + k * Ops::kBytes), base), past_window);
      low_masks[k] = Ops::lookup(low_table, index);
      if constexpr (kHigh) high_masks[k] = Ops::lookup(high_table, index);
      if (k % (kCacheLine / Ops::kBytes) == 0)
        _mm_prefetch(reinterpret_cast<const char*>(ahead + i + k * Ops::kBytes), _MM_HINT_T1);
    }
    low.add_step(low_masks);
    if constexpr (kHigh) high.add_step(high_masks);
    if (++steps == kNibbleSteps) {
      low.empty_nibbles();
      if constexpr (kHigh) high.empty_nibbles();
      steps = 0;
    }
  }
  low.finish();
  for (unsigned k = 0; k < values && k < 8; ++k) bins[k] += low.total[k];
  if constexpr (kHigh) {
    high.finish();
    for (unsigned k = 8; k < values; ++k) bins[k] += high.total[k - 8];
  }
}

template <class Ops>
void count(const unsigned char* p, std::size_t n, unsigned first, unsigned values, std::uint64_t* bins,
           const unsigned char* ahead) {
  if (values > 8) return count_window<Ops, true>(p, n, first, values, bins, ahead);
  count_window<Ops, false>(p, n, first, values, bins, ahead);
}

}  // namespace
}  // namespace bitproof::audit::onehot
