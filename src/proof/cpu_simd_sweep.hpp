// The CPU vector sweep, written once over GCC's vector extensions (kLanes lanes):
// the policy ops (VecArith), the recipes' batches, the claims and the chunk
// sums. Each ISA's unit (cpu_simd_avx512.cpp, cpu_simd_avx2.cpp) includes
// cpu_simd_lanes.hpp, defines its few primitives in this anonymous namespace
//   Mask bits(WI)                   a compare's lanes as a bit mask
//   W lzcnt22(W)                    leading zeros of values below 2^22
//   F half_to_float(W)              the CPU's FP16 to FP32 conversion (F16C)
//   W float_to_half<kRounding>(F)   the CPU's FP32 to FP16 (F16C), nearest or toward zero
//   F fma_ps(F, F, F)               the CPU's FP32 FMA
//   DH fma_pd(DH, DH, DH)           the CPU's FP64 FMA (half the lanes)
//   W where_nan(F f, code, W v)     v with code in the lanes where f is a NaN
//   Mask ne_mask(W, W)              the lanes that differ
//   kIsaName
// and then includes this. Everything here has internal linkage, and recipes
// are instantiated only with this unit's VecArith, so no code built for one
// ISA can reach a CPU without it through a shared symbol.
//
// VecArith holds the policy ops:
//   hmul, hmul_rz, hmul_ftz   integer SIMD, from the IEEE rules (below)
//   half2float, fmul, ffma,   the CPU's F16C / FP32 instructions, with NaN results
//   float2half_rn/_rz         replaced by the canonical NaN the model prescribes
//                             (x86 keeps payloads and signs)
//   hfma                      the CPU's FP64 FMA on the exactly widened inputs,
//                             rounded once to FP16 by integer code (below)
//   hadd                      lane by lane through the scalar soft model
#pragma once

// The vendor recipes are not vector-capable, and their CUDA headers define
// inline functions an unoptimised build would emit here as shared symbols
// compiled for this unit's ISA: leave them out. The unit's table therefore
// lists fewer recipes than the registry; each entry carries its name and
// cpu_simd.cpp matches names, never bare indices.
#undef BITPROOF_HAVE_CUDA_HEADERS
#define BITPROOF_RECIPE_HEADERS
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE_HEADERS

namespace bitproof::simd {

// The scalar soft-model twin of the op VecArith does lane by lane (cpu_simd.cpp).
std::uint32_t soft_hadd(std::uint32_t a, std::uint32_t b);

namespace {

inline WI max_i(WI a, WI b) { return a > b ? a : b; }
inline W as_w(WI v) { return reinterpret_cast<W>(v); }
inline W as_w(F v) { return reinterpret_cast<W>(v); }
inline F as_f(W v) { return reinterpret_cast<F>(v); }
inline W canonical_nan32(F f) { return where_nan(f, 0x7FFFFFFFu, as_w(f)); }

// FP16 multiply from the IEEE rules. sig = mantissa | hidden bit (exponent
// field e, e1 = max(e, 1) the effective exponent), prod = sa·sb (≤ 22 bits,
// exact), lz its leading zeros. With E = e1a + e1b − lz − 4 the result's
// biased exponent if normal and Ec = max(E, 1), the product keeps the bits
// above shift s = 25 + Ec − (e1a + e1b) (0..31 after clamping); the result
// code is ((Ec − 1) << 10) + round(prod >> s), so a carry out of the
// significand lands in the exponent and subnormals fall out with Ec = 1.
inline W soft_hmul(W x, W y, bool toward_zero) {
  const WI xn = (x & 0x7C00u) != 0;  // exponent field nonzero: the hidden bit
  const WI yn = (y & 0x7C00u) != 0;
  const W sa = (x & 0x3FFu) | (as_w(xn) & 0x400u);
  const W sb = (y & 0x3FFu) | (as_w(yn) & 0x400u);
  const W prod = sa * sb;
  // e1a + e1b: the exponent fields, a subnormal's counted as 1 (xn is all ones where normal)
  const W esum = ((x & 0x7C00u) >> 10) + ((y & 0x7C00u) >> 10) + 2u + as_w(xn) + as_w(yn);
  const WI e = reinterpret_cast<WI>(esum - lzcnt22(prod) - 4u);  // biased exponent if normal
  const W ec = as_w(max_i(e, WI{} + 1));
  const W s = min_u(ec + 25u - esum, splat(31));
  W n;
  if (toward_zero) {
    n = prod >> s;
  } else {
    const W unit = splat(1) << s;
    const W bias = ((unit >> 1) - 1u + ((prod >> s) & 1u)) & (unit - 1u);
    n = (prod + bias) >> s;
  }
  W r = ((ec - 1u) << 10) + n;
  // overflow to Inf (toward zero: the largest finite); a zero product stays zero
  r = sel(prod != 0, min_u(r, splat(toward_zero ? 0x7BFFu : 0x7C00u)), W{});
  const W sign = (x ^ y) & 0x8000u;
  r |= sign;
  const WI special = ((x & 0x7C00u) == 0x7C00u) | ((y & 0x7C00u) == 0x7C00u);
  if (bits(special) != 0) {
    const W mx = x & 0x7FFFu, my = y & 0x7FFFu;
    const WI x_inf = mx == 0x7C00u, y_inf = my == 0x7C00u;
    const WI nan = (mx > 0x7C00u) | (my > 0x7C00u) | (x_inf & (my == 0)) | (y_inf & (mx == 0));
    r = sel(x_inf | y_inf, sign | 0x7C00u, r);
    r = sel(nan, splat(0x7FFFu), r);
  }
  return r;
}

inline W flush_half(W h) { return sel((h & 0x7C00u) == 0, h & 0x8000u, h); }

// hmul with subnormal inputs flushed and results flushed when tiny after
// rounding to 11 bits with an unbounded exponent (SoftArith::hmul_ftz): with
// normal inputs, the unbounded rounding keeps prod's top 11 bits (shift
// 21 - lz); a carry out of them lifts the biased exponent E by one.
inline W soft_hmul_ftz(W a, W b) {
  const W x = flush_half(a);
  const W y = flush_half(b);
  const W r = soft_hmul(x, y, false);
  const W ex = (x >> 10) & 31u;
  const W ey = (y >> 10) & 31u;
  const W prod = ((x & 0x3FFu) | 0x400u) * ((y & 0x3FFu) | 0x400u);
  const W lz = lzcnt22(prod);
  const W shift = 21u - lz;
  const W unit = splat(1) << shift;
  const W bias = ((unit >> 1) - 1u + ((prod >> shift) & 1u)) & (unit - 1u);
  const W carry = ((prod + bias) >> shift) >> 11;
  const WI e = reinterpret_cast<WI>(ex + ey + carry - lz - 4u);
  const WI finite = (ex != 0) & (ey != 0) & (ex != 31) & (ey != 31);
  return sel(finite & (e < 1), (x ^ y) & 0x8000u, r);
}

// FP16 FMA through the CPU's FP64 FMA. The inputs widen exactly; the FP64 FMA
// rounds a·b + c once, and that rounding never moves the FP16 result: the
// exact sum is a multiple of 2^-48 and below 2^33, so wherever it spans more
// than 53 bits one term lies wholly below the other's last FP16 place and the
// FP64 sum keeps the side of every FP16 midpoint (the fp64_fma recipe's
// argument, docs/fma.md; fp16-fma-fp64-route holds on all 2^48 triples but
// for NaN bits on the H200). The FP64 result is then rounded to FP16 by
// integer code on 64-bit lanes, as soft_hmul does on 32-bit ones; a NaN
// becomes the canonical NaN of the soft model (SoftArith::hfma).
inline UH double_to_half_rn(UH bits) {
  const UH one = UH{} + 1;
  const UH sign = (bits >> 63) << 15;
  const UH field = (bits >> 52) & 0x7FFu;
  const UH man = bits & ((one << 52) - 1u);
  const UH sig = man | (one << 52);
  // the biased FP16 exponent if normal, Ec = max(E, 1); keep the bits above s = 42 + Ec − E (≤ 63)
  const IH e = reinterpret_cast<IH>(field) - (1023 - 15);
  const IH ec = e < 1 ? IH{} + 1 : e;
  const IH s_wide = ec - e + 42;
  const UH s = reinterpret_cast<UH>(s_wide > 63 ? IH{} + 63 : s_wide);
  const UH lsb = (sig >> s) & 1u;
  const UH half_less_one = (one << (s - 1u)) - 1u;
  const UH n = (sig + half_less_one + lsb) >> s;
  UH code = (reinterpret_cast<UH>(ec - 1) << 10) + n;
  code = code > 0x7C00u ? UH{} + 0x7C00u : code;  // past the largest finite: ∞
  code = field == 0 ? UH{} : code;                // ±0 (no FP64 subnormal arises from FP16 inputs)
  code |= sign;
  code = field == 0x7FFu ? (sign | 0x7C00u) : code;               // ±∞
  return ((field == 0x7FFu) & (man != 0)) ? UH{} + 0x7FFFu : code;  // NaN
}

inline W soft_hfma(W a, W b, W c) {
  const F fa = half_to_float(a), fb = half_to_float(b), fc = half_to_float(c);
  const auto widen = [](F f, bool high) { return __builtin_convertvector(half_of<FH>(f, high), DH); };
  const auto codes = [&](bool high) {
    const DH r = fma_pd(widen(fa, high), widen(fb, high), widen(fc, high));
    return __builtin_convertvector(double_to_half_rn(reinterpret_cast<UH>(r)), WH);
  };
  return join<W>(codes(false), codes(true));
}

W lanewise(std::uint32_t (*op)(std::uint32_t, std::uint32_t), W a, W b) {
  std::uint32_t x[kLanes], y[kLanes], out[kLanes];
  store(x, a);
  store(y, b);
  for (int i = 0; i < kLanes; ++i) out[i] = op(x[i], y[i]);
  return load(out);
}

struct VecArith {
  static constexpr const char* kName = kIsaName;
  static W hmul(W a, W b) { return soft_hmul(a, b, false); }
  static W hmul_rz(W a, W b) { return soft_hmul(a, b, true); }
  static W hmul_ftz(W a, W b) { return soft_hmul_ftz(a, b); }
  static W half2float(W h) { return canonical_nan32(half_to_float(h)); }
  static W fmul(W a, W b) { return canonical_nan32(as_f(a) * as_f(b)); }
  static W ffma(W a, W b, W c) { return canonical_nan32(fma_ps(as_f(a), as_f(b), as_f(c))); }
  static W float2half_rn(W f) { return where_nan(as_f(f), 0x7FFFu, float_to_half<_MM_FROUND_TO_NEAREST_INT>(as_f(f))); }
  static W float2half_rz(W f) { return where_nan(as_f(f), 0x7FFFu, float_to_half<_MM_FROUND_TO_ZERO>(as_f(f))); }
  static W hadd(W a, W b) { return lanewise(&soft_hadd, a, b); }
  static W hfma(W a, W b, W c) { return soft_hfma(a, b, c); }
};

// ---- recipes ----

template <class R>
concept Vector1 = R::kCard.arity == 1 && requires(W w) { R::template eval<VecArith, W>(w); };
template <class R>
concept Vector2 = R::kCard.arity == 2 && requires(W w) { R::template eval<VecArith, W>(w, w); };
template <class R>
concept Vector3 = R::kCard.arity == 3 && requires(W w) { R::template eval<VecArith, W>(w, w, w); };

using BatchFn = void (*)(const std::uint32_t* const* codes, std::uint32_t* out, int vectors);

template <class R>
void batch(const std::uint32_t* const* codes, std::uint32_t* out, int vectors) {
  for (int v = 0; v < vectors; ++v) {
    const auto in = [codes, v](int i) { return load(codes[i] + v * kLanes); };
    if constexpr (R::kCard.arity == 1) {
      store(out + v * kLanes, R::template eval<VecArith, W>(in(0)));
    } else if constexpr (R::kCard.arity == 2) {
      store(out + v * kLanes, R::template eval<VecArith, W>(in(0), in(1)));
    } else {
      store(out + v * kLanes, R::template eval<VecArith, W>(in(0), in(1), in(2)));
    }
  }
}

template <class R>
constexpr BatchFn batch_for() {
  if constexpr (Vector1<R> || Vector2<R> || Vector3<R>) {
    return &batch<R>;
  } else {
    return nullptr;
  }
}

struct Entry {
  const char* name;
  BatchFn fn;
};

constexpr Entry kBatch[] = {
#define BITPROOF_RECIPE(Type) {Type::kCard.name.data(), batch_for<Type>()},
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE
};
constexpr int kRecipeCount = sizeof kBatch / sizeof kBatch[0];

int recipe_count() { return kRecipeCount; }
const char* recipe_name(int index) { return kBatch[index].name; }
bool vector_capable(int index) { return index >= 0 && index < kRecipeCount && kBatch[index].fn != nullptr; }

// ---- the sweep ----

constexpr int kBatchCases = 1024;  // between claim checks
constexpr int kBatchVectors = kBatchCases / kLanes;
constexpr std::uint64_t kChunk = 65536;

struct Codes {
  alignas(64) std::uint32_t c[kMaxInputs][kBatchVectors * kLanes];
};

// Input codes of cases [first, first + n) (n a multiple of 16; cases past the
// domain's end get valid codes, their lanes are masked off later), rows
// 0 … job.inputs − 1 (a recipe reads as many rows as the spec has inputs).
// The first input varies fastest.
void fill_codes(const SimdJob& job, std::uint64_t first, int n, Codes& out) {
  std::uint64_t index[kMaxInputs] = {};
  std::uint64_t rest = first;
  for (int i = 0; i < job.inputs; ++i) {
    index[i] = rest % job.count[i];
    rest /= job.count[i];
  }
  const auto code = [&job, &index](int i) {
    return job.table[i] ? job.table[i][index[i]] : job.lo[i] + static_cast<std::uint32_t>(index[i]);
  };
  if (job.table[0] == nullptr && index[0] + n <= job.count[0]) {  // the first input runs through consecutive codes
    for (int v = 0; v < n / kLanes; ++v) {
      store(out.c[0] + v * kLanes, kIota + (code(0) + static_cast<std::uint32_t>(v * kLanes)));
    }
    for (int i = 1; i < job.inputs; ++i) {  // the others are fixed over the n cases
      const W fixed = splat(code(i));
      for (int v = 0; v < n / kLanes; ++v) store(out.c[i] + v * kLanes, fixed);
    }
    return;
  }
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < job.inputs; ++i) out.c[i][j] = code(i);
    for (int i = 0; i < job.inputs && ++index[i] == job.count[i]; ++i) index[i] = 0;  // carry into the next input
  }
}

struct KindMasks {
  WI nan, inf, zero;
};

KindMasks classify(const SimdJob& job, W x) {
  // diff_kind.hpp's code_class, 16 lanes at a time (Specials as an integer).
  const W e = (x >> job.man_bits) & job.exp_max;
  const W m = x & job.man_mask;
  const WI all_ones = e == job.exp_max;
  const WI zero = (e == 0) & (m == 0);
  const WI none = WI{} != WI{};
  switch (job.specials) {
    case 0: return {all_ones & (m != 0), all_ones & (m == 0), zero};  // kIeee
    case 1: return {all_ones & (m == job.man_mask), none, zero};      // kFn
    case 2: return {none, none, zero};                                // kFinite
    case 3: return {all_ones, none, none};                            // kE8m0
    case 4: return {x == job.sign_mask, none, x == 0};                // kFnuz
    default: return {none, none, x == job.int_zero};                  // kInt: value = stored - bias
  }
}

// Per-kind counts of the failing lanes (diff_kind.hpp order and rules).
void count_kinds(const SimdJob& job, W a, W b, Mask failing, std::uint64_t* kinds) {
  const KindMasks x = classify(job, a);
  const KindMasks y = classify(job, b);
  const Mask nan_bits = bits(x.nan & y.nan) & failing;
  const Mask nan = bits(x.nan | y.nan) & failing & ~nan_bits;
  Mask rest = failing & ~bits(x.nan | y.nan);
  const Mask sign = bits(((a ^ b) & ~job.sign_mask) == 0) & rest;
  rest &= ~sign;
  const Mask inf = bits(x.inf | y.inf) & rest;
  rest &= ~inf;
  const Mask zero = bits(x.zero | y.zero) & rest;
  rest &= ~zero;
  kinds[1] += __builtin_popcount(rest);
  kinds[2] += __builtin_popcount(sign);
  kinds[3] += __builtin_popcount(zero);
  kinds[4] += __builtin_popcount(inf);
  kinds[5] += __builtin_popcount(nan);
  kinds[6] += __builtin_popcount(nan_bits);
}

struct Outputs {
  alignas(64) std::uint32_t r[kMaxSlots][kBatchVectors * kLanes];
};

struct ChunkState {
  W a[kMaxSlots];
  W b[kMaxSlots];
  std::uint32_t failing[kMaxClaims];
};

void check_vector(SimdJob& job, const Outputs& out, int v, std::uint64_t first_case, int lanes, ChunkState& st) {
  const int live = lanes < 0 ? 0 : lanes < kLanes ? lanes : kLanes;
  const Mask valid = live == kLanes ? kAllLanes : (Mask{1} << live) - 1;
  W o[kMaxSlots];
  for (int r = 0; r < job.recipes; ++r) {
    o[r] = load(out.r[r] + v * kLanes);
    if (valid != kAllLanes) o[r] = sel(kIota < splat(static_cast<std::uint32_t>(live)), o[r], W{});
    st.a[r] += o[r];
    // B sums A once per group of 16 cases, whatever the vector width: the chunk sums are the scalar sweep's
    if ((v + 1) * kLanes % kCaseGroup == 0) st.b[r] += st.a[r];
  }
  for (int c = 0; c < job.claims; ++c) {
    const W ref = o[job.claim_slots[c][0]];
    Mask failing = 0;
    for (int k = 1; k < job.claim_size[c]; ++k) failing |= ne_mask(o[job.claim_slots[c][k]], ref);
    failing &= valid;
    if (failing == 0) continue;
    W other = ref;
    for (int k = job.claim_size[c] - 1; k >= 1; --k) {  // the first differing recipe decides the kind
      const W x = o[job.claim_slots[c][k]];
      other = sel(x != ref, x, other);
    }
    st.failing[c] += __builtin_popcount(failing);
    job.failing[c] += __builtin_popcount(failing);
    count_kinds(job, ref, other, failing, job.kinds[c]);
    for (Mask m = failing; m != 0 && job.first_count[c] < job.keep; m &= m - 1) {
      job.first_failing[c * job.keep + job.first_count[c]++] = first_case + __builtin_ctz(m);
    }
  }
}

// Lane sum mod 2^32 (a vector reduce may add as signed int: UB on overflow).
std::uint32_t hsum(W v) {
  std::uint32_t lanes[kLanes];
  store(lanes, v);
  std::uint32_t sum = 0;
  for (std::uint32_t x : lanes) sum += x;
  return sum;
}

void sweep_chunk(SimdJob& job, std::uint64_t chunk_start, std::uint32_t* sums, Codes& codes, Outputs& out) {
  const std::uint64_t length = job.cases - chunk_start < kChunk ? job.cases - chunk_start : kChunk;
  ChunkState st{};
  const std::uint32_t* const rows[kMaxInputs] = {codes.c[0], codes.c[1], codes.c[2]};
  for (std::uint64_t done = 0; done < length; done += kBatchVectors * kLanes) {
    const std::uint64_t left = length - done;
    const int n = left < kBatchVectors * kLanes ? static_cast<int>(left) : kBatchVectors * kLanes;
    // whole groups of kCaseGroup cases (an external batch takes runs of 16); lanes past n are masked off
    const int vectors = (n + kCaseGroup - 1) / kCaseGroup * (kCaseGroup / kLanes);
    fill_codes(job, chunk_start + done, vectors * kLanes, codes);
    for (int r = 0; r < job.recipes; ++r) {
      if (job.external[r] != nullptr) {
        job.external[r](job.external_context[r], rows, out.r[r], vectors * kLanes);
      } else {
        kBatch[job.recipe_index[r]].fn(rows, out.r[r], vectors);
      }
    }
    for (int v = 0; v < vectors; ++v) {
      check_vector(job, out, v, chunk_start + done + v * kLanes, n - v * kLanes, st);
    }
  }
  for (int r = 0; r < job.recipes; ++r) {
    sums[2 * r] = hsum(st.a[r]);
    sums[2 * r + 1] = hsum(st.b[r]);
  }
  for (int c = 0; c < job.claims; ++c) sums[2 * job.recipes + c] = st.failing[c];
}

void sweep(SimdJob& job) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(0x1F80);  // round to nearest, all exceptions masked, no FTZ/DAZ: the IEEE behaviour the model means
  Codes codes;
  Outputs out;
  const std::size_t words = 2 * job.recipes + job.claims;
  std::uint32_t* sums = job.chunk_sums;
  for (std::uint64_t chunk = job.begin; chunk < job.end; chunk += kChunk, sums += words) {
    sweep_chunk(job, chunk, sums, codes, out);
  }
  _mm_setcsr(saved);
}

W apply_op(int op, W x, W y, W z) {
  W r{};
  switch (op) {
    case 0: r = VecArith::hmul(x, y); break;
    case 1: r = VecArith::hmul_rz(x, y); break;
    case 2: r = VecArith::hmul_ftz(x, y); break;
    case 3: r = VecArith::half2float(x); break;
    case 4: r = VecArith::fmul(x, y); break;
    case 5: r = VecArith::float2half_rn(x); break;
    case 6: r = VecArith::float2half_rz(x); break;
    case 7: r = VecArith::hfma(x, y, z); break;
    case 8: r = VecArith::ffma(x, y, z); break;
    default: break;
  }
  return r;
}

void apply(int op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* out) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(0x1F80);
  for (int o = 0; o < kCaseGroup; o += kLanes) {
    store(out + o, apply_op(op, load(a + o), load(b + o), c != nullptr ? load(c + o) : W{}));
  }
  _mm_setcsr(saved);
}

constexpr SimdImpl kImpl{kIsaName, &recipe_count, &recipe_name, &vector_capable, &sweep, &apply};

}  // namespace
}  // namespace bitproof::simd
