// bitproof spec new: a commented spec to start from (spec.hpp: spec_template).
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "proof/spec.hpp"
#include "suggest.hpp"

namespace bitproof {
namespace {

constexpr const char* kClaimKinds[] = {"equal", "correctly_rounded", "exact"};

// The names the template gives a recipe's inputs: element (and scale), else in0, in1, ...
std::string input_name(int arity, int i) {
  if (arity <= 2) return i == 0 ? "element" : "scale";
  return fmt::format("in{}", i);
}

// Every code of an input up to 16 bits; wider formats start with a range to narrow.
std::string codes_for(FormatId format) {
  return spec_of(format).bits <= 16 ? "\"all\"" : "{\"range\": [0, 65535]}";
}

std::string claim_help(const std::string& kind) {
  if (kind == "equal") return "equal: the recipes return the same bits on every case (two or more recipes)";
  if (kind == "exact") return "exact: no rounding happens anywhere, each recipe returns the exact value";
  return "correctly_rounded: each recipe equals the oracle's rounding of what it means to compute";
}

}  // namespace

Expected<std::string> spec_template(const std::string& kind, const std::vector<std::string>& recipes,
                                    const std::string& origin) {
  const std::vector<std::string> kinds(std::begin(kClaimKinds), std::end(kClaimKinds));
  if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
    return Error{fmt::format("{}: unknown claim \"{}\"{} (claims: equal, correctly_rounded, exact)", origin, kind,
                             did_you_mean(kind, kinds))};
  }
  std::vector<std::string> names = recipes;
  if (names.empty()) names = {"turbomind.mxfp4_fp16.folded", "turbomind.mxfp4_fp16.ordinary"};
  if (kind != "equal" && recipes.empty()) names.resize(1);
  const RecipeEntry* first = recipe_by_name(names.front());
  if (first == nullptr) {
    std::vector<std::string> all;
    for (const RecipeEntry& r : all_recipes()) all.emplace_back(r.card->name);
    return Error{fmt::format("{}: unknown recipe \"{}\"{} (see `bitproof recipes --grep`)", origin, names.front(),
                             did_you_mean(names.front(), all))};
  }
  const RecipeCard& card = *first->card;
  std::string inputs;
  for (int i = 0; i < card.arity; ++i) {
    const bool dsv4_scale = recipes.empty() && i == 1;
    inputs += fmt::format("    {{\"name\": \"{}\", \"format\": \"{}\", \"codes\": {}}}{}\n", input_name(card.arity, i),
                          spec_of(card.inputs[i]).name,
                          dsv4_scale ? std::string("{\"range\": [114, 126]}") : codes_for(card.inputs[i]),
                          i + 1 < card.arity ? "," : "");
  }
  std::string list;
  for (const std::string& n : names) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", n);
  std::string text = fmt::format(
      R"(// A bitproof proof spec. Check it with `bitproof spec check FILE`, prove it with
// `bitproof prove FILE`. Comments (// and /* */) are allowed and ignored.
{{
  "bitproof_spec": 1,
  // Names reports, CI test cases and files: lower-case letters, digits, '.', '_', '-'.
  "name": "my-claim",
  // Optional, one line each: what the claim says and where the code lives (a PR, a commit).
  "title": "what this proves",
  "source": "where the kernel code is",
  // The domain is every combination of the inputs' codes, the first input fastest.
  // codes: "all", {{"range": [lo, hi]}} or {{"list": [c, ...]}}; a range or list may add
  // "exclude": ["nan", "inf", "zero", "subnormal", or codes] to leave those codes out.
  // The inputs must be the recipes' inputs, in order: `bitproof recipes --grep NAME`.
  "inputs": [
{}  ],
  "output": "{}",
  "claims": [
    // {}
    // Other claims: equal (bit for bit), correctly_rounded ("rounding": "nearest_even" or
    // "toward_zero"), exact. "expected_cases": N pins the domain's size; "expect":
    // {{"refuted": N, "kinds": {{...}}}} records a known refutation (a finding).
    {{"claim": "{}", "recipes": [{}]}}
  ]
}}
)",
      inputs, spec_of(card.output).name, claim_help(kind), kind, list);
  if (auto parsed = parse_spec(text, origin); !parsed) return parsed.error();
  return text;
}

}  // namespace bitproof
