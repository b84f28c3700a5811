// Bit-exact software IEEE arithmetic on raw bits, host+device, constexpr.
// The model for what the GPU's half/float instructions return: one rounding
// per operation, subnormals kept, NaN results canonical (sign clear, all
// exponent and mantissa bits set: 0x7FFF for binary16, as NVIDIA hardware
// returns them). Independent of src/oracle by design: no shared code.
#pragma once

#include <cstdint>

#include "hd.hpp"

namespace bitproof::soft {

enum class Round : std::uint8_t { kNearestEven, kTowardZero };

// An IEEE binary interchange format with kExpBits/kManBits fields.
template <int kExpBits, int kManBits>
struct Ieee {
  static constexpr int kBits = 1 + kExpBits + kManBits;
  static constexpr int kMan = kManBits;
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr std::uint32_t kExpAllOnes = (1u << kExpBits) - 1;
  static constexpr std::uint32_t kManMask = (1u << kManBits) - 1;
  static constexpr std::uint32_t kSign = 1u << (kExpBits + kManBits);
  static constexpr std::uint32_t kInf = kExpAllOnes << kManBits;
  static constexpr std::uint32_t kMaxFinite = kInf - 1;
  static constexpr std::uint32_t kNaN = kInf | kManMask;
  static constexpr int kQuantumExp = 1 - kBias - kManBits;  // exponent of the least subnormal
};

using Binary16 = Ieee<5, 10>;
using Binary32 = Ieee<8, 23>;
using Bfloat16 = Ieee<8, 7>;
static_assert(Binary16::kNaN == 0x7FFF && Binary16::kInf == 0x7C00 && Binary16::kMaxFinite == 0x7BFF);
static_assert(Binary32::kInf == 0x7F800000u && Bfloat16::kInf == 0x7F80);

enum class Class : std::uint8_t { kZero, kFinite, kInf, kNaN };

// value = (neg ? -1 : 1) * sig * 2^exp; sig > 0 iff cls is kFinite.
struct Unpacked {
  Class cls;
  bool neg;
  std::uint64_t sig;
  int exp;
};

template <class F>
BP_HD constexpr Unpacked unpack(std::uint32_t bits) {
  const bool neg = (bits & F::kSign) != 0;
  const std::uint32_t exp_field = (bits >> F::kMan) & F::kExpAllOnes;
  const std::uint32_t man = bits & F::kManMask;
  if (exp_field == F::kExpAllOnes) return {man == 0 ? Class::kInf : Class::kNaN, neg, 0, 0};
  if (exp_field == 0) {
    if (man == 0) return {Class::kZero, neg, 0, 0};
    return {Class::kFinite, neg, man, F::kQuantumExp};
  }
  return {Class::kFinite, neg, man | (F::kManMask + 1), static_cast<int>(exp_field) + F::kQuantumExp - 1};
}

BP_HD constexpr int bit_width(std::uint64_t v) {
  int width = 0;
  while (v != 0) {
    v >>= 1;
    ++width;
  }
  return width;
}

BP_HD constexpr std::uint32_t signed_zero(bool neg, std::uint32_t sign_bit) { return neg ? sign_bit : 0; }

// Rounds sig * 2^exp (sig > 0, sig < 2^63) once into format F.
template <class F>
BP_HD constexpr std::uint32_t round_pack(bool neg, int exp, std::uint64_t sig, Round mode) {
  const std::uint32_t sign = neg ? F::kSign : 0;
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
  }  // else: below half of the least quantum, rounds to zero in both modes
  if ((n >> (F::kMan + 1)) != 0) {  // carried into the next binade
    n >>= 1;
    ++quantum;
  }
  if (n == 0) return sign;
  if (n <= F::kManMask) return sign | static_cast<std::uint32_t>(n);  // subnormal
  const int exp_field = quantum - F::kQuantumExp + 1;
  if (exp_field >= static_cast<int>(F::kExpAllOnes)) {
    return sign | (mode == Round::kNearestEven ? F::kInf : F::kMaxFinite);
  }
  return sign | (static_cast<std::uint32_t>(exp_field) << F::kMan) | (static_cast<std::uint32_t>(n) & F::kManMask);
}

template <class F>
BP_HD constexpr std::uint32_t mul(std::uint32_t a, std::uint32_t b, Round mode) {
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
BP_HD constexpr std::uint32_t add_finite(Unpacked x, Unpacked y, Round mode) {
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
  if (sum == 0) return 0;  // exact cancellation: +0 in both rounding modes
  // sum < 2^64; halve with sticky so round_pack sees < 2^63.
  return round_pack<F>(x.neg, x.exp + 1, (sum >> 1) | (sum & 1), mode);
}

template <class F>
BP_HD constexpr std::uint32_t add(std::uint32_t a, std::uint32_t b, Round mode) {
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

// a * b + c with one rounding.
template <class F>
BP_HD constexpr std::uint32_t fma(std::uint32_t a, std::uint32_t b, std::uint32_t c, Round mode) {
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
  const Unpacked product{Class::kFinite, prod_neg, x.sig * y.sig, x.exp + y.exp};
  if (z.cls == Class::kZero) return round_pack<F>(prod_neg, product.exp, product.sig, mode);
  return add_finite<F>(product, z, mode);
}

// Conversion between IEEE formats, rounded once; NaN becomes the canonical NaN.
template <class To, class From>
BP_HD constexpr std::uint32_t convert(std::uint32_t bits, Round mode) {
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
BP_HD constexpr std::uint32_t flush_subnormal(std::uint32_t bits) {
  const bool subnormal = ((bits >> F::kMan) & F::kExpAllOnes) == 0;
  return subnormal ? (bits & F::kSign) : bits;
}

}  // namespace bitproof::soft
