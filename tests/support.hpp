// Helpers shared by the doctest suites: decoded values as doubles and the
// committed DeepSeek V4 spec.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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

// A file's bytes ("" when it cannot be read: the test's comparison then fails).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// binary32 codes at every exponent, both signs: zero, the smallest and the middle
// mantissa, and the largest (NaN and Inf at exponent 255).
inline std::vector<std::uint32_t> float32_edges() {
  std::vector<std::uint32_t> codes;
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t e = 0; e < 256; ++e) {
      for (std::uint32_t m : {0u, 1u, 0x400000u, 0x7FFFFFu}) codes.push_back(sign | (e << 23) | m);
    }
  }
  return codes;
}

inline Spec dsv4_spec() {
  auto spec = load_spec(std::string(BITPROOF_SOURCE_DIR "/proofs/dsv4-mxfp4-fp16-fold.json"));
  REQUIRE(spec.ok());
  return *spec;
}

}  // namespace bitproof::test
