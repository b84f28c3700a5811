// The one-hot count (onehot.hpp) for AVX2; this source is compiled with -mavx2.
#include "audit/onehot.hpp"

#if defined(__x86_64__) && defined(__AVX2__)
#include "audit/onehot_impl.hpp"

namespace bitproof::audit::onehot {
namespace {

struct Avx2 {
  using V = __m256i;
  static constexpr std::size_t kBytes = 32;
  static V load(const unsigned char* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static V zero() { return _mm256_setzero_si256(); }
  static V set1(unsigned char b) { return _mm256_set1_epi8(static_cast<char>(b)); }
  static V table(const unsigned char* t) {
    return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
  }
  static V lookup(V t, V index) { return _mm256_shuffle_epi8(t, index); }
  static V sub(V a, V b) { return _mm256_sub_epi8(a, b); }
  static V adds_u8(V a, V b) { return _mm256_adds_epu8(a, b); }
  static V add8(V a, V b) { return _mm256_add_epi8(a, b); }
  static V and_(V a, V b) { return _mm256_and_si256(a, b); }
  static V srli16(V a, int k) { return _mm256_srli_epi16(a, k); }
  static void carry_save(V& high, V& low, V a, V b, V c) {
    const V u = _mm256_xor_si256(a, b);
    high = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u, c));
    low = _mm256_xor_si256(u, c);
  }
  static std::uint64_t byte_sum(V v) {
    const V s = _mm256_sad_epu8(v, _mm256_setzero_si256());
    return static_cast<std::uint64_t>(_mm256_extract_epi64(s, 0)) +
           static_cast<std::uint64_t>(_mm256_extract_epi64(s, 1)) +
           static_cast<std::uint64_t>(_mm256_extract_epi64(s, 2)) +
           static_cast<std::uint64_t>(_mm256_extract_epi64(s, 3));
  }
};
static_assert(16 * Avx2::kBytes == kAvx2Step);

}  // namespace

void count_avx2(const unsigned char* p, std::size_t n, unsigned first, unsigned values, std::uint64_t* bins,
                const unsigned char* ahead) {
  count<Avx2>(p, n, first, values, bins, ahead);
}

}  // namespace bitproof::audit::onehot
#endif
