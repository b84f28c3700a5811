#include "proof/spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "json_fields.hpp"
#include "strict_json.hpp"
#include "suggest.hpp"
#include "user/user_recipes.hpp"

namespace bitproof {
namespace {

using nlohmann::json;

using fields::only_keys;
using fields::printable_text;
using fields::string_field;
using fields::unsigned_value;
using fields::valid_name;
using fields::Where;

std::string type_name(const json& j) { return j.type_name(); }

Expected<FormatId> format_field(const Where& w, const json& object, const std::string& parent, const std::string& key) {
  auto name = string_field(w, object, parent, key, true);
  if (!name) return name.error();
  const auto id = format_by_name(*name);
  if (!id) return w.at(parent.empty() ? key : parent + "." + key, unknown_format_text(*name));
  return *id;
}

Expected<Ok> check_code(const Where& w, const InputDomain& in, std::uint64_t code, const std::string& field) {
  const std::uint64_t count = spec_of(in.format).code_count();
  if (code >= count) {
    return w.at(field, fmt::format("code {} is outside {} (codes 0..{})", code, spec_of(in.format).name, count - 1));
  }
  return Ok{};
}

enum class CodeClass : std::uint8_t { kNaN, kInf, kZero, kSubnormal };

std::optional<CodeClass> code_class(std::string_view name) {
  if (name == "nan") return CodeClass::kNaN;
  if (name == "inf") return CodeClass::kInf;
  if (name == "zero") return CodeClass::kZero;
  if (name == "subnormal") return CodeClass::kSubnormal;
  return std::nullopt;
}

bool in_class(FormatId format, std::uint32_t code, CodeClass c) {
  const FormatSpec& f = spec_of(format);
  const Decoded d = decode(f, code);
  switch (c) {
    case CodeClass::kNaN: return d.kind == Kind::kNaN;
    case CodeClass::kInf: return d.kind == Kind::kInf;
    case CodeClass::kZero: return d.kind == Kind::kZero;
    case CodeClass::kSubnormal:
      return d.kind == Kind::kFinite && f.has_subnormals() && !f.is_integer() && ((code >> f.man_bits) & f.exp_field_max()) == 0;
  }
  return false;
}

void fill_range(InputDomain& in, CodeRange r) {
  in.range = r;
  in.span.reset();
  in.excluded.clear();
  in.codes.clear();
}

constexpr const char* kCodesShape = "expected \"all\", {\"range\": [lo, hi]} or {\"list\": [...]} (either may add \"exclude\")";

Expected<Ok> parse_range(const Where& w, const json& r, const std::string& field, InputDomain& in) {
  if (!r.is_array() || r.size() != 2) return w.at(field, "expected [lo, hi]");
  auto lo = unsigned_value(w, r[0], field + "[0]");
  if (!lo) return lo.error();
  auto hi = unsigned_value(w, r[1], field + "[1]");
  if (!hi) return hi.error();
  for (auto [code, name] : {std::pair{*lo, "[0]"}, std::pair{*hi, "[1]"}}) {
    if (auto ok = check_code(w, in, code, field + name); !ok) return ok.error();
  }
  if (*lo > *hi) return w.at(field, fmt::format("reversed interval [{}, {}]", *lo, *hi));
  fill_range(in, {static_cast<std::uint32_t>(*lo), static_cast<std::uint32_t>(*hi)});
  return Ok{};
}

Expected<Ok> parse_list(const Where& w, const json& list, const std::string& field, InputDomain& in) {
  if (!list.is_array()) return w.at(field, "expected an array of codes, found " + type_name(list));
  if (list.empty()) return w.at(field, "empty domain: the list has no codes");
  std::set<std::uint64_t> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", field, i);
    auto code = unsigned_value(w, list[i], item);
    if (!code) return code.error();
    if (auto ok = check_code(w, in, *code, item); !ok) return ok.error();
    if (!seen.insert(*code).second) return w.at(item, fmt::format("code {} listed twice", *code));
    in.codes.push_back(static_cast<std::uint32_t>(*code));
  }
  return Ok{};
}

// "exclude": classes of codes ("nan", "inf", "zero", "subnormal") or codes, taken
// out of the range or list; the input becomes the list of what is left.
Expected<Ok> parse_exclude(const Where& w, const json& v, const std::string& field, InputDomain& in) {
  if (!v.is_array() || v.empty()) return w.at(field, "expected a non-empty array of classes (nan, inf, zero, subnormal) or codes");
  constexpr std::uint64_t kMaxExcludable = std::uint64_t{1} << 24;
  if (in.count() > kMaxExcludable) {
    return w.at(field, fmt::format("{} codes: exclude takes codes out of at most 2^24", in.count()));
  }
  std::set<std::uint32_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", field, i);
    if (v[i].is_number_unsigned()) {
      if (auto ok = check_code(w, in, v[i].get<std::uint64_t>(), item); !ok) return ok.error();
      out.insert(v[i].get<std::uint32_t>());
      in.excluded.push_back(std::to_string(v[i].get<std::uint32_t>()));
      continue;
    }
    const std::string name = v[i].is_string() ? v[i].get<std::string>() : v[i].dump();
    const auto kind = code_class(name);
    if (!kind) {
      return w.at(item, fmt::format("unknown class \"{}\"{} (nan, inf, zero, subnormal, or a code)", name,
                                    did_you_mean(name, {"nan", "inf", "zero", "subnormal"})));
    }
    for (std::uint64_t k = 0; k < in.count(); ++k) {
      if (in_class(in.format, in.code(k), *kind)) out.insert(in.code(k));
    }
    in.excluded.push_back(name);
  }
  std::vector<std::uint32_t> kept;
  for (std::uint64_t k = 0; k < in.count(); ++k) {
    if (!out.count(in.code(k))) kept.push_back(in.code(k));
  }
  if (kept.empty()) return w.at(field, "empty domain: every code is excluded");
  in.span = in.range ? in.range : std::optional<CodeRange>{};
  in.range.reset();
  in.codes = std::move(kept);
  return Ok{};
}

Expected<Ok> parse_codes(const Where& w, const json& v, const std::string& field, InputDomain& in) {
  if (v.is_string()) {
    if (v.get<std::string>() != "all") return w.at(field, kCodesShape);
    in.all = true;
    fill_range(in, {0, static_cast<std::uint32_t>(spec_of(in.format).code_count() - 1)});
    return Ok{};
  }
  const bool has_exclude = v.is_object() && v.contains("exclude");
  if (!v.is_object() || v.size() != 1u + has_exclude || !(v.contains("range") || v.contains("list"))) {
    return w.at(field, kCodesShape);
  }
  auto ok = v.contains("range") ? parse_range(w, v.at("range"), field + ".range", in)
                                : parse_list(w, v.at("list"), field + ".list", in);
  if (!ok || !has_exclude) return ok;
  return parse_exclude(w, v.at("exclude"), field + ".exclude", in);
}

Expected<InputDomain> parse_input(const Where& w, const json& v, const std::string& field) {
  if (!v.is_object()) return w.at(field, "expected an object, found " + type_name(v));
  if (auto ok = only_keys(w, v, field, {"name", "format", "codes"}); !ok) return ok.error();
  InputDomain in;
  auto name = string_field(w, v, field, "name", true);
  if (!name) return name.error();
  if (!valid_name(*name)) return w.at(field + ".name", "expected lower-case letters, digits, '.', '_' or '-'");
  in.name = *name;
  auto format = format_field(w, v, field, "format");
  if (!format) return format.error();
  in.format = *format;
  if (!v.contains("codes")) return w.at(field + ".codes", "missing");
  if (auto ok = parse_codes(w, v.at("codes"), field + ".codes", in); !ok) return ok.error();
  return in;
}

std::string format_list(const std::vector<FormatId>& formats) {
  std::string out = "(";
  for (std::size_t i = 0; i < formats.size(); ++i) {
    out += (i ? ", " : "") + std::string(spec_of(formats[i]).name);
  }
  return out + ")";
}

Expected<const RecipeEntry*> recipe_for(const Where& w, const Spec& spec, const json& v, const std::string& field) {
  if (!v.is_string()) return w.at(field, "expected a recipe name, found " + type_name(v));
  const RecipeEntry* recipe = spec.user ? spec.user->find(v.get<std::string>()) : nullptr;
  if (recipe == nullptr) recipe = recipe_by_name(v.get<std::string>());
  if (recipe == nullptr) {
    std::vector<std::string> names;
    for (const RecipeEntry& r : all_recipes()) names.emplace_back(r.card->name);
    if (spec.user) {
      for (const auto& r : spec.user->recipes) names.push_back(r.name);
    }
    return w.at(field, fmt::format("unknown recipe \"{}\"{} (see `bitproof recipes --grep`, or the spec's user_recipes)",
                                   v.get<std::string>(), did_you_mean(v.get<std::string>(), names)));
  }
  const RecipeCard& card = *recipe->card;
  std::vector<FormatId> takes(card.inputs.begin(), card.inputs.begin() + card.arity);
  std::vector<FormatId> given;
  for (const InputDomain& in : spec.inputs) given.push_back(in.format);
  if (takes != given) {
    return w.at(field, fmt::format("recipe \"{}\" takes {} but the spec's inputs are {}", card.name, format_list(takes),
                                   format_list(given)));
  }
  if (card.output != spec.output) {
    return w.at(field, fmt::format("recipe \"{}\" produces {} but the spec's output is {}", card.name,
                                   spec_of(card.output).name, spec_of(spec.output).name));
  }
  return recipe;
}

Expected<ClaimKind> claim_kind(const Where& w, const std::string& name, const std::string& field) {
  for (ClaimKind k : {ClaimKind::kEqual, ClaimKind::kCorrectlyRounded, ClaimKind::kExact}) {
    if (claim_name(k) == name) return k;
  }
  return w.at(field, fmt::format("unknown claim \"{}\"{} (claims: equal, correctly_rounded, exact)", name,
                                 did_you_mean(name, {"equal", "correctly_rounded", "exact"})));
}

// A user recipe's "intent" is optional where no claim needs it: a correctly_rounded or
// exact claim measures each of its recipes against its intent, and an equal claim's
// counterexamples show the oracle of its first recipe that has one (so one must).
Expected<Ok> check_intents(const Where& w, const Spec& spec, const Claim& claim, const std::string& kind,
                           const std::string& field) {
  if (!spec.user) return Ok{};
  for (std::size_t i = 0; i < claim.recipes.size(); ++i) {
    if (claim.kind != ClaimKind::kEqual && !spec.user->has_intent(claim.recipes[i])) {
      return w.at(fmt::format("{}.recipes[{}]", field, i),
                  fmt::format("claim \"{}\" measures {} against what it means to compute: {}", kind,
                              claim.recipes[i]->card->name, user::missing_intent_text()));
    }
  }
  const bool any = std::any_of(claim.recipes.begin(), claim.recipes.end(),
                               [&](const RecipeEntry* r) { return spec.user->has_intent(r); });
  if (any) return Ok{};
  return w.at(field + ".recipes",
              fmt::format("no recipe of this equal claim has an intent, which its counterexamples are shown against: "
                          "name a catalogue recipe in it, or {} (to one of them)",
                          user::missing_intent_text()));
}

Expected<Claim> parse_claim(const Where& w, const Spec& spec, const json& v, const std::string& field) {
  if (!v.is_object()) return w.at(field, "expected an object, found " + type_name(v));
  if (auto ok = only_keys(w, v, field, {"claim", "recipes", "expected_cases", "rounding", "expect"}); !ok)
    return ok.error();
  Claim claim{};
  auto kind_name = string_field(w, v, field, "claim", true);
  if (!kind_name) return kind_name.error();
  auto kind = claim_kind(w, *kind_name, field + ".claim");
  if (!kind) return kind.error();
  claim.kind = *kind;
  if (!v.contains("recipes")) return w.at(field + ".recipes", "missing");
  const json& recipes = v.at("recipes");
  if (!recipes.is_array())
    return w.at(field + ".recipes", "expected an array of recipe names, found " + type_name(recipes));
  const std::size_t needed = claim.kind == ClaimKind::kEqual ? 2 : 1;
  if (recipes.size() < needed) {
    return w.at(field + ".recipes", fmt::format("claim \"{}\" needs at least {} recipe(s)", *kind_name, needed));
  }
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    auto r = recipe_for(w, spec, recipes[i], fmt::format("{}.recipes[{}]", field, i));
    if (!r) return r.error();
    if (std::find(claim.recipes.begin(), claim.recipes.end(), *r) != claim.recipes.end()) {
      return w.at(fmt::format("{}.recipes[{}]", field, i), "recipe listed twice");
    }
    // The summary line names recipes by label: a user recipe may not share one with
    // another recipe of its claim ("marlin-fp16≡marlin-fp16" would read as a catalogue
    // recipe proven against itself).
    const auto is_user = [&](const RecipeEntry* e) { return spec.user && spec.user->find(std::string(e->card->name)) == e; };
    for (const RecipeEntry* other : claim.recipes) {
      if (other->card->label == (*r)->card->label && (is_user(other) || is_user(*r))) {
        return w.at(fmt::format("{}.recipes[{}]", field, i),
                    fmt::format("{} and {} have the same label \"{}\": give the user recipe a label of its own",
                                other->card->name, (*r)->card->name, (*r)->card->label));
      }
    }
    claim.recipes.push_back(*r);
  }
  if (auto ok = check_intents(w, spec, claim, *kind_name, field); !ok) return ok.error();
  if (v.contains("expected_cases")) {
    auto expected = unsigned_value(w, v.at("expected_cases"), field + ".expected_cases");
    if (!expected) return expected.error();
    if (*expected != spec.case_count()) {
      return w.at(field + ".expected_cases",
                  fmt::format("{} cannot match the domain, which has {} cases", *expected, spec.case_count()));
    }
    claim.expected_cases = *expected;
  }
  if (v.contains("rounding")) {
    auto mode = string_field(w, v, field, "rounding", true);
    if (!mode) return mode.error();
    if (claim.kind != ClaimKind::kCorrectlyRounded)
      return w.at(field + ".rounding", "only a correctly_rounded claim takes a rounding");
    if (*mode == "nearest_even") {
      claim.rounding = oracle::Rounding::kNearestEven;
    } else if (*mode == "toward_zero") {
      claim.rounding = oracle::Rounding::kTowardZero;
    } else {
      return w.at(field + ".rounding", fmt::format("unknown rounding \"{}\" (nearest_even, toward_zero)", *mode));
    }
  }
  if (v.contains("expect")) {
    auto expect = parse_expectation(v.at("expect"), field + ".expect", spec.case_count());
    if (!expect) return Error{fmt::format("{}: {}", w.path, expect.error().message)};
    claim.expect = std::move(*expect);
  }
  return claim;
}

Expected<Ok> parse_header(const Where& w, const json& root, Spec& spec) {
  if (!root.is_object()) return w.at("(top level)", "expected a JSON object, found " + type_name(root));
  if (auto ok = only_keys(w, root, "",
                          {"bitproof_spec", "name", "title", "source", "inputs", "output", "claims", "sources",
                           "user_recipes"});
      !ok) {
    return ok.error();
  }
  if (!root.contains("bitproof_spec")) return w.at("bitproof_spec", "missing (this file is not a bitproof spec)");
  if (auto ok = fields::version_value(w, root.at("bitproof_spec"), "bitproof_spec", kSpecVersion); !ok)
    return ok.error();
  auto name = string_field(w, root, "", "name", true);
  if (!name) return name.error();
  if (!valid_name(*name)) return w.at("name", "expected lower-case letters, digits, '.', '_' or '-'");
  spec.name = *name;
  for (auto [key, out] : {std::pair{"title", &spec.title}, std::pair{"source", &spec.source}}) {
    auto text = string_field(w, root, "", key, false);
    if (!text) return text.error();
    if (!printable_text(*text)) return w.at(key, "a control character (a line break, a tab, ...): write one line");
    *out = *text;
  }
  return Ok{};
}

// The domain's size, the product of the inputs' code counts, must stay within kMaxCases.
Expected<Ok> check_case_count(const Where& w, const Spec& spec, const std::string& field) {
  std::uint64_t cases = 1;
  for (const InputDomain& in : spec.inputs) {
    if (in.count() > kMaxCases / cases) {
      std::string sizes;
      for (const InputDomain& each : spec.inputs) sizes += fmt::format("{}{}", sizes.empty() ? "" : " x ", each.count());
      return w.at(field, fmt::format("the domain has {} cases, more than the 2^62 bitproof counts", sizes));
    }
    cases *= in.count();
  }
  return Ok{};
}

Expected<Ok> parse_inputs(const Where& w, const json& root, Spec& spec) {
  if (!root.contains("inputs")) return w.at("inputs", "missing");
  const json& inputs = root.at("inputs");
  if (!inputs.is_array()) return w.at("inputs", "expected an array, found " + type_name(inputs));
  if (inputs.empty()) return w.at("inputs", "empty domain: no inputs");
  if (inputs.size() > static_cast<std::size_t>(kMaxArity))
    return w.at("inputs", fmt::format("at most {} inputs", kMaxArity));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto in = parse_input(w, inputs[i], fmt::format("inputs[{}]", i));
    if (!in) return in.error();
    if (spec.input_index(in->name)) return w.at(fmt::format("inputs[{}].name", i), "name used twice");
    spec.inputs.push_back(std::move(*in));
  }
  return check_case_count(w, spec, "inputs");
}

}  // namespace

std::uint64_t Spec::case_count() const { return bitproof::case_count(inputs); }

std::vector<const RecipeEntry*> Spec::recipes() const {
  std::vector<const RecipeEntry*> all;
  for (const Claim& c : claims) {
    for (const RecipeEntry* r : c.recipes) {
      if (std::find(all.begin(), all.end(), r) == all.end()) all.push_back(r);
    }
  }
  return all;
}

std::optional<std::size_t> Spec::input_index(std::string_view name) const {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name == name) return i;
  }
  return std::nullopt;
}

namespace {

// The first string that starts with kPlaceholder (document order of keys as
// nlohmann holds them: sorted), its field, and how many there are.
void find_placeholders(const json& j, const std::string& field, std::string& first, std::string& value, int& count) {
  if (j.is_string() && j.get<std::string>().starts_with(kPlaceholder)) {
    if (count++ == 0) first = field, value = j.get<std::string>();
  } else if (j.is_object()) {
    for (const auto& [key, v] : j.items()) find_placeholders(v, fields::join(field, key), first, value, count);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      find_placeholders(j[i], fmt::format("{}[{}]", field, i), first, value, count);
  }
}

}  // namespace

Expected<Spec> parse_spec(const std::string& text, const std::string& path) {
  const Where w{path};
  auto parsed = parse_json_strict(text, path, "", true);
  if (!parsed) return parsed.error();
  const json& root = *parsed;
  std::string first, value;
  if (int count = 0; find_placeholders(root, "", first, value, count), count > 0) {
    return w.at(first, fmt::format("\"{}\" is a placeholder of bitproof spec new: fill it in ({} placeholder{} left)",
                                   printable(value), count, count == 1 ? "" : "s"));
  }
  Spec spec;
  spec.path = path;
  if (auto ok = parse_header(w, root, spec); !ok) return ok.error();
  if (auto ok = parse_inputs(w, root, spec); !ok) return ok.error();
  auto user = user::parse_user_recipes(root, path);
  if (!user) return user.error();
  spec.user = std::move(*user);
  if (spec.user) spec.user->own_domain = spec.inputs;  // what its output tables cover
  auto output = format_field(w, root, "", "output");
  if (!output) return output.error();
  spec.output = *output;
  if (!root.contains("claims")) return w.at("claims", "missing");
  const json& claims = root.at("claims");
  if (!claims.is_array()) return w.at("claims", "expected an array, found " + type_name(claims));
  if (claims.empty()) return w.at("claims", "no claims");
  for (std::size_t i = 0; i < claims.size(); ++i) {
    auto claim = parse_claim(w, spec, claims[i], fmt::format("claims[{}]", i));
    if (!claim) return claim.error();
    spec.claims.push_back(std::move(*claim));
  }
  return spec;
}

Expected<Spec> load_spec(const std::string& path) {
  auto text = read_input_file(path, "the spec file", kMaxSpecBytes);
  if (!text) return text.error();
  auto spec = parse_spec(*text, path);
  if (spec) return spec;
  // Another kind of bitproof file: what it is and which commands take it.
  if (const std::string other = other_file_kind(*text, {"bitproof_spec"}); !other.empty()) {
    return Error{fmt::format("{}: not a proof spec (\"bitproof_spec\"): it is {}", path, other)};
  }
  return spec;
}

namespace {

// The input an override replaces: it must exist, and the spec must read no output tables.
Expected<InputDomain*> overridable_input(Spec& spec, const std::string& input_name, const Where& w) {
  const auto index = spec.input_index(input_name);
  if (!index) return w.at(input_name, fmt::format("the spec {} has no input named \"{}\"", spec.path, input_name));
  if (spec.user && spec.user->has_tables()) {
    for (std::size_t i = 0; i < spec.user->recipes.size(); ++i) {
      if (spec.user->recipes[i].table.empty()) continue;
      return w.at(input_name, fmt::format("the spec {} reads output tables (user_recipes[{}].table: {}), written for its "
                                          "own domain: write a spec for the codes you want and a table for it",
                                          spec.path, i, spec.user->recipes[i].table));
    }
  }
  return &spec.inputs[*index];
}

// The expected counts were written for the spec's own domain, which the user has just replaced.
Expected<Ok> finish_override(Spec& spec, const std::string& input_name, const Where& w) {
  if (auto ok = check_case_count(w, spec, input_name); !ok) return ok.error();
  for (Claim& c : spec.claims) {
    c.expected_cases.reset();
    c.expect.reset();
  }
  return Ok{};
}

}  // namespace

Expected<Ok> override_range(Spec& spec, const std::string& input_name, CodeRange range, const std::string& origin) {
  const Where w{origin};
  auto in = overridable_input(spec, input_name, w);
  if (!in) return in.error();
  for (std::uint32_t code : {range.lo, range.hi}) {
    if (auto ok = check_code(w, **in, code, input_name); !ok) return ok.error();
  }
  if (range.lo > range.hi) return w.at(input_name, fmt::format("reversed interval {}:{}", range.lo, range.hi));
  (*in)->all = range.lo == 0 && range.hi + std::uint64_t{1} == spec_of((*in)->format).code_count();
  fill_range(**in, range);
  return finish_override(spec, input_name, w);
}

Expected<Ok> override_codes(Spec& spec, const std::string& input_name, std::vector<std::uint32_t> codes,
                            const std::string& origin) {
  const Where w{origin};
  auto in = overridable_input(spec, input_name, w);
  if (!in) return in.error();
  std::sort(codes.begin(), codes.end());
  codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
  if (codes.empty()) return w.at(input_name, "empty domain: no codes");
  for (std::uint32_t code : codes) {
    if (auto ok = check_code(w, **in, code, input_name); !ok) return ok.error();
  }
  (*in)->all = false;
  (*in)->range.reset();
  (*in)->codes = std::move(codes);
  return finish_override(spec, input_name, w);
}

Expected<CodeRange> parse_range_flag(const std::string& text, const std::string& flag) {
  const auto colon = text.find(':');
  auto parse = [](std::string_view s) -> std::optional<std::uint32_t> {
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      s.remove_prefix(2);
      base = 16;
    }
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
  };
  if (colon == std::string::npos) return Error{fmt::format("{}: expected LO:HI, got \"{}\"", flag, text)};
  const auto lo = parse(std::string_view(text).substr(0, colon));
  const auto hi = parse(std::string_view(text).substr(colon + 1));
  if (!lo || !hi) return Error{fmt::format("{}: expected LO:HI with integer codes, got \"{}\"", flag, text)};
  return CodeRange{*lo, *hi};
}

nlohmann::ordered_json spec_to_json(const Spec& spec) {
  nlohmann::ordered_json j;
  j["bitproof_spec"] = kSpecVersion;
  j["name"] = spec.name;
  if (!spec.title.empty()) j["title"] = spec.title;
  if (!spec.source.empty()) j["source"] = spec.source;
  j["inputs"] = nlohmann::ordered_json::array();
  for (const InputDomain& in : spec.inputs) {
    nlohmann::ordered_json codes;
    if (in.all) {
      codes = "all";
    } else if (in.range) {
      codes["range"] = {in.range->lo, in.range->hi};
    } else if (in.span) {  // a range with codes excluded: as written
      codes["range"] = {in.span->lo, in.span->hi};
      nlohmann::ordered_json excluded = nlohmann::ordered_json::array();
      for (const std::string& e : in.excluded) {
        if (e.find_first_not_of("0123456789") == std::string::npos) {
          excluded.push_back(std::stoul(e));
        } else {
          excluded.push_back(e);
        }
      }
      codes["exclude"] = excluded;
    } else {
      codes["list"] = in.codes;
    }
    j["inputs"].push_back({{"name", in.name}, {"format", spec_of(in.format).name}, {"codes", codes}});
  }
  j["output"] = spec_of(spec.output).name;
  if (spec.user) user::user_recipes_json(*spec.user, j);
  j["claims"] = nlohmann::ordered_json::array();
  for (const Claim& c : spec.claims) {
    nlohmann::ordered_json claim;
    claim["claim"] = claim_name(c.kind);
    claim["recipes"] = nlohmann::ordered_json::array();
    for (const RecipeEntry* r : c.recipes) claim["recipes"].push_back(r->card->name);
    if (c.expected_cases) claim["expected_cases"] = *c.expected_cases;
    if (c.kind == ClaimKind::kCorrectlyRounded) claim["rounding"] = rounding_name(c.rounding);
    if (c.expect) claim["expect"] = expectation_json(*c.expect);
    j["claims"].push_back(claim);
  }
  return j;
}

std::string_view claim_name(ClaimKind kind) {
  switch (kind) {
    case ClaimKind::kEqual: return "equal";
    case ClaimKind::kCorrectlyRounded: return "correctly_rounded";
    case ClaimKind::kExact: return "exact";
  }
  return "?";
}

std::string_view rounding_name(oracle::Rounding mode) {
  return mode == oracle::Rounding::kNearestEven ? "nearest_even" : "toward_zero";
}

}  // namespace bitproof
