// bitproof formats | recipes: the catalogue.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli/cli.hpp"
#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "proof/spec.hpp"
#include "recipes/registry.hpp"
#include "report/report.hpp"
#include "suggest.hpp"

namespace bitproof::cli {
namespace {

std::string value_text(FormatId id, std::uint32_t code) { return oracle::to_string(oracle::exact_of(id, code)); }

int run_formats() {
  std::printf("%-8s %4s %3s %3s %5s %-6s %-8s %-24s %-24s %s\n", "format", "bits", "E", "M", "bias", "signed",
              "specials", "max", "min normal", "min subnormal");
  static constexpr const char* kSpecials[] = {"ieee", "fn", "finite", "e8m0", "fnuz", "int"};
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    const auto id = static_cast<FormatId>(i);
    const FormatSpec& f = kFormats[i];
    const std::uint32_t min_normal = f.has_subnormals() ? (1u << f.man_bits) : 0u;
    const std::string min_sub = f.has_subnormals() && !f.is_integer() ? value_text(id, 1) : "-";
    const std::string min_norm = f.is_integer() ? "-" : value_text(id, min_normal);
    std::printf("%-8s %4d %3d %3d %5d %-6s %-8s %-24s %-24s %s\n", std::string(f.name).c_str(), f.bits, f.exp_bits,
                f.man_bits, f.bias, f.is_signed ? "yes" : "no", kSpecials[static_cast<int>(f.specials)],
                value_text(id, f.max_finite_code()).c_str(), min_norm.c_str(), min_sub.c_str());
  }
  return 0;
}

void print_pin(const Pin& p) {
  const std::string at =
      p.kind == PinKind::kCode
          ? fmt::format("{}@{} {} ({}, lines {})", p.repo, p.revision.substr(0, 12), p.path, p.symbol, p.lines)
          : fmt::format("{} {} ({}; prose, no code read)", p.repo, p.path, p.symbol);
  std::printf("    pin: %s\n         %s\n", at.c_str(), std::string(p.models).c_str());
}

struct RecipesArgs {
  std::string family;
  std::string format;
  std::string grep;
  bool brief = false;
  bool json = false;
};

void print_recipe(const RecipeCard& c, bool brief) {
  std::string inputs;
  for (int i = 0; i < c.arity; ++i) inputs += (i ? "×" : "") + std::string(spec_of(c.inputs[i]).name);
  std::printf("%-48s %-8s %s→%s\n", std::string(c.name).c_str(), std::string(role_name(c.role)).c_str(), inputs.c_str(),
              std::string(spec_of(c.output).name).c_str());
  if (brief) return;
  std::printf("    %s\n", std::string(c.summary).c_str());
  if (c.role == Role::kControl) std::printf("    must be refuted against %s\n", std::string(c.control_of).c_str());
  std::printf("    source: %s\n", std::string(c.source).c_str());
  for (int i = 0; i < c.pin_count(); ++i) print_pin(*c.pins[i]);
  if (!c.caveat.empty()) std::printf("    caveat: %s\n", std::string(c.caveat).c_str());
}

// The filter the flags give; an unknown family or format is bad input (exit 2).
Expected<RecipeFilter> recipe_filter(const RecipesArgs& a) {
  RecipeFilter filter{a.family, std::nullopt, a.grep};
  const std::vector<std::string> families = recipe_families();
  if (!a.family.empty() && std::find(families.begin(), families.end(), a.family) == families.end()) {
    std::string all;
    for (const std::string& f : families) all += (all.empty() ? "" : ", ") + f;
    return Error{fmt::format("--family: unknown family \"{}\"{} (families: {})", a.family, did_you_mean(a.family, families), all)};
  }
  if (!a.format.empty()) {
    filter.format = format_by_name(a.format);
    if (!filter.format) return Error{"--format: " + unknown_format_text(a.format)};
  }
  return filter;
}

// --json: one document {"recipes": [card, ...]}, each card as reports record it
// (name, role, summary, source, pins, caveat): what scripts/check-pins.py reads.
int print_recipes_json(const RecipeFilter& filter) {
  Json cards = Json::array();
  for (const RecipeEntry& r : all_recipes())
    if (filter.matches(*r.card)) cards.push_back(recipe_card_json(*r.card));
  const bool none = cards.empty();
  std::printf("%s\n", Json{{"recipes", std::move(cards)}}.dump(2).c_str());
  return none ? kExitRefuted : kExitHolds;
}

int run_recipes(const RecipesArgs& a) {
  auto filter = recipe_filter(a);
  if (!filter) return fail(filter.error());
  if (a.json) return print_recipes_json(*filter);
  std::size_t shown = 0;
  const std::size_t total = all_recipes().size();
  for (const RecipeEntry& r : all_recipes()) {
    if (!filter->matches(*r.card)) continue;
    print_recipe(*r.card, a.brief);
    ++shown;
  }
  if (shown == 0) {
    std::printf("no recipe of the %zu matches; bitproof recipes --brief lists them all\n", total);
    return kExitRefuted;
  }
  std::printf("%zu of %zu recipes%s\n", shown, total,
              shown == total ? "; narrow with --family, --format or --grep, one line each with --brief" : "");
  return kExitHolds;
}

}  // namespace

void add_catalogue_commands(CLI::App& app, Commands& commands) {
  commands.push_back({app.add_subcommand("formats", "list the format catalogue"), run_formats});
  auto args = std::make_shared<RecipesArgs>();
  auto* r = app.add_subcommand("recipes", "list the recipe catalogue, negative controls included (filter: exit 1 if none match)");
  r->add_option("--family", args->family, "only this family: the name's first part, e.g. turbomind, vllm");
  r->add_option("--format", args->format, "only recipes that take or produce this format, e.g. e4m3");
  r->add_option("--grep", args->grep, "only recipes whose name, summary, source or pins contain TEXT (any case)");
  auto* brief = r->add_flag("--brief", args->brief, "one line a recipe: name, role, formats");
  r->add_flag("--json", args->json, "the cards as one JSON document (pins as reports record them)")->excludes(brief);
  commands.push_back({r, [args] { return run_recipes(*args); }});
}

}  // namespace bitproof::cli
