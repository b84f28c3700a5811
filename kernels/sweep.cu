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
#include "format/diff_kind.hpp"
#include "backend/sweep_abi.hpp"
#include "recipes/run_plan.hpp"

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
#define BITPROOF_STAGE_INLINE __forceinline__  // the link keeps only the spec's recipes: inline them
inline constexpr bool kPlanWholeRuns = true;   // see sweep_chunks
#else
// The catalogue images: the launch's parameters say which recipe a slot runs.
#define BITPROOF_SLOT_RECIPE(recipes, j) (recipes).index[j]
#define BITPROOF_EVAL_ONE_INLINE __noinline__
#define BITPROOF_STAGE_INLINE __noinline__  // one function per recipe: see "the claim sweep's stage"
inline constexpr bool kPlanWholeRuns = false;  // see sweep_chunks
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

// Recipe R on one case's codes (the codes past its arity ignored).
template <class R, class Ar>
__device__ __forceinline__ std::uint32_t eval_recipe(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  if constexpr (R::kCard.arity == 1) {
    return R::template eval<Ar>(a);
  } else if constexpr (R::kCard.arity == 2) {
    return R::template eval<Ar>(a, b);
  } else {
    return R::template eval<Ar>(a, b, c);
  }
}

// ---- the claim sweep's stage ----
//
// A thread evaluates its cases in batches. Each slot's arm evaluates its recipe
// on the batch and puts every output in the stage, a shared-memory table
// stage[(slot * kBatch + t) * kThreads + thread]. It also sums the outputs for
// the chunk digest and, after the first slot, ORs each output's difference from
// the first slot's, so a batch where every slot agrees (a holding claim's every
// batch) is never read again. In the catalogue images a recipe's arm is a
// function of its own (stage_recipe), so the sweep loop's registers are not
// the heaviest recipe's; in a spec's linked image (user recipes, or catalogue
// recipes specialized: src/backend/cuda_user.hpp) the link folds the recipe
// indices and the spec's few arms are inlined (bench/RESULTS.md, "the claim
// sweep kernel").

// The codes of a batch: consecutive first-input codes from `first`, the second
// and third fixed (the common shape of a large domain; one case is a batch of 1).
struct RunCodes {
  std::uint32_t first;
  std::uint32_t second;
  std::uint32_t third;
};

// Stages eval(t), case first + t's output, for t < kBatch. For the first slot
// (`first_rows` null) returns the outputs' sum; for a later one, whether an
// output differs from the first slot's (nonzero) or not (0). A later slot's sum
// is the first slot's where none differs, so it is only added up where one
// does (staged_sum): one add a case less in every holding batch.
template <int kBatch, class Eval>
__device__ __forceinline__ std::uint32_t stage_outputs(std::uint32_t* rows, const std::uint32_t* first_rows,
                                                       const Eval& eval) {
  std::uint32_t sum_or_differs = 0;
  if (first_rows == nullptr) {
#pragma unroll
    for (int t = 0; t < kBatch; ++t) {
      const std::uint32_t out = eval(t);
      rows[t * kThreads] = out;
      sum_or_differs += out;
    }
  } else {
#pragma unroll
    for (int t = 0; t < kBatch; ++t) {
      const std::uint32_t out = eval(t);
      rows[t * kThreads] = out;
      sum_or_differs |= out ^ first_rows[t * kThreads];
    }
  }
  return sum_or_differs;
}

// The sum of a slot's staged outputs (a batch where the slot differs from the first).
template <int kBatch>
__device__ __forceinline__ std::uint32_t staged_sum(const std::uint32_t* rows) {
  std::uint32_t sum = 0;
#pragma unroll
  for (int t = 0; t < kBatch; ++t) sum += rows[t * kThreads];
  return sum;
}

// A recipe with a batch form (the exact FMA oracles' run form: one alignment
// for consecutive first inputs) plans the thread's whole run once (spec-linked images) and
// evaluates a batch at once (src/recipes/run_plan.hpp).
template <class R, class Ar>
concept PlansRuns = requires { recipes::RunPlan{R::template plan_run<Ar>(0u, 1, 0u, 0u)}; };
template <class R, class Ar, int kBatch>
concept RunsBatches =
    kBatch > 1 && PlansRuns<R, Ar> && requires(const recipes::RunPlan& plan, std::uint32_t (&out)[kBatch]) {
  R::template eval_run<Ar, kBatch>(plan, 0u, 0u, 0u, 0u, out);
};

// A recipe with a batch form that needs no plan (the hardware FP16 FMA's packed
// pairs): eval_batch<Ar, kN>(a0, b, c, out[kN]) gives eval's codes of a0 … a0 + kN − 1.
template <class R, class Ar, int kBatch>
concept EvaluatesBatches = kBatch > 1 && requires(std::uint32_t (&out)[kBatch]) {
  R::template eval_batch<Ar, kBatch>(0u, 0u, 0u, out);
};

// Recipe R's outputs of cases t0 … t0 + kBatch − 1 of a run, through its batch
// form if it has one. `plan` is the slot's plan of the thread's run (read only
// by a recipe that plans runs; null: plan each batch alone).
template <class Ar, class R, int kBatch>
__device__ __forceinline__ void recipe_outputs(RunCodes codes, const recipes::RunPlan* plan, std::uint32_t t0,
                                               std::uint32_t (&out)[kBatch]) {
  if constexpr (RunsBatches<R, Ar, kBatch>) {
    const recipes::RunPlan each_batch{};  // not ok: the batch is planned alone
    R::template eval_run<Ar, kBatch>(plan != nullptr ? *plan : each_batch, t0, codes.first, codes.second, codes.third,
                                     out);
  } else if constexpr (EvaluatesBatches<R, Ar, kBatch>) {
    R::template eval_batch<Ar, kBatch>(codes.first, codes.second, codes.third, out);
  } else {
#pragma unroll
    for (int t = 0; t < kBatch; ++t) {
      out[t] = eval_recipe<R, Ar>(codes.first + static_cast<std::uint32_t>(t), codes.second, codes.third);
    }
  }
}

template <class Ar, class R, int kBatch>
__device__ BITPROOF_STAGE_INLINE std::uint32_t stage_recipe(RunCodes codes, const recipes::RunPlan* plan,
                                                            std::uint32_t t0, std::uint32_t* rows,
                                                            const std::uint32_t* first_rows) {
  std::uint32_t out[kBatch];
  recipe_outputs<Ar, R, kBatch>(codes, plan, t0, out);
  return stage_outputs<kBatch>(rows, first_rows, [&out](int t) { return out[t]; });
}

template <class Ar, int kBatch>
struct StageArm {
  RunCodes codes;
  const recipes::RunPlan* plan;     // this slot's plan of the thread's run (null: each batch planned alone)
  std::uint32_t t0;                 // the batch's first case in that run
  std::uint32_t* rows;              // this slot's first row, this thread's column
  const std::uint32_t* first_rows;  // the first slot's (null for the first slot)
  std::uint32_t result = 0;         // stage_outputs'

  template <class R>
  __device__ __forceinline__ void run() {
    result = stage_recipe<Ar, R, kBatch>(codes, plan, t0, rows, first_rows);
  }
  __device__ __forceinline__ void none() {
    result = stage_outputs<kBatch>(rows, first_rows, [](int) { return 0u; });  // an unknown index outputs 0
  }
#if defined(BITPROOF_KERNELS_USER_SLOTS)
  __device__ __forceinline__ void user(int slot) {
    result = stage_outputs<kBatch>(rows, first_rows, [slot, this](int t) {
      return bp_user_eval(slot, codes.first + static_cast<std::uint32_t>(t), codes.second, codes.third);
    });
  }
#endif
};

// A slot's plan of a thread's run of n cases from `codes` (RunPlan{}, not ok,
// for a recipe without a batch form).
template <class Ar>
struct PlanArm {
  RunCodes codes;
  int n;
  recipes::RunPlan plan{};
  bool straight = true;  // false: the recipe has a batch form and the run is not one straight path
  template <class R>
  __device__ __forceinline__ void run() {
    if constexpr (PlansRuns<R, Ar>) {
      plan = R::template plan_run<Ar>(codes.first, n, codes.second, codes.third);
      straight = plan.ok;
    }
  }
  __device__ __forceinline__ void none() {}
#if defined(BITPROOF_KERNELS_USER_SLOTS)
  __device__ __forceinline__ void user(int) {}
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
    out = eval_recipe<R, Ar>(c0, c1, c2);
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

// Every real slot on one batch: outputs staged, digest words A and B of each
// slot advanced (`weight` is the batch's digest group weight); returns whether
// some slot differs from the first on some case of the batch.
template <class Ar, int kSlots, int kBatch>
__device__ __forceinline__ bool stage_batch(const abi::Recipes& recipes, RunCodes codes, const recipes::RunPlan* plans,
                                            std::uint32_t t0, std::uint32_t* column, std::uint32_t weight,
                                            std::uint32_t (&words)[2 * kSlots]) {
  bool differs = false;
  std::uint32_t first_sum = 0;
#pragma unroll
  for (int j = 0; j < kSlots; ++j) {
    if (j >= static_cast<int>(recipes.slots)) break;
    std::uint32_t* rows = column + j * kBatch * kThreads;
    StageArm<Ar, kBatch> arm{codes, plans != nullptr ? plans + j : nullptr, t0, rows, j > 0 ? column : nullptr};
    with_recipe(BITPROOF_SLOT_RECIPE(recipes, j), arm);
    const bool slot_differs = j > 0 && arm.result != 0;
    const std::uint32_t sum = j == 0 ? arm.result : slot_differs ? staged_sum<kBatch>(rows) : first_sum;
    if (j == 0) first_sum = sum;
    words[2 * j] += sum;
    words[2 * j + 1] += weight * sum;
    differs = differs || slot_differs;
  }
  return differs;
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
  // Whether the next n cases run up the first input's range (a range input, no
  // wrap), the second and third codes fixed: then first_code() + t is case t.
  __device__ __forceinline__ bool runs(std::uint32_t n) const { return d.table[0] == 0 && i0 + n <= d.count[0]; }
  __device__ __forceinline__ std::uint32_t first_code() const { return d.lo[0] + i0; }
  // The current case's codes; then moves to the next case.
  __device__ __forceinline__ RunCodes next() {
    const RunCodes codes{code(0, i0), d.inputs > 1 ? code(1, i1) : 0, d.inputs > 2 ? code(2, i2) : 0};
    if (++i0 == d.count[0]) advance_row();
    return codes;
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
    const RunCodes c = walk.next();
#pragma unroll
    for (int j = 0; j < abi::kMaxSlots; ++j) {
      if (j >= static_cast<int>(p.recipes.slots)) break;
      out[k * p.recipes.slots + j] = eval_one<Ar>(BITPROOF_SLOT_RECIPE(p.recipes, j), c.first, c.second, c.third);
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

// The slow path of a batch where some slot differs: each claim, case by case,
// from the stage; failing counts and kinds added to the block's shared counters.
// Inlined: with two kernels calling it (claim and check), the spec-linked
// image's link made it a call of its own, and the claim kernel's frame grew
// from 8 to 528 bytes and its time by 16 % (bench/RESULTS.md).
template <int kBatch>
__device__ __forceinline__ void check_claims(const abi::SweepParams& p, const std::uint32_t* column, std::uint32_t* failing,
                             unsigned long long (*kinds)[abi::kKinds]) {
  const KindFormat f{p.kind.sign_mask, p.kind.exp_max, p.kind.man_mask,
                     p.kind.man_bits,  p.kind.specials, p.kind.int_zero};
  for (int t = 0; t < kBatch; ++t) {
    for (int c = 0; c < static_cast<int>(p.claims.count); ++c) {
      const std::uint32_t ref = column[(p.claims.first[c] * kBatch + t) * kThreads];
      for (int k = 0; k < abi::kMaxSlots && p.claims.others[c][k] >= 0; ++k) {
        const std::uint32_t other = column[(p.claims.others[c][k] * kBatch + t) * kThreads];
        if (other == ref) continue;
        atomicAdd(&failing[c], 1u);
        atomicAdd(&kinds[c][static_cast<int>(classify_difference(f, ref, other))], 1ull);
        break;
      }
    }
  }
}

// The model check of a staged batch (the bp_sweep_check kernels): every
// catalogue slot's staged outputs, the bits the chunk sums add, against the
// soft model compiled for the device. Counts the differing cases per slot, and
// keeps the chunk's first (smallest case offset, then slot) with its hardware
// bits in `model` (shared). The slots are unrolled, so in a spec-linked image
// each slot's recipe index is a constant and only the spec's soft models are
// compiled in (with the slot a run-time index, the whole catalogue's switch was
// inlined here).
template <int kSlots, int kBatch>
__device__ __noinline__ void check_model(const abi::Recipes& recipes, const RunCodes& codes, std::uint32_t first_offset,
                                         const std::uint32_t* column, abi::ModelWords& model) {
#pragma unroll
  for (int j = 0; j < kSlots; ++j) {
    if (j >= static_cast<int>(recipes.slots)) break;
    const int index = BITPROOF_SLOT_RECIPE(recipes, j);
#if defined(BITPROOF_KERNELS_USER_SLOTS)
    if (index >= catalogue_size()) continue;  // a user recipe has no soft model on the device: the host compares it
#endif
    for (int t = 0; t < kBatch; ++t) {
      const std::uint32_t hardware = column[(j * kBatch + t) * kThreads];
      if (eval_one<SoftArith>(index, codes.first + t, codes.second, codes.third) == hardware) continue;
      atomicAdd(&model.differing[j], 1u);
      atomicMin(&model.first, abi::first_model_record(first_offset + t, j, hardware));
    }
  }
}

// Cases a thread stages at once: the stage holds kStageWords words (32 KiB), so
// 16, 8 or 4 cases for 2, 4 or 8 slots; each divides 16, so a batch of a run
// lies in one digest group.
inline constexpr int kStageWords = 8192;
template <int kSlots>
constexpr int batch_cases() {
  return kStageWords / (kThreads * kSlots);
}
static_assert(16 % batch_cases<2>() == 0 && 16 % batch_cases<8>() == 0);

// One batch of kBatch cases from `codes` at case `offset` of the chunk: staged,
// its digest words advanced, its claims checked where a slot differs, and with
// kCheck its model checked.
template <class Ar, int kSlots, bool kCheck, int kBatch>
__device__ __forceinline__ void sweep_batch(const abi::SweepParams& p, RunCodes codes, const recipes::RunPlan* plans,
                                            std::uint32_t t0, std::uint32_t offset, std::uint32_t groups,
                                            std::uint32_t* column, std::uint32_t (&words)[2 * kSlots],
                                            std::uint32_t* failing, unsigned long long (*kinds)[abi::kKinds],
                                            abi::ModelWords& model) {
  if (stage_batch<Ar, kSlots, kBatch>(p.recipes, codes, plans, t0, column, groups - (offset >> 4), words)) {
    check_claims<kBatch>(p, column, failing, kinds);
  }
  if constexpr (kCheck) check_model<kSlots, kBatch>(p.recipes, codes, offset, column, model);
}

// The runs of a block that are not one straight path for some slot (spec-linked
// images): each thread's run that is not goes here, and the block shares out
// their batches after the straight runs (see sweep_chunks).
struct DeferredRuns {
  RunCodes codes[kThreads];       // the run's codes
  std::uint32_t begin[kThreads];  // its first case in the chunk
  std::uint32_t count;
};

// One block per chunk: chunk sums of every slot, failing counts per claim;
// with kCheck, also the model check of every staged output (check_model). The
// claim kernel (kCheck false) has no model code in its loop, so checking costs
// its timed launches nothing; in the catalogue images both kernels stage
// through the same stage_recipe functions (not inlined), and the host demands
// that the two kernels' chunk sums agree, which ties the spec-linked images'
// separately inlined copies together as the case digest does.
// Inlined into its kernel: as a call of its own (the spec-linked image's claim
// kernel grew past the inliner's limit), the kernel's parameters were copied to
// its stack and read from local memory in the sweep loop, and its registers
// were capped at 64 (the claim kernel 4 % slower).
template <class Ar, int kSlots, bool kCheck>
__device__ __forceinline__ void sweep_chunks(const abi::SweepParams& p) {
  constexpr int kBatch = batch_cases<kSlots>();
  constexpr int kPerThread = static_cast<int>(kChunk) / kThreads;
  constexpr int kRunBatches = kPerThread / kBatch;
  static_assert(kPerThread % kBatch == 0);
  __shared__ std::uint32_t stage[kSlots * kBatch * kThreads];
  __shared__ unsigned long long kinds[kMaxClaims][abi::kKinds];
  __shared__ std::uint32_t failing[kMaxClaims];
  __shared__ abi::ModelWords model;
  __shared__ DeferredRuns deferred;
  for (int i = threadIdx.x; i < kMaxClaims * abi::kKinds; i += blockDim.x) kinds[i / abi::kKinds][i % abi::kKinds] = 0;
  if (threadIdx.x < kMaxClaims) failing[threadIdx.x] = 0;
  if constexpr (kCheck) {
    if (threadIdx.x < abi::kMaxSlots) model.differing[threadIdx.x] = 0;
    if (threadIdx.x == 0) model.first = abi::kNoModelRecord;
  }
  if constexpr (kPlanWholeRuns) {
    if (threadIdx.x == 0) deferred.count = 0;
  }
  __syncthreads();
  const std::uint64_t chunk = p.first_chunk + blockIdx.x;
  const std::uint64_t start = chunk * kChunk;
  const std::uint64_t rest = p.domain.cases - start;
  const std::uint32_t length = rest < kChunk ? static_cast<std::uint32_t>(rest) : static_cast<std::uint32_t>(kChunk);
  const std::uint32_t groups = (length + 15) / 16;
  const std::uint32_t begin = threadIdx.x * kPerThread;
  std::uint32_t* column = stage + threadIdx.x;
  std::uint32_t words[2 * kSlots] = {};
  CodeWalker walk(p.domain, start + begin);
  if (begin + kPerThread <= length && walk.runs(kPerThread)) {
    // The whole of this thread's cases is one run: batches of consecutive codes.
    const std::uint32_t second = p.domain.inputs > 1 ? walk.code(1, walk.i1) : 0;
    const std::uint32_t third = p.domain.inputs > 2 ? walk.code(2, walk.i2) : 0;
    const std::uint32_t first = walk.first_code();
    // Each slot's plan of the whole run, made once (batch forms read their batches from it).
    // Only in the spec-linked images: in the catalogue images the plans' address goes to
    // the stage functions, which are not inlined, so they would live in local memory; that
    // cost every 2^32 claim there 7 % (bench/RESULTS.md), so they plan batch by batch.
    recipes::RunPlan plans[kSlots];
    const recipes::RunPlan* run_plans = nullptr;
    bool straight = true;
    if constexpr (kPlanWholeRuns) {
#pragma unroll
      for (int j = 0; j < kSlots; ++j) {
        if (j >= static_cast<int>(p.recipes.slots)) break;
        PlanArm<Ar> arm{{first, second, third}, kPerThread};
        with_recipe(BITPROOF_SLOT_RECIPE(p.recipes, j), arm);
        plans[j] = arm.plan;
        straight = straight && arm.straight;
      }
      run_plans = plans;
    }
    if (straight) {
      for (std::uint32_t offset = 0; offset < kPerThread; offset += kBatch) {
        sweep_batch<Ar, kSlots, kCheck, kBatch>(p, {first + offset, second, third}, run_plans, offset, begin + offset,
                                                groups, column, words, failing, kinds, model);
      }
    } else if constexpr (kPlanWholeRuns) {
      const std::uint32_t k = atomicAdd(&deferred.count, 1u);
      deferred.codes[k] = {first, second, third};
      deferred.begin[k] = begin;
    }
  } else {
    // Any other shape (a list input, a row shorter than a thread's cases, the
    // domain's last chunk): one case at a time from the walker.
    for (std::uint32_t offset = begin; offset < begin + kPerThread && offset < length; ++offset) {
      sweep_batch<Ar, kSlots, kCheck, 1>(p, walk.next(), nullptr, 0, offset, groups, column, words, failing, kinds,
                                         model);
    }
  }
  if constexpr (kPlanWholeRuns) {
    // The deferred runs' batches, each planned alone, shared out over the block's
    // threads (consecutive threads take consecutive batches of a run). Done by
    // their own threads, a few such runs (about one in a hundred FP16 runs of
    // 256) kept the rest of their block waiting at its final barrier: 40 % of
    // the warps' stall samples in the FP16 FMA claim sweep (bench/RESULTS.md).
    __syncthreads();
    const std::uint32_t items = deferred.count * kRunBatches;
    for (std::uint32_t item = threadIdx.x; item < items; item += kThreads) {
      const std::uint32_t k = item / kRunBatches;
      const std::uint32_t offset = (item % kRunBatches) * kBatch;
      const RunCodes run = deferred.codes[k];
      sweep_batch<Ar, kSlots, kCheck, kBatch>(p, {run.first + offset, run.second, run.third}, nullptr, 0,
                                              deferred.begin[k] + offset, groups, column, words, failing, kinds, model);
    }
  }
  // B's weights count groups of 16 from the chunk's end: each thread added its
  // batches with their group's weight, which is the same sum.
  std::uint32_t all[2 * abi::kMaxSlots] = {};
#pragma unroll
  for (int w = 0; w < 2 * kSlots; ++w) all[w] = words[w];
  auto* sums = reinterpret_cast<std::uint32_t*>(p.sums) + blockIdx.x * abi::kSumWords;
  block_sum<2 * abi::kMaxSlots>(all, sums);  // its barrier follows every batch: the counters are complete
  if (threadIdx.x < kMaxClaims) sums[2 * abi::kMaxSlots + threadIdx.x] = failing[threadIdx.x];
  if constexpr (kCheck) {
    if (threadIdx.x == 0) reinterpret_cast<abi::ModelWords*>(p.model)[blockIdx.x] = model;
  }
  auto* global_kinds = reinterpret_cast<unsigned long long*>(p.kinds);
  for (int i = threadIdx.x; i < kMaxClaims * abi::kKinds; i += blockDim.x) {
    const unsigned long long n = kinds[i / abi::kKinds][i % abi::kKinds];
    if (n != 0) atomicAdd(&global_kinds[i], n);
  }
}

}  // namespace
}  // namespace bitproof::kernels

extern "C" {

extern __device__ const std::uint32_t bp_abi_version = bitproof::abi::kAbiVersion;
extern __device__ const unsigned long long bp_recipe_table = bitproof::kernels::recipe_table_hash();

__global__ void __launch_bounds__(256) bp_eval_hw(bitproof::abi::EvalParams p) {
  bitproof::kernels::eval_cases<bitproof::DeviceArith>(p);
}

// Per slot count N: the claim kernel, and (not in the fast-math image, which has
// no soft model) the same sweep with its model check.
#if defined(BITPROOF_KERNELS_HW_ONLY)
#define BITPROOF_CHECK_KERNEL(N)
#else
#define BITPROOF_CHECK_KERNEL(N)                                                               \
  __global__ void __launch_bounds__(256) bp_sweep_check_##N(bitproof::abi::SweepParams p) { \
    bitproof::kernels::sweep_chunks<bitproof::DeviceArith, N, true>(p);                     \
  }
#endif
// The claim kernel's registers. The two-slot spec-linked claim kernel (a claim
// of two recipes, as the FMA specs) was register-bound at 79 registers (3
// blocks of 256 threads an SM). Capped at 64, 4 blocks fit (shared memory
// allows 5): the FP16 FMA claim sweep's 2^32-case block takes 4.12 ms with
// __maxnreg__(64), 4.26 with __launch_bounds__(256, 4) (the same 64 registers,
// scheduled for 4 blocks), 4.17 with the compiler's choice, 4.54 at 5 blocks
// (bench/RESULTS.md). Other claim kernels keep the compiler's choice: a cap was
// not measured on them.
#if defined(BITPROOF_KERNELS_USER_SLOTS) && BITPROOF_KERNELS_USER_SLOTS == 2
#define BITPROOF_CLAIM_BOUNDS __maxnreg__(64)
#else
#define BITPROOF_CLAIM_BOUNDS __launch_bounds__(256)
#endif
#define BITPROOF_SWEEP_KERNEL(N)                                                        \
  __global__ void BITPROOF_CLAIM_BOUNDS bp_sweep_hw_##N(bitproof::abi::SweepParams p) { \
    bitproof::kernels::sweep_chunks<bitproof::DeviceArith, N, false>(p);                \
  }                                                                                     \
  BITPROOF_CHECK_KERNEL(N)
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

// The soft model on the device, case by case (the copy-back path): only in the
// default image. The claim sweep checks its own outputs against it (check_model).
#if !defined(BITPROOF_KERNELS_HW_ONLY) && !defined(BITPROOF_KERNELS_USER_SLOTS)
__global__ void __launch_bounds__(256) bp_eval_soft(bitproof::abi::EvalParams p) {
  bitproof::kernels::eval_cases<bitproof::SoftArith>(p);
}
#endif

}  // extern "C"
