// The CPU backend's vector sweep: checks a chunk-aligned case range 16 cases at
// a time for specs of up to three inputs whose claims are all `equal` and whose
// recipes are all vector-capable: their `eval<Ar, W>` takes the policy's word
// type, or they have a batch form (RecipeEntry::run: the exact FMA oracles'
// run form, given 16 consecutive first inputs with the others fixed, which is
// how the sweep's vectors come when the first input is a range).
//
// The arithmetic is VecArith (cpu_simd_sweep.hpp, built once for AVX-512 and
// once for AVX2 with FMA and F16C): the FP16 multiplies are
// integer SIMD code written from the IEEE rules (unpack, 11×11-bit product,
// leading-zero count, one rounding), while half2float / fmul / float2half use
// the CPU's own F16C/AVX-512 float instructions with NaN results made
// canonical; hfma is the CPU's FP64 FMA rounded once to FP16 by integer code. So
// on the 2^32 claim hmul ≡ fp32_round, and on hfma ≡ the exact oracle, the two
// sides are computed by unrelated instruction sequences; tests/backend checks
// every vector op against the oracle (edge codes and random operands).
//
// The vector code lives in one translation unit per ISA, built with that ISA's
// flags and chosen at run time (cpuid); each holds nothing with external
// linkage but its entry point, so no AVX-512 or AVX2 code can leak into the
// rest of the program.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proof/cpu_simd_job.hpp"
#include "proof/engine.hpp"

namespace bitproof::simd {

// The best implementation this CPU runs: AVX-512, else AVX2 (null: none).
// BITPROOF_SIMD=off disables the vector sweep, BITPROOF_SIMD=avx2 takes AVX2
// on an AVX-512 CPU (to compare the two).
const SimdImpl* best_impl();

// Every implementation this CPU runs, best first (tests).
std::vector<const SimdImpl*> usable_impls();

// Why best_impl() is null, for the report: BITPROOF_SIMD, or the CPU.
std::string no_vector_reason();

// Why the vector sweep cannot take this spec (nullopt: it can).
[[nodiscard]] std::optional<std::string> unsupported_reason(const SimdImpl& impl, const Spec& spec);

// Checks [begin, end) with the vector sweep; counterexamples are rebuilt with
// the scalar evaluator (same bits, checked by the tests).
[[nodiscard]] SweepPart sweep_range_simd(const SimdImpl& impl, const CaseEvaluator& eval, const Spec& spec,
                                         const EngineOptions& options, std::uint64_t begin, std::uint64_t end);

}  // namespace bitproof::simd
