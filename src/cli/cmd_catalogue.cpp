// bitproof formats | recipes: the catalogue.
#include <fmt/format.h>

#include <cstdio>

#include "cli/cli.hpp"
#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "recipes/registry.hpp"

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

int run_recipes() {
  for (const RecipeEntry& r : all_recipes()) {
    const RecipeCard& c = *r.card;
    std::string inputs;
    for (int i = 0; i < c.arity; ++i) inputs += (i ? "×" : "") + std::string(spec_of(c.inputs[i]).name);
    const bool control = c.role == Role::kControl;
    std::printf("%-48s %-8s %s→%s\n    %s\n", std::string(c.name).c_str(), std::string(role_name(c.role)).c_str(),
                inputs.c_str(), std::string(spec_of(c.output).name).c_str(), std::string(c.summary).c_str());
    if (control) std::printf("    must be refuted against %s\n", std::string(c.control_of).c_str());
    std::printf("    source: %s\n", std::string(c.source).c_str());
    for (int i = 0; i < c.pin_count(); ++i) print_pin(*c.pins[i]);
    if (!c.caveat.empty()) std::printf("    caveat: %s\n", std::string(c.caveat).c_str());
  }
  return 0;
}

}  // namespace

void add_catalogue_commands(CLI::App& app, Commands& commands) {
  commands.push_back({app.add_subcommand("formats", "list the format catalogue"), run_formats});
  commands.push_back(
      {app.add_subcommand("recipes", "list the recipe catalogue, negative controls included"), run_recipes});
}

}  // namespace bitproof::cli
