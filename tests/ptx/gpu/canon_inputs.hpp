// The operand triples of canon.ptx (the canonical forms' GPU check), shared by the GPU run
// (canon_gpu.cpp) and the CI test (tests/ptx/test_ptx_graph.cpp): every pair of binary32
// specials, of binary16 specials in both halves of a word, of bfloat16 specials in both halves,
// then splitmix64 words. Specials: NaNs quiet and signalling, both signs, several payloads;
// +-0; +-inf; subnormals; the normal extremes; ordinary values. The third operand (fma's addend)
// walks the same list.
#pragma once

#include <cstdint>
#include <vector>

#include "../../../src/splitmix.hpp"  // standalone here too: canon_gpu.cpp is built with g++ alone

inline constexpr unsigned kCanonWords = 128;  // canon.ptx's `// canon K` lines: words a thread

inline std::vector<std::uint32_t> canon_inputs() {
  static const std::uint32_t f32[] = {
      0x00000000, 0x80000000, 0x7F800000, 0xFF800000,                          // zeros, infinities
      0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FD55555,  // quiet NaNs
      0x7F800001, 0xFF800001, 0x7FA00000, 0x7FBFFFFF, 0xFF955555,              // signalling NaNs
      0x00000001, 0x807FFFFF, 0x00400000,                                      // subnormals
      0x00800000, 0x7F7FFFFF, 0x3F800000, 0xBFC00000, 0x40400000, 0x3EAAAAAB,  // normal
  };
  static const std::uint16_t f16[] = {
      0x0000, 0x8000, 0x7C00, 0xFC00,                  // zeros, infinities
      0x7E00, 0xFE00, 0x7E01, 0x7FFF, 0xFFFF,          // quiet NaNs
      0x7C01, 0xFC01, 0x7D00, 0x7DFF, 0xFD55,          // signalling NaNs
      0x0001, 0x83FF, 0x0200,                          // subnormals
      0x0400, 0x7BFF, 0x3C00, 0xBE00, 0x4200, 0x3555,  // normal
  };
  static const std::uint16_t bf16[] = {
      0x0000, 0x8000, 0x7F80, 0xFF80,                  // zeros, infinities
      0x7FC0, 0xFFC0, 0x7FC1, 0x7FFF, 0xFFFF,          // quiet NaNs
      0x7F81, 0xFF81, 0x7FA0, 0x7FBF,                  // signalling NaNs
      0x0001, 0x807F, 0x0040,                          // subnormals
      0x0080, 0x7F7F, 0x3F80, 0xBFC0, 0x4040, 0x3EAB,  // normal
  };
  std::vector<std::uint32_t> in;
  const auto triple = [&](std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    in.push_back(a), in.push_back(b), in.push_back(c);
  };
  constexpr std::size_t n32 = std::size(f32), n16 = std::size(f16), nb = std::size(bf16);
  for (std::size_t i = 0; i < n32; ++i) {
    for (std::size_t j = 0; j < n32; ++j) triple(f32[i], f32[j], f32[(i * 7 + j * 3) % n32]);
  }
  // Low halves: every pair; high halves: another pairing, so f16x2's upper lane sees them too.
  const auto halves = [&](const std::uint16_t* v, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t hi = (i * 5 + j) % n, hj = (j * 3 + i + 1) % n, c = (i * 7 + j * 3) % n;
        triple(v[i] | std::uint32_t{v[hi]} << 16, v[j] | std::uint32_t{v[hj]} << 16,
               v[c] | std::uint32_t{v[(c + 1) % n]} << 16);
      }
    }
  };
  halves(f16, n16);
  halves(bf16, nb);
  std::uint64_t s = 4242;
  const auto next = [&] { return static_cast<std::uint32_t>(bitproof::splitmix64_next(s)); };
  // One call after another (arguments of one call are evaluated in an unspecified order: g++ took
  // them right to left, clang left to right, and the recorded file was made by g++): c, b, a.
  for (int t = 0; t < 512; ++t) {
    const std::uint32_t c = next(), b = next(), a = next();
    triple(a, b, c);
  }
  return in;
}
