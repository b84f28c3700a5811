// The codes an input of a domain takes: one format's codes as a contiguous
// range or a list. What a proof sweeps (proof/spec.hpp) and what a user recipe's
// worker or table is evaluated over (user/) are the product of these sets, the
// first input fastest.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/format.hpp"

namespace bitproof {

// An inclusive range of codes [lo, hi].
struct CodeRange {
  std::uint32_t lo;
  std::uint32_t hi;  // inclusive
};

// The codes of one input: a contiguous range ("all" included), kept as its two
// ends (an FP32 input's 2^32 codes are never listed), or a list in spec order.
struct InputDomain {
  std::string name;
  FormatId format;
  std::optional<CodeRange> range;  // set when the codes are one contiguous range ("all" included)
  bool all = false;
  std::vector<std::uint32_t> codes;  // the list; empty when `range` is set
  // A range with "exclude": the range as written (`codes` lists what is left) and
  // the exclusions as written ("nan", "inf", "zero", "subnormal" or a code's digits).
  std::optional<CodeRange> span;
  std::vector<std::string> excluded;

  // How many codes are swept, and the k-th of them (k < count()).
  [[nodiscard]] std::uint64_t count() const {
    return range ? std::uint64_t{range->hi} - range->lo + 1 : codes.size();
  }
  [[nodiscard]] std::uint32_t code(std::uint64_t k) const {
    return range ? static_cast<std::uint32_t>(range->lo + k) : codes[k];
  }
};

// The cases of a domain: the product of its inputs' code counts (a spec keeps
// it at most kMaxCases; proof/spec.cpp checks).
[[nodiscard]] inline std::uint64_t case_count(std::span<const InputDomain> inputs) {
  std::uint64_t n = 1;
  for (const InputDomain& in : inputs) n *= in.count();
  return n;
}

}  // namespace bitproof
