#include "user/user_recipes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "format/format.hpp"
#include "proof/spec.hpp"
#include "strict_json.hpp"

namespace bitproof::user {
namespace {

using json = nlohmann::json;

struct Where {
  const std::string& path;
  [[nodiscard]] Error at(const std::string& field, const std::string& what) const {
    return Error{fmt::format("{}: {}: {}", path, field, what)};
  }
};

bool identifier(const std::string& s) {  // a C++ function name, namespaces allowed: ns::f
  if (s.empty() || s.front() == ':' || s.back() == ':' || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
  });
}

bool recipe_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

// A relative path inside the spec's world: one line, not absolute (a report recorded elsewhere must resolve it).
bool relative_path(const std::string& s) {
  return !s.empty() && s.front() != '/' &&
         std::none_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

Expected<std::vector<std::string>> paths(const Where& w, const json& v, const std::string& field, bool required) {
  if (!v.is_array()) return w.at(field, "expected an array of relative paths");
  if (required && v.empty()) return w.at(field, "no file: name the source files that define the functions");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || !relative_path(v[i].get<std::string>())) {
      return w.at(fmt::format("{}[{}]", field, i), "expected a path relative to the spec's directory");
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Expected<Intent> intent_of(const Where& w, const json& v, const std::string& field) {
  const std::string name = v.is_string() ? v.get<std::string>() : "";
  if (name == "value") return Intent::kValue;
  if (name == "product") return Intent::kProduct;
  if (name == "zero_point_product") return Intent::kZeroPointProduct;
  return w.at(field, "expected \"value\", \"product\" or \"zero_point_product\"");
}

Expected<FormatId> format_of(const Where& w, const json& v, const std::string& field) {
  const auto id = v.is_string() ? format_by_name(v.get<std::string>()) : std::nullopt;
  if (!id) return w.at(field, fmt::format("unknown format {} (see `bitproof formats`)", printable(v.dump())));
  return *id;
}

Expected<Ok> parse_recipe(const Where& w, const json& v, const std::string& field, UserRecipes& user) {
  if (!v.is_object()) return w.at(field, "expected an object");
  for (const auto& [key, value] : v.items()) {
    static const std::set<std::string> keys = {"name", "label", "function", "inputs", "output", "intent"};
    if (!keys.contains(key)) return w.at(field + "." + printable(key), "unknown key");
  }
  for (const char* key : {"name", "function", "inputs", "output", "intent"}) {
    if (!v.contains(key)) return w.at(fmt::format("{}.{}", field, key), "missing");
  }
  UserRecipe r;
  if (!v["name"].is_string() || !recipe_name(v["name"].get<std::string>())) {
    return w.at(field + ".name", "expected lower-case letters, digits, '.', '_' or '-'");
  }
  r.name = v["name"].get<std::string>();
  if (recipe_by_name(r.name) != nullptr || user.find(r.name) != nullptr) {
    return w.at(field + ".name", fmt::format("\"{}\" is already a recipe's name", r.name));
  }
  if (!v["function"].is_string() || !identifier(v["function"].get<std::string>())) {
    return w.at(field + ".function", "expected a C++ function name");
  }
  r.function = v["function"].get<std::string>();
  r.label = r.name.substr(r.name.rfind('.') + 1);
  if (v.contains("label")) {
    if (!v["label"].is_string() || !recipe_name(v["label"].get<std::string>())) {
      return w.at(field + ".label", "expected lower-case letters, digits, '.', '_' or '-'");
    }
    r.label = v["label"].get<std::string>();
  }
  const json& inputs = v["inputs"];
  if (!inputs.is_array() || inputs.empty() || inputs.size() > static_cast<std::size_t>(kMaxArity)) {
    return w.at(field + ".inputs", fmt::format("expected 1 to {} input formats", kMaxArity));
  }
  r.card.arity = static_cast<int>(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto f = format_of(w, inputs[i], fmt::format("{}.inputs[{}]", field, i));
    if (!f) return f.error();
    r.card.inputs[i] = *f;
  }
  auto output = format_of(w, v["output"], field + ".output");
  if (!output) return output.error();
  r.card.output = *output;
  auto intent = intent_of(w, v["intent"], field + ".intent");
  if (!intent) return intent.error();
  r.card.intent = *intent;
  if ((*intent == Intent::kProduct && r.card.arity < 2) || (*intent == Intent::kZeroPointProduct && r.card.arity < 3)) {
    return w.at(field + ".intent", fmt::format("\"{}\" needs more inputs than {}", v["intent"].get<std::string>(),
                                               r.card.arity));
  }
  r.intent_name = v["intent"].get<std::string>();
  user.recipes.push_back(std::move(r));
  UserRecipe& kept = user.recipes.back();
  std::string files;
  for (const std::string& f : user.files) files += (files.empty() ? "" : ", ") + f;
  kept.source = fmt::format("{}: {}", files, kept.function);
  kept.card.name = kept.name;
  kept.card.label = kept.label;
  kept.card.summary = kept.source;
  kept.card.source = kept.source;
  kept.card.role = Role::kUser;
  kept.entry = RecipeEntry{&kept.card, nullptr, nullptr, static_cast<int>(user.recipes.size() - 1)};
  return Ok{};
}

// What identifies a domain: each input's format and codes.
std::string fingerprint(const Spec& domain) {
  std::string out;
  for (const InputDomain& in : domain.inputs) {
    out += fmt::format("{}:", static_cast<int>(in.format));
    if (in.range) {
      out += fmt::format("{}-{};", in.range->lo, in.range->hi);
    } else {
      for (std::uint32_t c : in.codes) out += fmt::format("{},", c);
      out += ';';
    }
  }
  return out;
}

}  // namespace

const RecipeEntry* UserRecipes::find(std::string_view name) const {
  for (const UserRecipe& r : recipes) {
    if (r.name == name) return &r.entry;
  }
  return nullptr;
}

Expected<Ok> UserRecipes::evaluate(const Spec& domain) {
  const std::string key = fingerprint(domain);
  if (tables_.contains(key) || cpu_missing_.contains(key)) return Ok{};
  auto made = make_tables(domain, key);
  if (made || !gpu_runs) return made;
  cpu_missing_[key] = made.error().message;  // the GPU runs them alone; its report says why
  return Ok{};
}

Expected<Ok> UserRecipes::make_tables(const Spec& domain, const std::string& key) {
  const std::uint64_t words = domain.case_count() * recipes.size();
  if (domain.case_count() > kMaxTableWords || words > kMaxTableWords) {
    return Error{fmt::format("{}: user_recipes: {} cases x {} user recipes: the CPU path evaluates at most 2^26 "
                             "(a table of each function's bits); narrow the domain",
                             spec_path, domain.case_count(), recipes.size())};
  }
  if (!build_) {
    auto built = build_worker(*this);
    if (!built) return built.error();
    build_ = std::move(*built);
  }
  auto tables = run_worker(*build_, *this, domain);
  if (!tables) return tables.error();
  tables_[key] = std::move(*tables);
  return Ok{};
}

std::string UserRecipes::cpu_witness_missing(const Spec& domain) const {
  const auto it = cpu_missing_.find(fingerprint(domain));
  return it == cpu_missing_.end() ? std::string() : it->second;
}

Expected<std::vector<SourceDigest>> UserRecipes::source_digests() const {
  if (build_) return build_->sources;
  return preprocessed_sources(*this);
}

const std::vector<std::uint32_t>* UserRecipes::table(const Spec& domain, int slot) const {
  const auto it = tables_.find(fingerprint(domain));
  if (it == tables_.end() || slot < 0 || static_cast<std::size_t>(slot) >= it->second.size()) return nullptr;
  return &it->second[static_cast<std::size_t>(slot)];
}

Expected<std::shared_ptr<UserRecipes>> parse_user_recipes(const json& root, const std::string& spec_path) {
  const Where w{spec_path};
  const bool has_sources = root.contains("sources"), has_recipes = root.contains("user_recipes");
  if (!has_sources && !has_recipes) return std::shared_ptr<UserRecipes>{};
  if (!has_sources) return w.at("sources", "missing: user_recipes need the files that define them");
  if (!has_recipes) return w.at("user_recipes", "missing: sources name files, but no user recipe uses them");
  auto user = std::make_shared<UserRecipes>();
  user->spec_path = spec_path;
  user->base_dir = std::filesystem::path(spec_path).parent_path().string();
  const json& sources = root["sources"];
  if (!sources.is_object()) return w.at("sources", "expected {\"files\": [...], \"include_dirs\": [...]}");
  for (const auto& [key, value] : sources.items()) {
    if (key != "files" && key != "include_dirs" && key != "fmad") {
      return w.at("sources." + printable(key), "unknown key");
    }
  }
  if (!sources.contains("files")) return w.at("sources.files", "missing");
  auto files = paths(w, sources["files"], "sources.files", true);
  if (!files) return files.error();
  user->files = std::move(*files);
  if (sources.contains("include_dirs")) {
    auto dirs = paths(w, sources["include_dirs"], "sources.include_dirs", false);
    if (!dirs) return dirs.error();
    user->include_dirs = std::move(*dirs);
  }
  if (sources.contains("fmad")) {
    if (!sources["fmad"].is_boolean()) {
      return w.at("sources.fmad", "expected true (the GPU compile may contract a*b+c into FMA, nvcc's default) or false");
    }
    user->fmad = sources["fmad"].get<bool>();
  }
  const json& list = root["user_recipes"];
  if (!list.is_array() || list.empty()) return w.at("user_recipes", "expected a non-empty array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (auto ok = parse_recipe(w, list[i], fmt::format("user_recipes[{}]", i), *user); !ok) return ok.error();
  }
  return user;
}

void user_recipes_json(const UserRecipes& user, nlohmann::ordered_json& spec) {
  nlohmann::ordered_json sources;
  sources["files"] = user.files;
  if (!user.include_dirs.empty()) sources["include_dirs"] = user.include_dirs;
  if (!user.fmad) sources["fmad"] = false;
  spec["sources"] = sources;
  spec["user_recipes"] = nlohmann::ordered_json::array();
  for (const UserRecipe& r : user.recipes) {
    nlohmann::ordered_json j;
    j["name"] = r.name;
    if (r.label != r.name.substr(r.name.rfind('.') + 1)) j["label"] = r.label;
    j["function"] = r.function;
    j["inputs"] = nlohmann::ordered_json::array();
    for (int i = 0; i < r.card.arity; ++i) j["inputs"].push_back(spec_of(r.card.inputs[i]).name);
    j["output"] = spec_of(r.card.output).name;
    j["intent"] = r.intent_name;
    spec["user_recipes"].push_back(j);
  }
}

}  // namespace bitproof::user
