// The fast exact oracle for three-input claims a·b + c over binary formats of
// at most 16 bits (FP16, BF16): host+device, constexpr, integer-only (no float
// hardware), no allocation, so it runs on every case of a 2^48 sweep on the
// GPU and in the CPU sweep.
//
// How: every finite input is sig·2^exp with sig < 2^p (p = 11 for FP16, 8 for
// BF16). The product a·b is exact (sig < 2^2p). Product and addend are put on
// one common exponent E in a 32-bit integer and added exactly; the sum is
// rounded once into the output format. E is the lower of the two exponents,
// raised to top − kWindow (top: the larger term's leading binade) when the
// terms lie further apart than that; the term that then falls below E lies at
// least kWindow − 2p + 1 binades under the larger one and is cut to its part at
// or above E with its lost bits ORed into the last place (a sticky bit). Why
// that rounds the same: the larger term is an even multiple of 2^E (its last
// place is at least 2^(top−2p+1) > 2^E); the exact sum lies strictly between two
// consecutive multiples of 2^E and the jammed sum is the odd one of them; the
// result is at least 2^(top−1), so its last place is at least 2^(top−p) and no
// rounding boundary (a multiple of 2^(E+1)) lies between the two. Each aligned
// term is below 2^(kWindow+1), their sum below 2^(kWindow+2) <= 2^31: one 32-bit
// word, the GPU's native integer. Every finite triple, zeros included, takes one
// path of shifts, selects and counts of leading zeros; only NaN and ∞ inputs
// branch off (per 2^32-case block of `hfma` ≡ exact on the H200: a 128-bit sum
// with a bit-by-bit width loop 65.7 ms, 64-bit words 39.4 ms, 32-bit words with
// a branch per class 32.6 ms, this form 15.6 ms; the claim sweep alone 2.8 ms).
//
// Specials as IEEE 754-2019 §5.4.1 fusedMultiplyAdd and §6 specify: any NaN
// input or ∞·0 or ∞ − ∞ gives NaN (the canonical NaN: sign clear, every
// exponent and mantissa bit set); an exact zero sum of opposite-signed terms
// is +0 (both modes here); 0·x + 0 has the sign (sign(0·x) AND sign(c)), e.g.
// (+0)·1 + (−0) = +0 and (−0)·1 + (−0) = −0; a nonzero product plus a zero
// keeps the product's sign even where it rounds to zero.
//
// It is an oracle: it shares no code with the arithmetic policies (src/arith),
// and tests/oracle cross-checks it against the Boost.Multiprecision oracle
// (exact.hpp) on every case it can afford and a deterministic sample above.
#pragma once

#include <cstdint>

#include "hd.hpp"

namespace bitproof::oracle::fast {

using Word = std::uint32_t;
inline constexpr int kWordBits = 32;
// Aligned terms span at most kWindow + 1 bits; see the header for why a term
// further down only counts as a sticky bit.
inline constexpr int kWindow = 29;
static_assert(kWindow + 2 < kWordBits, "the sum of two aligned terms fits a word with its sign bit clear");

// A binary format with IEEE specials: exponent and mantissa field widths.
struct Binary {
  int exp_bits;
  int man_bits;
};
inline constexpr Binary kFp16{5, 10};  // S.EEEEE.MMMMMMMMMM, bias 15
inline constexpr Binary kBf16{8, 7};   // S.EEEEEEEE.MMMMMMM, bias 127

enum class Mode : std::uint8_t { kNearestEven, kTowardZero };

struct Result {
  std::uint32_t code;
  bool inexact;  // the code's value differs from the exact a·b + c (NaN: false)
};

namespace detail {

enum class Cls : std::uint8_t { kZero, kFinite, kInf, kNaN };

// value = (neg ? −1 : 1) · sig · 2^exp when cls is kFinite.
struct Decoded {
  Cls cls;
  bool neg;
  Word sig;
  int exp;
};

BP_HD constexpr int bias(Binary f) { return (1 << (f.exp_bits - 1)) - 1; }
BP_HD constexpr int min_normal_exp(Binary f) { return 1 - bias(f); }
BP_HD constexpr int least_exp(Binary f) { return min_normal_exp(f) - f.man_bits; }  // the least subnormal
BP_HD constexpr std::uint32_t exp_ones(Binary f) { return (1u << f.exp_bits) - 1; }
BP_HD constexpr std::uint32_t man_mask(Binary f) { return (1u << f.man_bits) - 1; }
BP_HD constexpr std::uint32_t sign_bit(Binary f) { return 1u << (f.exp_bits + f.man_bits); }
BP_HD constexpr std::uint32_t nan_code(Binary f) { return (exp_ones(f) << f.man_bits) | man_mask(f); }
BP_HD constexpr std::uint32_t inf_code(Binary f, bool neg) {
  return (exp_ones(f) << f.man_bits) | (neg ? sign_bit(f) : 0);
}
BP_HD constexpr std::uint32_t zero_code(Binary f, bool neg) { return neg ? sign_bit(f) : 0; }
BP_HD constexpr std::uint32_t magnitude(Binary f, std::uint32_t code) { return code & (sign_bit(f) - 1); }
BP_HD constexpr bool is_nan_or_inf(Binary f, std::uint32_t code) { return magnitude(f, code) >= inf_code(f, false); }

// A finite code (zero included: sig 0) without branches: a subnormal's exponent
// field 0 reads as 1 with no hidden bit, so sig = magnitude − (field − 1)·2^man_bits.
BP_HD constexpr Decoded decode_finite(Binary f, std::uint32_t code) {
  const std::uint32_t mag = magnitude(f, code);
  const std::uint32_t field = mag >> f.man_bits;
  const std::uint32_t normal_field = field > 0 ? field : 1;
  const Word sig = mag - ((normal_field - 1) << f.man_bits);
  return {sig == 0 ? Cls::kZero : Cls::kFinite, code != mag, sig,
          static_cast<int>(normal_field) - bias(f) - f.man_bits};
}

BP_HD constexpr Decoded decode(Binary f, std::uint32_t code) {
  if (is_nan_or_inf(f, code)) {
    return {magnitude(f, code) == inf_code(f, false) ? Cls::kInf : Cls::kNaN, (code & sign_bit(f)) != 0, 0, 0};
  }
  return decode_finite(f, code);
}

// The number of significant bits of v (0 for 0). The hardware count of leading
// zeros on the GPU; the compiler builtin on the host and in constant evaluation.
BP_HD constexpr int width(Word v) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return kWordBits - __clz(static_cast<int>(v));
#endif
  return v == 0 ? 0 : kWordBits - __builtin_clz(v);
}

// Rounds (neg ? −1 : 1) · mag · 2^e (0 < mag < 2^(kWordBits−1)) once into f.
// mag is first shifted up to x with its top bit at kWordBits − 2, so the last
// place q lies kWordBits − 2 − man_bits or more places above x's bit 0 (drop
// below): never a left shift, and x plus half a last place fits the word.
BP_HD constexpr Result round(Binary f, bool neg, Word mag, int e, Mode mode) {
  const int up_shift = kWordBits - 1 - width(mag);
  const Word x = mag << up_shift;
  const int x_exp = e - up_shift;                // x · 2^x_exp is the value
  const int top = x_exp + kWordBits - 2;         // 2^top <= value < 2^(top+1)
  const int q = (top > min_normal_exp(f) ? top : min_normal_exp(f)) - f.man_bits;  // the result's last place
  const int drop = q - x_exp;                    // >= kWordBits − 2 − man_bits > 0
  Word n = 0;     // the rounded value in last places (with the hidden bit)
  bool inexact = true;
  if (drop < kWordBits) {  // else the value is below half the least subnormal
    const Word cut = x >> drop;
    inexact = (cut << drop) != x;
    const Word half_less_one = (Word{1} << (drop - 1)) - 1;  // ties go up only from an odd cut
    n = mode == Mode::kNearestEven ? (x + half_less_one + (cut & 1)) >> drop : cut;
  }
  // Field − 1 above the mantissa plus n with its hidden bit: a carry out of the
  // mantissa moves into the exponent, a subnormal rounded up becomes the least normal.
  const std::uint32_t body = (static_cast<std::uint32_t>(q - least_exp(f)) << f.man_bits) + n;
  const std::uint32_t inf = inf_code(f, false);
  const std::uint32_t sign = neg ? sign_bit(f) : 0;
  if (body >= inf) return {sign | (mode == Mode::kTowardZero ? inf - 1 : inf), true};
  return {sign | body, inexact};
}

// sig · 2^(common + d) as a multiple of 2^common: exact when d >= 0, else cut
// with the lost bits ORed into the last place (see the header comment).
BP_HD constexpr Word align(Word sig, int d) {
  // A nonzero term lies at most kWindow + 1 places above E; only a zero term's
  // exponent (not its own: alignment() ignores it) can lie further.
  if (d >= 0) return d < kWordBits ? sig << d : 0;
  const int drop = -d;
  if (drop >= kWordBits) return sig != 0 ? 1 : 0;
  return (sig >> drop) | ((sig << (kWordBits - drop)) != 0 ? 1u : 0u);
}

BP_HD constexpr int top_of(Word sig, int exp) { return exp + width(sig) - 1; }

// The common exponent E of two terms sig·2^exp (a zero term takes the other's
// exponent, so it neither sets the top nor lowers E), and whether one of them lies so
// far under the other (more than kWindow binades under the top) that it is cut to a sticky bit.
struct Alignment {
  int common;
  bool cut;
};
BP_HD constexpr Alignment alignment(Word p_sig, int p_exp, Word z_sig, int z_exp) {
  if (p_sig == 0) p_exp = z_exp;
  if (z_sig == 0) z_exp = p_exp;
  const int p_top = top_of(p_sig, p_exp);
  const int z_top = top_of(z_sig, z_exp);
  const int top = p_top > z_top ? p_top : z_top;
  const int lowest = p_exp < z_exp ? p_exp : z_exp;
  return lowest < top - kWindow ? Alignment{top - kWindow, true} : Alignment{lowest, false};
}

// a·b + c when an input is NaN or ∞ (IEEE 754-2019 §7.2: ∞·0 and ∞ − ∞ are invalid).
BP_HD constexpr Result fma_special(Binary in, Binary out, std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  const Decoded x = decode(in, a);
  const Decoded y = decode(in, b);
  const Decoded z = decode(in, c);
  const Result nan{nan_code(out), false};
  if (x.cls == Cls::kNaN || y.cls == Cls::kNaN || z.cls == Cls::kNaN) return nan;
  const bool p_neg = x.neg != y.neg;
  const bool p_inf = x.cls == Cls::kInf || y.cls == Cls::kInf;
  const bool p_zero = x.cls == Cls::kZero || y.cls == Cls::kZero;
  if (p_inf && p_zero) return nan;  // ∞ · 0
  if (p_inf) {
    if (z.cls == Cls::kInf && z.neg != p_neg) return nan;  // ∞ − ∞
    return {inf_code(out, p_neg), false};
  }
  return {inf_code(out, z.neg), false};  // only the addend is ∞
}

}  // namespace detail

// Whether the window argument of the header holds: inputs of precision p with
// 2p < kWindow (the larger term's last place above E, a cut term below half the
// larger), an output last place above E.
BP_HD constexpr bool window_holds(Binary in, Binary out) {
  return 2 * (in.man_bits + 1) < kWindow && out.man_bits + 1 < kWindow;
}
static_assert(window_holds(kFp16, kFp16) && window_holds(kBf16, kBf16));

// a·b + c with inputs in `in` and the result correctly rounded into `out`
// (formats for which window_holds). Finite inputs, zeros included, take one
// path with few branches (the GPU runs it on every case of a 2^48 sweep).
BP_HD constexpr Result fma(Binary in, Binary out, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                           Mode mode = Mode::kNearestEven) {
  if (detail::is_nan_or_inf(in, a) || detail::is_nan_or_inf(in, b) || detail::is_nan_or_inf(in, c)) {
    return detail::fma_special(in, out, a, b, c);
  }
  const detail::Decoded x = detail::decode_finite(in, a);
  const detail::Decoded y = detail::decode_finite(in, b);
  const detail::Decoded z = detail::decode_finite(in, c);
  const bool p_neg = x.neg != y.neg;
  const Word p_sig = x.sig * y.sig;  // < 2^2p: exact
  const int p_exp = x.exp + y.exp;
  const int common = detail::alignment(p_sig, p_exp, z.sig, z.exp).common;
  const Word p = detail::align(p_sig, p_exp - common);
  const Word s = detail::align(z.sig, z.exp - common);
  // Both below 2^(kWindow+1): their sum and difference fit a signed word.
  const auto sum = static_cast<std::int32_t>(p_neg == z.neg ? p + s : p - s);
  const bool neg = p_neg != (sum < 0);
  const auto mag = static_cast<Word>(sum < 0 ? -sum : sum);
  // A zero sum is exact: +0 unless both terms are −0 (exact cancellation gives +0 in both modes).
  if (mag == 0) return {detail::zero_code(out, p_neg && z.neg), false};
  return detail::round(out, neg, mag, common, mode);
}

// ---- the run form: the claim sweep's batch shape ----
//
// The GPU sweep evaluates a batch of consecutive first inputs a0, a0 + 1, …
// with b and c fixed, and a warp runs 32 such batches in lockstep: a form per
// batch is only fast if (nearly) every batch takes the same one, so this form
// is one straight path with per-run constants (the run's "plan"). A plan may
// serve a longer run than one batch: the sweep plans each thread's 256 cases
// once (plan_run) and reads its batches from that plan (fma_run with t0).
//
// Where the run's a share sign and exponent field, their significands are
// consecutive, so the products are sig_b·(sig_a0 + t)·2^p_exp with one exponent,
// and one common exponent E can serve the whole run (chosen as fma() chooses
// it, from the run's largest product). Where a term is cut to a sticky bit, the
// header's argument must hold for every case of the run: shared_plan checks its
// three conditions (the larger term's last place above E, the cut term below
// half the larger, the result's last place at E + 2 or above). The aligned
// products grow with t (a cut one too: the jam keeps order), so the sums
// S_t = term_t ± z are monotone; where they share one sign and span at most two
// binades, each result's last place is one of two, picked by comparing |S_t|
// with a power of two, and rounding is a shift: code_t = base + RNE(|S_t| / 2^drop),
// the hidden bit and a carry into the exponent included in the add, then a
// clamp at ∞ (or the largest finite toward zero). No count of leading zeros per
// case (the GPU's FLO runs at a quarter of an add's rate).
//
// Runs with a NaN or ∞ input, or b = ±0, have one result for every a after
// the first (LinearRun holds it as a constant); a run from a = ±0 takes the
// plan of its other cases. The first case of those is fma()'s. Runs whose sums
// change sign or span more binades, or whose a cross an exponent field, take
// fma() case by case (a long run: each batch planned alone first). Same codes as fma() on every case
// (tests/oracle/test_fma_run.cpp; on the GPU tests/gpu: the sweep's batches
// against the CPU's fma()). Per 2^32-case block of `hfma` ≡ exact on the
// H200: fma() case by case 15.6 ms; see bench/RESULTS.md for this form.

namespace detail {

// What a run shares. Case t's aligned product is p_first + t·p_step, or, when
// the product is the cut term, p_first + t·p_step (p_step then the unshifted
// sig_b) cut p_shift places (LinearRun's term).
struct RunPlan {
  bool fast = false;  // false: every case through fma()
  bool product_cut = false;
  bool p_neg = false;
  int common = 0;
  int p_shift = 0;
  Word p_first = 0;
  Word p_step = 0;
  std::int32_t z_signed = 0;  // the aligned addend, negated when its sign differs from the product's
};

template <class T>
BP_HD constexpr T max_of(T x, T y) {
  return x > y ? x : y;
}
template <class T>
BP_HD constexpr T min_of(T x, T y) {
  return x < y ? x : y;
}

// The jam of a cut term (the header's argument) rounds every case of the run as the exact sum does.
BP_HD constexpr bool jam_holds(Binary out, int common, int big_exp, int big_top_min, int cut_top_max) {
  return big_exp > common && big_top_min >= cut_top_max + 2 && big_top_min - 1 >= common + 2 + out.man_bits;
}

// The shared alignment of a run of n finite a from a0, b and c finite, as if
// their significands were consecutive and their products nonzero; `fast` is
// whether the jam's conditions allow it. plan_run checks what this assumes
// (tests call it alone for negative controls).
BP_HD constexpr RunPlan shared_plan(Binary in, Binary out, std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c) {
  RunPlan plan;
  const Decoded x = decode_finite(in, a0);
  const Decoded y = decode_finite(in, b);
  const Decoded z = decode_finite(in, c);
  const int p_exp = x.exp + y.exp;
  const Word p_first = x.sig * y.sig;
  const Word p_last = (x.sig + static_cast<Word>(n - 1)) * y.sig;
  const int z_exp = z.sig == 0 ? p_exp : z.exp;  // as alignment(): a zero addend sets nothing
  const int p_top_min = top_of(p_first, p_exp);
  const int p_top_max = top_of(p_last, p_exp);
  const int z_top = top_of(z.sig, z_exp);
  const int top = max_of(p_top_max, z_top);
  const int lowest = min_of(p_exp, z_exp);
  plan.common = lowest < top - kWindow ? top - kWindow : lowest;
  plan.product_cut = p_exp < plan.common;
  plan.p_neg = x.neg != y.neg;
  plan.p_shift = p_exp - plan.common;
  plan.p_step = plan.product_cut ? y.sig : y.sig << plan.p_shift;
  plan.p_first = plan.product_cut ? p_first : p_first << plan.p_shift;
  const Word z_aligned = align(z.sig, z_exp - plan.common);
  plan.z_signed = static_cast<std::int32_t>(plan.p_neg == z.neg ? z_aligned : Word{0} - z_aligned);
  const bool addend_cut = z_exp < plan.common;
  plan.fast = (!addend_cut || jam_holds(out, plan.common, p_exp, p_top_min, z_top)) &&
              (!plan.product_cut || jam_holds(out, plan.common, z_exp, z_top, p_top_max));
  return plan;
}

// The straight path of a run: case t's code is
//   p = p_first + t·p_step;  term = (p >> shift) | sticky(p & lost);  m = c0 + sgn·term;
//   twice = m + (m >= upper ? upper : m);  code = min(base + RNE(twice >> drop), clamp)
// Doubling m in the lower binade and adding 2^w_lo to it in the upper one
// gives both binades one last place (2^drop): the upper binade's results are
// 2^man_bits codes further on, which the added 2^w_lo >> drop is, and the
// rounding bits are m's in both. A run in one binade (or whose two binades
// share a last place, below the normal range) has upper = ∞. A run whose
// product is not cut has c0 = 0 and sgn = 1: its term is m itself, one add a
// case (from_plan folds them in). (c0 = sgn = 0, p = 0 and a constant base for
// runs with one result after the first.)
struct LinearRun {
  bool ok = false;              // false: every case through fma()
  bool first_override = false;  // case 0's code is `first` (a = ±0, or a special run's first)
  std::uint32_t first = 0;
  Word p_first = 0;
  Word p_step = 0;
  int shift = 0;
  Word lost = 0;  // the product's bits below E (a cut product: its sticky bit)
  Word c0 = 0;
  Word sgn = 0;  // 1 or −1 (all ones)
  Word upper = ~Word{0};
  Word odd = 0;  // 1 to nearest (a tie goes up from an odd cut), 0 toward zero
  std::uint32_t clamp = ~std::uint32_t{0};
  int drop = 1;
  Word half_less_one = 0;
  std::uint32_t base = 0;
  bool clamps = false;  // some case's code reaches `clamp` (else rounded_code<false> needs no clamp)
};

// Case t's aligned product: exact (kCut false: shift and lost are 0), or cut to
// its bits at or above E with those below as a sticky bit (align()'s cut, as a
// shift and a mask). The sticky bit's four operations are only paid by runs
// whose product is cut (on the GPU: by warps with such a run; see batch_form).
template <bool kCut>
BP_HD constexpr Word linear_term(const LinearRun& r, Word t) {
  const Word p = r.p_first + t * r.p_step;
  if constexpr (!kCut) return p;
  const Word below = p & r.lost;
  return (p >> r.shift) | (below < 1u ? below : Word{1});
}

// No array in LinearRun is indexed per case: a run-time index puts the run in
// the GPU's local memory (it cost three loads a case when the two binades'
// fields were an array picked by index). kClamp false leaves out the clamp,
// which only a run with r.clamps needs.
template <bool kClamp = true>
BP_HD constexpr std::uint32_t rounded_code(const LinearRun& r, Word m) {
  const Word twice = m + (m >= r.upper ? r.upper : m);
  const std::uint32_t code = r.base + ((twice + r.half_less_one + ((twice >> r.drop) & r.odd)) >> r.drop);
  if constexpr (!kClamp) return code;
  return code < r.clamp ? code : r.clamp;
}

template <bool kCut, bool kClamp = true>
BP_HD constexpr std::uint32_t linear_code(const LinearRun& r, Word t) {
  return rounded_code<kClamp>(r, r.c0 + r.sgn * linear_term<kCut>(r, t));
}

// The last place of the results whose sums are w bits wide at E = common: their
// binade's, or the subnormals' below the normal range.
BP_HD constexpr int last_place(Binary out, int common, int w) {
  return max_of(common + w - 1, min_normal_exp(out)) - out.man_bits;
}

// The straight path from a valid plan of cases t_first … n − 1 (ok false where
// the sums change sign or span more than two binades, or the rounding would
// not be a right shift).
BP_HD constexpr LinearRun from_plan(Binary out, const RunPlan& plan, int t_first, int n, Mode mode) {
  LinearRun r;
  if (!plan.fast) return r;
  r.p_first = plan.p_first;
  r.p_step = plan.p_step;
  const int cut = plan.product_cut ? -plan.p_shift : 0;
  r.shift = min_of(cut, kWordBits - 1);  // a significand below 2^2p: shifted by 31, nothing is left
  r.lost = cut >= kWordBits ? ~Word{0} : (Word{1} << cut) - 1;
  const auto sum = [&r, &plan](int t) {
    return static_cast<std::int32_t>(linear_term<true>(r, static_cast<Word>(t))) + plan.z_signed;
  };
  const std::int32_t s_first = sum(t_first);
  const std::int32_t s_last = sum(n - 1);
  if (s_first == 0 || s_last == 0 || (s_first < 0) != (s_last < 0)) return r;
  const bool below = s_first < 0;  // then every sum is negative
  const int w_first = width(static_cast<Word>(below ? -s_first : s_first));
  const int w_last = width(static_cast<Word>(below ? -s_last : s_last));
  const int w_lo = min_of(w_first, w_last);
  // two binades at most; twice + half_less_one stays below 2^32 while w_lo ≤ 30
  if (max_of(w_first, w_last) - w_lo > 1 || w_lo >= kWordBits - 1) return r;
  const bool nearest = mode == Mode::kNearestEven;
  const std::uint32_t sign = plan.p_neg != below ? sign_bit(out) : 0;
  const int q = last_place(out, plan.common, w_lo);
  const int drop = q - plan.common;  // the lower binade's last place over E
  if (drop < 1 || drop + 1 >= kWordBits) return r;
  // twice's last place, one above the lower binade's; the upper binade's is the same or one more
  r.drop = drop + 1;
  r.half_less_one = nearest ? (Word{1} << drop) - 1 : 0;
  r.base = sign + (static_cast<std::uint32_t>(q - least_exp(out)) << out.man_bits);
  if (last_place(out, plan.common, w_lo + 1) != q) r.upper = Word{1} << w_lo;  // else they share it (subnormals)
  r.c0 = static_cast<Word>(below ? -plan.z_signed : plan.z_signed);
  r.sgn = below ? ~Word{0} : Word{1};
  r.odd = nearest ? 1 : 0;
  r.clamp = sign + (nearest ? inf_code(out, false) : inf_code(out, false) - 1);
  // The sums are monotone in t and so are their codes: the two ends' codes say whether one reaches the clamp.
  r.clamps = max_of(linear_code<true, false>(r, static_cast<Word>(t_first)),
                    linear_code<true, false>(r, static_cast<Word>(n - 1))) >= r.clamp;
  if (!plan.product_cut) {
    // No cut: m itself is linear in t, so the term carries the addend and the sign (c0 = 0, sgn = 1).
    r.p_first = r.c0 + r.sgn * r.p_first;
    r.p_step = r.sgn * r.p_step;
    r.c0 = 0;
    r.sgn = 1;
  }
  r.ok = true;
  return r;
}

// The run's straight path, or ok false for fma() case by case.
BP_HD constexpr LinearRun linear_run(Binary in, Binary out, std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c,
                                     Mode mode) {
  const std::uint32_t a_last = a0 + static_cast<std::uint32_t>(n - 1);
  if ((a0 >> in.man_bits) != (a_last >> in.man_bits)) return LinearRun{};  // not one field and sign
  if (is_nan_or_inf(in, a0) || is_nan_or_inf(in, b) || is_nan_or_inf(in, c) || magnitude(in, b) == 0) {
    // One result for every a after the first (a NaN, ∞ or zero product, or an ∞ addend).
    LinearRun r;
    r.ok = true;
    r.first_override = true;
    r.first = fma(in, out, a0, b, c, mode).code;
    r.base = n > 1 ? fma(in, out, a0 + 1, b, c, mode).code : r.first;  // m is 0: the code is base
    return r;
  }
  if (magnitude(in, a0) != 0) return from_plan(out, shared_plan(in, out, a0, n, b, c), 0, n, mode);
  if (n == 1) return LinearRun{};
  // a0 = ±0: the plan of a0 + 1 …, stepped back one case (the product at t = 0 is 0·sig_b = 0).
  RunPlan plan = shared_plan(in, out, a0 + 1, n - 1, b, c);
  plan.p_first -= plan.p_step;
  LinearRun r = from_plan(out, plan, 1, n, mode);
  r.first_override = true;
  r.first = fma(in, out, a0, b, c, mode).code;
  return r;
}

}  // namespace detail

// Whether fma_run takes a run through its straight path (else case by case): for tests and benchmarks.
BP_HD constexpr bool run_is_linear(Binary in, Binary out, std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c,
                                   Mode mode = Mode::kNearestEven) {
  return detail::linear_run(in, out, a0, n, b, c, mode).ok;
}

// A run's straight path, planned once: the GPU sweep plans each thread's whole
// run of first inputs (256 cases) before its batches, which then only take
// their codes from it; a run whose plan is not ok is planned batch by batch.
using LinearRun = detail::LinearRun;

// The plan of the run a0 … a0 + n − 1 with b and c fixed (ok false: plan batch by batch).
BP_HD constexpr LinearRun plan_run(Binary in, Binary out, std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c,
                                   Mode mode = Mode::kNearestEven) {
  return detail::linear_run(in, out, a0, n, b, c, mode);
}

namespace detail {

// The forms of a run's straight path: with or without the cut product's
// sticky bit, with or without the clamp. The general form (both) is right for
// every run; a lighter one only where the run needs neither (r.lost == 0, no
// r.clamps), else its codes are wrong (tests/oracle: negative controls).
struct Form {
  bool cut;
  bool clamp;
};
BP_HD constexpr Form form_of(const LinearRun& r) { return {r.lost != 0, r.clamps}; }

// codes[t] = case t0 + t of run r in form F (its first case's override at t0 + t = 0).
template <bool kCut, bool kClamp, int kN>
BP_HD constexpr void codes_in_form(const LinearRun& r, Word t0, std::uint32_t (&codes)[kN]) {
  for (int t = 0; t < kN; ++t) {
    const Word case_t = t0 + static_cast<Word>(t);
    // Without a cut, m is the term (from_plan folds c0 and sgn into it): one add a case.
    codes[t] = kCut ? linear_code<true, kClamp>(r, case_t) : rounded_code<kClamp>(r, linear_term<false>(r, case_t));
  }
  if (r.first_override && t0 == 0) codes[0] = r.first;
}

// The form a batch takes: the run's own on the host; on the GPU the lightest
// form right for every run of the converged threads (a warp's 32 runs), since
// threads that differ in form would run both forms one after the other (a
// warp's runs of 256 differ in their a's exponent: about 15 % of warps mix
// cut and uncut runs).
BP_HD constexpr Form batch_form(const LinearRun& r) {
  const Form own = form_of(r);
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) {
    const unsigned converged = __activemask();
    return {__any_sync(converged, own.cut) != 0, __any_sync(converged, own.clamp) != 0};
  }
#endif
  return own;
}

// codes[t] = case t0 + t of run r (its first case's override at t0 + t = 0).
template <int kN>
BP_HD constexpr void codes_of_run(const LinearRun& r, Word t0, std::uint32_t (&codes)[kN]) {
  const Form form = batch_form(r);
  if (form.cut) {
    if (form.clamp) return codes_in_form<true, true>(r, t0, codes);
    return codes_in_form<true, false>(r, t0, codes);
  }
  if (form.clamp) return codes_in_form<false, true>(r, t0, codes);
  codes_in_form<false, false>(r, t0, codes);
}

#if defined(__CUDA_ARCH__)
// fma() as a call of its own on the GPU: runs off the straight path are few,
// and inlined in the batch it made the whole run form a call that returned its
// codes through local memory.
__device__ __noinline__ inline std::uint32_t fma_call(Binary in, Binary out, std::uint32_t a, std::uint32_t b,
                                                      std::uint32_t c, Mode mode) {
  return fma(in, out, a, b, c, mode).code;
}
#endif

BP_HD constexpr std::uint32_t fma_case(Binary in, Binary out, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                                       Mode mode) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return fma_call(in, out, a, b, c, mode);
#endif
  return fma(in, out, a, b, c, mode).code;
}

}  // namespace detail

// codes[t] = fma(in, out, a0 + t, b, c, mode).code for t < kN, where a0 is case
// t0 of the run that `whole` plans (a0 − t0 its first input, t0 + kN at most
// its length): from `whole` when it is ok, else from a plan of these kN cases,
// else case by case.
template <int kN>
BP_HD constexpr void fma_run(Binary in, Binary out, const LinearRun& whole, std::uint32_t t0, std::uint32_t a0,
                             std::uint32_t b, std::uint32_t c, std::uint32_t (&codes)[kN],
                             Mode mode = Mode::kNearestEven) {
  static_assert(kN >= 1);
  if (whole.ok) return detail::codes_of_run(whole, t0, codes);
  const LinearRun r = detail::linear_run(in, out, a0, kN, b, c, mode);
  if (r.ok) return detail::codes_of_run(r, 0, codes);
  for (int t = 0; t < kN; ++t) codes[t] = detail::fma_case(in, out, a0 + static_cast<std::uint32_t>(t), b, c, mode);
}

// The same with no plan of a longer run: the kN cases are planned alone.
template <int kN>
BP_HD constexpr void fma_run(Binary in, Binary out, std::uint32_t a0, std::uint32_t b, std::uint32_t c,
                             std::uint32_t (&codes)[kN], Mode mode = Mode::kNearestEven) {
  fma_run(in, out, LinearRun{}, 0, a0, b, c, codes, mode);
}

// The correctly rounded FP16 and BF16 FMAs (nearest even), as codes.
BP_HD constexpr std::uint32_t fma_fp16(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  return fma(kFp16, kFp16, a, b, c).code;
}
BP_HD constexpr std::uint32_t fma_bf16(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  return fma(kBf16, kBf16, a, b, c).code;
}

// Known answers, checked at compile time (decoded values in the comments).
// LLVM issue 98389: 0x520b (+48.34375) · 0x00e9 (+233·2^-24) + 0x2ff6 (+0.1243896484375):
// the exact sum lies just above the midpoint 0x3000/0x3001; the FP32-FMA route rounds it
// to the midpoint first and then to even 0x3000 (+0.125); correct is 0x3001 (+0.1251220703125).
static_assert(fma_fp16(0x520b, 0x00e9, 0x2ff6) == 0x3001);
static_assert(fma_fp16(0x3C00, 0x3C00, 0xBC00) == 0x0000);  // 1·1 − 1 = +0
static_assert(fma_fp16(0x8000, 0x3C00, 0x8000) == 0x8000);  // (−0)·1 + (−0) = −0
static_assert(fma_fp16(0x0000, 0x3C00, 0x8000) == 0x0000);  // (+0)·1 + (−0) = +0
static_assert(fma_fp16(0x7C00, 0x0000, 0x3C00) == 0x7FFF);  // ∞·0 + 1 = NaN
static_assert(fma_fp16(0x7C00, 0x3C00, 0xFC00) == 0x7FFF);  // ∞·1 − ∞ = NaN
static_assert(fma_fp16(0x7BFF, 0x4000, 0xFBFF) == 0x7BFF);  // 65504·2 − 65504 = 65504: no overflow inside
static_assert(fma_fp16(0x7BFF, 0x3C00, 0x5000) == 0x7C00);  // 65504 + 32 rounds to 65536: ∞
static_assert(fma_fp16(0x0001, 0x3800, 0x0000) == 0x0000);  // 2^-24·0.5 + 0: a tie, to even 0
static_assert(fma_fp16(0x8001, 0x3800, 0x0000) == 0x8000);  // −2^-25 + 0 = −0 after rounding
// The window cut in FP16 (terms more than kWindow binades apart): the far term only counts as sticky.
// 3 · 683 = 2049, the midpoint of 2048 and 2050; ± 2^-24, 35 binades down, decides the tie.
static_assert(fma_fp16(0b0'10000'1000000000, 0b0'11000'0101010110, 0x0001) == 0x6801);  // 3·683 + 2^-24: 2050
static_assert(fma_fp16(0b0'10000'1000000000, 0b0'11000'0101010110, 0x8001) == 0x6800);  // 3·683 − 2^-24: 2048
static_assert(fma_fp16(0b0'10000'1000000000, 0b0'11000'0101010110, 0x0000) == 0x6800);  // 3·683: tie, to even 2048
// 2^-24·2^-24 lies 63 binades under 32768.
static_assert(fma_fp16(0x0001, 0x0001, 0x7800) == 0x7800);  // 32768 + 2^-48: 32768
static_assert(fma_fp16(0x8001, 0x0001, 0x7800) == 0x7800);  // 32768 − 2^-48: 32768 (nearest)
static_assert(fma(kFp16, kFp16, 0x8001, 0x0001, 0x7800, Mode::kTowardZero).code == 0x77FF);  // toward zero: 32752
static_assert(fma(kFp16, kFp16, 0x0001, 0x0001, 0x7800, Mode::kTowardZero).inexact);
static_assert(fma_bf16(0x3F80, 0x3F80, 0xBF80) == 0x0000);  // 1·1 − 1 = +0
// A zero term far from the other (its exponent must neither set the window nor be shifted by it;
// constant evaluation rejects an oversized shift, so these also guard the alignment against UB).
static_assert(fma_bf16(0x0001, 0x0001, 0x0000) == 0x0000);  // 2^-266 + 0: +0
static_assert(fma_bf16(0x0000, 0x7F7F, 0x0001) == 0x0001);  // 0·max + 2^-133: 2^-133, not a sticky bit
static_assert(fma_bf16(0x8000, 0x0001, 0x7F7F) == 0x7F7F);  // (−0)·2^-133 + max: max
static_assert(fma_bf16(0x7F7F, 0x4000, 0xFF7F) == 0x7F7F);  // max·2 − max = max (2^128 inside, not ∞)
static_assert(fma_bf16(0x0001, 0x0001, 0x3F80) == 0x3F80);  // 1 + 2^-266: sticky, 1
static_assert(fma_bf16(0x0001, 0x0001, 0xBF80) == 0xBF80);  // −1 + 2^-266: −1 (nearest)
static_assert(fma(kBf16, kBf16, 0x0001, 0x0001, 0xBF80, Mode::kTowardZero).code == 0xBF7F);  // toward zero: −(1−2^-8)


// The run form on the runs of 16 that hold known answers above: fma()'s codes, on the straight path.
template <int kN>
constexpr bool run_agrees(Binary f, std::uint32_t a0, std::uint32_t b, std::uint32_t c) {
  std::uint32_t codes[kN] = {};
  fma_run(f, f, a0, b, c, codes);
  for (int t = 0; t < kN; ++t) {
    if (codes[t] != fma(f, f, a0 + static_cast<std::uint32_t>(t), b, c).code) return false;
  }
  return run_is_linear(f, f, a0, kN, b, c);
}
static_assert(run_agrees<16>(kFp16, 0x5200, 0x00e9, 0x2ff6));  // LLVM 98389's a = 0x520b among them
static_assert(run_agrees<16>(kFp16, 0b0'11000'0101010000, 0b0'10000'1000000000, 0x0001));  // the window cut
static_assert(run_agrees<16>(kFp16, 0x0000 + 16, 0x0001, 0x7800));  // products 63 binades under the addend
static_assert(run_agrees<16>(kFp16, 0x8000, 0x3C00, 0x3C00));        // from a = −0: its own first case
static_assert(run_agrees<16>(kFp16, 0x7C00, 0x3C00, 0x3C00));        // ∞ then NaN
static_assert(run_agrees<16>(kFp16, 0x7BF0, 0x4000, 0x0000));        // results that round to ∞ (the clamp)
static_assert(run_agrees<16>(kBf16, 0x7F70, 0x4000, 0xFF7F));        // max·2 − max among them
static_assert(!run_is_linear(kFp16, kFp16, 0x07F8, 16, 0x3C00, 0x3C00));  // crosses an exponent field

}  // namespace bitproof::oracle::fast
