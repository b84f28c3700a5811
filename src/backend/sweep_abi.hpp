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
//   bp_sweep_check_<kSlots> the same sweep (same words), and every staged output
//                           of each catalogue slot checked against SoftArith on
//                           the device: per chunk, ModelWords at SweepParams::model
//                           (not in the fast-math image)
// Globals: bp_abi_version (kAbiVersion) and bp_recipe_table (FNV-1a 64 of the
// recipe names in recipes.def order, each followed by '\n'), which the host
// checks against its own registry before launching anything.
#pragma once

#include <cstdint>

namespace bitproof::abi {

inline constexpr std::uint32_t kAbiVersion = 4;
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
  std::uint64_t model;  // ModelWords[chunks]: bp_sweep_check's model check (unused by bp_sweep_hw)
};

// The model check of one chunk: per slot, the cases whose claim-sweep bits differ
// from the soft model's; `first` the first such case, packed by
// first_model_record (the smallest case offset, then slot), kNoModelRecord if none.
struct ModelWords {
  std::uint32_t differing[kMaxSlots];
  unsigned long long first;
};
inline constexpr unsigned long long kNoModelRecord = ~0ull;
// Bits 35..50: the case's offset in its chunk; 32..34: the slot; 0..31: the hardware bits.
constexpr unsigned long long first_model_record(std::uint32_t offset, int slot, std::uint32_t hardware) {
  return (static_cast<unsigned long long>(offset) << 35) | (static_cast<unsigned long long>(slot) << 32) | hardware;
}
constexpr std::uint32_t model_record_offset(unsigned long long r) { return static_cast<std::uint32_t>(r >> 35); }
constexpr int model_record_slot(unsigned long long r) { return static_cast<int>((r >> 32) & 7); }
constexpr std::uint32_t model_record_hardware(unsigned long long r) { return static_cast<std::uint32_t>(r); }
static_assert(kChunk <= (1ull << 16) && kMaxSlots <= 8, "first_model_record's fields");
static_assert(model_record_offset(first_model_record(65535, 7, 0xFFFFu)) == 65535 &&
              model_record_slot(first_model_record(65535, 7, 0xFFFFu)) == 7 &&
              model_record_hardware(first_model_record(3, 1, 0x7E00u)) == 0x7E00u);

inline constexpr int kSumWords = 2 * kMaxSlots + kMaxClaims;

static_assert(sizeof(Domain) == 64);
static_assert(sizeof(Recipes) == 36);
static_assert(sizeof(Claims) == 8 + 8 * kMaxClaims + 4 * kMaxClaims + 4 * kMaxClaims * kMaxSlots);
static_assert(sizeof(EvalParams) == 64 + 40 + 24);
static_assert(sizeof(KindBits) == 24);
static_assert(sizeof(ModelWords) == 40);

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
