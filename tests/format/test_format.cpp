// Every code of every format decoded and checked against facts written here
// independently: value tables, the compiler's own _Float16 / float decoding,
// and each format's extremes and special codes.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "format/format.hpp"
#include "support.hpp"
#include "compiler_half.hpp"

using namespace bitproof;
using test::as_double;
using test::same;

namespace {

void check_table(FormatId id, const std::vector<double>& expected) {
  const FormatSpec& f = spec_of(id);
  REQUIRE(expected.size() == f.code_count());
  int mismatches = 0;
  for (std::uint32_t code = 0; code < f.code_count(); ++code) {
    const double got = as_double(decode(f, code));
    if (!same(got, expected[code]) && ++mismatches <= 8) {
      FAIL_CHECK(fmt::format("{} code 0x{:02X}: decoded {} expected {}", f.name, code, got, expected[code]));
    }
  }
  CHECK(mismatches == 0);
}

// value = (-1)^s 2^(e - bias) (1 + m / 2^M), subnormal at e = 0, written out
// here from the OCP MX v1.0 definitions (no Inf/NaN in these formats).
std::vector<double> finite_minifloat_table(int e_bits, int m_bits, int bias) {
  std::vector<double> t;
  const int count = 1 << (1 + e_bits + m_bits);
  for (int code = 0; code < count; ++code) {
    const int s = code >> (e_bits + m_bits);
    const int e = (code >> m_bits) & ((1 << e_bits) - 1);
    const int m = code & ((1 << m_bits) - 1);
    const double frac = static_cast<double>(m) / (1 << m_bits);
    const double mag = e == 0 ? std::pow(2.0, 1 - bias) * frac : std::pow(2.0, e - bias) * (1 + frac);
    t.push_back(s ? -mag : mag);
  }
  return t;
}

}  // namespace

TEST_SUITE("format") {
  TEST_CASE("e2m1: the sixteen OCP FP4 values") {
    const std::vector<double> values = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};
    check_table(FormatId::e2m1, values);
    CHECK(spec_of(FormatId::e2m1).max_finite_code() == 0b0'11'1);  // +6.0
    CHECK_FALSE(spec_of(FormatId::e2m1).has_nan());
    CHECK_FALSE(spec_of(FormatId::e2m1).has_inf());
  }

  TEST_CASE("e2m3 and e3m2: OCP FP6 values, maxima 7.5 and 28") {
    check_table(FormatId::e2m3, finite_minifloat_table(2, 3, 1));
    check_table(FormatId::e3m2, finite_minifloat_table(3, 2, 3));
    CHECK(as_double(decode(spec_of(FormatId::e2m3), 0b0'11'111)) == 7.5);
    CHECK(as_double(decode(spec_of(FormatId::e2m3), 0b0'00'001)) == 0.125);
    CHECK(as_double(decode(spec_of(FormatId::e3m2), 0b0'111'11)) == 28.0);
    CHECK(as_double(decode(spec_of(FormatId::e3m2), 0b0'000'01)) == 0.0625);
  }

  TEST_CASE("ue8m0: 2^(b-127), no zero, 0xFF is NaN") {
    std::vector<double> values;
    for (int b = 0; b < 255; ++b) values.push_back(std::ldexp(1.0, b - 127));
    values.push_back(NAN);
    check_table(FormatId::ue8m0, values);
    CHECK(as_double(decode(spec_of(FormatId::ue8m0), 127)) == 1.0);
    CHECK(as_double(decode(spec_of(FormatId::ue8m0), 114)) == std::ldexp(1.0, -13));
  }

  TEST_CASE("e4m3 (FN): max 448, NaN only at S.1111.111, no Inf") {
    std::vector<double> values;
    for (int code = 0; code < 256; ++code) {
      const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
      double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
      if (e == 15 && m == 7) mag = NAN;
      values.push_back(s ? -mag : mag);
    }
    check_table(FormatId::e4m3, values);
    const FormatSpec& f = spec_of(FormatId::e4m3);
    CHECK(as_double(decode(f, 0b0'1111'110)) == 448.0);
    CHECK(as_double(decode(f, 0b0'0001'000)) == 0.015625);     // min normal 2^-6
    CHECK(as_double(decode(f, 0b0'0000'001)) == 0.001953125);  // min subnormal 2^-9
    CHECK(decode(f, 0x7F).kind == Kind::kNaN);
    CHECK(decode(f, 0xFF).kind == Kind::kNaN);
    CHECK(decode(f, 0x7E).kind == Kind::kFinite);
    CHECK_FALSE(f.has_inf());
  }

  TEST_CASE("e5m2: IEEE-style, max 57344, Inf 0x7C, NaN 0x7D..0x7F") {
    const FormatSpec& f = spec_of(FormatId::e5m2);
    for (std::uint32_t code = 0; code < 256; ++code) {
      // e5m2 is the top byte of a binary16: decode through the compiler's _Float16.
      const std::uint16_t half_bits = static_cast<std::uint16_t>(code << 8);
      CompilerHalf h;
      std::memcpy(&h, &half_bits, 2);
      CHECK_MESSAGE(same(as_double(decode(f, code)), static_cast<double>(h)), fmt::format("e5m2 0x{:02X}", code));
    }
    CHECK(as_double(decode(f, 0x7B)) == 57344.0);
    CHECK(decode(f, 0x7C).kind == Kind::kInf);
    CHECK(decode(f, 0x7D).kind == Kind::kNaN);
    CHECK(as_double(decode(f, 0x01)) == std::ldexp(1.0, -16));
  }

  TEST_CASE("fp16: all 65536 codes against the compiler's _Float16") {
    const FormatSpec& f = spec_of(FormatId::fp16);
    int mismatches = 0;
    for (std::uint32_t code = 0; code < 65536; ++code) {
      const auto bits = static_cast<std::uint16_t>(code);
      CompilerHalf h;
      std::memcpy(&h, &bits, 2);
      if (!same(as_double(decode(f, code)), static_cast<double>(h)) && ++mismatches <= 8) {
        FAIL_CHECK(fmt::format("fp16 0x{:04X}: {} vs _Float16 {}", code, as_double(decode(f, code)), double(h)));
      }
    }
    CHECK(mismatches == 0);
    CHECK(as_double(decode(f, 0x7BFF)) == 65504.0);
    CHECK(as_double(decode(f, 0x0400)) == std::ldexp(1.0, -14));
    CHECK(as_double(decode(f, 0x0001)) == std::ldexp(1.0, -24));
    CHECK(decode(f, 0x7C00).kind == Kind::kInf);
    CHECK(decode(f, 0x7C01).kind == Kind::kNaN);
    CHECK(decode(f, 0x7FFF).kind == Kind::kNaN);
  }

  TEST_CASE("bf16: all 65536 codes against float bit patterns") {
    const FormatSpec& f = spec_of(FormatId::bf16);
    int mismatches = 0;
    for (std::uint32_t code = 0; code < 65536; ++code) {
      const float x = std::bit_cast<float>(code << 16);
      if (!same(as_double(decode(f, code)), static_cast<double>(x)) && ++mismatches <= 8) {
        FAIL_CHECK(fmt::format("bf16 0x{:04X}", code));
      }
    }
    CHECK(mismatches == 0);
    CHECK(as_double(decode(f, 0x0080)) == std::ldexp(1.0, -126));
    CHECK(as_double(decode(f, 0x0001)) == std::ldexp(1.0, -133));
  }

  TEST_CASE("fp32: every 4099th code and the edges against float") {
    const FormatSpec& f = spec_of(FormatId::fp32);
    std::vector<std::uint32_t> codes = {0, 1, 0x007FFFFF, 0x00800000, 0x3F800000, 0x7F7FFFFF, 0x7F800000,
                                        0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFF800000, 0xFFFFFFFF};
    for (std::uint64_t c = 0; c < (1ull << 32); c += 4099) codes.push_back(static_cast<std::uint32_t>(c));
    int mismatches = 0;
    for (std::uint32_t code : codes) {
      if (!same(as_double(decode(f, code)), static_cast<double>(std::bit_cast<float>(code))) && ++mismatches <= 8) {
        FAIL_CHECK(fmt::format("fp32 0x{:08X}", code));
      }
    }
    CHECK(mismatches == 0);
  }

  TEST_CASE("the comparison itself can fail: a wrong table is caught") {
    // Negative control for check_table's comparison: a table with one wrong entry.
    std::vector<double> wrong = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};
    wrong[7] = 5.0;
    const FormatSpec& f = spec_of(FormatId::e2m1);
    int mismatches = 0;
    for (std::uint32_t code = 0; code < 16; ++code) mismatches += !same(as_double(decode(f, code)), wrong[code]);
    CHECK(mismatches == 1);
    CHECK_FALSE(same(0.0, -0.0));  // the sign of zero matters
  }

  TEST_CASE("catalogue lookup by name") {
    for (std::size_t i = 0; i < kFormats.size(); ++i) {
      CHECK(format_by_name(kFormats[i].name) == static_cast<FormatId>(i));
    }
    CHECK_FALSE(format_by_name("fp8").has_value());
    CHECK_FALSE(format_by_name("").has_value());
  }
}
