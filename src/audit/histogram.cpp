#include "audit/histogram.hpp"

#include <algorithm>
#include <cstring>

#include "backend/cpu_features.hpp"

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

#ifdef BITPROOF_HISTOGRAM_AVX2

constexpr std::size_t kVector = 32;
constexpr std::size_t kMaxRounds = 255;  // a byte counter holds 255 increments
constexpr int kPassValues = 8;

__attribute__((target("avx2"))) void byte_range(const unsigned char* p, std::size_t n, unsigned& lo, unsigned& hi) {
  __m256i mn = _mm256_set1_epi8(static_cast<char>(0xFF));
  __m256i mx = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + kVector <= n; i += kVector) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    mn = _mm256_min_epu8(mn, x);
    mx = _mm256_max_epu8(mx, x);
  }
  alignas(32) unsigned char lows[kVector];
  alignas(32) unsigned char highs[kVector];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lows), mn);
  _mm256_store_si256(reinterpret_cast<__m256i*>(highs), mx);
  lo = 255;
  hi = 0;
  for (std::size_t k = 0; k < kVector; ++k) {
    lo = std::min<unsigned>(lo, lows[k]);
    hi = std::max<unsigned>(hi, highs[k]);
  }
  for (; i < n; ++i) {
    lo = std::min<unsigned>(lo, p[i]);
    hi = std::max<unsigned>(hi, p[i]);
  }
}

__attribute__((target("avx2"))) std::uint64_t sum_bytes(__m256i counts) {
  const __m256i s = _mm256_sad_epu8(counts, _mm256_setzero_si256());
  return static_cast<std::uint64_t>(_mm256_extract_epi64(s, 0)) +
         static_cast<std::uint64_t>(_mm256_extract_epi64(s, 1)) +
         static_cast<std::uint64_t>(_mm256_extract_epi64(s, 2)) +
         static_cast<std::uint64_t>(_mm256_extract_epi64(s, 3));
}

// Counts the values first .. first+7 over the n (a multiple of 32) bytes at p,
// prefetching the bytes at `ahead` (the next block) into L2 as it goes: the
// next block's memory traffic then overlaps this block's compares.
__attribute__((target("avx2"))) void count_eight(const unsigned char* p, std::size_t n, unsigned first, Histogram& h,
                                                 const unsigned char* ahead) {
  __m256i value[kPassValues];
  for (int j = 0; j < kPassValues; ++j) value[j] = _mm256_set1_epi8(static_cast<char>(first + j));
  for (std::size_t i = 0; i < n;) {
    __m256i acc[kPassValues];
    for (int j = 0; j < kPassValues; ++j) acc[j] = _mm256_setzero_si256();
    const std::size_t end = std::min(n, i + kMaxRounds * kVector);
    for (; i < end; i += kVector) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      if (i % 64 == 0) _mm_prefetch(reinterpret_cast<const char*>(ahead + i), _MM_HINT_T1);
#pragma GCC unroll 8
      for (int j = 0; j < kPassValues; ++j) acc[j] = _mm256_sub_epi8(acc[j], _mm256_cmpeq_epi8(x, value[j]));
    }
    for (int j = 0; j < kPassValues; ++j) h[first + j] += sum_bytes(acc[j]);
  }
}

// AVX-512BW: 64 bytes a step and 32 registers, so 16 values a pass (a scale
// tensor's dozen exponents in one pass); a compare gives a mask, a masked add
// counts it.
constexpr std::size_t kVector512 = 64;
constexpr int kPassValues512 = 16;

__attribute__((target("avx512f,avx512bw"))) void count_sixteen(const unsigned char* p, std::size_t n, unsigned first,
                                                                Histogram& h, const unsigned char* ahead) {
  __m512i value[kPassValues512];
  for (int j = 0; j < kPassValues512; ++j) value[j] = _mm512_set1_epi8(static_cast<char>(first + j));
  const __m512i one = _mm512_set1_epi8(1);
  for (std::size_t i = 0; i < n;) {
    __m512i acc[kPassValues512];
    for (int j = 0; j < kPassValues512; ++j) acc[j] = _mm512_setzero_si512();
    const std::size_t end = std::min(n, i + kMaxRounds * kVector512);
    for (; i < end; i += kVector512) {
      const __m512i x = _mm512_loadu_si512(p + i);
      _mm_prefetch(reinterpret_cast<const char*>(ahead + i), _MM_HINT_T1);
#pragma GCC unroll 16
      for (int j = 0; j < kPassValues512; ++j) {
        acc[j] = _mm512_mask_add_epi8(acc[j], _mm512_cmpeq_epi8_mask(x, value[j]), acc[j], one);
      }
    }
    for (int j = 0; j < kPassValues512; ++j) {
      alignas(64) std::uint64_t sums[8];
      _mm512_store_si512(sums, _mm512_sad_epu8(acc[j], _mm512_setzero_si512()));
      for (std::uint64_t v : sums) h[first + j] += v;
    }
  }
}

using CountPass = void (*)(const unsigned char*, std::size_t, unsigned, Histogram&, const unsigned char*);

// Counts every value of the kValues-wide windows covering lo..hi (hi - lo <
// kNarrowSpan) in the block, with `count` taking kStep bytes a step, and every
// byte of its tail; prefetches `ahead` during the first pass.
template <std::size_t kStep, unsigned kValues, CountPass count>
void narrow_windows(const unsigned char* p, std::size_t n, unsigned lo, unsigned hi, Histogram& h,
                    const unsigned char* ahead) {
  const std::size_t whole = n - n % kStep;
  // Disjoint windows covering lo..hi, moved down as a whole to end by 255.
  const unsigned passes = (hi - lo) / kValues + 1;
  const unsigned base = std::min(lo, 256u - passes * kValues);
  for (unsigned w = 0; w < passes; ++w) count(p, whole, base + w * kValues, h, w == 0 ? ahead : p);
  for (std::size_t i = whole; i < n; ++i) ++h[p[i]];
}

constexpr auto narrow_block = narrow_windows<kVector, kPassValues, count_eight>;
constexpr auto narrow_block_512 = narrow_windows<kVector512, kPassValues512, count_sixteen>;

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
  bool have_guess = false;
  unsigned guess_lo = 0;
  unsigned guess_hi = 0;
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
    byte_range(p, n, lo, hi);
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

}  // namespace bitproof::audit
