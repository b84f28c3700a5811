// Helpers shared by the doctest suites: decoded values as doubles and the
// committed DeepSeek V4 spec.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "format/format.hpp"
#include "proof/spec.hpp"

namespace bitproof::test {

// The decoded value as a double (every catalogue value fits one exactly).
inline double as_double(const Decoded& d) {
  switch (d.kind) {
    case Kind::kZero: return d.negative ? -0.0 : 0.0;
    case Kind::kInf: return d.negative ? -INFINITY : INFINITY;
    case Kind::kNaN: return NAN;
    case Kind::kFinite: break;
  }
  const double v = std::ldexp(static_cast<double>(d.significand), d.exp2);
  return d.negative ? -v : v;
}

// Whether `part` occurs in `s` (error messages, rendered reports).
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Same value, sign of zero included, NaN equal to NaN.
inline bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

inline Spec dsv4_spec() {
  auto spec = load_spec(std::string(BITPROOF_SOURCE_DIR "/proofs/dsv4-mxfp4-fp16-fold.json"));
  REQUIRE(spec.ok());
  return *spec;
}

}  // namespace bitproof::test
