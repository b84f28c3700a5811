#include "audit/histogram.hpp"

#include <algorithm>
#include <cstring>

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

// Counts the values first .. first+7 over the n (a multiple of 32) bytes at p.
__attribute__((target("avx2"))) void count_eight(const unsigned char* p, std::size_t n, unsigned first, Histogram& h) {
  __m256i value[kPassValues];
  for (int j = 0; j < kPassValues; ++j) value[j] = _mm256_set1_epi8(static_cast<char>(first + j));
  for (std::size_t i = 0; i < n;) {
    __m256i acc[kPassValues];
    for (int j = 0; j < kPassValues; ++j) acc[j] = _mm256_setzero_si256();
    const std::size_t end = std::min(n, i + kMaxRounds * kVector);
    for (; i < end; i += kVector) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
#pragma GCC unroll 8
      for (int j = 0; j < kPassValues; ++j) acc[j] = _mm256_sub_epi8(acc[j], _mm256_cmpeq_epi8(x, value[j]));
    }
    for (int j = 0; j < kPassValues; ++j) h[first + j] += sum_bytes(acc[j]);
  }
}

// A block whose bytes all lie in lo..hi (hi - lo < kNarrowSpan): passes of 8 values.
void narrow_block(const unsigned char* p, std::size_t n, unsigned lo, unsigned hi, Histogram& h) {
  const std::size_t whole = n - n % kVector;
  // Disjoint windows of 8 values covering lo..hi, moved down as a whole to end by 255.
  const unsigned passes = (hi - lo) / kPassValues + 1;
  const unsigned base = std::min(lo, 256u - passes * kPassValues);
  for (unsigned w = 0; w < passes; ++w) count_eight(p, whole, base + w * kPassValues, h);
  for (std::size_t i = whole; i < n; ++i) ++h[p[i]];
}

#endif

}  // namespace

namespace detail {

void add_histogram_portable(std::span<const unsigned char> bytes, Histogram& h) {
  for (std::size_t off = 0; off < bytes.size(); off += kPortableBlock) {
    portable_block(bytes.data() + off, std::min(kPortableBlock, bytes.size() - off), h);
  }
}

bool narrow_path_available() {
#ifdef BITPROOF_HISTOGRAM_AVX2
  static const bool available = __builtin_cpu_supports("avx2");
  return available;
#else
  return false;
#endif
}

}  // namespace detail

void add_histogram(std::span<const unsigned char> bytes, Histogram& h) {
#ifdef BITPROOF_HISTOGRAM_AVX2
  if (detail::narrow_path_available()) {
    for (std::size_t off = 0; off < bytes.size(); off += kNarrowBlock) {
      const unsigned char* p = bytes.data() + off;
      const std::size_t n = std::min(kNarrowBlock, bytes.size() - off);
      unsigned lo = 0;
      unsigned hi = 0;
      byte_range(p, n, lo, hi);
      if (hi - lo < detail::kNarrowSpan) {
        narrow_block(p, n, lo, hi, h);
      } else {
        portable_block(p, n, h);
      }
    }
    return;
  }
#endif
  detail::add_histogram_portable(bytes, h);
}

void merge_histogram(Histogram& h, const Histogram& other) {
  for (int b = 0; b < 256; ++b) h[b] += other[b];
}

}  // namespace bitproof::audit
