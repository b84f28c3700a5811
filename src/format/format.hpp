// Formats: a constexpr description of each number encoding in formats.def and
// the exact decoding of any of its codes. Decoding is host+device and
// allocation-free; the exact arithmetic lives in src/oracle.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hd.hpp"

namespace bitproof {

// kFnuz and kInt are appended, so the integer values of the first four (which
// backends pass around as plain integers) stay as they were.
enum class Specials : std::uint8_t { kIeee, kFn, kFinite, kE8m0, kFnuz, kInt };

enum class FormatId : std::uint8_t {
#define BITPROOF_FORMAT(id, ...) id,
#include "format/formats.def"
#undef BITPROOF_FORMAT
};

struct FormatSpec {
  std::string_view name;
  int bits;
  int exp_bits;
  int man_bits;
  int bias;
  bool is_signed;
  Specials specials;

  // ---- derived ----
  [[nodiscard]] constexpr std::uint64_t code_count() const { return std::uint64_t{1} << bits; }
  [[nodiscard]] constexpr std::uint32_t man_mask() const { return (std::uint32_t{1} << man_bits) - 1; }
  [[nodiscard]] constexpr std::uint32_t exp_field_max() const { return (std::uint32_t{1} << exp_bits) - 1; }
  [[nodiscard]] constexpr std::uint32_t sign_mask() const {
    return is_signed ? std::uint32_t{1} << (bits - 1) : 0;
  }
  [[nodiscard]] constexpr bool has_inf() const { return specials == Specials::kIeee; }
  [[nodiscard]] constexpr bool has_nan() const { return specials != Specials::kFinite && specials != Specials::kInt; }
  // Sign-magnitude formats with a negative zero (FNUZ: 0x80 is NaN; integers: two's complement).
  [[nodiscard]] constexpr bool has_negative_zero() const {
    return is_signed && specials != Specials::kFnuz && specials != Specials::kInt;
  }
  [[nodiscard]] constexpr bool is_integer() const { return specials == Specials::kInt; }
  [[nodiscard]] constexpr bool has_zero() const { return specials != Specials::kE8m0; }
  [[nodiscard]] constexpr bool has_subnormals() const { return specials != Specials::kE8m0; }
  // Unbiased exponent of the smallest normal binade.
  [[nodiscard]] constexpr int min_normal_exp() const { return has_subnormals() ? 1 - bias : -bias; }
  // Largest finite code with the sign bit clear.
  [[nodiscard]] constexpr std::uint32_t max_finite_code() const {
    const std::uint32_t all_ones = (exp_field_max() << man_bits) | man_mask();
    switch (specials) {
      case Specials::kIeee: return ((exp_field_max() - 1) << man_bits) | man_mask();
      case Specials::kFn: return all_ones - 1;
      case Specials::kE8m0: return all_ones - 1;
      case Specials::kFinite: return all_ones;
      case Specials::kFnuz: return all_ones;  // every exponent is finite; only -0 is NaN
      case Specials::kInt: return man_mask();  // 2^(bits-1) - 1 signed, 2^bits - 1 unsigned
    }
    return all_ones;
  }
};

inline constexpr std::array kFormats = {
#define BITPROOF_FORMAT(id, bits, e, m, bias, sgn, sp) \
  FormatSpec{#id, bits, e, m, bias, sgn, Specials::sp},
#include "format/formats.def"
#undef BITPROOF_FORMAT
};

[[nodiscard]] constexpr const FormatSpec& spec_of(FormatId id) {
  return kFormats[static_cast<std::size_t>(id)];
}

// Every row must describe a consistent encoding.
consteval bool formats_are_consistent() {
  for (const FormatSpec& f : kFormats) {
    if (f.bits != (f.is_signed ? 1 : 0) + f.exp_bits + f.man_bits) return false;
    if (f.bits > 32) return false;
    // Integers have no exponent field; every floating-point format has one.
    if ((f.specials == Specials::kInt) != (f.exp_bits == 0)) return false;
  }
  return true;
}
static_assert(formats_are_consistent(), "a row of formats.def is inconsistent");
static_assert(spec_of(FormatId::fp16).max_finite_code() == 0x7BFF);
static_assert(spec_of(FormatId::e4m3).max_finite_code() == 0b0'1111'110);  // +448
static_assert(spec_of(FormatId::e2m1).max_finite_code() == 0b0'11'1);      // +6.0
static_assert(spec_of(FormatId::ue8m0).max_finite_code() == 0xFE);         // 2^127

// What a code means.
enum class Kind : std::uint8_t { kZero, kFinite, kInf, kNaN };

// value = (negative ? -1 : 1) * significand * 2^exp2, exactly. significand is
// nonzero iff kind is kFinite.
struct Decoded {
  Kind kind;
  bool negative;
  std::uint64_t significand;
  int exp2;
};

[[nodiscard]] BP_HD constexpr Decoded decode(const FormatSpec& f, std::uint32_t code) {
  const bool negative = (code & f.sign_mask()) != 0;
  if (f.specials == Specials::kInt) {  // two's complement when signed, then minus the bias
    const std::int64_t stored = negative ? std::int64_t{code} - static_cast<std::int64_t>(f.code_count()) : code;
    const std::int64_t value = stored - f.bias;
    if (value == 0) return {Kind::kZero, false, 0, 0};
    return {Kind::kFinite, value < 0, static_cast<std::uint64_t>(value < 0 ? -value : value), 0};
  }
  if (f.specials == Specials::kFnuz && code == f.sign_mask()) return {Kind::kNaN, true, 0, 0};
  const std::uint32_t exp_field = (code >> f.man_bits) & f.exp_field_max();
  const std::uint32_t man = code & f.man_mask();
  const bool exp_all_ones = exp_field == f.exp_field_max();
  if (f.specials == Specials::kIeee && exp_all_ones) {
    return {man == 0 ? Kind::kInf : Kind::kNaN, negative, 0, 0};
  }
  if (f.specials == Specials::kFn && exp_all_ones && man == f.man_mask()) {
    return {Kind::kNaN, negative, 0, 0};
  }
  if (f.specials == Specials::kE8m0) {
    if (exp_all_ones) return {Kind::kNaN, false, 0, 0};
    return {Kind::kFinite, false, 1, static_cast<int>(exp_field) - f.bias};
  }
  if (exp_field == 0) {
    if (man == 0) return {Kind::kZero, negative, 0, 0};
    return {Kind::kFinite, negative, man, 1 - f.bias - f.man_bits};
  }
  const std::uint64_t significand = (std::uint64_t{1} << f.man_bits) | man;
  return {Kind::kFinite, negative, significand, static_cast<int>(exp_field) - f.bias - f.man_bits};
}

// Catalogue lookup by the row's name ("e2m1", "fp16", ...).
[[nodiscard]] std::optional<FormatId> format_by_name(std::string_view name);
// "unknown format \"e2m2\" (did you mean \"e2m1\"?) (formats: fp32, fp16, ...)": every format listed.
[[nodiscard]] std::string unknown_format_text(std::string_view name);

// A code as the audit and its reports print it: decimal up to 8 bits (a UE8M0
// code reads as its biased exponent), 0x%04X for 16-bit codes, 0x%08X above.
[[nodiscard]] std::string code_text(std::uint32_t code, int code_bits);

}  // namespace bitproof
