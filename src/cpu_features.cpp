#include "cpu_features.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

#include <cstdint>
#define BITPROOF_X86_CPUID 1
#endif

namespace bitproof {
namespace {

#ifdef BITPROOF_X86_CPUID
constexpr bool bit(unsigned word, int index) { return ((word >> index) & 1u) != 0; }

// XCR0: the register state the OS saves across context switches.
std::uint64_t os_saved_state() {
  unsigned lo = 0;
  unsigned hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (std::uint64_t{hi} << 32) | lo;
}

// Intel SDM vol. 2A, CPUID leaves 1 and 7; vol. 1 §13.3 (XCR0 bits).
CpuFeatures probe() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return f;
  const bool osxsave = bit(ecx, 27);
  if (!osxsave || !bit(ecx, 28)) return f;  // no AVX, or the OS does not save YMM
  const std::uint64_t xcr0 = os_saved_state();
  const bool ymm_saved = (xcr0 & 0x6) == 0x6;    // SSE + AVX state
  const bool zmm_saved = (xcr0 & 0xE6) == 0xE6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  if (!ymm_saved) return f;
  f.fma = bit(ecx, 12);
  f.f16c = bit(ecx, 29);
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return f;
  f.avx2 = bit(ebx, 5);
  if (!zmm_saved) return f;
  f.avx512f = bit(ebx, 16);
  f.avx512dq = bit(ebx, 17);
  f.avx512cd = bit(ebx, 28);
  f.avx512bw = bit(ebx, 30);
  f.avx512vl = bit(ebx, 31);
  return f;
}
#else
CpuFeatures probe() { return {}; }
#endif

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = probe();
  return features;
}

}  // namespace bitproof
