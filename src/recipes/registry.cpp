#include "recipes/registry.hpp"

#include <array>
#include <utility>

#include "arith/soft_arith.hpp"
#include "oracle/oracle_arith.hpp"

#define BITPROOF_RECIPE_HEADERS
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE_HEADERS

namespace bitproof {
namespace {

template <class Recipe, class Arith, std::size_t... I>
std::uint32_t call(const std::uint32_t* codes, std::index_sequence<I...>) {
  return Recipe::template eval<Arith>(codes[I]...);
}

template <class Recipe, class Arith>
std::uint32_t evaluate(const std::uint32_t* codes) {
  return call<Recipe, Arith>(codes, std::make_index_sequence<Recipe::kCard.arity>{});
}

template <class Recipe>
constexpr RecipeEntry entry() {
  return {&Recipe::kCard, &evaluate<Recipe, SoftArith>, &evaluate<Recipe, OracleArith>};
}

const auto kRegistry = std::to_array<RecipeEntry>({
#define BITPROOF_RECIPE(Type) entry<Type>(),
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE
});

}  // namespace

std::span<const RecipeEntry> all_recipes() { return kRegistry; }

const RecipeEntry* recipe_by_name(std::string_view name) {
  for (const RecipeEntry& e : kRegistry) {
    if (e.card->name == name) return &e;
  }
  return nullptr;
}

}  // namespace bitproof
