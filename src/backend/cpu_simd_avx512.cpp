// The CPU vector sweep for AVX-512 (F, CD, BW, DQ, VL) with F16C. Built with
// those flags (CMakeLists.txt); everything but avx512_impl() has internal
// linkage, and the file instantiates only its own templates, so its code is
// reached solely through avx512_impl() after cpu_simd.cpp checked the CPU.
//
// VecArith holds the policy ops on 16 lanes of uint32 (GCC vector extensions):
//   hmul, hmul_rz, hmul_ftz   integer SIMD, from the IEEE rules (below)
//   half2float, fmul, ffma,   the CPU's F16C / AVX-512 float instructions, with
//   float2half_rn/_rz         NaN results replaced by the canonical NaN the
//                             model prescribes (x86 keeps payloads and signs)
//   hfma                      the CPU's FP64 FMA on the exact widened inputs, rounded
//                             once to FP16 by integer code (below)
//   hadd                      lane by lane through the scalar soft model
#include "backend/cpu_simd_job.hpp"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512CD__) && defined(__AVX512BW__) && \
    defined(__AVX512DQ__) && defined(__AVX512VL__) && defined(__F16C__)
#define BITPROOF_SIMD_AVX512 1
#endif

#if defined(BITPROOF_SIMD_AVX512)

#include <immintrin.h>

#include <cstring>

// GCC 12 warns inside its own intrinsic headers (the `__Y = __Y` idiom of
// _mm*_undefined_*); the values are fully overwritten.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// The vendor recipes are not vector-capable, and their CUDA headers define
// inline functions an unoptimised build would emit here as shared symbols
// compiled for AVX-512: leave them out. The table below therefore lists fewer
// recipes than the registry; each entry carries its name and cpu_simd.cpp
// matches names, never bare indices.
#undef BITPROOF_HAVE_CUDA_HEADERS
#define BITPROOF_RECIPE_HEADERS
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE_HEADERS

namespace bitproof::simd {

// Scalar soft-model twins for the ops VecArith does lane by lane (cpu_simd.cpp).
std::uint32_t scalar_soft_op(int op, std::uint32_t a, std::uint32_t b);

namespace {

using W = std::uint32_t __attribute__((vector_size(64)));
using WI = std::int32_t __attribute__((vector_size(64)));
constexpr int kLanes = 16;

inline W load(const std::uint32_t* p) {
  W v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(std::uint32_t* p, W v) { std::memcpy(p, &v, sizeof v); }
inline W splat(std::uint32_t x) { return W{} + x; }
inline W sel(WI mask, W yes, W no) { return mask ? yes : no; }
inline W min_u(W a, W b) { return a < b ? a : b; }
inline __mmask16 bits(WI mask) { return _mm512_movepi32_mask(reinterpret_cast<__m512i>(mask)); }
inline W lzcnt(W x) { return reinterpret_cast<W>(_mm512_lzcnt_epi32(reinterpret_cast<__m512i>(x))); }

// FP16 multiply from the IEEE rules, on 16 lanes. sig = mantissa | hidden bit
// (exponent field e, e1 = max(e, 1) the effective exponent), prod = sa·sb
// (≤ 22 bits, exact), lz its leading zeros. With E = e1a + e1b - lz - 4 the
// result's biased exponent if normal and Ec = max(E, 1), the product keeps
// the bits above shift s = 25 + Ec - (e1a + e1b) (0..31 after clamping); the
// result code is ((Ec - 1) << 10) + round(prod >> s), so a carry out of the
// significand lands in the exponent and subnormals fall out with Ec = 1.
using I = __m512i;
inline I iv(W v) { return reinterpret_cast<I>(v); }
inline W wv(I v) { return reinterpret_cast<W>(v); }
inline I set1(std::uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }

inline W soft_hmul(W a, W b, bool toward_zero) {
  const I x = iv(a), y = iv(b);
  const I exp_mask = set1(0x7C00), man_mask = set1(0x3FF), hidden = set1(0x400), one = set1(1);
  const __mmask16 xn = _mm512_test_epi32_mask(x, exp_mask);  // exponent field nonzero: hidden bit
  const __mmask16 yn = _mm512_test_epi32_mask(y, exp_mask);
  const I sa = _mm512_mask_or_epi32(_mm512_and_si512(x, man_mask), xn, _mm512_and_si512(x, man_mask), hidden);
  const I sb = _mm512_mask_or_epi32(_mm512_and_si512(y, man_mask), yn, _mm512_and_si512(y, man_mask), hidden);
  const I prod = _mm512_mullo_epi32(sa, sb);
  // e1a + e1b: the exponent fields, a subnormal's counted as 1
  const I ex = _mm512_srli_epi32(_mm512_and_si512(x, exp_mask), 10);
  const I ey = _mm512_srli_epi32(_mm512_and_si512(y, exp_mask), 10);
  I esum = _mm512_add_epi32(ex, ey);
  esum = _mm512_mask_add_epi32(esum, static_cast<__mmask16>(~xn), esum, one);
  esum = _mm512_mask_add_epi32(esum, static_cast<__mmask16>(~yn), esum, one);
  const I lz = _mm512_lzcnt_epi32(prod);
  const I e = _mm512_sub_epi32(_mm512_sub_epi32(esum, lz), set1(4));  // biased exponent if normal
  const I ec = _mm512_max_epi32(e, one);
  const I s = _mm512_min_epu32(_mm512_sub_epi32(_mm512_add_epi32(ec, set1(25)), esum), set1(31));
  I n;
  if (toward_zero) {
    n = _mm512_srlv_epi32(prod, s);
  } else {
    const I unit = _mm512_sllv_epi32(one, s);
    const I lsb = _mm512_and_si512(_mm512_srlv_epi32(prod, s), one);
    const I bias = _mm512_and_si512(_mm512_add_epi32(_mm512_sub_epi32(_mm512_srli_epi32(unit, 1), one), lsb),
                                    _mm512_sub_epi32(unit, one));
    n = _mm512_srlv_epi32(_mm512_add_epi32(prod, bias), s);
  }
  I r = _mm512_add_epi32(_mm512_slli_epi32(_mm512_sub_epi32(ec, one), 10), n);
  // overflow to Inf (toward zero: the largest finite); a zero product stays zero
  r = _mm512_maskz_min_epu32(_mm512_test_epi32_mask(prod, prod), r, set1(toward_zero ? 0x7BFF : 0x7C00));
  const I sign = _mm512_ternarylogic_epi32(x, y, set1(0x8000), 0x28);  // (x ^ y) & 0x8000: bits 0b011, 0b101
  r = _mm512_or_si512(r, sign);
  const __mmask16 special = _mm512_cmpeq_epi32_mask(_mm512_and_si512(x, exp_mask), exp_mask) |
                            _mm512_cmpeq_epi32_mask(_mm512_and_si512(y, exp_mask), exp_mask);
  if (special != 0) {
    const I abs_mask = set1(0x7FFF), inf = exp_mask;
    const I mx = _mm512_and_si512(x, abs_mask), my = _mm512_and_si512(y, abs_mask);
    const __mmask16 x_inf = _mm512_cmpeq_epi32_mask(mx, inf), y_inf = _mm512_cmpeq_epi32_mask(my, inf);
    const __mmask16 x_zero = _mm512_testn_epi32_mask(mx, mx), y_zero = _mm512_testn_epi32_mask(my, my);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(mx, inf) | _mm512_cmpgt_epu32_mask(my, inf) | (x_inf & y_zero) |
                          (y_inf & x_zero);
    r = _mm512_mask_or_epi32(r, x_inf | y_inf, sign, inf);
    r = _mm512_mask_mov_epi32(r, nan, abs_mask);
  }
  return wv(r);
}

inline W flush_half(W h) { return sel((h & 0x7C00) == 0, h & 0x8000, h); }

// hmul with subnormal inputs flushed and results flushed when tiny after
// rounding to 11 bits with an unbounded exponent (SoftArith::hmul_ftz): with
// normal inputs, the unbounded rounding keeps prod's top 11 bits (shift
// 21 - lz); a carry out of them lifts the biased exponent E by one.
inline W soft_hmul_ftz(W a, W b) {
  const W x = flush_half(a);
  const W y = flush_half(b);
  const W r = soft_hmul(x, y, false);
  const W ex = (x >> 10) & 31;
  const W ey = (y >> 10) & 31;
  const W prod = ((x & 0x3FF) | 0x400) * ((y & 0x3FF) | 0x400);
  const W lz = lzcnt(prod);
  const W shift = 21 - lz;
  const W unit = splat(1) << shift;
  const W bias = ((unit >> 1) - 1 + ((prod >> shift) & 1)) & (unit - 1);
  const W carry = ((prod + bias) >> shift) >> 11;
  const WI e = reinterpret_cast<WI>(ex + ey + carry - lz - 4);
  const WI finite = (ex != 0) & (ey != 0) & (ex != 31) & (ey != 31);
  return sel(finite & (e < 1), (x ^ y) & 0x8000, r);
}

inline __m512 as_ps(W v) { return reinterpret_cast<__m512>(v); }

constexpr int kNanClass = 0x01 | 0x80;  // vfpclassps: quiet NaN | signalling NaN

template <int kRounding>
inline W cvt_ps_ph(W f) {
  const __m256i h = _mm512_cvtps_ph(as_ps(f), kRounding | _MM_FROUND_NO_EXC);
  const I r = _mm512_cvtepu16_epi32(h);
  return wv(_mm512_mask_mov_epi32(r, _mm512_fpclass_ps_mask(as_ps(f), kNanClass), set1(0x7FFF)));
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
using D = __m512d;

// 8 doubles → 8 FP16 codes (in 64-bit lanes), nearest even.
inline I double_to_half_rn(D d) {
  const I bits = _mm512_castpd_si512(d);
  const I one = _mm512_set1_epi64(1);
  const I sign = _mm512_slli_epi64(_mm512_srli_epi64(bits, 63), 15);
  const I field = _mm512_and_si512(_mm512_srli_epi64(bits, 52), _mm512_set1_epi64(0x7FF));
  const I sig =
      _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi64((1ll << 52) - 1)), _mm512_set1_epi64(1ll << 52));
  // the biased FP16 exponent if normal, Ec = max(E, 1); keep the bits above s = 42 + Ec − E (≤ 63)
  const I e = _mm512_sub_epi64(field, _mm512_set1_epi64(1023 - 15));
  const I ec = _mm512_max_epi64(e, one);
  const I s = _mm512_min_epi64(_mm512_add_epi64(_mm512_sub_epi64(ec, e), _mm512_set1_epi64(42)), _mm512_set1_epi64(63));
  const I lsb = _mm512_and_si512(_mm512_srlv_epi64(sig, s), one);
  const I half_less_one = _mm512_sub_epi64(_mm512_sllv_epi64(one, _mm512_sub_epi64(s, one)), one);
  const I n = _mm512_srlv_epi64(_mm512_add_epi64(_mm512_add_epi64(sig, half_less_one), lsb), s);
  I code = _mm512_add_epi64(_mm512_slli_epi64(_mm512_sub_epi64(ec, one), 10), n);
  code = _mm512_min_epi64(code, _mm512_set1_epi64(0x7C00));  // past the largest finite: ∞
  // ±0 (no FP64 subnormal arises from FP16 inputs)
  const __mmask8 zero = _mm512_cmpeq_epi64_mask(field, _mm512_setzero_si512());
  code = _mm512_maskz_mov_epi64(static_cast<__mmask8>(~zero), code);
  code = _mm512_or_si512(code, sign);
  const __mmask8 nan = _mm512_cmp_pd_mask(d, d, _CMP_UNORD_Q);
  const __mmask8 inf = _mm512_cmpeq_epi64_mask(field, _mm512_set1_epi64(0x7FF)) & static_cast<__mmask8>(~nan);
  code = _mm512_mask_or_epi64(code, inf, sign, _mm512_set1_epi64(0x7C00));
  return _mm512_mask_mov_epi64(code, nan, _mm512_set1_epi64(0x7FFF));
}

inline W soft_hfma(W a, W b, W c) {
  const auto widen = [](W h, int half) {
    const __m512 f = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(iv(h)));
    return _mm512_cvtps_pd(half == 0 ? _mm512_castps512_ps256(f) : _mm512_extractf32x8_ps(f, 1));
  };
  const I lo = double_to_half_rn(_mm512_fmadd_pd(widen(a, 0), widen(b, 0), widen(c, 0)));
  const I hi = double_to_half_rn(_mm512_fmadd_pd(widen(a, 1), widen(b, 1), widen(c, 1)));
  return wv(_mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(lo)), _mm512_cvtepi64_epi32(hi), 1));
}

W lanewise(int op, W a, W b) {
  std::uint32_t x[kLanes], y[kLanes], out[kLanes];
  store(x, a);
  store(y, b);
  for (int i = 0; i < kLanes; ++i) out[i] = scalar_soft_op(op, x[i], y[i]);
  return load(out);
}

struct VecArith {
  static constexpr const char* kName = "avx512";
  static W hmul(W a, W b) { return soft_hmul(a, b, false); }
  static W hmul_rz(W a, W b) { return soft_hmul(a, b, true); }
  static W hmul_ftz(W a, W b) { return soft_hmul_ftz(a, b); }
  static W half2float(W h) {
    const __m512 f = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(iv(h)));
    return wv(_mm512_mask_mov_epi32(_mm512_castps_si512(f), _mm512_fpclass_ps_mask(f, kNanClass), set1(0x7FFFFFFF)));
  }
  static W fmul(W a, W b) {
    const __m512 p = _mm512_mul_ps(as_ps(a), as_ps(b));
    return wv(_mm512_mask_mov_epi32(_mm512_castps_si512(p), _mm512_fpclass_ps_mask(p, kNanClass), set1(0x7FFFFFFF)));
  }
  static W float2half_rn(W f) { return cvt_ps_ph<_MM_FROUND_TO_NEAREST_INT>(f); }
  static W float2half_rz(W f) { return cvt_ps_ph<_MM_FROUND_TO_ZERO>(f); }
  static W ffma(W a, W b, W c) {
    const __m512 r = _mm512_fmadd_ps(as_ps(a), as_ps(b), as_ps(c));
    return wv(_mm512_mask_mov_epi32(_mm512_castps_si512(r), _mm512_fpclass_ps_mask(r, kNanClass), set1(0x7FFFFFFF)));
  }
  static W hadd(W a, W b) { return lanewise(7, a, b); }
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

constexpr int kBatchVectors = 64;  // 1024 cases between claim checks
constexpr std::uint64_t kChunk = 65536;

struct Codes {
  alignas(64) std::uint32_t c[kMaxInputs][kBatchVectors * kLanes];
};

// Input codes of cases [first, first + n) (n a multiple of 16; cases past the
// domain's end get valid codes, their lanes are masked off later). Unused
// inputs get code 0. The first input varies fastest.
void fill_codes(const SimdJob& job, std::uint64_t first, int n, Codes& out) {
  std::uint64_t index[kMaxInputs] = {};
  std::uint64_t rest = first;
  for (int i = 0; i < job.inputs; ++i) {
    index[i] = rest % job.count[i];
    rest /= job.count[i];
  }
  const auto code = [&job, &index](int i) {
    if (i >= job.inputs) return std::uint32_t{0};
    return job.table[i] ? job.table[i][index[i]] : job.lo[i] + static_cast<std::uint32_t>(index[i]);
  };
  if (job.table[0] == nullptr && index[0] + n <= job.count[0]) {  // the first input runs through consecutive codes
    const W iota = W{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const W rest_codes[2] = {splat(code(1)), splat(code(2))};
    for (int v = 0; v < n / kLanes; ++v) {
      store(out.c[0] + v * kLanes, iota + (code(0) + static_cast<std::uint32_t>(v * kLanes)));
      store(out.c[1] + v * kLanes, rest_codes[0]);
      store(out.c[2] + v * kLanes, rest_codes[1]);
    }
    return;
  }
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < kMaxInputs; ++i) out.c[i][j] = code(i);
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
    case 0: return {all_ones & (m != 0), all_ones & (m == 0), zero};         // kIeee
    case 1: return {all_ones & (m == job.man_mask), none, zero};             // kFn
    case 2: return {none, none, zero};                                       // kFinite
    case 3: return {all_ones, none, none};                                   // kE8m0
    case 4: return {x == job.sign_mask, none, x == 0};                       // kFnuz
    default: return {none, none, x == job.int_zero};                         // kInt: value = stored - bias
  }
}

// Per-kind counts of the failing lanes (diff_kind.hpp order and rules).
void count_kinds(const SimdJob& job, W a, W b, __mmask16 failing, std::uint64_t* kinds) {
  const KindMasks x = classify(job, a);
  const KindMasks y = classify(job, b);
  const __mmask16 nan_bits = bits(x.nan & y.nan) & failing;
  const __mmask16 nan = bits(x.nan | y.nan) & failing & ~nan_bits;
  __mmask16 rest = failing & ~bits(x.nan | y.nan);
  const __mmask16 sign = bits(((a ^ b) & ~job.sign_mask) == 0) & rest;
  rest &= ~sign;
  const __mmask16 inf = bits(x.inf | y.inf) & rest;
  rest &= ~inf;
  const __mmask16 zero = bits(x.zero | y.zero) & rest;
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

void check_vector(SimdJob& job, const Outputs& out, int v, std::uint64_t first_case, __mmask16 valid,
                  ChunkState& st) {
  W o[kMaxSlots];
  for (int r = 0; r < job.recipes; ++r) {
    o[r] = load(out.r[r] + v * kLanes);
    if (valid != 0xFFFF) o[r] = wv(_mm512_maskz_mov_epi32(valid, iv(o[r])));
    st.a[r] += o[r];
    st.b[r] += st.a[r];
  }
  for (int c = 0; c < job.claims; ++c) {
    const W ref = o[job.claim_slots[c][0]];
    W other = ref;
    __mmask16 failing = 0;
    for (int k = job.claim_size[c] - 1; k >= 1; --k) {  // the first differing recipe decides the kind
      const W x = o[job.claim_slots[c][k]];
      const __mmask16 differs = _mm512_cmpneq_epi32_mask(iv(x), iv(ref));
      failing |= differs;
      other = wv(_mm512_mask_mov_epi32(iv(other), differs, iv(x)));
    }
    failing &= valid;
    if (failing == 0) continue;
    st.failing[c] += __builtin_popcount(failing);
    job.failing[c] += __builtin_popcount(failing);
    count_kinds(job, ref, other, failing, job.kinds[c]);
    for (__mmask16 m = failing; m != 0 && job.first_count[c] < job.keep; m &= m - 1) {
      job.first_failing[c * job.keep + job.first_count[c]++] = first_case + __builtin_ctz(m);
    }
  }
}

// Lane sum mod 2^32 (GCC's _mm512_reduce_add_epi32 adds as signed int: UB on overflow).
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
    const int vectors = (n + kLanes - 1) / kLanes;
    fill_codes(job, chunk_start + done, vectors * kLanes, codes);
    for (int r = 0; r < job.recipes; ++r) {
      if (job.external[r] != nullptr) {
        job.external[r](job.external_context[r], rows, out.r[r], vectors);
      } else {
        kBatch[job.recipe_index[r]].fn(rows, out.r[r], vectors);
      }
    }
    for (int v = 0; v < vectors; ++v) {
      const int lanes = n - v * kLanes;
      const __mmask16 valid = lanes >= kLanes ? 0xFFFF : static_cast<__mmask16>((1u << lanes) - 1);
      check_vector(job, out, v, chunk_start + done + v * kLanes, valid, st);
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

void apply(int op, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint32_t* out) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(0x1F80);
  const W x = load(a);
  const W y = load(b);
  const W z = c != nullptr ? load(c) : W{};
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
  _mm_setcsr(saved);
  store(out, r);
}

constexpr SimdImpl kImpl{"avx512", &recipe_count, &recipe_name, &vector_capable, &sweep, &apply};

}  // namespace

const SimdImpl* avx512_impl() { return &kImpl; }

}  // namespace bitproof::simd

#else

namespace bitproof::simd {
const SimdImpl* avx512_impl() { return nullptr; }
}  // namespace bitproof::simd

#endif
