#include "audit/histogram.hpp"

#include <algorithm>
#include <cstring>

namespace bitproof::audit {
namespace {

constexpr int kLanes = 8;
// Each lane counts at most kBlock / kLanes bytes of a block in 32 bits.
constexpr std::size_t kBlock = std::size_t{1} << 30;

void add_block(const unsigned char* p, std::size_t n, Histogram& h) {
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

}  // namespace

void add_histogram(std::span<const unsigned char> bytes, Histogram& h) {
  for (std::size_t off = 0; off < bytes.size(); off += kBlock) {
    add_block(bytes.data() + off, std::min(kBlock, bytes.size() - off), h);
  }
}

void merge_histogram(Histogram& h, const Histogram& other) {
  for (int b = 0; b < 256; ++b) h[b] += other[b];
}

}  // namespace bitproof::audit
