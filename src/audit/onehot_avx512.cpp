// The one-hot count (onehot.hpp) for AVX-512BW; this source is compiled with
// the AVX-512 flags. A carry-save adder is two ternary-logic instructions.
#include "audit/onehot.hpp"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__)
#include "audit/onehot_impl.hpp"

namespace bitproof::audit::onehot {
namespace {

struct Avx512 {
  using V = __m512i;
  static constexpr std::size_t kBytes = 64;
  static V load(const unsigned char* p) { return _mm512_loadu_si512(p); }
  static V zero() { return _mm512_setzero_si512(); }
  static V set1(unsigned char b) { return _mm512_set1_epi8(static_cast<char>(b)); }
  static V table(const unsigned char* t) {  // built in memory: GCC 12 warns of the broadcast intrinsics
    alignas(64) unsigned char lanes[64];
    for (int i = 0; i < 64; ++i) lanes[i] = t[i % 16];
    return _mm512_load_si512(lanes);
  }
  static V lookup(V t, V index) { return _mm512_shuffle_epi8(t, index); }
  static V sub(V a, V b) { return _mm512_sub_epi8(a, b); }
  static V adds_u8(V a, V b) { return _mm512_adds_epu8(a, b); }
  static V add8(V a, V b) { return _mm512_add_epi8(a, b); }
  static V and_(V a, V b) { return _mm512_and_si512(a, b); }
  static V srli16(V a, int k) { return _mm512_srli_epi16(a, static_cast<unsigned>(k)); }
  static void carry_save(V& high, V& low, V a, V b, V c) {
    high = _mm512_ternarylogic_epi32(a, b, c, 0xE8);  // majority
    low = _mm512_ternarylogic_epi32(a, b, c, 0x96);   // a ^ b ^ c
  }
  static std::uint64_t byte_sum(V v) {  // _mm512_reduce_add_epi64 draws GCC 12's warning too
    alignas(64) std::uint64_t sums[8];
    _mm512_store_si512(sums, _mm512_sad_epu8(v, _mm512_setzero_si512()));
    std::uint64_t total = 0;
    for (const std::uint64_t s : sums) total += s;
    return total;
  }
};
static_assert(16 * Avx512::kBytes == kAvx512Step);

}  // namespace

void count_avx512(const unsigned char* p, std::size_t n, unsigned first, unsigned values, std::uint64_t* bins,
                  const unsigned char* ahead) {
  count<Avx512>(p, n, first, values, bins, ahead);
}

}  // namespace bitproof::audit::onehot
#endif
