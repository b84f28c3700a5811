// Bit-exact software IEEE arithmetic on raw bits, host+device, constexpr.
// The model for what the GPU's half/float instructions return: one rounding
// per operation, subnormals kept, NaN results canonical (sign clear, all
// exponent and mantissa bits set: 0x7FFF for binary16, as NVIDIA hardware
// returns them). Independent of src/oracle by design: no shared code.
#pragma once

#include <cstdint>
#include <type_traits>

#include "hd.hpp"

namespace bitproof::soft {

// kToOdd: round to odd (Boldo & Melquiond, IEEE TC 2008): truncate, and set the
// last bit when anything was lost; overflow gives the largest finite value.
enum class Round : std::uint8_t { kNearestEven, kTowardZero, kToOdd };

// An IEEE binary interchange format with kExpBits/kManBits fields; Bits holds
// its codes (32 bits up to binary32, 64 bits for binary64).
template <int kExpBits, int kManBits>
struct Ieee {
  static constexpr int kBits = 1 + kExpBits + kManBits;
  using Bits = std::conditional_t<(kBits > 32), std::uint64_t, std::uint32_t>;
  static constexpr int kMan = kManBits;
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr std::uint32_t kExpAllOnes = (1u << kExpBits) - 1;
  static constexpr Bits kManMask = (Bits{1} << kManBits) - 1;
  static constexpr Bits kSign = Bits{1} << (kExpBits + kManBits);
  static constexpr Bits kInf = Bits{kExpAllOnes} << kManBits;
  static constexpr Bits kMaxFinite = kInf - 1;
  static constexpr Bits kNaN = kInf | kManMask;
  static constexpr int kQuantumExp = 1 - kBias - kManBits;  // exponent of the least subnormal
};

using Binary16 = Ieee<5, 10>;
using Binary32 = Ieee<8, 23>;
using Bfloat16 = Ieee<8, 7>;
using Binary64 = Ieee<11, 52>;
static_assert(Binary16::kNaN == 0x7FFF && Binary16::kInf == 0x7C00 && Binary16::kMaxFinite == 0x7BFF);
static_assert(Binary32::kInf == 0x7F800000u && Bfloat16::kInf == 0x7F80);
static_assert(Binary64::kInf == 0x7FF0000000000000ull && Binary64::kNaN == 0x7FFFFFFFFFFFFFFFull);

enum class Class : std::uint8_t { kZero, kFinite, kInf, kNaN };

// value = (neg ? -1 : 1) * sig * 2^exp; sig > 0 iff cls is kFinite.
struct Unpacked {
  Class cls;
  bool neg;
  std::uint64_t sig;
  int exp;
};

template <class F>
BP_HD constexpr Unpacked unpack(typename F::Bits bits) {
  const bool neg = (bits & F::kSign) != 0;
  const auto exp_field = static_cast<std::uint32_t>((bits >> F::kMan) & F::kExpAllOnes);
  const std::uint64_t man = bits & F::kManMask;
  if (exp_field == F::kExpAllOnes) return {man == 0 ? Class::kInf : Class::kNaN, neg, 0, 0};
  if (exp_field == 0) {
    if (man == 0) return {Class::kZero, neg, 0, 0};
    return {Class::kFinite, neg, man, F::kQuantumExp};
  }
  return {Class::kFinite, neg, man | (F::kManMask + 1), static_cast<int>(exp_field) + F::kQuantumExp - 1};
}

// An unsigned 128-bit integer: the wide FMA's product and sum (binary64).
__extension__ typedef unsigned __int128 U128;

// The number of significant bits of v (0 for 0), as std::bit_width. At run
// time the count of leading zeros (the GPU's instruction, the host compiler's
// builtin); in constant evaluation one bit at a time. The loop at run time
// was most of a soft operation's cost: an FP16 FMA (three calls) took 37 ns
// on the host with it, 10.5 ns without (2-core AMD EPYC, g++ -O2).
// tests/arith/test_soft_arith.cpp compares both forms at every width.
template <class T>  // std::uint32_t, std::uint64_t, or U128
BP_HD constexpr int bit_width(T v) {
  if constexpr (sizeof(T) > sizeof(std::uint64_t)) {
    const auto high = static_cast<std::uint64_t>(v >> 64);
    return high != 0 ? 64 + bit_width(high) : bit_width(static_cast<std::uint64_t>(v));
  } else {
    if (!__builtin_is_constant_evaluated()) {
      const auto v64 = static_cast<std::uint64_t>(v);
#if defined(__CUDA_ARCH__)
      return 64 - __clzll(static_cast<long long>(v64));
#else
      return v64 == 0 ? 0 : 64 - __builtin_clzll(v64);
#endif
    }
    int width = 0;
    while (v != 0) {
      v >>= 1;
      ++width;
    }
    return width;
  }
}

template <class Bits>
BP_HD constexpr Bits signed_zero(bool neg, Bits sign_bit) {
  return neg ? sign_bit : 0;
}

// Rounds sig * 2^exp (sig > 0, sig < 2^63) once into format F.
template <class F>
BP_HD constexpr typename F::Bits round_pack(bool neg, int exp, std::uint64_t sig, Round mode) {
  using Bits = typename F::Bits;
  const Bits sign = neg ? F::kSign : 0;
  const int top = exp + bit_width(sig) - 1;
  int quantum = (top > 1 - F::kBias ? top : 1 - F::kBias) - F::kMan;
  const int shift = quantum - exp;
  std::uint64_t n = 0;
  if (shift <= 0) {
    n = sig << -shift;
  } else if (shift <= 63) {
    n = sig >> shift;
    const std::uint64_t rest = sig & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (mode == Round::kNearestEven && (rest > half || (rest == half && (n & 1) != 0))) ++n;
    if (mode == Round::kToOdd && rest != 0) n |= 1;
  } else if (mode == Round::kToOdd) {
    n = 1;  // below half of the least quantum, and not zero: the least (odd) subnormal
  }  // else: below half of the least quantum, rounds to zero in both other modes
  if ((n >> (F::kMan + 1)) != 0) {  // carried into the next binade
    n >>= 1;
    ++quantum;
  }
  if (n == 0) return sign;
  if (n <= F::kManMask) return sign | static_cast<Bits>(n);  // subnormal
  const int exp_field = quantum - F::kQuantumExp + 1;
  if (exp_field >= static_cast<int>(F::kExpAllOnes)) {
    return sign | (mode == Round::kNearestEven ? F::kInf : F::kMaxFinite);
  }
  return sign | (static_cast<Bits>(exp_field) << F::kMan) | (static_cast<Bits>(n) & F::kManMask);
}

template <class F>
BP_HD constexpr typename F::Bits mul(typename F::Bits a, typename F::Bits b, Round mode) {
  static_assert(F::kMan <= 30, "the product of two significands must stay below 2^63");
  const Unpacked x = unpack<F>(a);
  const Unpacked y = unpack<F>(b);
  const bool neg = x.neg != y.neg;
  if (x.cls == Class::kNaN || y.cls == Class::kNaN) return F::kNaN;
  if (x.cls == Class::kInf || y.cls == Class::kInf) {
    if (x.cls == Class::kZero || y.cls == Class::kZero) return F::kNaN;
    return F::kInf | (neg ? F::kSign : 0);
  }
  if (x.cls == Class::kZero || y.cls == Class::kZero) return signed_zero(neg, F::kSign);
  return round_pack<F>(neg, x.exp + y.exp, x.sig * y.sig, mode);
}

// Exact a + b of two finite nonzero operands, rounded once. The larger one is
// placed with its leading bit at bit 62; the smaller is aligned to it, bits
// shifted out folded into a sticky bit far below any rounding position.
BP_HD constexpr void place_top(Unpacked& v) {
  const int lift = 62 - (bit_width(v.sig) - 1);
  v.sig <<= lift;
  v.exp -= lift;
}

template <class F>
BP_HD constexpr typename F::Bits add_finite(Unpacked x, Unpacked y, Round mode) {
  place_top(x);
  place_top(y);
  if (y.exp > x.exp || (y.exp == x.exp && y.sig > x.sig)) {
    const Unpacked t = x;
    x = y;
    y = t;
  }
  const int gap = x.exp - y.exp;
  std::uint64_t aligned = 0;
  if (gap >= 63) {
    aligned = 1;
  } else {
    const std::uint64_t lost = y.sig & ((std::uint64_t{1} << gap) - 1);
    aligned = (y.sig >> gap) | (lost != 0 ? 1 : 0);
  }
  const std::uint64_t sum = x.neg == y.neg ? x.sig + aligned : x.sig - aligned;
  if (sum == 0) return 0;  // exact cancellation: +0 in every rounding mode here
  // sum < 2^64; halve with sticky so round_pack sees < 2^63.
  return round_pack<F>(x.neg, x.exp + 1, (sum >> 1) | (sum & 1), mode);
}

template <class F>
BP_HD constexpr typename F::Bits add(typename F::Bits a, typename F::Bits b, Round mode) {
  const Unpacked x = unpack<F>(a);
  const Unpacked y = unpack<F>(b);
  if (x.cls == Class::kNaN || y.cls == Class::kNaN) return F::kNaN;
  if (x.cls == Class::kInf && y.cls == Class::kInf) return x.neg == y.neg ? a : F::kNaN;
  if (x.cls == Class::kInf) return a;
  if (y.cls == Class::kInf) return b;
  if (x.cls == Class::kZero && y.cls == Class::kZero) return signed_zero(x.neg && y.neg, F::kSign);
  if (x.cls == Class::kZero) return b;
  if (y.cls == Class::kZero) return a;
  return add_finite<F>(x, y, mode);
}

// The exact sum of a product of two significands (below 2^126, as 128 bits) and
// a finite addend, rounded once: wide formats (binary64), whose product does not
// fit round_pack's 63 bits. Both terms are placed with their leading bit at bit
// 125; the smaller is aligned to the larger with the bits shifted out folded into
// a sticky bit; the exact sum is then cut to 63 bits with a sticky bit, which is
// far below any rounding position of a 53-bit significand.
template <class F>
BP_HD constexpr typename F::Bits add_wide(bool p_neg, U128 p_sig, int p_exp, Unpacked z, Round mode) {
  int p_lift = 125 - (bit_width(p_sig) - 1);
  U128 p = p_sig << p_lift;
  p_exp -= p_lift;
  U128 s = U128{z.sig} << (125 - (bit_width(z.sig) - 1));
  int s_exp = z.exp - (125 - (bit_width(z.sig) - 1));
  bool big_neg = p_neg, small_neg = z.neg;
  if (s_exp > p_exp || (s_exp == p_exp && s > p)) {
    const U128 t = p;
    p = s;
    s = t;
    const int e = p_exp;
    p_exp = s_exp;
    s_exp = e;
    big_neg = z.neg;
    small_neg = p_neg;
  }
  const int gap = p_exp - s_exp;
  U128 aligned = 1;
  if (gap < 127) {
    const U128 lost = s & ((U128{1} << gap) - 1);
    aligned = (s >> gap) | (lost != 0 ? 1 : 0);
  }
  const U128 sum = big_neg == small_neg ? p + aligned : p - aligned;
  if (sum == 0) return 0;  // exact cancellation: +0
  const int cut = bit_width(sum) > 63 ? bit_width(sum) - 63 : 0;
  const U128 rest = sum & ((U128{1} << cut) - 1);
  return round_pack<F>(big_neg, p_exp + cut, static_cast<std::uint64_t>(sum >> cut) | (rest != 0 ? 1 : 0), mode);
}

// a * b + c with one rounding.
template <class F>
BP_HD constexpr typename F::Bits fma(typename F::Bits a, typename F::Bits b, typename F::Bits c, Round mode) {
  const Unpacked x = unpack<F>(a);
  const Unpacked y = unpack<F>(b);
  const Unpacked z = unpack<F>(c);
  if (x.cls == Class::kNaN || y.cls == Class::kNaN || z.cls == Class::kNaN) return F::kNaN;
  const bool prod_neg = x.neg != y.neg;
  const bool prod_inf = x.cls == Class::kInf || y.cls == Class::kInf;
  const bool prod_zero = x.cls == Class::kZero || y.cls == Class::kZero;
  if (prod_inf && prod_zero) return F::kNaN;
  if (prod_inf) {
    if (z.cls == Class::kInf && z.neg != prod_neg) return F::kNaN;
    return F::kInf | (prod_neg ? F::kSign : 0);
  }
  if (z.cls == Class::kInf) return c;
  if (prod_zero) {
    if (z.cls == Class::kZero) return signed_zero(prod_neg && z.neg, F::kSign);
    return c;
  }
  if constexpr (2 * (F::kMan + 1) > 63) {
    const U128 product = U128{x.sig} * y.sig;
    if (z.cls == Class::kZero) {  // the product alone, cut to 63 bits with a sticky bit
      const int cut = bit_width(product) > 63 ? bit_width(product) - 63 : 0;
      const U128 rest = product & ((U128{1} << cut) - 1);
      return round_pack<F>(prod_neg, x.exp + y.exp + cut,
                           static_cast<std::uint64_t>(product >> cut) | (rest != 0 ? 1 : 0), mode);
    }
    return add_wide<F>(prod_neg, product, x.exp + y.exp, z, mode);
  } else {
    const Unpacked product{Class::kFinite, prod_neg, x.sig * y.sig, x.exp + y.exp};
    if (z.cls == Class::kZero) return round_pack<F>(prod_neg, product.exp, product.sig, mode);
    return add_finite<F>(product, z, mode);
  }
}

// a / b with one rounding (formats up to binary32). The dividend's significand
// is lifted to bit 62, so the integer quotient has at least 62 − 24 = 38 bits
// and a nonzero remainder can be folded into its last bit as a sticky bit, far
// below any rounding position.
template <class F>
BP_HD constexpr typename F::Bits div(typename F::Bits a, typename F::Bits b, Round mode) {
  static_assert(F::kMan <= 23, "the quotient keeps 38 bits only for significands of at most 24 bits");
  const Unpacked x = unpack<F>(a);
  const Unpacked y = unpack<F>(b);
  const bool neg = x.neg != y.neg;
  if (x.cls == Class::kNaN || y.cls == Class::kNaN) return F::kNaN;
  if (x.cls == y.cls && (x.cls == Class::kInf || x.cls == Class::kZero)) return F::kNaN;  // ∞/∞, 0/0
  if (x.cls == Class::kInf || y.cls == Class::kZero) return F::kInf | (neg ? F::kSign : 0);
  if (x.cls == Class::kZero || y.cls == Class::kInf) return signed_zero(neg, F::kSign);
  const int lift = 62 - (bit_width(x.sig) - 1);
  const std::uint64_t num = x.sig << lift;
  const std::uint64_t q = num / y.sig;
  const std::uint64_t sticky = num % y.sig != 0 ? 1 : 0;
  return round_pack<F>(neg, x.exp - lift - y.exp, q | sticky, mode);
}

// The integer square root ⌊√v⌋, one result bit at a time from the top.
BP_HD constexpr std::uint64_t isqrt(std::uint64_t v) {
  std::uint64_t root = 0;
  for (int bit = 31; bit >= 0; --bit) {
    const std::uint64_t trial = root | (std::uint64_t{1} << bit);
    if (trial * trial <= v) root = trial;
  }
  return root;
}

// √a with one rounding (formats up to binary32); √(−0) = −0, a negative
// nonzero input gives NaN. The significand is lifted by an even amount to bit
// 61 or 62 so the exponent halves exactly; the integer root then has 31 bits
// and an inexact root's remainder folds into its last bit as a sticky bit.
template <class F>
BP_HD constexpr typename F::Bits sqrt(typename F::Bits a, Round mode) {
  static_assert(F::kMan <= 23, "the root keeps 31 bits only for significands of at most 24 bits");
  const Unpacked x = unpack<F>(a);
  if (x.cls == Class::kNaN || (x.neg && x.cls != Class::kZero)) return F::kNaN;
  if (x.cls != Class::kFinite) return a;  // ±0, +∞
  int lift = 62 - (bit_width(x.sig) - 1);
  if (((x.exp - lift) & 1) != 0) --lift;  // an even exponent left
  const std::uint64_t v = x.sig << lift;
  const std::uint64_t root = isqrt(v);
  const std::uint64_t sticky = root * root != v ? 1 : 0;
  return round_pack<F>(false, (x.exp - lift) / 2, root | sticky, mode);
}

// Conversion between IEEE formats, rounded once; NaN becomes the canonical NaN.
template <class To, class From>
BP_HD constexpr typename To::Bits convert(typename From::Bits bits, Round mode) {
  const Unpacked v = unpack<From>(bits);
  switch (v.cls) {
    case Class::kNaN: return To::kNaN;
    case Class::kInf: return To::kInf | (v.neg ? To::kSign : 0);
    case Class::kZero: return signed_zero(v.neg, To::kSign);
    case Class::kFinite: break;
  }
  return round_pack<To>(v.neg, v.exp, v.sig, mode);
}

// Subnormals replaced by zero of the same sign (flush-to-zero / DAZ).
template <class F>
BP_HD constexpr typename F::Bits flush_subnormal(typename F::Bits bits) {
  const bool subnormal = ((bits >> F::kMan) & F::kExpAllOnes) == 0;
  return subnormal ? (bits & F::kSign) : bits;
}

}  // namespace bitproof::soft
