// The compiler's own binary16, for the tests' independent rewrites of recipes:
// _Float16 (GCC 12; clang 15 and later). clang 14 has no _Float16 on x86, only
// the storage type __fp16, whose arithmetic promotes to float and rounds once
// on conversion back: the same results for one operation, which is all the
// tests do between conversions (tests/CMakeLists.txt lets clang 14 pass it by
// value and use F16C for the conversions, and links compiler-rt's builtins for
// the conversions from double, whose libgcc 12 versions have another half ABI).
#pragma once

#if defined(__clang__) && __clang_major__ < 15
using CompilerHalf = __fp16;
#else
using CompilerHalf = _Float16;
#endif
