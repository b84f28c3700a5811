// The parameters of the CUDA sweep kernels (kernels/sweep.cu), as plain
// structs passed by value through cuLaunchKernel: the host (g++) and the
// device (nvcc) compile this same header, and the static_asserts pin the
// layout both sides rely on. Device pointers travel as uint64_t.
//
// Kernels (extern "C"):
//   bp_eval_hw              every case of [begin, begin + n): each recipe's bits
//                           (DeviceArith), case-major, recipes.slots words per case
//   bp_eval_soft            the same with SoftArith on the device
//   bp_sweep_hw_<kSlots>    kSlots in {2, 4, 8}; a spec with fewer recipes pads
//                           with recipe index -1 (outputs 0). One block per
//                           65536-case chunk: per chunk the chunk sums
//                           (engine.hpp) of each slot and each claim's failing
//                           count; per claim, the failing cases by DiffKind
//   bp_sweep_model          one block per chunk: per chunk and slot, the cases
//                           where DeviceArith and SoftArith (both on the
//                           device) give different bits (sums words 0..7)
// Globals: bp_abi_version (kAbiVersion) and bp_recipe_table (FNV-1a 64 of the
// recipe names in recipes.def order, each followed by '\n'), which the host
// checks against its own registry before launching anything.
#pragma once

#include <cstdint>

namespace bitproof::abi {

inline constexpr std::uint32_t kAbiVersion = 3;
inline constexpr int kMaxInputs = 3;  // recipes/recipe.hpp kMaxArity
inline constexpr int kMaxSlots = 8;
inline constexpr int kMaxClaims = 8;
inline constexpr int kThreads = 256;
inline constexpr std::uint64_t kChunk = 65536;
inline constexpr int kKinds = 7;  // DiffKind

struct Domain {
  std::uint64_t cases;
  std::uint32_t inputs;
  std::uint32_t count[kMaxInputs];  // codes per input (1 past `inputs`)
  std::uint32_t lo[kMaxInputs];     // first code of a range input
  std::uint32_t pad;
  std::uint64_t table[kMaxInputs];  // device pointer to a list input's codes, 0 for a range
};

struct Recipes {
  std::uint32_t slots;  // real recipes (≤ the kernel's kSlots)
  std::int32_t index[kMaxSlots];
};

// `equal` claims as pair masks: bit (i * kMaxSlots + j) set for each pair
// (first recipe i, other recipe j) of the claim; `first` and `others` let the
// failing path find the first differing recipe (the one that names the kind).
struct Claims {
  std::uint32_t count;
  std::uint32_t pad;
  std::uint64_t pairs[kMaxClaims];
  std::int32_t first[kMaxClaims];
  std::int32_t others[kMaxClaims][kMaxSlots];  // -1 terminated
};

struct KindBits {
  std::uint32_t sign_mask, exp_max, man_mask, man_bits, specials, int_zero;
};

struct EvalParams {
  Domain domain;
  Recipes recipes;
  std::uint64_t begin;
  std::uint64_t n;
  std::uint64_t out;  // uint32_t[n * recipes.slots]
};

struct SweepParams {
  Domain domain;
  Recipes recipes;
  Claims claims;
  KindBits kind;
  std::uint64_t first_chunk;
  std::uint64_t chunks;
  std::uint64_t sums;   // uint32_t[chunks * (2 * kMaxSlots + kMaxClaims)]: A, B per slot, failing per claim
  std::uint64_t kinds;  // unsigned long long[kMaxClaims * kKinds], added to atomically
};

inline constexpr int kSumWords = 2 * kMaxSlots + kMaxClaims;

static_assert(sizeof(Domain) == 64);
static_assert(sizeof(Recipes) == 36);
static_assert(sizeof(Claims) == 8 + 8 * kMaxClaims + 4 * kMaxClaims + 4 * kMaxClaims * kMaxSlots);
static_assert(sizeof(EvalParams) == 64 + 40 + 24);
static_assert(sizeof(KindBits) == 24);

// FNV-1a 64 over the names, each followed by '\n'.
constexpr std::uint64_t fnv1a(std::uint64_t h, const char* s, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(s[i]);
    h *= 0x100000001B3ull;
  }
  return h;
}
inline constexpr std::uint64_t kFnvBasis = 0xCBF29CE484222325ull;

}  // namespace bitproof::abi
