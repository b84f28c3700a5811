#include "recipes/registry.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "arith/soft_arith.hpp"
#include "oracle/oracle_arith.hpp"
#include "recipes/run_plan.hpp"

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
void run_cases(std::uint32_t a0, int n, std::uint32_t b, std::uint32_t c, std::uint32_t* out) {
  const recipes::RunPlan plan = Recipe::template plan_run<SoftArith>(a0, n, b, c);
  for (int t0 = 0; t0 < n; t0 += kRunCases) {
    std::uint32_t codes[kRunCases];
    Recipe::template eval_run<SoftArith, kRunCases>(plan, static_cast<std::uint32_t>(t0),
                                                    a0 + static_cast<std::uint32_t>(t0), b, c, codes);
    std::copy(codes, codes + kRunCases, out + t0);
  }
}

template <class Recipe>
constexpr RunFn run_of() {
  if constexpr (requires(std::uint32_t (&out)[kRunCases]) {
                  Recipe::template plan_run<SoftArith>(0u, kRunCases, 0u, 0u);
                  Recipe::template eval_run<SoftArith, kRunCases>(recipes::RunPlan{}, 0u, 0u, 0u, 0u, out);
                }) {
    return &run_cases<Recipe>;
  } else {
    return nullptr;
  }
}

template <class Recipe>
constexpr RecipeEntry entry() {
  return {&Recipe::kCard, &evaluate<Recipe, SoftArith>, &evaluate<Recipe, OracleArith>, -1, run_of<Recipe>()};
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
