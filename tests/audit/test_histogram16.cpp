// 16-bit code counts and the compact per-tensor histogram: every counting path
// this CPU has (portable, AVX2, AVX-512BW) equals a plain count in a std::map,
// over narrow and wide blocks in every order, pieces of any size, odd starts,
// every code value, and counts past 2^32 (the 32-bit bins and windows).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "audit/histogram.hpp"
#include "sweep_stride.hpp"

namespace bitproof::audit {
namespace {

constexpr detail::HistogramIsa kIsas16[] = {detail::HistogramIsa::kPortable, detail::HistogramIsa::kAvx2,
                                          detail::HistogramIsa::kAvx512};
constexpr std::size_t kBlockCodes = std::size_t{1} << 15;  // the counter's blocks of 2^16 bytes

using Plain = std::map<std::uint32_t, std::uint64_t>;

CodeCounts counts_of_map(const Plain& m) { return {m.begin(), m.end()}; }

// Little-endian 16-bit codes of bytes[begin, end) (a trailing odd byte left out), counted in a map.
CodeCounts plain16(const std::vector<unsigned char>& bytes, std::size_t begin, std::size_t end) {
  Plain m;
  for (std::size_t i = begin; i + 2 <= end; i += 2) ++m[bytes[i] | (unsigned{bytes[i + 1]} << 8)];
  return counts_of_map(m);
}

std::vector<unsigned char> bytes_of(const std::vector<std::uint16_t>& codes) {
  std::vector<unsigned char> out;
  out.reserve(2 * codes.size());
  for (std::uint16_t c : codes) {
    out.push_back(static_cast<unsigned char>(c));
    out.push_back(static_cast<unsigned char>(c >> 8));
  }
  return out;
}

struct Rng {
  std::uint64_t x;
  std::uint64_t next() {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
  }
};

// Counts bytes[begin, end) with the given path, `piece` bytes (even) an add, into both take forms.
std::pair<CodeCounts, CompactCounts> count16(const std::vector<unsigned char>& bytes, std::size_t begin,
                                             std::size_t end, std::size_t piece, detail::HistogramIsa isa) {
  end = begin + (end - begin) / 2 * 2;
  std::pair<CodeCounts, CompactCounts> out;
  for (int form = 0; form < 2; ++form) {
    CodeCounter counter(16, isa);
    for (std::size_t at = begin; at < end; at += piece) {
      counter.add(std::span(bytes).subspan(at, std::min(piece, end - at)));
    }
    if (form == 0) counter.take(out.first);
    if (form == 1) counter.take(out.second);
  }
  return out;
}

}  // namespace

TEST_SUITE("audit") {
  TEST_CASE("16-bit counts: narrow and wide blocks in every order, pieces of any size, odd starts") {
    // Blocks of 2^15 codes: (lo, span) each, narrow (span <= 32: the vector
    // compares) and wide (the scalar count with its range), shifted, at the top.
    const std::pair<unsigned, unsigned> spans[] = {{0x3C00, 13}, {0x1C00, 2049}, {0x3C00, 13}, {0x3C05, 13},
                                                   {0, 65536},   {0x1C00, 2049}, {0xFFF0, 16}, {0xFFDE, 34},
                                                   {7, 1},       {0x1C00, 33},   {0x1C00, 32}, {0xFFFF, 1}};
    Rng rng{0x2545F4914F6CDD1Dull};
    std::vector<std::uint16_t> codes;
    for (const auto& [lo, span] : spans) {
      for (std::size_t i = 0; i < kBlockCodes; ++i) codes.push_back(static_cast<std::uint16_t>(lo + rng.next() % span));
    }
    for (int i = 0; i < 45; ++i) codes.push_back(static_cast<std::uint16_t>(0x2000 + i));  // a tail past the blocks
    const std::vector<unsigned char> bytes = bytes_of(codes);
    int compared = 0;
    for (const auto isa : kIsas16) {
      if (!detail::isa_available(isa)) continue;
      for (std::size_t begin : {0, 1, 2, 7}) {  // odd starts read other codes: each compared with its own plain count
        for (std::size_t piece : {std::size_t{2}, std::size_t{998}, std::size_t{65538}, bytes.size()}) {
          if (piece == 2 && begin != 0) continue;  // one code an add: once per path is enough
          const CodeCounts plain = plain16(bytes, begin, bytes.size());
          const auto [pairs, compact] = count16(bytes, begin, bytes.size(), piece, isa);
          CHECK_MESSAGE(pairs == plain, "isa " << static_cast<int>(isa) << " begin " << begin << " piece " << piece);
          CHECK_MESSAGE(compact == plain, "isa " << static_cast<int>(isa) << " begin " << begin << " piece " << piece);
          ++compared;
        }
      }
    }
    CHECK(compared >= 13);  // the portable path and at least one more on x86-64 with AVX2
    // Negative control: one changed code is noticed.
    CodeCounts plain = plain16(bytes, 0, bytes.size());
    ++plain[5].second;
    CHECK(count16(bytes, 0, bytes.size(), bytes.size(), detail::best_isa()).first != plain);
  }

  TEST_CASE("16-bit counts: every code value 0..65535, each with its own count, in order and shuffled") {
    std::vector<std::uint16_t> codes;
    for (std::uint32_t c = 0; c < 65536; ++c) codes.insert(codes.end(), c % 7 + 1, static_cast<std::uint16_t>(c));
    const std::vector<unsigned char> in_order = bytes_of(codes);
    Rng rng{99};
    for (std::size_t i = codes.size() - 1; i > 0; --i) std::swap(codes[i], codes[rng.next() % (i + 1)]);
    const std::vector<unsigned char> shuffled = bytes_of(codes);
    const CodeCounts plain = plain16(in_order, 0, in_order.size());
    REQUIRE(plain.size() == 65536);
    for (const auto isa : kIsas16) {
      if (!detail::isa_available(isa)) continue;
      for (const auto* bytes : {&in_order, &shuffled}) {
        const auto [pairs, compact] = count16(*bytes, 0, bytes->size(), 65536 + 6, isa);
        CHECK_MESSAGE(pairs == plain, "isa " << static_cast<int>(isa));
        CHECK_MESSAGE(compact == plain, "isa " << static_cast<int>(isa));
        CHECK(compact.is_window());  // 65,536 counts in 32 bits: the window is the smaller form
      }
    }
  }

  TEST_CASE("16-bit counts past 2^32 of one code: exact, in pairs, on every path") {
    // 1 MiB of code 0x3C00 with 0x3C01 every 4,096 codes, counted 8,200 times:
    // 4,298 M codes of 0x3C00, past the 32-bit bins (read out every 2^30 codes) and windows.
    std::vector<std::uint16_t> codes(std::size_t{1} << 19, 0x3C00);
    for (std::size_t i = 0; i < codes.size(); i += 4096) codes[i] = 0x3C01;
    const std::vector<unsigned char> bytes = bytes_of(codes);
    constexpr std::uint64_t kTimes = 8200;
    CodeCounts expected = plain16(bytes, 0, bytes.size());
    for (auto& [code, count] : expected) count *= kTimes;
    REQUIRE(expected[0].second > std::uint64_t{1} << 32);
    for (const auto isa : kIsas16) {
      if (!detail::isa_available(isa)) continue;
      // 8.6 GB of codes a path: a sanitizer build (tests/sweep_stride.hpp) counts them on
      // the best path only; the Release run takes every path.
      if (test::sweep_stride() > 1 && isa != detail::best_isa()) continue;
      CodeCounter counter(16, isa);
      for (std::uint64_t k = 0; k < kTimes; ++k) counter.add(bytes);
      CompactCounts compact;
      counter.take(compact);
      CHECK_MESSAGE(compact == expected, "isa " << static_cast<int>(isa));
      CHECK_FALSE(compact.is_window());
    }
  }

  TEST_CASE("compact histograms: the smaller form, exact merges past 32 bits, dense sums") {
    using Window = std::vector<std::uint32_t>;
    const CodeCounts dense = {{0x1C00, 3}, {0x1C02, 1}, {0x1C03, 7}};
    const CompactCounts window(dense);
    CHECK(window.is_window());
    CHECK(window == dense);
    CHECK(CodeCounts(window.begin(), window.end()) == dense);
    const CodeCounts sparse = {{0, 1}, {0xFFFF, 2}};
    CHECK_FALSE(CompactCounts(sparse).is_window());
    CHECK(CompactCounts(sparse) == sparse);
    const CodeCounts big = {{5, std::uint64_t{1} << 32}, {6, 1}};
    CHECK_FALSE(CompactCounts(big).is_window());
    CHECK(CompactCounts(big) == big);
    // From a window: zero ends trimmed, all zero is empty, a sparse window becomes pairs.
    CHECK(CompactCounts(10, Window{0, 0, 4, 0, 5, 0}) == CodeCounts{{12, 4}, {14, 5}});
    CHECK(CompactCounts(10, Window{0, 0, 4, 0, 5, 0}).is_window());
    CHECK(CompactCounts(10, Window{0, 0, 0}).empty());
    std::vector<std::uint32_t> far(1000, 0);
    far[0] = far[999] = 1;
    CHECK_FALSE(CompactCounts(70000, far).is_window());
    CHECK(CompactCounts(70000, far) == CodeCounts{{70000, 1}, {70999, 1}});
    CHECK(CompactCounts() == CodeCounts{});
    // Negative control: one count off is noticed.
    CHECK_FALSE(window == CodeCounts{{0x1C00, 3}, {0x1C02, 1}, {0x1C03, 8}});

    // Merges, each against a merge of the pairs.
    const std::uint32_t kMax = 0xFFFFFFFFu;
    const CodeCounts cases[][2] = {
        {dense, {{0x1C02, 5}}},                                        // inside the window: added in place
        {{{100, kMax}, {101, 1}, {102, 1}}, {{100, 2}, {101, kMax}}},  // past 32 bits in the window
        {dense, {{0x9000, 1}, {0x9001, 2}}},                           // far apart
        {sparse, dense},                                               // pairs and a window
        {dense, sparse},
        {{}, dense},
        {dense, {}},
    };
    for (const auto& [a, b] : cases) {
      CodeCounts expected = a;
      merge_counts(expected, b);
      CompactCounts merged(a);
      merged.merge(CompactCounts(b));
      CHECK(merged == expected);
    }
    CompactCounts wrapped(CodeCounts{{100, kMax}, {101, 1}, {102, 1}});
    wrapped.merge(CompactCounts(CodeCounts{{100, 2}}));
    CHECK(wrapped == CodeCounts{{100, std::uint64_t{kMax} + 2}, {101, 1}, {102, 1}});
    CHECK_FALSE(wrapped.is_window());

    // Dense sums: codes below 2^16 by code, the others as pairs.
    const CompactCounts across(65530, Window{1, 0, 2, 0, 0, 7, 3, 4, 0, 5});  // codes 65530..65539
    REQUIRE(across.is_window());
    for (const CompactCounts* h : {&across, &window}) {
      for (const CodeCounts& start : {CodeCounts{}, CodeCounts{{3, 1}}}) {
        std::vector<std::uint64_t> sums;
        CodeCounts wide;
        CompactCounts(start).add_into(sums, wide);
        h->add_into(sums, wide);
        CodeCounts expected = start;
        merge_counts(expected, h->pairs());
        CodeCounts got;
        for (std::uint32_t c = 0; c < sums.size(); ++c) {
          if (sums[c] != 0) got.emplace_back(c, sums[c]);
        }
        got.insert(got.end(), wide.begin(), wide.end());
        CHECK(got == expected);
      }
    }
    // Counts kept in the fewest bytes that hold the largest, exact at each width's edges.
    struct Width {
      std::uint32_t largest;
      unsigned bytes;
    };
    for (const Width w :
         {Width{1, 1}, Width{0xFF, 1}, Width{0x100, 2}, Width{0xFFFF, 2}, Width{0x10000, 4}, Width{0xFFFFFFFFu, 4}}) {
      const CompactCounts h(0x3C00, Window{w.largest, 0, 1, 2});
      CHECK(h.count_bytes() == w.bytes);
      CHECK(h == CodeCounts{{0x3C00, w.largest}, {0x3C02, 1}, {0x3C03, 2}});
    }
    CHECK(CompactCounts(CodeCounts{{0, 1}, {0xFFFF, 2}}).count_bytes() == 0);  // pairs
    // A merge that outgrows its width widens: 255 + 1 takes two bytes.
    CompactCounts grows(0x3C00, Window{0xFF, 3, 0, 7});
    REQUIRE(grows.count_bytes() == 1);
    grows.merge(CompactCounts(0x3C00, Window{1, 0, 0, 1}));
    CHECK(grows.count_bytes() == 2);
    CHECK(grows == CodeCounts{{0x3C00, 0x100}, {0x3C01, 3}, {0x3C03, 8}});
    // Negative control: the byte width is not allowed to wrap a count.
    CHECK_FALSE(grows == CodeCounts{{0x3C00, 0}, {0x3C01, 3}, {0x3C03, 8}});

    std::vector<std::uint64_t> bytes_only;
    CodeCounts none;
    CompactCounts(CodeCounts{{3, 1}, {200, 2}}).add_into(bytes_only, none);
    CHECK(bytes_only.size() == 256);  // codes below 256 take 256 bins
    CHECK(none.empty());
  }
}

}  // namespace bitproof::audit
