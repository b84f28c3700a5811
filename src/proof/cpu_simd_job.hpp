// The plain-data interface of the CPU vector sweep (see cpu_simd.hpp): what the
// AVX-512 translation unit sees. It includes nothing but <cstdint>, so that
// unit instantiates no shared template (no AVX-512 code can leak, via a COMDAT
// symbol, into code that runs on CPUs without it).
#pragma once

#include <cstdint>

namespace bitproof::simd {

inline constexpr int kMaxSlots = 8;   // recipes per spec
inline constexpr int kMaxClaims = 8;  // claims per spec
inline constexpr int kDiffKindCount = 7;
inline constexpr int kMaxInputs = 3;
// Cases are filled and evaluated in groups of 16: one or two vectors of the
// unit's ISA, and one run of a batch form (RecipeEntry::run).
inline constexpr int kCaseGroup = 16;

// A recipe the vector unit does not evaluate itself (the exact FMA oracles'
// batch form, cpu_simd.cpp): out gets the codes of the `cases` cases (a
// multiple of kCaseGroup) whose input codes are codes[0..2].
using ExternalBatch = void (*)(const void* context, const std::uint32_t* const* codes, std::uint32_t* out, int cases);

// One range for the vector sweep, as plain data (see cpu_simd_avx512.cpp).
struct SimdJob {
  // domain
  std::uint64_t cases = 0;
  std::uint64_t begin = 0;  // chunk-aligned
  std::uint64_t end = 0;
  int inputs = 0;
  std::uint32_t count[kMaxInputs] = {1, 1, 1};  // codes per input
  std::uint32_t lo[kMaxInputs] = {};            // first code of a range input
  const std::uint32_t* table[kMaxInputs] = {};  // code list of a list input (else null)
  // recipes (the unit's indices, or an external batch) and `equal` claims over their slots
  int recipes = 0;
  int recipe_index[kMaxSlots] = {};
  ExternalBatch external[kMaxSlots] = {};  // set: this slot is evaluated by external[r](external_context[r], …)
  const void* external_context[kMaxSlots] = {};
  int claims = 0;
  int claim_slots[kMaxClaims][kMaxSlots] = {};  // slots of claim c in claim order
  int claim_size[kMaxClaims] = {};
  // output format, for classifying differences (diff_kind.hpp KindFormat fields)
  std::uint32_t sign_mask = 0, exp_max = 0, man_mask = 0, man_bits = 0, specials = 0, int_zero = 0;
  std::uint32_t keep = 0;
  // results
  std::uint32_t* chunk_sums = nullptr;  // (2·recipes + claims) words per chunk of the range
  std::uint64_t failing[kMaxClaims] = {};
  std::uint64_t kinds[kMaxClaims][kDiffKindCount] = {};
  std::uint64_t* first_failing = nullptr;  // keep case indices per claim
  std::uint32_t first_count[kMaxClaims] = {};
};

struct SimdImpl {
  const char* name;
  // The unit's own recipe list (recipes.def without the vendor family, which is
  // last): indices here are the unit's; callers match by name.
  int (*recipe_count)();
  const char* (*recipe_name)(int index);
  bool (*vector_capable)(int index);  // eval<VecArith, W> exists
  // SimdJob::recipe_index holds the unit's indices.
  void (*sweep)(SimdJob& job);
  // Applies one vector op to kCaseGroup lanes (tests): op is 0 hmul, 1 hmul_rz, 2 hmul_ftz,
  // 3 half2float, 4 fmul, 5 float2half_rn, 6 float2half_rz, 7 hfma, 8 ffma (c is read by 7 and 8 only).
  void (*apply)(int op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* out);
};

// The AVX-512 and AVX2 implementations where they were compiled in (x86-64
// with a compiler that takes the flags), else null.
const SimdImpl* avx512_impl();
const SimdImpl* avx2_impl();
}  // namespace bitproof::simd
