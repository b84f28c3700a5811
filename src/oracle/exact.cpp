#include "oracle/exact.hpp"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>

namespace bitproof::oracle {
namespace {

// mag * 2^exp2 with mag made odd (or the zero of that sign), so equal values
// have equal representations.
Exact finite(bool negative, Int mag, int exp2) {
  if (mag == 0) return Exact::zero(negative);
  const auto shift = static_cast<int>(boost::multiprecision::lsb(mag));
  if (shift != 0) {
    mag >>= shift;
    exp2 += shift;
  }
  return {Kind::kFinite, negative, std::move(mag), exp2};
}

int bit_length(const Int& v) { return v == 0 ? 0 : static_cast<int>(boost::multiprecision::msb(v)) + 1; }

std::uint32_t canonical_nan(const FormatSpec& f) {
  if (f.specials == Specials::kFnuz) return f.sign_mask();  // the only NaN: the -0 pattern
  return (f.exp_field_max() << f.man_bits) | f.man_mask();
}

// Zero of a sign; formats without a negative zero (FNUZ, integers, unsigned) give +0.
std::uint32_t zero_code(const FormatSpec& f, bool negative) {
  return negative && f.has_negative_zero() ? f.sign_mask() : 0;
}

std::uint32_t with_sign(const FormatSpec& f, bool negative, std::uint32_t magnitude_code) {
  return negative ? (magnitude_code | f.sign_mask()) : magnitude_code;
}

// Integers: the code of the value ±n (stored as value + bias, two's complement when
// signed), or of the saturated end of the range.
Rounded integer_code(const FormatSpec& f, bool negative, const Int& n, bool inexact, Overflow overflow) {
  const Int lo = f.is_signed ? -Int{f.sign_mask()} : Int{0};
  const Int hi{f.max_finite_code()};
  Int stored = (negative ? Int{-n} : n) + f.bias;
  if (stored < lo || stored > hi) {
    if (overflow != Overflow::kSaturate) return {std::nullopt, true};
    stored = stored < lo ? lo : hi;
    inexact = true;
  }
  if (stored < 0) stored += Int{f.code_count()};
  return {stored.convert_to<std::uint32_t>(), inexact};
}

Rounded overflowed(const FormatSpec& f, bool negative, Rounding mode, Overflow overflow) {
  if (f.is_integer()) {
    return integer_code(f, negative, (Int{1} << f.bits) + std::abs(f.bias), true, overflow);
  }
  const std::uint32_t max_code = with_sign(f, negative, f.max_finite_code());
  if (overflow == Overflow::kSaturate || mode == Rounding::kTowardZero) return {max_code, true};
  if (f.has_inf()) return {with_sign(f, negative, f.exp_field_max() << f.man_bits), true};
  if (f.has_nan()) return {canonical_nan(f), true};
  return {std::nullopt, true};
}

// The largest finite value of each format and its top exponent
// (2^top_exp <= value < 2^(top_exp+1)), built once.
struct MaxFinite {
  Exact value;
  int top_exp = 0;
};

const MaxFinite& max_finite_of(FormatId format) {
  static const auto table = [] {
    std::array<MaxFinite, kFormats.size()> t;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto id = static_cast<FormatId>(i);
      t[i].value = exact_of(id, spec_of(id).max_finite_code());
      t[i].top_exp = bit_length(t[i].value.mag) - 1 + t[i].value.exp2;
    }
    return t;
  }();
  return table[static_cast<std::size_t>(format)];
}

// Whether n * 2^exp2 (n > 0, with top exponent top_exp) is above the format's
// largest finite value.
bool exceeds_max_finite(FormatId format, const Int& n, int exp2, int top_exp) {
  const MaxFinite& max = max_finite_of(format);
  if (top_exp != max.top_exp) return top_exp > max.top_exp;
  const int common = std::min(exp2, max.value.exp2);
  return (n << (exp2 - common)) > (max.value.mag << (max.value.exp2 - common));
}

// Round mag * 2^exp2 (> 0) to an integer multiple n of 2^quantum_exp.
Int round_to_quantum(const Int& mag, int exp2, int quantum_exp, Rounding mode, bool& inexact) {
  if (exp2 >= quantum_exp) {
    inexact = false;
    return mag << (exp2 - quantum_exp);
  }
  const int drop = quantum_exp - exp2;
  Int n = mag >> drop;
  const Int rest = mag - (n << drop);
  inexact = rest != 0;
  if (mode == Rounding::kNearestEven) {
    const Int half = Int{1} << (drop - 1);
    if (rest > half || (rest == half && (n & 1) != 0)) n += 1;
  }
  return n;
}

Rounded round_finite(FormatId format, const Exact& v, Rounding mode, Overflow overflow) {
  const FormatSpec& f = spec_of(format);
  if (f.is_integer()) {
    bool inexact = false;
    const Int n = round_to_quantum(v.mag, v.exp2, 0, mode, inexact);
    return integer_code(f, v.negative, n, inexact, overflow);
  }
  if (v.negative && !f.is_signed) return {std::nullopt, true};
  const int top_exp = bit_length(v.mag) - 1 + v.exp2;  // 2^top_exp <= |v| < 2^(top_exp+1)
  const int binade = std::max(top_exp, f.min_normal_exp());
  int quantum_exp = binade - f.man_bits;
  bool inexact = false;
  Int n = round_to_quantum(v.mag, v.exp2, quantum_exp, mode, inexact);
  if (n == 0) {
    if (!f.has_zero()) return {std::nullopt, true};
    return {zero_code(f, v.negative), true};
  }
  int n_bits = bit_length(n);
  if (n_bits > f.man_bits + 1) {  // rounding carried into the next binade: n == 2^(man_bits+1)
    n >>= 1;
    quantum_exp += 1;
    n_bits -= 1;
  }
  if (exceeds_max_finite(format, n, quantum_exp, n_bits - 1 + quantum_exp)) {
    return overflowed(f, v.negative, mode, overflow);
  }
  const auto significand = n.convert_to<std::uint32_t>();  // below 2^(man_bits+1)
  std::uint32_t code = significand;                        // subnormal: the exponent field is zero
  if (n_bits == f.man_bits + 1) {
    const int exp_field = quantum_exp + f.man_bits + f.bias;
    code = (static_cast<std::uint32_t>(exp_field) << f.man_bits) | (significand & f.man_mask());
  }
  return {with_sign(f, v.negative, code), inexact};
}

}  // namespace

Exact exact_of(FormatId format, std::uint32_t code) {
  const Decoded d = decode(spec_of(format), code);
  switch (d.kind) {
    case Kind::kZero: return Exact::zero(d.negative);
    case Kind::kInf: return Exact::inf(d.negative);
    case Kind::kNaN: return Exact::nan();
    case Kind::kFinite: break;
  }
  const int shift = std::countr_zero(d.significand);  // made odd in 64 bits, then widened once
  return {Kind::kFinite, d.negative, Int{d.significand >> shift}, d.exp2 + shift};
}

Exact mul(const Exact& a, const Exact& b) {
  const bool negative = a.negative != b.negative;
  if (a.kind == Kind::kNaN || b.kind == Kind::kNaN) return Exact::nan();
  if (a.kind == Kind::kInf || b.kind == Kind::kInf) {
    if (a.kind == Kind::kZero || b.kind == Kind::kZero) return Exact::nan();
    return Exact::inf(negative);
  }
  if (a.kind == Kind::kZero || b.kind == Kind::kZero) return Exact::zero(negative);
  return finite(negative, a.mag * b.mag, a.exp2 + b.exp2);
}

Exact add(const Exact& a, const Exact& b) {
  if (a.kind == Kind::kNaN || b.kind == Kind::kNaN) return Exact::nan();
  if (a.kind == Kind::kInf && b.kind == Kind::kInf) {
    return a.negative == b.negative ? a : Exact::nan();
  }
  if (a.kind == Kind::kInf) return a;
  if (b.kind == Kind::kInf) return b;
  if (a.kind == Kind::kZero && b.kind == Kind::kZero) return Exact::zero(a.negative && b.negative);
  if (a.kind == Kind::kZero) return b;
  if (b.kind == Kind::kZero) return a;
  const int exp2 = std::min(a.exp2, b.exp2);
  Int sa = a.mag << (a.exp2 - exp2);
  Int sb = b.mag << (b.exp2 - exp2);
  if (a.negative) sa = -sa;
  if (b.negative) sb = -sb;
  const Int sum = sa + sb;
  if (sum == 0) return Exact::zero(false);
  return finite(sum < 0, boost::multiprecision::abs(sum), exp2);
}

Exact fma(const Exact& a, const Exact& b, const Exact& c) { return add(mul(a, b), c); }

Exact div(const Exact& a, const Exact& b) {
  const bool negative = a.negative != b.negative;
  if (a.kind == Kind::kNaN || b.kind == Kind::kNaN) return Exact::nan();
  if (a.kind == b.kind && (a.kind == Kind::kInf || a.kind == Kind::kZero)) return Exact::nan();
  if (a.kind == Kind::kInf || b.kind == Kind::kZero) return Exact::inf(negative);
  if (a.kind == Kind::kZero || b.kind == Kind::kInf) return Exact::zero(negative);
  // a.mag · 2^shift / b.mag has at least kStickyBits bits.
  const int shift = std::max(0, kStickyBits + bit_length(b.mag) - bit_length(a.mag));
  const Int numerator = a.mag << shift;
  const Int quotient = numerator / b.mag;
  const Int sticky = numerator % b.mag != 0 ? 1 : 0;
  return finite(negative, (quotient << 1) | sticky, a.exp2 - b.exp2 - shift - 1);
}

Exact sqrt(const Exact& a) {
  if (a.kind == Kind::kNaN || (a.negative && a.kind != Kind::kZero)) return Exact::nan();
  if (a.kind != Kind::kFinite) return a;  // ±0, +∞
  // a.mag · 2^shift has at least 2·kStickyBits bits and an even exponent, so its root has kStickyBits.
  int shift = std::max(0, 2 * kStickyBits - bit_length(a.mag));
  if (((a.exp2 - shift) & 1) != 0) ++shift;
  const Int radicand = a.mag << shift;
  const Int root = boost::multiprecision::sqrt(radicand);
  Int with_sticky = root << 1;
  if (root * root != radicand) with_sticky |= 1u;
  return finite(false, with_sticky, (a.exp2 - shift) / 2 - 1);
}

bool same_value(const Exact& a, const Exact& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Kind::kNaN) return true;
  if (a.negative != b.negative) return false;
  return a.kind != Kind::kFinite || (a.mag == b.mag && a.exp2 == b.exp2);
}

Rounded round_to(FormatId format, const Exact& value, Rounding mode, Overflow overflow) {
  const FormatSpec& f = spec_of(format);
  switch (value.kind) {
    case Kind::kNaN:
      if (!f.has_nan()) return {std::nullopt, true};
      return {canonical_nan(f), false};
    case Kind::kInf:
      if (value.negative && !f.is_signed) return {std::nullopt, true};
      if (f.has_inf()) return {with_sign(f, value.negative, f.exp_field_max() << f.man_bits), false};
      return overflowed(f, value.negative, Rounding::kNearestEven, overflow);
    case Kind::kZero:
      if (!f.has_zero()) return {std::nullopt, true};
      if (f.is_integer()) return integer_code(f, false, Int{0}, false, overflow);  // stored as the bias
      return {zero_code(f, value.negative), false};
    case Kind::kFinite: break;
  }
  return round_finite(format, value, mode, overflow);
}

Exact exact_of_ieee(std::uint64_t code, int exp_bits, int man_bits) {
  const bool negative = ((code >> (exp_bits + man_bits)) & 1) != 0;
  const std::uint64_t exp_field = (code >> man_bits) & ((std::uint64_t{1} << exp_bits) - 1);
  const std::uint64_t man = code & ((std::uint64_t{1} << man_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  if (exp_field == (std::uint64_t{1} << exp_bits) - 1) return man == 0 ? Exact::inf(negative) : Exact::nan();
  if (exp_field == 0) return finite(negative, Int{man}, 1 - bias - man_bits);
  return finite(negative, Int{man | (std::uint64_t{1} << man_bits)}, static_cast<int>(exp_field) - bias - man_bits);
}

std::uint64_t round_to_ieee(const Exact& value, int exp_bits, int man_bits, Rounding mode) {
  const std::uint64_t sign = value.negative ? std::uint64_t{1} << (exp_bits + man_bits) : 0;
  const std::uint64_t inf = ((std::uint64_t{1} << exp_bits) - 1) << man_bits;
  switch (value.kind) {
    case Kind::kNaN: return inf | ((std::uint64_t{1} << man_bits) - 1);
    case Kind::kInf: return sign | inf;
    case Kind::kZero: return sign;
    case Kind::kFinite: break;
  }
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int top_exp = bit_length(value.mag) - 1 + value.exp2;
  int quantum_exp = std::max(top_exp, 1 - bias) - man_bits;
  bool inexact = false;
  Int n = round_to_quantum(value.mag, value.exp2, quantum_exp, mode, inexact);
  if (bit_length(n) > man_bits + 1) {  // carried into the next binade
    n >>= 1;
    quantum_exp += 1;
  }
  if (bit_length(n) <= man_bits) return sign | n.convert_to<std::uint64_t>();  // zero or subnormal
  const int exp_field = quantum_exp + man_bits + bias;
  if (exp_field >= (1 << exp_bits) - 1) return sign | (mode == Rounding::kNearestEven ? inf : inf - 1);
  return sign | (std::uint64_t(exp_field) << man_bits) |
         (n.convert_to<std::uint64_t>() & ((std::uint64_t{1} << man_bits) - 1));
}

std::string to_string(const Exact& value) {
  switch (value.kind) {
    case Kind::kNaN: return "nan";
    case Kind::kInf: return value.negative ? "-inf" : "inf";
    case Kind::kZero: return value.negative ? "-0" : "0";
    case Kind::kFinite: break;
  }
  const bool fits_double = bit_length(value.mag) <= 53 && value.exp2 > -1000 && value.exp2 < 900;
  if (fits_double) {
    const double d = std::ldexp(value.mag.convert_to<double>(), value.exp2);
    return fmt::format("{}", value.negative ? -d : d);
  }
  return fmt::format("{}{}*2^{}", value.negative ? "-" : "", value.mag.str(), value.exp2);
}

}  // namespace bitproof::oracle
