// The oracle: exact values and correct rounding, with arbitrary-precision
// integers. It is deliberately slow and obvious, and shares no code with the
// arithmetic policies in src/arith (TestFloat's slowfloat is the model): every
// finite value is an integer times a power of two, every operation is exact,
// and rounding happens once, in round_to.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "format/format.hpp"

namespace bitproof::oracle {

// cpp_int without expression templates: every operation yields a plain value
// (no lazily evaluated expression objects behind `auto`), and fewer temporaries.
using Int = boost::multiprecision::number<boost::multiprecision::cpp_int_backend<>, boost::multiprecision::et_off>;

enum class Rounding : std::uint8_t { kNearestEven, kTowardZero };

// What happens to a finite value beyond the largest finite code.
//   kIeee:     Inf where the format has it (toward-zero: largest finite);
//              NaN in a format with NaN but no Inf; unrepresentable otherwise.
//   kSaturate: the largest finite code of the right sign.
enum class Overflow : std::uint8_t { kIeee, kSaturate };

// value = (negative ? -1 : 1) * mag * 2^exp2 when kind is kFinite (mag > 0).
struct Exact {
  Kind kind = Kind::kZero;
  bool negative = false;
  Int mag = 0;
  int exp2 = 0;

  static Exact nan() { return {Kind::kNaN, false, 0, 0}; }
  static Exact inf(bool negative) { return {Kind::kInf, negative, 0, 0}; }
  static Exact zero(bool negative) { return {Kind::kZero, negative, 0, 0}; }
};

[[nodiscard]] Exact exact_of(FormatId format, std::uint32_t code);

// Exact operations. The sign of an exact zero sum follows IEEE 754 §6.3 for the
// given rounding direction (+0 for both modes here).
[[nodiscard]] Exact mul(const Exact& a, const Exact& b);
[[nodiscard]] Exact add(const Exact& a, const Exact& b);
[[nodiscard]] Exact fma(const Exact& a, const Exact& b, const Exact& c);

// A quotient or a square root is in general no finite binary value. These give
// its first kStickyBits significant bits and, when anything is lost below them,
// one more bit set (a sticky bit): every rounding of that value to at most
// kStickyBits − 1 significant bits (any format bitproof knows: binary64 has 53)
// is the rounding of the true value, since both lie strictly between the same
// two neighbours. An exact quotient or root (4/2, √4) is returned exactly.
inline constexpr int kStickyBits = 128;
[[nodiscard]] Exact div(const Exact& a, const Exact& b);  // IEEE 754 §6: ∞/∞, 0/0 NaN; x/0 ∞
[[nodiscard]] Exact sqrt(const Exact& a);                 // √−0 = −0; √ of a negative nonzero NaN

[[nodiscard]] bool same_value(const Exact& a, const Exact& b);  // NaN equals NaN; -0 != +0

struct Rounded {
  std::optional<std::uint32_t> code;  // nullopt: the format cannot hold it at all
  bool inexact = false;               // the code's value differs from the exact value
};

// Correct rounding of an exact value into a format. NaN becomes the format's
// canonical NaN (sign clear, every exponent and mantissa bit set).
[[nodiscard]] Rounded round_to(FormatId format, const Exact& value, Rounding mode,
                               Overflow overflow = Overflow::kIeee);

// IEEE binary interchange formats of any width by their field widths (binary64:
// 11, 52), for formats wider than a FormatSpec code: the exact value of a code,
// and the correct rounding of a value (NaN: the canonical NaN, sign clear).
[[nodiscard]] Exact exact_of_ieee(std::uint64_t code, int exp_bits, int man_bits);
[[nodiscard]] std::uint64_t round_to_ieee(const Exact& value, int exp_bits, int man_bits, Rounding mode);

// Readable exact value: the shortest decimal when it fits a double exactly,
// "m*2^e" otherwise; "nan", "inf", "-inf", "0", "-0".
[[nodiscard]] std::string to_string(const Exact& value);

}  // namespace bitproof::oracle
