// How two codes of one format differ, as one small enum: the classification
// every counterexample carries ("value", "sign", ...). Host+device and free of
// tables, so the CPU engine, the CPU vector sweep and the CUDA kernels all
// classify with this one function (the engine's difference_kind() names it).
#pragma once

#include <cstdint>
#include <string_view>

#include "format/format.hpp"
#include "hd.hpp"

namespace bitproof {

// Order matters: it indexes the per-kind counters of every backend.
enum class DiffKind : std::uint8_t { kNone, kValue, kSign, kZero, kInf, kNaN, kNanBits };
inline constexpr int kDiffKinds = 7;

// The fields of a format that classification needs, as plain integers (the
// kernels receive this by value; FormatSpec holds a string_view).
struct KindFormat {
  std::uint32_t sign_mask;
  std::uint32_t exp_max;  // all-ones exponent field
  std::uint32_t man_mask;
  std::uint32_t man_bits;
  std::uint32_t specials;  // Specials as an integer
  std::uint32_t int_zero;  // kInt: the code of zero (the bias, as a stored code); else 0
};

[[nodiscard]] constexpr KindFormat kind_format(const FormatSpec& f) {
  const auto int_zero = static_cast<std::uint32_t>(
      f.specials == Specials::kInt ? static_cast<std::uint64_t>(f.bias) % f.code_count() : 0);
  return {f.sign_mask(), f.exp_field_max(), f.man_mask(), static_cast<std::uint32_t>(f.man_bits),
          static_cast<std::uint32_t>(f.specials), int_zero};
}

struct CodeClass {
  bool nan;
  bool inf;
  bool zero;
};

// What decode() says about a code's kind, without building a Decoded.
[[nodiscard]] BP_HD constexpr CodeClass code_class(const KindFormat& f, std::uint32_t code) {
  const std::uint32_t exp_field = (code >> f.man_bits) & f.exp_max;
  const std::uint32_t man = code & f.man_mask;
  const bool exp_all_ones = exp_field == f.exp_max;
  switch (static_cast<Specials>(f.specials)) {
    case Specials::kIeee: return {exp_all_ones && man != 0, exp_all_ones && man == 0, exp_field == 0 && man == 0};
    case Specials::kFn: return {exp_all_ones && man == f.man_mask, false, exp_field == 0 && man == 0};
    case Specials::kFinite: return {false, false, exp_field == 0 && man == 0};
    case Specials::kE8m0: return {exp_all_ones, false, false};
    case Specials::kFnuz: return {code == f.sign_mask, false, code == 0};  // only the -0 pattern is NaN
    case Specials::kInt: return {false, false, code == f.int_zero};  // value = stored - bias
  }
  return {false, false, false};
}

// kNone iff a == b. Otherwise, in this order: both NaN (kNanBits), one NaN
// (kNaN), only the sign differs (kSign), an infinity (kInf), a zero (kZero),
// else two different finite values (kValue).
[[nodiscard]] BP_HD constexpr DiffKind classify_difference(const KindFormat& f, std::uint32_t a, std::uint32_t b) {
  if (a == b) return DiffKind::kNone;
  const CodeClass x = code_class(f, a);
  const CodeClass y = code_class(f, b);
  if (x.nan && y.nan) return DiffKind::kNanBits;
  if (x.nan || y.nan) return DiffKind::kNaN;
  if ((a & ~f.sign_mask) == (b & ~f.sign_mask)) return DiffKind::kSign;
  if (x.inf || y.inf) return DiffKind::kInf;
  if (x.zero || y.zero) return DiffKind::kZero;
  return DiffKind::kValue;
}

[[nodiscard]] constexpr std::string_view diff_kind_name(DiffKind k) {
  switch (k) {
    case DiffKind::kNone: return "";
    case DiffKind::kValue: return "value";
    case DiffKind::kSign: return "sign";
    case DiffKind::kZero: return "zero";
    case DiffKind::kInf: return "inf";
    case DiffKind::kNaN: return "nan";
    case DiffKind::kNanBits: return "nan-bits";
  }
  return "?";
}

}  // namespace bitproof
