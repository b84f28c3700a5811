// The catalogue's formats (UE4M3, E4M3FNUZ, E5M2FNUZ, the integers): every code decoded
// and checked against facts written here independently of format.hpp — value formulas
// from the specs (OCP FP8 E4M3 for UE4M3; PyTorch c10 Float8_e4m3fnuz.h / LLVM APFloat
// for FNUZ: bias 8 / 16, no Inf, no -0, NaN only at 0x80; two's complement integers).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "format/format.hpp"
#include "support.hpp"

using namespace bitproof;
using test::same;
using value_of_t = double (*)(const Decoded&);
static constexpr value_of_t value_of = test::as_double;

namespace {

// Prints the first mismatches with the code in hex and its fields.
void check_every_code(FormatId id, double (*expected)(std::uint32_t)) {
  const FormatSpec& f = spec_of(id);
  int mismatches = 0;
  for (std::uint32_t code = 0; code < f.code_count(); ++code) {
    const double got = value_of(decode(f, code));
    if (!same(got, expected(code)) && ++mismatches <= 8) {
      FAIL_CHECK(fmt::format("{} code 0x{:02X} (exp field {}, man {}): decoded {} expected {}", f.name, code,
                             (code >> f.man_bits) & f.exp_field_max(), code & f.man_mask(), got, expected(code)));
    }
  }
  CHECK(mismatches == 0);
}

// value = 2^(e - bias) (1 + m / 2^M), subnormal at e = 0.
double minifloat(int e, int m, int m_bits, int bias) {
  const double frac = static_cast<double>(m) / (1 << m_bits);
  return e == 0 ? std::ldexp(frac, 1 - bias) : std::ldexp(1 + frac, e - bias);
}

double ue4m3_expected(std::uint32_t c) {
  const int e = static_cast<int>(c >> 3) & 15, m = static_cast<int>(c) & 7;
  return (e == 15 && m == 7) ? NAN : minifloat(e, m, 3, 7);
}
double e4m3fnuz_expected(std::uint32_t c) {
  if (c == 0x80) return NAN;
  const double mag = minifloat(static_cast<int>(c >> 3) & 15, static_cast<int>(c) & 7, 3, 8);
  return (c & 0x80) ? -mag : mag;
}
double e5m2fnuz_expected(std::uint32_t c) {
  if (c == 0x80) return NAN;
  const double mag = minifloat(static_cast<int>(c >> 2) & 31, static_cast<int>(c) & 3, 2, 16);
  return (c & 0x80) ? -mag : mag;
}
double int4_expected(std::uint32_t c) { return static_cast<double>(static_cast<std::int8_t>(c << 4) >> 4); }
double uint4_expected(std::uint32_t c) { return static_cast<double>(c); }
double int8_expected(std::uint32_t c) { return static_cast<double>(static_cast<std::int8_t>(c)); }
double uint8_expected(std::uint32_t c) { return static_cast<double>(c); }
double u4b8_expected(std::uint32_t c) { return static_cast<double>(static_cast<int>(c) - 8); }

}  // namespace

TEST_SUITE("format") {
  TEST_CASE("ue4m3: unsigned E4M3, 128 codes, max 448, NaN only 0x7F") {
    check_every_code(FormatId::ue4m3, ue4m3_expected);
    const FormatSpec& f = spec_of(FormatId::ue4m3);
    CHECK(f.code_count() == 128);
    CHECK(f.max_finite_code() == 0b1111'110);  // 448
    CHECK(value_of(decode(f, 0b1111'110)) == 448.0);
    CHECK(value_of(decode(f, 0b0000'001)) == std::ldexp(1.0, -9));
    CHECK_FALSE(f.has_inf());
    CHECK_FALSE(f.has_negative_zero());
  }

  TEST_CASE("e4m3fnuz: bias 8, max 240, no Inf, no -0, NaN only 0x80") {
    check_every_code(FormatId::e4m3fnuz, e4m3fnuz_expected);
    const FormatSpec& f = spec_of(FormatId::e4m3fnuz);
    CHECK(value_of(decode(f, 0b0'1111'111)) == 240.0);
    CHECK(f.max_finite_code() == 0x7F);
    CHECK(value_of(decode(f, 0b0'0000'001)) == std::ldexp(1.0, -10));
    CHECK(decode(f, 0x80).kind == Kind::kNaN);
    CHECK(decode(f, 0xFF).kind == Kind::kFinite);  // S.1111.111 is -240 here, not NaN
    CHECK_FALSE(f.has_inf());
    CHECK_FALSE(f.has_negative_zero());
  }

  TEST_CASE("e5m2fnuz: bias 16, max 57344, no Inf, no -0, NaN only 0x80") {
    check_every_code(FormatId::e5m2fnuz, e5m2fnuz_expected);
    const FormatSpec& f = spec_of(FormatId::e5m2fnuz);
    CHECK(value_of(decode(f, 0b0'11111'11)) == 57344.0);
    CHECK(value_of(decode(f, 0b0'00000'01)) == std::ldexp(1.0, -17));
    CHECK(decode(f, 0x7C).kind == Kind::kFinite);  // no Inf: 0x7C is 2^15
  }

  TEST_CASE("integers: two's complement int4/int8, plain uint4/uint8, vLLM uint4b8 (q - 8)") {
    check_every_code(FormatId::int4, int4_expected);
    check_every_code(FormatId::uint4, uint4_expected);
    check_every_code(FormatId::int8, int8_expected);
    check_every_code(FormatId::uint8, uint8_expected);
    check_every_code(FormatId::u4b8, u4b8_expected);
    CHECK(value_of(decode(spec_of(FormatId::int4), 0b1000)) == -8.0);
    CHECK(value_of(decode(spec_of(FormatId::int8), 0x80)) == -128.0);
    CHECK(value_of(decode(spec_of(FormatId::u4b8), 0b0000)) == -8.0);
    CHECK(decode(spec_of(FormatId::u4b8), 0b1000).kind == Kind::kZero);
    for (FormatId id : {FormatId::int4, FormatId::uint4, FormatId::int8, FormatId::uint8, FormatId::u4b8}) {
      CHECK(spec_of(id).is_integer());
      CHECK_FALSE(spec_of(id).has_nan());
      CHECK_FALSE(spec_of(id).has_negative_zero());
    }
  }

  TEST_CASE("the checks can fail: a wrong bias is caught") {
    // Negative control for check_every_code's comparison: FNUZ decoded with the FN bias 7.
    int mismatches = 0;
    for (std::uint32_t c = 1; c < 0x80; ++c) {
      mismatches += !same(value_of(decode(spec_of(FormatId::e4m3fnuz), c)),
                          minifloat(static_cast<int>(c >> 3) & 15, static_cast<int>(c) & 7, 3, 7));
    }
    CHECK(mismatches == 127);
  }
}
