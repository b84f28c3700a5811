// What this CPU and its operating system let bitproof run: the instruction
// sets the vector sweep and the audit's histogram choose between.
//
// Read once, on first use, with cpuid and xgetbv. A feature counts only when
// the CPU reports it AND the OS saves its register state (XCR0), as the
// compiler's __builtin_cpu_supports decides it. bitproof does not use that
// builtin: linking it runs libgcc's CPU probe before main on every start,
// and each cpuid traps to the hypervisor on a VM (tens of microseconds for a
// 208-case proof that needs no vector code). tests/backend/test_cpu_features
// checks this reading against the builtin, feature by feature.
#pragma once

namespace bitproof {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512cd = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512vl = false;
};

// The features of the running CPU (all false off x86-64).
[[nodiscard]] const CpuFeatures& cpu_features();

}  // namespace bitproof
