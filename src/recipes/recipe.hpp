// What every recipe declares about itself: the spec card the catalogue prints,
// its input and output formats, and the exact value it is meant to compute
// (its intent, evaluated by the oracle). The arithmetic itself is a templated
// static member `eval<Arith>(codes...)` in the recipe's own header.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "format/format.hpp"

namespace bitproof {

// The mathematically exact value a recipe is meant to compute from its decoded
// inputs. The oracle rounds it to the recipe's output format.
enum class Intent : std::uint8_t {
  kValue,    // in0
  kProduct,  // in0 × in1
  kZeroPointProduct,  // (in0 - in1) × in2: an integer minus its zero point, times the scale
};

enum class Role : std::uint8_t {
  kRecipe,   // a way some kernel computes something
  kControl,  // deliberately wrong: bitproof must refute it against control_of
};

// Inputs a recipe takes at most (codes of one case). The engine, the CUDA kernels
// and the spec parser take up to this many; the CPU vector sweep takes up to 2
// (specs with more inputs run the scalar sweep).
inline constexpr int kMaxArity = 3;

struct RecipeCard {
  std::string_view name;     // catalogue key, "<family>.<variant>"
  std::string_view label;    // short name for summary lines
  std::string_view summary;  // one line: what it computes and how
  std::string_view source;   // where the shipped code lives
  int arity;
  std::array<FormatId, kMaxArity> inputs;
  FormatId output;
  Intent intent;
  Role role = Role::kRecipe;
  std::string_view control_of = {};  // kControl: the recipe this one corrupts
};

}  // namespace bitproof
