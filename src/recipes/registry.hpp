// The runtime view of recipes.def: every registered recipe with its card and
// its CPU evaluations (soft arithmetic and oracle arithmetic).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/recipe.hpp"

namespace bitproof {

// Evaluates a recipe on input codes (unused trailing codes are ignored).
using RecipeFn = std::uint32_t (*)(const std::uint32_t* codes);

// A recipe's batch form with the soft arithmetic: out[t] is the recipe on
// (a0 + t, b, c) for t < n, the codes `soft` gives one at a time (the exact FMA
// oracles' run form, oracle/fma_exact.hpp: one plan of the run, read batch by
// batch; the CPU vector sweep calls it). n is a multiple of kRunCases, at most
// kRunMaxCases.
inline constexpr int kRunCases = 16;
inline constexpr int kRunMaxCases = 256;
using RunFn = void (*)(std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c, std::uint32_t* out);

struct RecipeEntry {
  const RecipeCard* card;
  RecipeFn soft;    // SoftArith: the bit-exact software model of the hardware
  RecipeFn oracle;  // OracleArith: every operation exact, rounded by the oracle
  // A user recipe (src/user): its bits come from a table over the domain swept,
  // slot `user_slot` of the spec's user recipes; soft and oracle are null.
  int user_slot = -1;
  RunFn run = nullptr;  // the batch form, where the recipe has one
  [[nodiscard]] bool is_user() const { return user_slot >= 0; }
};

[[nodiscard]] std::span<const RecipeEntry> all_recipes();
[[nodiscard]] const RecipeEntry* recipe_by_name(std::string_view name);

// A view of the catalogue (bitproof recipes): a recipe is shown when it matches
// every field given. family: the name's first part ("vllm" in "vllm.e5m2_fp16.kv_cache");
// format: one of its inputs or its output; grep: a case-insensitive substring of
// its name, label, summary, source, caveat or pins.
struct RecipeFilter {
  std::string family;
  std::optional<FormatId> format;
  std::string grep;
  [[nodiscard]] bool matches(const RecipeCard& card) const;
};
[[nodiscard]] std::string_view recipe_family(const RecipeCard& card);
// Every family, in catalogue order, once.
[[nodiscard]] std::vector<std::string> recipe_families();

}  // namespace bitproof
