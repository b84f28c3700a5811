// The compiler's own binary16, for the tests' independent rewrites of recipes:
// _Float16 (GCC 12; clang 15 and later). clang 14 has no _Float16 on x86, only
// the storage type __fp16, whose arithmetic promotes to float and rounds once
// on conversion back: the same results for one operation, which is all the
// tests do between conversions (tests/CMakeLists.txt lets clang 14 pass it by
// value and use F16C for the conversions, and links compiler-rt's builtins for
// the conversions from double, whose libgcc 12 versions have another half ABI).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__clang__) && __clang_major__ < 15
using CompilerHalf = __fp16;
#else
using CompilerHalf = _Float16;
#endif

// The compiler's half with these bits, and the bits of a compiler half: the one
// place the tests move between the two (a unity build sees every test file).
inline CompilerHalf half_of(std::uint16_t bits) {
  CompilerHalf h;
  std::memcpy(&h, &bits, sizeof h);
  return h;
}
inline std::uint16_t half_bits(CompilerHalf h) {
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}
