// bitproof recipes' filters (registry.hpp: RecipeFilter).
#include <algorithm>
#include <cctype>

#include "recipes/registry.hpp"

namespace bitproof {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Every text of a card a reader may search for, lower-cased, one line each.
std::string searchable(const RecipeCard& card) {
  std::string text;
  for (std::string_view part : {card.name, card.label, card.summary, card.source, card.caveat, card.control_of}) {
    text += lower(part) + "\n";
  }
  for (int i = 0; i < card.pin_count(); ++i) {
    const Pin& p = *card.pins[i];
    for (std::string_view part : {p.repo, p.path, p.symbol, p.models}) text += lower(part) + "\n";
  }
  return text;
}

}  // namespace

std::string_view recipe_family(const RecipeCard& card) { return card.name.substr(0, card.name.find('.')); }

std::vector<std::string> recipe_families() {
  std::vector<std::string> families;
  for (const RecipeEntry& e : all_recipes()) {
    const std::string family(recipe_family(*e.card));
    if (std::find(families.begin(), families.end(), family) == families.end()) families.push_back(family);
  }
  return families;
}

bool RecipeFilter::matches(const RecipeCard& card) const {
  if (!family.empty() && recipe_family(card) != family) return false;
  if (format) {
    const bool takes = std::find(card.inputs.begin(), card.inputs.begin() + card.arity, *format) !=
                       card.inputs.begin() + card.arity;
    if (!takes && card.output != *format) return false;
  }
  return grep.empty() || searchable(card).find(lower(grep)) != std::string::npos;
}

}  // namespace bitproof
