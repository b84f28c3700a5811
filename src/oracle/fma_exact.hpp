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

}  // namespace bitproof::oracle::fast
