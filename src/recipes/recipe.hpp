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
  kValue,             // in0
  kProduct,           // in0 × in1
  kZeroPointProduct,  // (in0 - in1) × in2: an integer minus its zero point, times the scale
  kSum,               // in0 + in1
  kDifference,        // in0 - in1
  kFma,               // in0 × in1 + in2, rounded once (FP16/BF16 inputs: the fast exact oracle, oracle/fma_exact.hpp)
  kQuotient,          // in0 / in1 (the oracle's quotient: its first 128 bits and a sticky bit)
  kSquareRoot,        // √in0 (likewise)
};

enum class Role : std::uint8_t {
  kRecipe,     // a way some kernel computes something: pinned to the upstream lines it models
  kControl,    // deliberately wrong: bitproof must refute it against control_of
  kReference,  // the plain computation a claim measures kernels against (exact decode, one
               // rounding); models no shipped code, so it has no pin
  kUser,       // a function of the user's own source (a spec's user_recipes): the code itself, not a model
};

constexpr std::string_view role_name(Role r) {
  switch (r) {
    case Role::kControl: return "control";
    case Role::kReference: return "reference";
    case Role::kUser: return "user";
    case Role::kRecipe: break;
  }
  return "recipe";
}

// Inputs a recipe takes at most (codes of one case). The engine, the CUDA kernels
// and the spec parser take up to this many; the CPU vector sweep takes up to 2
// (specs with more inputs run the scalar sweep).
inline constexpr int kMaxArity = 3;

// Where a recipe's arithmetic comes from. A code pin names lines of shipped
// source that were read (with the `search` tools) and that the recipe models;
// a prose pin names a document that describes code nobody can read (a PR's
// text). A recipe without a pin is a guess: tests/recipes demand one on every
// recipe but the negative controls.
enum class PinKind : std::uint8_t { kCode, kProse };

struct Pin {
  PinKind kind = PinKind::kCode;
  std::string_view repo;      // "vllm-project/vllm"; "NVIDIA CUDA Toolkit" for its headers
  std::string_view path;      // the file in that repository or install
  std::string_view revision;  // the commit read (40 hex digits) or a release ("13.0.88")
  std::string_view symbol;    // function, macro, kernel or table
  std::string_view lines;     // "120-134" (code pins)
  std::string_view models;    // what of the recipe these lines give, in our own words
};

inline constexpr int kMaxPins = 4;

struct RecipeCard {
  std::string_view name;     // catalogue key, "<family>.<variant>"
  std::string_view label;    // short name for summary lines
  std::string_view summary;  // one line: what it computes and how
  std::string_view source;   // one line naming the shipped code (the pins say exactly where)
  int arity;
  std::array<FormatId, kMaxArity> inputs;
  FormatId output;
  Intent intent;
  Role role = Role::kRecipe;
  std::string_view control_of = {};            // kControl: the recipe this one corrupts
  std::array<const Pin*, kMaxPins> pins = {};  // the upstream lines modelled; unused slots null
  std::string_view caveat = {};                // where model and shipped code part (a finding's spec shows it)

  [[nodiscard]] constexpr int pin_count() const {
    int n = 0;
    while (n < kMaxPins && pins[n] != nullptr) ++n;
    return n;
  }
};

// What the recipes of one family share: the shipped code they name, their
// signature and intent.
struct RecipeFamily {
  std::string_view source;
  int arity;
  std::array<FormatId, kMaxArity> inputs;
  FormatId output;
  Intent intent;
};

// A recipe's card: its family's part, and what names this recipe.
constexpr RecipeCard family_card(const RecipeFamily& family, std::string_view name, std::string_view label,
                                 std::string_view summary, Role role = Role::kRecipe,
                                 std::string_view control_of = {}) {
  return RecipeCard{.name = name,
                    .label = label,
                    .summary = summary,
                    .source = family.source,
                    .arity = family.arity,
                    .inputs = family.inputs,
                    .output = family.output,
                    .intent = family.intent,
                    .role = role,
                    .control_of = control_of};
}

// The card with its pins and caveat: `kCard = pinned(card(...), {&kPinA, &kPinB})`.
constexpr RecipeCard pinned(RecipeCard card, std::array<const Pin*, kMaxPins> pins, std::string_view caveat = {}) {
  card.pins = pins;
  card.caveat = caveat;
  return card;
}

}  // namespace bitproof
