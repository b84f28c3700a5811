// The CUDA sweep kernels: generic over recipes.def (no per-recipe code). A
// recipe is picked at run time by its registry index through one switch
// generated from recipes.def, hoisted out of the per-case work: each thread
// evaluates a tile of consecutive cases per recipe slot, then compares. See
// src/backend/sweep_abi.hpp for the kernels, their parameters and outputs.
//
// Built by nvcc into a fatbin (CMakeLists.txt), twice: as is and with
// --use_fast_math. The host embeds both images, loads them with
// cuModuleLoadData and reports the SHA-256 of the bytes it loaded.
#include <cstdint>

#include "arith/device_arith.cuh"
#include "arith/soft_arith.hpp"
#include "backend/diff_kind.hpp"
#include "backend/sweep_abi.hpp"

#define BITPROOF_RECIPE_HEADERS
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE_HEADERS

namespace bitproof::kernels {
namespace {

using abi::kChunk;
using abi::kMaxClaims;
using abi::kThreads;

// ---- the recipe table, checked by the host ----

constexpr std::uint64_t recipe_table_hash() {
  std::uint64_t h = abi::kFnvBasis;
#define BITPROOF_RECIPE(Type) \
  h = abi::fnv1a(h, Type::kCard.name.data(), Type::kCard.name.size()); \
  h = abi::fnv1a(h, "\n", 1);
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE
  return h;
}

// ---- dispatch: recipe index -> f.template run<Recipe>() ----

#if defined(BITPROOF_KERNELS_USER_SLOTS)
constexpr int catalogue_size() {
  int n = 0;
#define BITPROOF_RECIPE(Type) ++n;
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE
  return n;
}
}  // namespace
}  // namespace bitproof::kernels
// The user-recipe images (src/backend/cuda_user.cpp), one per kernel slot
// count (BITPROOF_KERNELS_USER_SLOTS: 2, 4 or 8), linked per spec by
// nvJitLink with link-time optimisation: the spec's generated source (NVRTC)
// defines both. Recipe index catalogue_size() + k is user recipe k, evaluated
// by bp_user_eval; bp_spec_recipes holds the spec's recipe index per slot, a
// constant the link folds, so each kernel keeps only the spec's recipes.
extern "C" __device__ std::uint32_t bp_user_eval(int slot, std::uint32_t c0, std::uint32_t c1, std::uint32_t c2);
extern "C" __device__ const int bp_spec_recipes[bitproof::abi::kMaxSlots];
namespace bitproof::kernels {
namespace {
#define BITPROOF_SLOT_RECIPE(recipes, j) bp_spec_recipes[j]
#define BITPROOF_EVAL_ONE_INLINE __forceinline__
#else
// The catalogue images: the launch's parameters say which recipe a slot runs.
#define BITPROOF_SLOT_RECIPE(recipes, j) (recipes).index[j]
#define BITPROOF_EVAL_ONE_INLINE __noinline__
#endif

template <class F>
__device__ __forceinline__ void with_recipe(int index, F& f) {
  constexpr int kBase = __COUNTER__ + 1;
  switch (index) {
#define BITPROOF_RECIPE(Type) \
  case __COUNTER__ - kBase: f.template run<Type>(); break;
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE
    default:
#if defined(BITPROOF_KERNELS_USER_SLOTS)
      if (index >= catalogue_size()) {
        f.user(index - catalogue_size());
        break;
      }
#endif
      f.none();
      break;
  }
}

// Evaluates one recipe on a tile of cases.
template <class Ar, int kTile>
struct EvalTile {
  const std::uint32_t* c0;
  const std::uint32_t* c1;
  const std::uint32_t* c2;
  std::uint32_t* out;
  template <class R>
  __device__ __forceinline__ void run() {
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      if constexpr (R::kCard.arity == 1) {
        out[t] = R::template eval<Ar>(c0[t]);
      } else if constexpr (R::kCard.arity == 2) {
        out[t] = R::template eval<Ar>(c0[t], c1[t]);
      } else {
        out[t] = R::template eval<Ar>(c0[t], c1[t], c2[t]);
      }
    }
  }
  __device__ __forceinline__ void none() {
#pragma unroll
    for (int t = 0; t < kTile; ++t) out[t] = 0;
  }
#if defined(BITPROOF_KERNELS_USER_SLOTS)
  __device__ __forceinline__ void user(int slot) {
#pragma unroll
    for (int t = 0; t < kTile; ++t) out[t] = bp_user_eval(slot, c0[t], c1[t], c2[t]);
  }
#endif
};

// One recipe on one case (the eval and model kernels: one switch per policy,
// slots looped at run time, since those kernels are not the timed ones).
template <class Ar>
struct EvalOne {
  std::uint32_t c0;
  std::uint32_t c1;
  std::uint32_t c2;
  std::uint32_t out;
  template <class R>
  __device__ __forceinline__ void run() {
    if constexpr (R::kCard.arity == 1) {
      out = R::template eval<Ar>(c0);
    } else if constexpr (R::kCard.arity == 2) {
      out = R::template eval<Ar>(c0, c1);
    } else {
      out = R::template eval<Ar>(c0, c1, c2);
    }
  }
  __device__ __forceinline__ void none() { out = 0; }
#if defined(BITPROOF_KERNELS_USER_SLOTS)
  __device__ __forceinline__ void user(int slot) { out = bp_user_eval(slot, c0, c1, c2); }
#endif
};

template <class Ar>
__device__ BITPROOF_EVAL_ONE_INLINE std::uint32_t eval_one(int index, std::uint32_t c0, std::uint32_t c1, std::uint32_t c2) {
  EvalOne<Ar> e{c0, c1, c2, 0};
  with_recipe(index, e);
  return e.out;
}

template <class Ar, int kSlots, int kTile>
__device__ __forceinline__ void eval_slots(const abi::Recipes& recipes, const std::uint32_t (&c0)[kTile],
                                           const std::uint32_t (&c1)[kTile], const std::uint32_t (&c2)[kTile],
                                           std::uint32_t (&out)[kSlots][kTile]) {
#pragma unroll
  for (int j = 0; j < kSlots; ++j) {
    EvalTile<Ar, kTile> tile{c0, c1, c2, out[j]};
    with_recipe(BITPROOF_SLOT_RECIPE(recipes, j), tile);
  }
}

// ---- case codes ----

// Walks the domain's cases in order from one starting case (first input fastest).
// Inputs past `d.inputs` have count 1 and code 0.
struct CodeWalker {
  const abi::Domain& d;
  std::uint32_t i0;
  std::uint32_t i1;
  std::uint32_t i2;

  __device__ CodeWalker(const abi::Domain& domain, std::uint64_t index) : d(domain) {
    i0 = static_cast<std::uint32_t>(index % d.count[0]);
    i1 = d.inputs > 1 ? static_cast<std::uint32_t>((index / d.count[0]) % d.count[1]) : 0;
    i2 = d.inputs > 2 ? static_cast<std::uint32_t>((index / d.count[0] / d.count[1]) % d.count[2]) : 0;
  }
  __device__ __forceinline__ std::uint32_t code(int input, std::uint32_t i) const {
    const std::uint64_t table = d.table[input];
    return table != 0 ? reinterpret_cast<const std::uint32_t*>(table)[i] : d.lo[input] + i;
  }
  template <int kTile>
  __device__ __forceinline__ void next_tile(std::uint32_t (&c0)[kTile], std::uint32_t (&c1)[kTile],
                                            std::uint32_t (&c2)[kTile]) {
    if (d.table[0] == 0 && i0 + kTile <= d.count[0]) {  // no wrap inside the tile
      const std::uint32_t second = d.inputs > 1 ? code(1, i1) : 0;
      const std::uint32_t third = d.inputs > 2 ? code(2, i2) : 0;
#pragma unroll
      for (int t = 0; t < kTile; ++t) {
        c0[t] = d.lo[0] + i0 + t;
        c1[t] = second;
        c2[t] = third;
      }
      i0 += kTile;
      if (i0 == d.count[0]) advance_row();
      return;
    }
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      c0[t] = code(0, i0);
      c1[t] = d.inputs > 1 ? code(1, i1) : 0;
      c2[t] = d.inputs > 2 ? code(2, i2) : 0;
      if (++i0 == d.count[0]) advance_row();
    }
  }
  __device__ __forceinline__ void advance_row() {
    i0 = 0;
    if (d.inputs > 1 && ++i1 == d.count[1]) {
      i1 = 0;
      if (d.inputs > 2 && ++i2 == d.count[2]) i2 = 0;
    }
  }
};

// ---- kernels ----

// Every case's bits, case-major. One thread per case; small domains only.
template <class Ar>
__device__ void eval_cases(const abi::EvalParams& p) {
  auto* out = reinterpret_cast<std::uint32_t*>(p.out);
  for (std::uint64_t k = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; k < p.n;
       k += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    CodeWalker walk(p.domain, p.begin + k);
    std::uint32_t c0[1], c1[1], c2[1];
    walk.next_tile<1>(c0, c1, c2);
#pragma unroll
    for (int j = 0; j < abi::kMaxSlots; ++j) {
      if (j >= static_cast<int>(p.recipes.slots)) break;
      out[k * p.recipes.slots + j] = eval_one<Ar>(BITPROOF_SLOT_RECIPE(p.recipes, j), c0[0], c1[0], c2[0]);
    }
  }
}

__device__ __forceinline__ std::uint32_t warp_sum(std::uint32_t v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xFFFFFFFFu, v);
#else
  for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
  return v;
#endif
}

// Sums kWords per-thread values over the block into out[0..kWords).
template <int kWords>
__device__ __forceinline__ void block_sum(const std::uint32_t (&v)[kWords], std::uint32_t* out) {
  __shared__ std::uint32_t partial[kThreads / 32][kWords];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int w = 0; w < kWords; ++w) {
    const std::uint32_t s = warp_sum(v[w]);
    if (lane == 0) partial[warp][w] = s;
  }
  __syncthreads();
  if (threadIdx.x < kWords) {
    std::uint32_t total = 0;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) total += partial[w][threadIdx.x];
    out[threadIdx.x] = total;
  }
}

template <int kSlots, int kTile>
__device__ __forceinline__ std::uint32_t pick(const std::uint32_t (&o)[kSlots][kTile], int slot, int t) {
  std::uint32_t v = 0;
#pragma unroll
  for (int s = 0; s < kSlots; ++s) v = s == slot ? o[s][t] : v;
  return v;
}

// The slow path of a tile where some slots differ: each claim, case by case.
template <int kSlots, int kTile>
__device__ void check_claims(const abi::SweepParams& p, const std::uint32_t (&o)[kSlots][kTile], int valid,
                             std::uint32_t (&failing)[kMaxClaims], unsigned long long (*kinds)[abi::kKinds]) {
  const KindFormat f{p.kind.sign_mask, p.kind.exp_max, p.kind.man_mask,
                     p.kind.man_bits,  p.kind.specials, p.kind.int_zero};
#pragma unroll
  for (int t = 0; t < kTile; ++t) {
    if (t >= valid) continue;
#pragma unroll
    for (int c = 0; c < kMaxClaims; ++c) {
      if (c >= static_cast<int>(p.claims.count)) continue;
      const std::uint32_t ref = pick(o, p.claims.first[c], t);
      for (int k = 0; k < kSlots && p.claims.others[c][k] >= 0; ++k) {
        const std::uint32_t other = pick(o, p.claims.others[c][k], t);
        if (other == ref) continue;
        ++failing[c];
        atomicAdd(&kinds[c][static_cast<int>(classify_difference(f, ref, other))], 1ull);
        break;
      }
    }
  }
}

template <int kSlots>
constexpr int hw_tile() {
  return kSlots <= 2 ? 8 : (kSlots <= 4 ? 4 : 2);
}

// One block per chunk: chunk sums of every slot, failing counts per claim.
template <class Ar, int kSlots>
__device__ void sweep_chunks(const abi::SweepParams& p) {
  constexpr int kTile = hw_tile<kSlots>();
  constexpr int kPerThread = static_cast<int>(kChunk) / kThreads;
  __shared__ unsigned long long kinds[kMaxClaims][abi::kKinds];
  for (int i = threadIdx.x; i < kMaxClaims * abi::kKinds; i += blockDim.x) kinds[i / abi::kKinds][i % abi::kKinds] = 0;
  __syncthreads();
  const std::uint64_t chunk = p.first_chunk + blockIdx.x;
  const std::uint64_t start = chunk * kChunk;
  const std::uint64_t rest = p.domain.cases - start;
  const std::uint32_t length = rest < kChunk ? static_cast<std::uint32_t>(rest) : static_cast<std::uint32_t>(kChunk);
  const std::uint32_t groups = (length + 15) / 16;
  std::uint32_t words[abi::kSumWords] = {};
  std::uint32_t failing[kMaxClaims] = {};
  const std::uint32_t begin = threadIdx.x * kPerThread;
  CodeWalker walk(p.domain, start + begin);
  for (std::uint32_t offset = begin; offset < begin + kPerThread && offset < length; offset += kTile) {
    std::uint32_t c0[kTile], c1[kTile], c2[kTile], o[kSlots][kTile];
    walk.next_tile<kTile>(c0, c1, c2);
    eval_slots<Ar, kSlots, kTile>(p.recipes, c0, c1, c2, o);
    const int valid = length - offset < kTile ? static_cast<int>(length - offset) : kTile;
    if (valid < kTile) {
#pragma unroll
      for (int t = 0; t < kTile; ++t) {
#pragma unroll
        for (int s = 0; s < kSlots; ++s) o[s][t] = t < valid ? o[s][t] : 0;
      }
    }
    const std::uint32_t weight = groups - (offset >> 4);  // kTile divides 16: one group per tile
    std::uint32_t differs = 0;
#pragma unroll
    for (int s = 0; s < kSlots; ++s) {
      std::uint32_t tile_sum = 0;
#pragma unroll
      for (int t = 0; t < kTile; ++t) {
        tile_sum += o[s][t];
        if (s > 0 && s < static_cast<int>(p.recipes.slots)) differs |= o[s][t] ^ o[0][t];
      }
      words[2 * s] += tile_sum;
      words[2 * s + 1] += weight * tile_sum;
    }
    if (differs != 0) check_claims<kSlots, kTile>(p, o, valid, failing, kinds);
  }
  // B's weights count groups of 16 from the chunk's end: each thread added its
  // tiles with their group's weight, which is the same sum.
#pragma unroll
  for (int c = 0; c < kMaxClaims; ++c) words[2 * abi::kMaxSlots + c] = failing[c];
  auto* sums = reinterpret_cast<std::uint32_t*>(p.sums) + blockIdx.x * abi::kSumWords;
  block_sum<abi::kSumWords>(words, sums);
  __syncthreads();
  auto* global_kinds = reinterpret_cast<unsigned long long*>(p.kinds);
  for (int i = threadIdx.x; i < kMaxClaims * abi::kKinds; i += blockDim.x) {
    const unsigned long long n = kinds[i / abi::kKinds][i % abi::kKinds];
    if (n != 0) atomicAdd(&global_kinds[i], n);
  }
}

#if !defined(BITPROOF_KERNELS_HW_ONLY)
// One block per chunk: per slot, the cases where hardware and soft model differ
// (the default image only: the fast-math image has no soft model).
__device__ void model_chunks(const abi::SweepParams& p) {
  constexpr int kPerThread = static_cast<int>(kChunk) / kThreads;
  __shared__ std::uint32_t differing[abi::kMaxSlots];
  if (threadIdx.x < abi::kMaxSlots) differing[threadIdx.x] = 0;
  __syncthreads();
  const std::uint64_t chunk = p.first_chunk + blockIdx.x;
  const std::uint64_t start = chunk * kChunk;
  const std::uint64_t rest = p.domain.cases - start;
  const std::uint32_t length = rest < kChunk ? static_cast<std::uint32_t>(rest) : static_cast<std::uint32_t>(kChunk);
  const std::uint32_t begin = threadIdx.x * kPerThread;
#pragma unroll
  for (int j = 0; j < abi::kMaxSlots; ++j) {
    if (j >= static_cast<int>(p.recipes.slots)) break;
    const int index = BITPROOF_SLOT_RECIPE(p.recipes, j);
#if defined(BITPROOF_KERNELS_USER_SLOTS)
    if (index >= catalogue_size()) continue;  // a user recipe has no soft model on the device: the host compares it
#endif
    CodeWalker walk(p.domain, start + begin);
    std::uint32_t n = 0;
    for (std::uint32_t offset = begin; offset < begin + kPerThread && offset < length; ++offset) {
      std::uint32_t c0[1], c1[1], c2[1];
      walk.next_tile<1>(c0, c1, c2);
      n += eval_one<DeviceArith>(index, c0[0], c1[0], c2[0]) != eval_one<SoftArith>(index, c0[0], c1[0], c2[0]) ? 1 : 0;
    }
    n = warp_sum(n);
    if (threadIdx.x % 32 == 0 && n != 0) atomicAdd(&differing[j], n);
  }
  __syncthreads();
  if (threadIdx.x < abi::kSumWords) {
    auto* sums = reinterpret_cast<std::uint32_t*>(p.sums) + blockIdx.x * abi::kSumWords;
    sums[threadIdx.x] = threadIdx.x < abi::kMaxSlots ? differing[threadIdx.x] : 0;
  }
}
#endif

}  // namespace
}  // namespace bitproof::kernels

extern "C" {

extern __device__ const std::uint32_t bp_abi_version = bitproof::abi::kAbiVersion;
extern __device__ const unsigned long long bp_recipe_table = bitproof::kernels::recipe_table_hash();

__global__ void __launch_bounds__(256) bp_eval_hw(bitproof::abi::EvalParams p) {
  bitproof::kernels::eval_cases<bitproof::DeviceArith>(p);
}

#define BITPROOF_SWEEP_KERNEL(N)                                                  \
  __global__ void __launch_bounds__(256) bp_sweep_hw_##N(bitproof::abi::SweepParams p) { \
    bitproof::kernels::sweep_chunks<bitproof::DeviceArith, N>(p);                \
  }
#if defined(BITPROOF_KERNELS_USER_SLOTS)
// A user-recipe image holds the one claim kernel its slot count needs: each
// is linked per spec, and the link's time is in the user's first run.
#define BITPROOF_SWEEP_KERNEL_FOR(N) BITPROOF_SWEEP_KERNEL(N)  // N expanded before ## pastes it
BITPROOF_SWEEP_KERNEL_FOR(BITPROOF_KERNELS_USER_SLOTS)
#else
BITPROOF_SWEEP_KERNEL(2)
BITPROOF_SWEEP_KERNEL(4)
BITPROOF_SWEEP_KERNEL(8)
#endif

// The soft model on the device: only in the default image (the fast-math image
// is run for its claim checks alone).
#if !defined(BITPROOF_KERNELS_HW_ONLY)
#if !defined(BITPROOF_KERNELS_USER_SLOTS)
__global__ void __launch_bounds__(256) bp_eval_soft(bitproof::abi::EvalParams p) {
  bitproof::kernels::eval_cases<bitproof::SoftArith>(p);
}
#endif
__global__ void __launch_bounds__(256) bp_sweep_model(bitproof::abi::SweepParams p) {
  bitproof::kernels::model_chunks(p);
}
#endif

}  // extern "C"
