// Byte counts of a window of up to 16 consecutive values in one pass, without
// a compare per value: each byte x becomes a one-hot bit (a table lookup of
// x - first; a byte outside the window looks up zero), and per bit position
// the masks are summed by a carry-save adder tree (Harley and Seal), 16 vectors
// a step. Ones, twos, fours and eights stay as carry-save state; each step's
// sixteens go to nibble counters (bits k and k + 4 of the sixteens into one
// byte's two nibbles, emptied every 15 steps). A value's count is the bits at
// its position weighted 1, 2, 4, 8 and 16.
//
// Written once (onehot_impl.hpp) and compiled per instruction set in a source
// of its own (onehot_avx2.cpp, onehot_avx512.cpp), each built for its ISA: the
// caller (histogram.cpp) picks one after checking the CPU. Rates from L2 on
// the AMD EPYCs of bench/RESULTS.md, 13 values: AVX2 17 GB/s (Zen 3) against
// 11.5 GB/s for compares in two passes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bitproof::audit::onehot {

inline constexpr unsigned kValues = 16;            // values a pass
inline constexpr std::size_t kAvx2Step = 16 * 32;  // bytes a carry-save step
inline constexpr std::size_t kAvx512Step = 16 * 64;

// Adds the counts of first .. first+values-1 (values <= kValues, first + values
// <= 256) over the n bytes at p (a multiple of the ISA's step) to bins[0..values),
// prefetching `ahead` (as many bytes, never dereferenced) into L2. Other bytes
// are not counted. Only on a CPU with the ISA (histogram.cpp checks).
void count_avx2(const unsigned char* p, std::size_t n, unsigned first, unsigned values, std::uint64_t* bins,
                const unsigned char* ahead);
void count_avx512(const unsigned char* p, std::size_t n, unsigned first, unsigned values, std::uint64_t* bins,
                  const unsigned char* ahead);

}  // namespace bitproof::audit::onehot
