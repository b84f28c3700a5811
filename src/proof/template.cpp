// bitproof spec new: a commented spec to start from (spec.hpp: spec_template).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

Expected<std::string> catalogue_template(const std::string& kind, const std::vector<std::string>& recipes,
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

// A string as JSON writes it (a path may hold quotes or backslashes).
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// A placeholder: kPlaceholder, what to write, ">".
std::string placeholder_text(const std::string& what) { return fmt::format("\"{}{}>\"", kPlaceholder, what); }

// A recipe name for a user function or table: "user." and its name in lower case,
// what a name may not hold as '_'.
std::string user_name(const UserStart& u) {
  std::string base = u.function.empty() ? u.path.substr(u.path.find_last_of('/') + 1) : u.function;
  if (const auto dot = base.find('.'); u.function.empty() && dot != std::string::npos) base.resize(dot);
  std::string name = "user.";
  for (char c : base) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    name += (std::isalnum(static_cast<unsigned char>(l)) || l == '_' || l == '-') ? l : '_';
  }
  return name;
}

// What spec new knows of the domain: the first catalogue recipe's card, if any.
struct Known {
  const RecipeCard* card = nullptr;
  int arity = 0;
};

// The output format a table's dtype names: float16 and float32 are fp16 and fp32;
// an unsigned word could be any format of its width.
std::string table_output(const UserStart& u) {
  if (u.descr == "<f2") return "\"fp16\"";
  if (u.descr == "<f4") return "\"fp32\"";
  if (u.item_bytes > 0)
    return placeholder_text(fmt::format("the output format, stored in {} byte{} (bitproof formats)", u.item_bytes,
                                        u.item_bytes == 1 ? "" : "s"));
  return placeholder_text("the output format (bitproof formats)");
}

// One user_recipes entry, with a comment of what was read.
std::string user_entry(const UserStart& u, const Known& k, const std::string& kind, bool last) {
  const int arity = u.function.empty() ? (k.card ? k.arity : 1) : u.arity;
  const bool same = k.card != nullptr && k.arity == arity;
  std::string inputs;
  for (int i = 0; i < arity; ++i) {
    inputs +=
        (i ? ", " : "") + (same ? fmt::format("\"{}\"", spec_of(k.card->inputs[i]).name)
                                : placeholder_text(fmt::format("input {}'s format, the spec's inputs[{}]", i, i)));
  }
  const std::string output =
      same ? fmt::format("\"{}\"", spec_of(k.card->output).name)
           : (u.function.empty() ? table_output(u) : placeholder_text("the output format, the spec's output"));
  std::string read;
  if (!u.function.empty()) {
    read = fmt::format("{} in {}: {} code{} in", u.function, u.path, u.arity, u.arity == 1 ? "" : "s");
  } else if (!u.descr.empty()) {
    read = fmt::format("{}: dtype {}, {} words (one a case, in the order of bitproof spec cases)", u.path, u.descr,
                       u.cases);
  } else {
    read = fmt::format("{}: raw words, one a case (not a .npy: its word size to fill in)", u.path);
  }
  // An equal claim beside a catalogue recipe needs no intent (docs/user-recipes.md); the others do.
  const std::string intent =
      kind == "equal" && k.card != nullptr
          ? ""
          : fmt::format(", \"intent\": {}", placeholder_text("value, product or zero_point_product"));
  const std::string source = !u.function.empty() ? fmt::format("\"function\": \"{}\"", u.function)
                             : u.descr.empty()   ? fmt::format("\"table\": {}, \"table_format\": {}", quoted(u.path),
                                                               placeholder_text("u8, u16 or u32"))
                                                 : fmt::format("\"table\": {}", quoted(u.path));
  return fmt::format("    // {}\n    {{\"name\": \"{}\", {},\n     \"inputs\": [{}], \"output\": {}{}}}{}\n", read,
                     user_name(u), source, inputs, output, intent, last ? "" : ",");
}

}  // namespace

Expected<std::string> spec_template(const std::string& kind, const std::vector<std::string>& recipes,
                                    const std::string& origin) {
  return spec_template(kind, recipes, {}, origin);
}

Expected<std::string> spec_template(const std::string& kind, const std::vector<std::string>& recipes,
                                    const std::vector<UserStart>& users, const std::string& origin) {
  if (users.empty()) return catalogue_template(kind, recipes, origin);
  // An unknown claim kind or recipe, said as spec new says it without --user.
  if (auto checked = catalogue_template(kind, {}, origin); !checked) return checked.error();
  for (const std::string& r : recipes) {
    if (auto checked = catalogue_template(kind == "equal" ? "exact" : kind, {r}, origin);
        !checked && recipe_by_name(r) == nullptr) {
      return checked.error();
    }
  }
  Known k;
  if (!recipes.empty()) k = {recipe_by_name(recipes.front())->card, recipe_by_name(recipes.front())->card->arity};
  const int arity = k.card ? k.arity : (users.front().function.empty() ? 1 : users.front().arity);
  std::string inputs;
  for (int i = 0; i < arity; ++i) {
    inputs += fmt::format("    {{\"name\": \"{}\", \"format\": {}, \"codes\": {}}}{}\n", input_name(arity, i),
                          k.card ? fmt::format("\"{}\"", spec_of(k.card->inputs[i]).name)
                                 : placeholder_text(fmt::format("input {}'s format (bitproof formats)", i)),
                          k.card ? codes_for(k.card->inputs[i]) : std::string("\"all\""), i + 1 < arity ? "," : "");
  }
  std::string files, entries, list;
  std::uint64_t table_cases = 0;
  for (std::size_t i = 0; i < users.size(); ++i) {
    const UserStart& u = users[i];
    if (!u.function.empty() && files.find(quoted(u.path)) == std::string::npos) {
      files += (files.empty() ? "" : ", ") + quoted(u.path);
    }
    if (u.function.empty() && u.cases > 0) table_cases = u.cases;
    entries += user_entry(u, k, kind, i + 1 == users.size());
    list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", user_name(u));
  }
  for (const std::string& r : recipes) list += fmt::format(", \"{}\"", r);
  if (kind == "equal" && users.size() + recipes.size() < 2) {
    list += ", " +
            placeholder_text("a second recipe to compare with: a catalogue recipe (bitproof recipes --grep) or --user");
  }
  const std::string output =
      k.card ? fmt::format("\"{}\"", spec_of(k.card->output).name)
             : (users.front().function.empty() ? table_output(users.front())
                                               : placeholder_text("the output format (bitproof formats)"));
  const bool holes = (inputs + output + entries + list).find(kPlaceholder) != std::string::npos;
  const std::string sources =
      files.empty() ? ""
                    : fmt::format(
                          "  // Source files, relative to this spec's directory (\"include_dirs\": [...] for more).\n"
                          "  \"sources\": {{\"files\": [{}]}},\n",
                          files);
  std::string text = fmt::format(
      R"(// A bitproof proof spec started from user recipes (docs/user-recipes.md). {}
{{
  "bitproof_spec": 1,
  "name": "my-claim",
  "title": "what this proves",
  "source": "where the kernel code is",
  // The domain is every combination of the inputs' codes, the first input fastest; a user
  // recipe's inputs and output are the spec's. codes: "all", {{"range": [lo, hi]}} or {{"list": [...]}}.
  "inputs": [
{}  ],
  "output": {},
{}  // A user recipe: a function of the ABI (uint32_t codes in, the output's bits out), or a table
  // of the bits a kernel wrote for every case. intent: what it means to compute.
  "user_recipes": [
{}  ],
  "claims": [
    // {}
    {{"claim": "{}", "recipes": [{}]{}}}
  ]
}}
)",
      holes
          ? "Every\n// \"<fill in: ...>\" is what bitproof could not read from the files: `bitproof spec check FILE`\n"
            "// refuses the spec, naming one, until none is left."
          : "What it\n// says was read from the files and the catalogue: check it with `bitproof spec check FILE`.",
      inputs, output, sources, entries, claim_help(kind), kind, list,
      table_cases > 0 ? fmt::format(", \"expected_cases\": {}", table_cases) : "");
  // What the template leaves to fill in is all that may be wrong with it.
  if (auto parsed = parse_spec(text, origin);
      !parsed && parsed.error().message.find("placeholder of bitproof spec new") == std::string::npos) {
    return parsed.error();
  }
  return text;
}

}  // namespace bitproof
