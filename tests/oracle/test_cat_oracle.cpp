// Oracle rounding into the catalogue's formats: FNUZ (no -0, NaN 0x80, overflow to NaN
// or saturation) and integers (round to an integer, two's complement, bias, overflow
// unrepresentable or saturated). Expected codes are worked out here by hand.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <bit>

#include "oracle/exact.hpp"

using namespace bitproof;
using oracle::Exact;
using oracle::Overflow;
using oracle::Rounding;

namespace {

Exact of_float(float v) { return oracle::exact_of(FormatId::fp32, std::bit_cast<std::uint32_t>(v)); }

std::optional<std::uint32_t> rn(FormatId id, float v, Overflow o = Overflow::kIeee) {
  return oracle::round_to(id, of_float(v), Rounding::kNearestEven, o).code;
}
std::optional<std::uint32_t> rz(FormatId id, float v) {
  return oracle::round_to(id, of_float(v), Rounding::kTowardZero).code;
}

}  // namespace

TEST_SUITE("oracle") {
  TEST_CASE("fnuz: zeros are +0, NaN is 0x80, overflow is NaN unless saturating") {
    CHECK(*rn(FormatId::e4m3fnuz, -0.0f) == 0x00);  // no negative zero
    CHECK(*rn(FormatId::e4m3fnuz, -std::ldexp(1.0f, -20)) == 0x00);  // underflow to +0, not 0x80 (NaN)
    CHECK(*oracle::round_to(FormatId::e4m3fnuz, Exact::nan(), Rounding::kNearestEven).code == 0x80);
    CHECK(*rn(FormatId::e4m3fnuz, 240.0f) == 0x7F);
    CHECK(*rn(FormatId::e4m3fnuz, -240.0f) == 0xFF);
    CHECK(*rn(FormatId::e4m3fnuz, 300.0f) == 0x80);                      // beyond max: NaN (no Inf)
    CHECK(*rn(FormatId::e4m3fnuz, 300.0f, Overflow::kSaturate) == 0x7F);  // saturate: +240
    CHECK(*rz(FormatId::e4m3fnuz, -300.0f) == 0xFF);                      // toward zero: -240
    CHECK(*rn(FormatId::e5m2fnuz, 57344.0f) == 0x7F);
    CHECK(*oracle::round_to(FormatId::e5m2fnuz, Exact::inf(true), Rounding::kNearestEven).code == 0x80);
  }

  TEST_CASE("integers: nearest even, two's complement, bias, range") {
    CHECK(*rn(FormatId::int4, 2.5f) == 2);
    CHECK(*rn(FormatId::int4, 3.5f) == 4);
    CHECK(*rn(FormatId::int4, -2.5f) == 0b1110);  // -2
    CHECK(*rz(FormatId::int4, -2.5f) == 0b1110);  // -2
    CHECK(*rn(FormatId::int4, -8.0f) == 0b1000);
    CHECK(*rn(FormatId::int4, -0.0f) == 0);
    CHECK_FALSE(rn(FormatId::int4, 8.0f).has_value());                     // out of range
    CHECK(*rn(FormatId::int4, 8.0f, Overflow::kSaturate) == 0b0111);        // +7
    CHECK(*rn(FormatId::int4, -100.0f, Overflow::kSaturate) == 0b1000);     // -8
    CHECK(*rn(FormatId::int8, -128.0f) == 0x80);
    CHECK(*rn(FormatId::uint8, 255.0f) == 0xFF);
    CHECK(*rn(FormatId::uint4, -0.25f) == 0);  // rounds to zero: representable
    CHECK_FALSE(rn(FormatId::uint4, -1.0f).has_value());
    CHECK(*rn(FormatId::u4b8, -8.0f) == 0b0000);  // stored q = value + 8
    CHECK(*rn(FormatId::u4b8, 7.0f) == 0b1111);
    CHECK(*rn(FormatId::u4b8, 0.0f) == 0b1000);
    CHECK_FALSE(oracle::round_to(FormatId::int8, Exact::nan(), Rounding::kNearestEven).code.has_value());
    const auto inexact = oracle::round_to(FormatId::int8, of_float(1.5f), Rounding::kNearestEven);
    CHECK(*inexact.code == 2);
    CHECK(inexact.inexact);
  }

  TEST_CASE("every code of the new formats rounds back to itself") {
    for (FormatId id : {FormatId::ue4m3, FormatId::e4m3fnuz, FormatId::e5m2fnuz, FormatId::int4, FormatId::uint4,
                        FormatId::int8, FormatId::uint8, FormatId::u4b8}) {
      const FormatSpec& f = spec_of(id);
      for (std::uint32_t code = 0; code < f.code_count(); ++code) {
        const oracle::Rounded r = oracle::round_to(id, oracle::exact_of(id, code), Rounding::kNearestEven);
        REQUIRE(r.code.has_value());
        CHECK_MESSAGE(*r.code == code, fmt::format("{} 0x{:02X} -> 0x{:02X}", f.name, code, *r.code));
        CHECK_FALSE(r.inexact);
      }
    }
  }
}
