#include "audit/histogram.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "audit/onehot.hpp"
#include "cpu_features.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BITPROOF_HISTOGRAM_AVX2 1
#include <immintrin.h>
#endif

namespace bitproof::audit {
namespace {

constexpr int kLanes = 8;
// Each lane counts at most kPortableBlock / kLanes bytes of a block in 32 bits.
constexpr std::size_t kPortableBlock = std::size_t{1} << 30;
// Blocks examined for a narrow span: small enough to be re-read from L2.
constexpr std::size_t kNarrowBlock = std::size_t{1} << 17;

void portable_block(const unsigned char* p, std::size_t n, Histogram& h) {
  alignas(64) std::uint32_t lanes[kLanes][256] = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    ++lanes[0][w & 0xFF];
    ++lanes[1][(w >> 8) & 0xFF];
    ++lanes[2][(w >> 16) & 0xFF];
    ++lanes[3][(w >> 24) & 0xFF];
    ++lanes[4][(w >> 32) & 0xFF];
    ++lanes[5][(w >> 40) & 0xFF];
    ++lanes[6][(w >> 48) & 0xFF];
    ++lanes[7][w >> 56];
  }
  for (; i < n; ++i) ++lanes[0][p[i]];
  for (int b = 0; b < 256; ++b) {
    std::uint64_t sum = 0;
    for (int l = 0; l < kLanes; ++l) sum += lanes[l][b];
    h[b] += sum;
  }
}

template <int kBits>
unsigned code_at(const unsigned char* p) {
  if constexpr (kBits == 8) {
    return *p;
  } else {
    std::uint16_t c;
    std::memcpy(&c, p, 2);
    return c;
  }
}

// Folds the codes at p[i..n) into lo/hi.
template <int kBits>
void fold_range(const unsigned char* p, std::size_t i, std::size_t n, unsigned& lo, unsigned& hi) {
  constexpr std::size_t kStep = kBits / 8;
  for (; i + kStep <= n; i += kStep) {
    lo = std::min(lo, code_at<kBits>(p + i));
    hi = std::max(hi, code_at<kBits>(p + i));
  }
}

#ifdef BITPROOF_HISTOGRAM_AVX2

// The vector range pass (min/max) is written once for 8- and 16-bit codes
// (kBits). Narrow byte windows are counted one-hot (onehot.hpp); narrow
// 16-bit windows by a counter of kN consecutive codes (vector compares, each
// 16-bit lane its own counter, summed out before it can overflow).
constexpr std::size_t kVector = 32;
constexpr std::size_t kVector512 = 64;
constexpr unsigned kPassValues = 8;      // AVX2 compares (16-bit codes): 16 registers
constexpr unsigned kPassValues512 = 16;  // AVX-512BW: 32 registers

// Rounds a 16-bit lane counter holds: 32,767 (madd sums it as signed).
constexpr std::size_t kMaxRounds16 = 32767;

// lo/hi over the lanes of the stored min/max vectors and the codes left at p[i..n).
template <int kBits, std::size_t kBytes>
void finish_range(const unsigned char (&lows)[kBytes], const unsigned char (&highs)[kBytes], const unsigned char* p,
                  std::size_t i, std::size_t n, unsigned& lo, unsigned& hi) {
  constexpr std::size_t kStep = kBits / 8;
  lo = (1u << kBits) - 1;
  hi = 0;
  for (std::size_t k = 0; k < kBytes; k += kStep) {
    lo = std::min(lo, code_at<kBits>(lows + k));
    hi = std::max(hi, code_at<kBits>(highs + k));
  }
  fold_range<kBits>(p, i, n, lo, hi);
}

template <int kBits>
__attribute__((target("avx2"))) void code_range_avx2(const unsigned char* p, std::size_t n, unsigned& lo,
                                                     unsigned& hi) {
  __m256i mn = _mm256_set1_epi8(-1);
  __m256i mx = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + kVector <= n; i += kVector) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    mn = kBits == 8 ? _mm256_min_epu8(mn, x) : _mm256_min_epu16(mn, x);
    mx = kBits == 8 ? _mm256_max_epu8(mx, x) : _mm256_max_epu16(mx, x);
  }
  alignas(32) unsigned char lows[kVector];
  alignas(32) unsigned char highs[kVector];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lows), mn);
  _mm256_store_si256(reinterpret_cast<__m256i*>(highs), mx);
  finish_range<kBits>(lows, highs, p, i, n, lo, hi);
}

template <int kBits>
__attribute__((target("avx512f,avx512bw"))) void code_range_avx512(const unsigned char* p, std::size_t n, unsigned& lo,
                                                                   unsigned& hi) {
  __m512i mn = _mm512_set1_epi8(-1);
  __m512i mx = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + kVector512 <= n; i += kVector512) {
    const __m512i x = _mm512_loadu_si512(p + i);
    mn = kBits == 8 ? _mm512_min_epu8(mn, x) : _mm512_min_epu16(mn, x);
    mx = kBits == 8 ? _mm512_max_epu8(mx, x) : _mm512_max_epu16(mx, x);
  }
  alignas(64) unsigned char lows[kVector512];
  alignas(64) unsigned char highs[kVector512];
  _mm512_store_si512(lows, mn);
  _mm512_store_si512(highs, mx);
  finish_range<kBits>(lows, highs, p, i, n, lo, hi);
}

// The count in a vector of 16-bit lane counters.
__attribute__((target("avx2"))) std::uint64_t lane_sum16_avx2(__m256i counts) {
  alignas(32) std::int32_t sums[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(sums), _mm256_madd_epi16(counts, _mm256_set1_epi16(1)));
  std::uint64_t total = 0;
  for (std::int32_t v : sums) total += static_cast<std::uint32_t>(v);
  return total;
}

__attribute__((target("avx512f,avx512bw"))) std::uint64_t lane_sum16_avx512(__m512i counts) {
  alignas(64) std::int32_t sums[16];
  _mm512_store_si512(sums, _mm512_madd_epi16(counts, _mm512_set1_epi16(1)));
  std::uint64_t total = 0;
  for (std::int32_t v : sums) total += static_cast<std::uint32_t>(v);
  return total;
}

// Counts the 16-bit codes first .. first+kN-1 over the n (a multiple of 32)
// bytes at p into bins[0..kN), prefetching the bytes at `ahead` (the next block) into
// L2 as it goes: the next block's memory traffic then overlaps this block's
// compares. A lane counts by subtracting the compare's all-ones.
template <int kN>
__attribute__((target("avx2"))) void count16_avx2(const unsigned char* p, std::size_t n, unsigned first,
                                                  std::uint32_t* bins, const unsigned char* ahead) {
  __m256i value[kN];
  for (int j = 0; j < kN; ++j) value[j] = _mm256_set1_epi16(static_cast<short>(first + j));
  for (std::size_t i = 0; i < n;) {
    __m256i acc[kN];
    for (int j = 0; j < kN; ++j) acc[j] = _mm256_setzero_si256();
    const std::size_t end = std::min(n, i + kMaxRounds16 * kVector);
    for (; i < end; i += kVector) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      if (i % 64 == 0) _mm_prefetch(reinterpret_cast<const char*>(ahead + i), _MM_HINT_T1);
#pragma GCC unroll 8
      for (int j = 0; j < kN; ++j) {
        acc[j] = _mm256_sub_epi16(acc[j], _mm256_cmpeq_epi16(x, value[j]));
      }
    }
    for (int j = 0; j < kN; ++j) bins[j] += static_cast<std::uint32_t>(lane_sum16_avx2(acc[j]));
  }
}

// AVX-512BW: 64 bytes a step and 32 registers, so up to 16 codes a pass; a
// compare gives a mask, a masked add counts it.
template <int kN>
__attribute__((target("avx512f,avx512bw"))) void count16_avx512(const unsigned char* p, std::size_t n, unsigned first,
                                                                std::uint32_t* bins, const unsigned char* ahead) {
  __m512i value[kN];
  for (int j = 0; j < kN; ++j) value[j] = _mm512_set1_epi16(static_cast<short>(first + j));
  const __m512i one = _mm512_set1_epi16(1);
  for (std::size_t i = 0; i < n;) {
    __m512i acc[kN];
    for (int j = 0; j < kN; ++j) acc[j] = _mm512_setzero_si512();
    const std::size_t end = std::min(n, i + kMaxRounds16 * kVector512);
    for (; i < end; i += kVector512) {
      const __m512i x = _mm512_loadu_si512(p + i);
      _mm_prefetch(reinterpret_cast<const char*>(ahead + i), _MM_HINT_T1);
#pragma GCC unroll 16
      for (int j = 0; j < kN; ++j) {
        acc[j] = _mm512_mask_add_epi16(acc[j], _mm512_cmpeq_epi16_mask(x, value[j]), acc[j], one);
      }
    }
    for (int j = 0; j < kN; ++j) bins[j] += static_cast<std::uint32_t>(lane_sum16_avx512(acc[j]));
  }
}

using WindowPass = void (*)(const unsigned char*, std::size_t, unsigned, unsigned, std::uint64_t*,
                            const unsigned char*);

// Counts every value of lo..hi (hi - lo < kNarrowSpan) in the block, in
// windows of at most kValues values (the last only those left) with kPass
// over the whole kStep-byte steps, and every byte of the tail; prefetches
// `ahead` during the first window. A byte outside lo..hi is not counted
// (add_blocks relies on it).
template <std::size_t kStep, unsigned kValues, WindowPass kPass>
void narrow_windows(const unsigned char* p, std::size_t n, unsigned lo, unsigned hi, Histogram& h,
                    const unsigned char* ahead) {
  const std::size_t whole = n - n % kStep;
  for (unsigned first = lo; first <= hi; first += kValues) {
    kPass(p, whole, first, std::min(kValues, hi - first + 1), h.data() + first, first == lo ? ahead : p);
  }
  for (std::size_t i = whole; i < n; ++i) ++h[p[i]];
}

constexpr auto narrow_block = narrow_windows<onehot::kAvx2Step, onehot::kValues, onehot::count_avx2>;
constexpr auto narrow_block_512 = narrow_windows<onehot::kAvx512Step, onehot::kValues, onehot::count_avx512>;

using NarrowBlock = void (*)(const unsigned char*, std::size_t, unsigned, unsigned, Histogram&, const unsigned char*);

// Blocks of bytes, each counted with `narrow` (exact for any lo..hi given,
// counting every value in its windows) when its span is narrow, else with
// the portable loop.
void add_blocks(std::span<const unsigned char> bytes, Histogram& h, NarrowBlock narrow) {
  // Scale tensors keep their span from block to block, so each block is
  // first counted in the previous block's windows, without a range pass.
  // The windows are disjoint and the tail is counted whole, so the block's
  // counts sum to its length exactly when every byte fell inside them; if
  // not, the trial is dropped and the block is counted from its own range.
  // The guess lives on this thread, so it carries from tensor to tensor (a
  // scale tensor's first block needs no range pass either); a wrong guess
  // costs one trial and never a wrong count.
  thread_local bool have_guess = false;
  thread_local unsigned guess_lo = 0;
  thread_local unsigned guess_hi = 0;
  for (std::size_t off = 0; off < bytes.size(); off += kNarrowBlock) {
    const unsigned char* p = bytes.data() + off;
    const std::size_t n = std::min(kNarrowBlock, bytes.size() - off);
    // Prefetch hints never fault; past the span they point back at this block.
    const unsigned char* ahead = off + kNarrowBlock < bytes.size() ? p + kNarrowBlock : p;
    if (have_guess) {
      Histogram trial{};
      narrow(p, n, guess_lo, guess_hi, trial, ahead);
      std::uint64_t counted = 0;
      for (std::uint64_t c : trial) counted += c;
      if (counted == n) {
        for (int b = 0; b < 256; ++b) h[b] += trial[b];
        continue;
      }
    }
    unsigned lo = 0;
    unsigned hi = 0;
    code_range_avx2<8>(p, n, lo, hi);
    have_guess = hi - lo < detail::kNarrowSpan;
    if (have_guess) {
      narrow(p, n, lo, hi, h, ahead);
      guess_lo = lo;
      guess_hi = hi;
    } else {
      portable_block(p, n, h);
    }
  }
}

#endif

// ---- 16-bit codes: the driver ----

constexpr std::size_t kCodes16 = std::size_t{1} << 16;
// Blocks of this many bytes: re-read from L2 by the counting pass.
constexpr std::size_t kBlock16 = std::size_t{1} << 16;
// One call counts at most this many bytes in 32-bit bins (2^30 codes).
constexpr std::size_t kPiece16 = std::size_t{1} << 31;

// The 65,536 bins of this thread, in two lanes (a run of equal codes then
// alternates between two counters), zero between calls.
struct Bins16 {
  std::vector<std::uint32_t> lane0 = std::vector<std::uint32_t>(kCodes16);
  std::vector<std::uint32_t> lane1 = std::vector<std::uint32_t>(kCodes16);
};

using Range16 = void (*)(const unsigned char*, std::size_t, unsigned&, unsigned&);
using Count16 = void (*)(const unsigned char*, std::size_t, unsigned, std::uint32_t*, const unsigned char*);
// Counts every code of the n (even, > 0) bytes at p into the bins and sets lo..hi to their range.
using Wide16 = void (*)(const unsigned char*, std::size_t, Bins16&, unsigned&, unsigned&);

struct Isa16 {
  Range16 range = nullptr;  // null: every block is counted by `wide`
  Count16 count = nullptr;
  Wide16 wide = nullptr;
  std::size_t step = 2;  // bytes a vector step
  unsigned values = 1;   // values a pass
};

// The four codes of a little-endian 64-bit word, alternating between the two lanes.
inline void count_word16(std::uint64_t w, std::uint32_t* l0, std::uint32_t* l1) {
  ++l0[w & 0xFFFF];
  ++l1[(w >> 16) & 0xFFFF];
  ++l0[(w >> 32) & 0xFFFF];
  ++l1[w >> 48];
}

void count16_portable(const unsigned char* p, std::size_t n, Bins16& b) {
  std::uint32_t* l0 = b.lane0.data();
  std::uint32_t* l1 = b.lane1.data();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    count_word16(w, l0, l1);
  }
  for (; i + 2 <= n; i += 2) ++l0[code_at<16>(p + i)];
}

// The range of the n (even, > 0) bytes at p, code by code.
void code_range_portable(const unsigned char* p, std::size_t n, unsigned& lo, unsigned& hi) {
  lo = 0xFFFF;
  hi = 0;
  fold_range<16>(p, 0, n, lo, hi);
}

// Wide16 in two passes: the range, then the scalar count.
void wide16_portable(const unsigned char* p, std::size_t n, Bins16& b, unsigned& lo, unsigned& hi) {
  code_range_portable(p, n, lo, hi);
  count16_portable(p, n, b);
}

#ifdef BITPROOF_HISTOGRAM_AVX2
// The end of a fused wide pass: the range from the stored min/max vectors and
// the codes left at p[i..n), which are counted too.
template <std::size_t kBytes>
void finish_wide16(const unsigned char (&lows)[kBytes], const unsigned char (&highs)[kBytes], const unsigned char* p,
                   std::size_t i, std::size_t n, Bins16& b, unsigned& lo, unsigned& hi) {
  finish_range<16>(lows, highs, p, i, n, lo, hi);
  count16_portable(p + i, n - i, b);
}

// Wide16 in one pass: each 32-byte vector goes through min/max and, as four
// 64-bit words, through the scalar count (the store a code is the bound; on
// Zen 3 this is ~8 % faster than a separate range pass, which it saves).
__attribute__((target("avx2"))) void wide16_avx2(const unsigned char* p, std::size_t n, Bins16& b, unsigned& lo,
                                                 unsigned& hi) {
  std::uint32_t* l0 = b.lane0.data();
  std::uint32_t* l1 = b.lane1.data();
  __m256i mn = _mm256_set1_epi8(-1);
  __m256i mx = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + kVector <= n; i += kVector) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    mn = _mm256_min_epu16(mn, x);
    mx = _mm256_max_epu16(mx, x);
    const __m128i low = _mm256_castsi256_si128(x);
    const __m128i high = _mm256_extracti128_si256(x, 1);
    const std::uint64_t w[4] = {
        static_cast<std::uint64_t>(_mm_cvtsi128_si64(low)), static_cast<std::uint64_t>(_mm_extract_epi64(low, 1)),
        static_cast<std::uint64_t>(_mm_cvtsi128_si64(high)), static_cast<std::uint64_t>(_mm_extract_epi64(high, 1))};
#pragma GCC unroll 4
    for (std::uint64_t v : w) count_word16(v, l0, l1);
  }
  alignas(32) unsigned char lows[kVector];
  alignas(32) unsigned char highs[kVector];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lows), mn);
  _mm256_store_si256(reinterpret_cast<__m256i*>(highs), mx);
  finish_wide16(lows, highs, p, i, n, b, lo, hi);
}

// The same fused pass with 64-byte vectors (AVX-512BW): min/max on the
// vector, its eight 64-bit words through the two-lane count.
__attribute__((target("avx512f,avx512bw"))) void wide16_avx512(const unsigned char* p, std::size_t n, Bins16& b,
                                                               unsigned& lo, unsigned& hi) {
  std::uint32_t* l0 = b.lane0.data();
  std::uint32_t* l1 = b.lane1.data();
  __m512i mn = _mm512_set1_epi8(-1);
  __m512i mx = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + kVector512 <= n; i += kVector512) {
    const __m512i x = _mm512_loadu_si512(p + i);
    mn = _mm512_min_epu16(mn, x);
    mx = _mm512_max_epu16(mx, x);
    alignas(64) std::uint64_t w[8];
    _mm512_store_si512(w, x);
#pragma GCC unroll 8
    for (std::uint64_t v : w) count_word16(v, l0, l1);
  }
  alignas(64) unsigned char lows[kVector512];
  alignas(64) unsigned char highs[kVector512];
  _mm512_store_si512(lows, mn);
  _mm512_store_si512(highs, mx);
  finish_wide16(lows, highs, p, i, n, b, lo, hi);
}
#endif

// Counts the windows of `isa.values` codes covering lo..hi over the whole
// steps of the n bytes at p into bins (bins[k] counts code base + k, k < 2 *
// kNarrowSpan), the tail code by code; returns base.
unsigned narrow16(const Isa16& isa, const unsigned char* p, std::size_t n, unsigned lo, unsigned hi,
                  std::uint32_t* bins, const unsigned char* ahead) {
  const std::size_t whole = n - n % isa.step;
  const unsigned passes = (hi - lo) / isa.values + 1;
  const unsigned base = std::min<unsigned>(lo, kCodes16 - passes * isa.values);
  for (unsigned w = 0; w < passes; ++w) {
    isa.count(p, whole, base + w * isa.values, bins + w * isa.values, w == 0 ? ahead : p);
  }
  for (std::size_t i = whole; i + 2 <= n; i += 2) {
    std::uint16_t c;
    std::memcpy(&c, p + i, 2);
    if (c >= base && c < base + passes * isa.values) ++bins[c - base];
  }
  return base;
}

// This thread's 16-bit bins and what they hold: counted codes lie in
// seen_lo..seen_hi (no code when seen_lo > seen_hi); `held` codes in all.
struct State16 {
  Bins16 bins;
  unsigned seen_lo = 0xFFFF, seen_hi = 0;
  std::uint64_t held = 0;
  // As for bytes: the last narrow window of this thread, tried first.
  bool have_guess = false;
  unsigned guess_lo = 0, guess_hi = 0;
  // The last block of this thread was wide: the next is counted wide, its range on the way.
  bool last_wide = false;
  std::vector<std::uint32_t> window;  // take16_window's scratch
};

State16& state16() {
  thread_local State16 s;
  return s;
}

// Reads the counted codes out into `out` and zeroes the bins again.
void take16(State16& s, CodeCounts& out) {
  CodeCounts counts;
  if (s.seen_lo <= s.seen_hi) counts.reserve(std::min<std::size_t>(s.held, s.seen_hi - s.seen_lo + 1));
  for (std::size_t c = s.seen_lo; s.seen_lo <= s.seen_hi && c <= s.seen_hi; ++c) {
    const std::uint64_t v = std::uint64_t{s.bins.lane0[c]} + s.bins.lane1[c];
    if (v != 0) counts.emplace_back(static_cast<std::uint32_t>(c), v);
    s.bins.lane0[c] = 0;
    s.bins.lane1[c] = 0;
  }
  s.seen_lo = 0xFFFF;
  s.seen_hi = 0;
  s.held = 0;
  merge_counts(out, std::move(counts));
}

// take16 as a window of the codes seen: each bin's two lanes hold less than
// 2^31 together (a take comes at least every kPiece16 / 2 codes). The sums go
// through the thread's scratch window, so only the kept histogram is new memory.
CompactCounts take16_window(State16& s) {
  CompactCounts out;
  if (s.seen_lo <= s.seen_hi) {
    const std::size_t n = s.seen_hi - s.seen_lo + 1;
    s.window.resize(n);
    std::uint32_t* l0 = s.bins.lane0.data() + s.seen_lo;
    std::uint32_t* l1 = s.bins.lane1.data() + s.seen_lo;
    for (std::size_t k = 0; k < n; ++k) s.window[k] = l0[k] + l1[k];
    std::fill_n(l0, n, 0u);
    std::fill_n(l1, n, 0u);
    out = CompactCounts(s.seen_lo, s.window);
  }
  s.seen_lo = 0xFFFF;
  s.seen_hi = 0;
  s.held = 0;
  return out;
}

void note_seen(State16& s, unsigned lo, unsigned hi) {
  s.seen_lo = std::min(s.seen_lo, lo);
  s.seen_hi = std::max(s.seen_hi, hi);
}

// Adds trial (from narrow16 at `base`) to the bins. The window may reach
// past code 0xFFFF (a base near the top): only codes seen are added.
void add_trial(State16& s, unsigned base, const std::uint32_t* trial) {
  for (unsigned k = 0; k < 2 * detail::kNarrowSpan; ++k) {
    if (trial[k] == 0) continue;
    s.bins.lane0[base + k] += trial[k];
    note_seen(s, base + k, base + k);
  }
}

// Counts the block with isa.wide; its range becomes the next block's guess when narrow.
void count_wide(State16& s, const Isa16& isa, const unsigned char* p, std::size_t n) {
  unsigned lo = 0, hi = 0;
  isa.wide(p, n, s.bins, lo, hi);
  note_seen(s, lo, hi);
  s.have_guess = isa.range && hi - lo < detail::kNarrowSpan;
  s.last_wide = !s.have_guess;
  s.guess_lo = lo;
  s.guess_hi = hi;
}

// One block of at most kBlock16 bytes (even, > 0): counted in the last narrow
// windows if every code falls in them; else wide, without a range pass, after
// a wide block; else from its own range pass, narrow or wide.
void add_block16(State16& s, const Isa16& isa, const unsigned char* p, std::size_t n, const unsigned char* ahead) {
  if (!isa.range || (s.last_wide && !s.have_guess)) return count_wide(s, isa, p, n);
  std::uint32_t trial[2 * detail::kNarrowSpan] = {};
  if (s.have_guess) {
    const unsigned base = narrow16(isa, p, n, s.guess_lo, s.guess_hi, trial, ahead);
    std::uint64_t counted = 0;
    for (std::uint32_t c : trial) counted += c;
    if (counted == n / 2) return add_trial(s, base, trial);
    std::fill(std::begin(trial), std::end(trial), 0u);
  }
  unsigned lo = 0, hi = 0;
  isa.range(p, n, lo, hi);
  if (hi - lo >= detail::kNarrowSpan) return count_wide(s, isa, p, n);
  add_trial(s, narrow16(isa, p, n, lo, hi, trial, ahead), trial);
  s.have_guess = true;
  s.last_wide = false;
  s.guess_lo = lo;
  s.guess_hi = hi;
}

// Counts the 16-bit codes of `bytes` into this thread's bins; before they
// could pass 2^32 in a bin, they are read out into `spill`.
void add16(std::span<const unsigned char> bytes, const Isa16& isa, CodeCounts& spill) {
  State16& s = state16();
  const std::size_t n_all = bytes.size() - bytes.size() % 2;
  for (std::size_t off = 0; off < n_all; off += kBlock16) {
    const unsigned char* p = bytes.data() + off;
    const std::size_t n = std::min(kBlock16, n_all - off);
    if (s.held + n / 2 > kPiece16 / 2) take16(s, spill);
    s.held += n / 2;
    add_block16(s, isa, p, n, off + kBlock16 < n_all ? p + kBlock16 : p);
  }
}

Isa16 isa16(detail::HistogramIsa isa) {
#ifdef BITPROOF_HISTOGRAM_AVX2
  if (isa == detail::HistogramIsa::kAvx512 && detail::isa_available(isa)) {
    return {code_range_avx512<16>, count16_avx512<kPassValues512>, wide16_avx512, kVector512, kPassValues512};
  }
  if (isa == detail::HistogramIsa::kAvx2 && detail::isa_available(isa)) {
    return {code_range_avx2<16>, count16_avx2<kPassValues>, wide16_avx2, kVector, kPassValues};
  }
#endif
  (void)isa;
  return {nullptr, nullptr, wide16_portable};
}

void take32(std::vector<std::uint32_t>& codes, CodeCounts& out) {
  std::sort(codes.begin(), codes.end());
  CodeCounts runs;
  for (std::size_t i = 0; i < codes.size();) {
    std::size_t j = i;
    while (j < codes.size() && codes[j] == codes[i]) ++j;
    runs.emplace_back(codes[i], j - i);
    i = j;
  }
  codes.clear();
  merge_counts(out, std::move(runs));
}

}  // namespace

namespace detail {

void add_histogram_portable(std::span<const unsigned char> bytes, Histogram& h) {
  for (std::size_t off = 0; off < bytes.size(); off += kPortableBlock) {
    portable_block(bytes.data() + off, std::min(kPortableBlock, bytes.size() - off), h);
  }
}

bool isa_available(HistogramIsa isa) {
#ifdef BITPROOF_HISTOGRAM_AVX2
  const CpuFeatures& cpu = cpu_features();
  const bool avx2 = cpu.avx2;
  const bool avx512 = avx2 && cpu.avx512f && cpu.avx512bw;
  switch (isa) {
    case HistogramIsa::kPortable: return true;
    case HistogramIsa::kAvx2: return avx2;
    case HistogramIsa::kAvx512: return avx512;
  }
  return false;
#else
  return isa == HistogramIsa::kPortable;
#endif
}

HistogramIsa best_isa() {
  if (isa_available(HistogramIsa::kAvx512)) return HistogramIsa::kAvx512;
  if (isa_available(HistogramIsa::kAvx2)) return HistogramIsa::kAvx2;
  return HistogramIsa::kPortable;
}

void add_histogram_with(std::span<const unsigned char> bytes, Histogram& h, HistogramIsa isa) {
#ifdef BITPROOF_HISTOGRAM_AVX2
  if (isa == HistogramIsa::kAvx512 && isa_available(isa)) return add_blocks(bytes, h, narrow_block_512);
  if (isa == HistogramIsa::kAvx2 && isa_available(isa)) return add_blocks(bytes, h, narrow_block);
#endif
  add_histogram_portable(bytes, h);
}

}  // namespace detail

void add_histogram(std::span<const unsigned char> bytes, Histogram& h) {
  static const detail::HistogramIsa isa = detail::best_isa();
  detail::add_histogram_with(bytes, h, isa);
}

void merge_histogram(Histogram& h, const Histogram& other) {
  for (int b = 0; b < 256; ++b) h[b] += other[b];
}

void merge_counts(CodeCounts& into, const CodeCounts& from) {
  if (from.empty()) return;
  if (into.empty()) {
    into = from;
    return;
  }
  CodeCounts merged;
  merged.reserve(into.size() + from.size());
  std::size_t i = 0, j = 0;
  while (i < into.size() || j < from.size()) {
    if (j == from.size() || (i < into.size() && into[i].first < from[j].first)) {
      merged.push_back(into[i++]);
    } else if (i == into.size() || from[j].first < into[i].first) {
      merged.push_back(from[j++]);
    } else {
      merged.emplace_back(into[i].first, into[i].second + from[j].second);
      ++i, ++j;
    }
  }
  into = std::move(merged);
}

void merge_counts(CodeCounts& into, CodeCounts&& from) {
  if (into.empty()) {
    into = std::move(from);
    return;
  }
  merge_counts(into, static_cast<const CodeCounts&>(from));
}

CodeCounts counts_of(const Histogram& h) {
  CodeCounts out;
  for (std::uint32_t b = 0; b < 256; ++b) {
    if (h[b] != 0) out.emplace_back(b, h[b]);
  }
  return out;
}

CodeCounter::CodeCounter(int code_bits) : CodeCounter(code_bits, detail::best_isa()) {}

CodeCounter::CodeCounter(int code_bits, detail::HistogramIsa isa) : bits_(code_bits), isa_(isa) {}

CodeCounter::~CodeCounter() {
  if (bits_ == 16) {
    CodeCounts dropped;
    take16(state16(), dropped);  // leave this thread's bins zero for the next counter
  }
}

void CodeCounter::add(std::span<const unsigned char> bytes) {
  if (bits_ == 8) {
    detail::add_histogram_with(bytes, bytes8_, isa_);
  } else if (bits_ == 16) {
    add16(bytes, isa16(isa_), spill_);
  } else {
    const std::size_t n = bytes.size() / 4;
    codes32_.resize(codes32_.size() + n);
    if (n) std::memcpy(codes32_.data() + codes32_.size() - n, bytes.data(), n * 4);
  }
}

void CodeCounter::take(CodeCounts& out) {
  if (bits_ == 8) {
    merge_counts(out, counts_of(bytes8_));
    bytes8_ = {};
  } else if (bits_ == 16) {
    take16(state16(), spill_);
  } else {
    take32(codes32_, spill_);
  }
  merge_counts(out, std::move(spill_));
  spill_ = {};
}

void CodeCounter::take(CompactCounts& out) {
  if (bits_ == 16 && spill_.empty()) return out.merge(take16_window(state16()));
  CodeCounts counts;
  take(counts);
  out.merge(CompactCounts(std::move(counts)));
}

// ---- CompactCounts ----

namespace {
// The fewest bytes (1, 2 or 4) that hold `largest` (or the OR of all counts).
unsigned bytes_for(std::uint32_t largest) { return largest <= 0xFFu ? 1 : largest <= 0xFFFFu ? 2 : 4; }

// A window of n codes at `bytes` a count is kept when it takes at most the memory of its pairs.
bool window_fits(std::uint64_t n, unsigned bytes, std::size_t nonzero) {
  return n * bytes <= nonzero * sizeof(CodeCounts::value_type);
}

// The counts as T (each fits).
template <class T>
std::vector<T> narrowed(std::span<const std::uint32_t> counts) {
  std::vector<T> out(counts.size());
  std::transform(counts.begin(), counts.end(), out.begin(), [](std::uint32_t c) { return static_cast<T>(c); });
  return out;
}
}  // namespace

void CompactCounts::add_into(std::vector<std::uint64_t>& dense, CodeCounts& wide) const {
  const auto grow = [&dense](std::uint64_t code) {
    if (code >= dense.size()) dense.resize(code < 256 ? 256 : kCodes16);
  };
  if (!is_window()) {
    for (const auto& [code, count] : pairs_) {
      if (code >= kCodes16) {
        wide.emplace_back(code, count);
        continue;
      }
      grow(code);
      dense[code] += count;
    }
    return;
  }
  visit_window([&](const auto* counts, std::size_t n) {
    const std::uint64_t end = std::uint64_t{base_} + n;
    const std::uint64_t dense_end = std::min<std::uint64_t>(end, kCodes16);
    if (dense_end > base_) grow(dense_end - 1);
    for (std::uint64_t code = base_; code < dense_end; ++code) dense[code] += counts[code - base_];
    for (std::uint64_t code = std::max<std::uint64_t>(base_, kCodes16); code < end; ++code) {
      if (counts[code - base_] != 0) wide.emplace_back(static_cast<std::uint32_t>(code), counts[code - base_]);
    }
  });
}

CompactCounts::CompactCounts(CodeCounts pairs) {
  const bool narrow = std::all_of(pairs.begin(), pairs.end(), [](const auto& p) { return p.second >> 32 == 0; });
  if (pairs.empty() || !narrow) {
    pairs_ = std::move(pairs);
    return;
  }
  const std::uint32_t base = pairs.front().first;
  const std::uint64_t n = std::uint64_t{pairs.back().first} - base + 1;
  if (!window_fits(n, 1, pairs.size())) {  // too sparse even at a byte a count
    pairs_ = std::move(pairs);
    return;
  }
  std::vector<std::uint32_t> counts(n, 0);
  for (const auto& [code, count] : pairs) counts[code - base] = static_cast<std::uint32_t>(count);
  *this = CompactCounts(base, counts);
}

CompactCounts::CompactCounts(std::uint32_t base, std::span<const std::uint32_t> counts) {
  std::size_t first = 0, last = counts.size();
  while (first < last && counts[first] == 0) ++first;
  while (last > first && counts[last - 1] == 0) --last;
  const std::span<const std::uint32_t> held = counts.subspan(first, last - first);
  // One pass for both (an OR has the largest count's width; SSE2 has no unsigned max).
  std::uint32_t all_bits = 0;
  std::size_t zeros = 0;
  for (const std::uint32_t c : held) {
    all_bits |= c;
    zeros += c == 0 ? 1 : 0;
  }
  const std::size_t nonzero = held.size() - zeros;
  if (nonzero == 0) return;
  const unsigned bytes = bytes_for(all_bits);
  if (!window_fits(held.size(), bytes, nonzero)) {
    pairs_.reserve(nonzero);
    for (std::size_t k = 0; k < held.size(); ++k) {
      if (held[k] != 0) pairs_.emplace_back(static_cast<std::uint32_t>(base + first + k), held[k]);
    }
    return;
  }
  base_ = static_cast<std::uint32_t>(base + first);
  if (bytes == 1) {
    window_ = narrowed<std::uint8_t>(held);
  } else if (bytes == 2) {
    window_ = narrowed<std::uint16_t>(held);
  } else {
    window_ = narrowed<std::uint32_t>(held);
  }
}

CodeCounts CompactCounts::pairs() const {
  if (!is_window()) return pairs_;
  return CodeCounts(begin(), end());
}

void CompactCounts::merge(CompactCounts&& other) {
  if (other.empty()) return;
  if (empty()) {
    *this = std::move(other);
    return;
  }
  if (is_window() && other.is_window() && other.base_ >= base_ &&
      other.base_ - base_ + other.window_size() <= window_size()) {
    std::vector<std::uint32_t> sums(window_size());
    visit_window([&sums](const auto* counts, std::size_t n) { std::copy_n(counts, n, sums.begin()); });
    const bool fits = other.visit_window([&](const auto* counts, std::size_t n) {
      std::uint32_t* into = sums.data() + (other.base_ - base_);
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t sum = std::uint64_t{into[k]} + counts[k];
        if (sum >> 32 != 0) return false;
        into[k] = static_cast<std::uint32_t>(sum);
      }
      return true;
    });
    if (fits) {
      *this = CompactCounts(base_, sums);
      return;
    }
  }
  CodeCounts merged = pairs();
  merge_counts(merged, other.pairs());
  *this = CompactCounts(std::move(merged));
}

void count_codes(std::span<const unsigned char> bytes, int code_bits, CodeCounts& out) {
  CodeCounter counter(code_bits);
  counter.add(bytes);
  counter.take(out);
}

namespace detail {
void count_codes16_with(std::span<const unsigned char> bytes, CodeCounts& out, HistogramIsa isa) {
  CodeCounter counter(16, isa);
  counter.add(bytes);
  counter.take(out);
}
}  // namespace detail

}  // namespace bitproof::audit
