#include "user/user_recipes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "format/format.hpp"
#include "json_fields.hpp"
#include "strict_json.hpp"
#include "user/user_code.hpp"

namespace bitproof::user {
namespace {

using json = nlohmann::json;

using fields::Where;

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

// The values "intent" takes, for messages.
constexpr const char* kIntentNames = "\"value\", \"product\", \"zero_point_product\"";

Expected<Intent> intent_of(const Where& w, const json& v, const std::string& field) {
  const std::string name = v.is_string() ? v.get<std::string>() : "";
  if (name == "value") return Intent::kValue;
  if (name == "product") return Intent::kProduct;
  if (name == "zero_point_product") return Intent::kZeroPointProduct;
  return w.at(field, fmt::format("expected one of {}", kIntentNames));
}

Expected<FormatId> format_of(const Where& w, const json& v, const std::string& field) {
  const auto id = v.is_string() ? format_by_name(v.get<std::string>()) : std::nullopt;
  if (!id && v.is_string()) return w.at(field, unknown_format_text(v.get<std::string>()));
  if (!id) return w.at(field, fmt::format("unknown format {} (see `bitproof formats`)", printable(v.dump())));
  return *id;
}

// "function" (with the spec's sources) or "table" (and "table_format"): exactly one.
Expected<Ok> parse_origin(const Where& w, const json& v, const std::string& field, UserRecipe& r) {
  if (v.contains("function") == v.contains("table")) {
    return w.at(field, "give \"function\" (a function of the spec's sources) or \"table\" (a file of output bits), "
                       "one of them");
  }
  if (v.contains("function")) {
    if (v.contains("table_format")) return w.at(field + ".table_format", "only a table recipe takes a table_format");
    if (!v["function"].is_string() || !identifier(v["function"].get<std::string>())) {
      return w.at(field + ".function", "expected a C++ function name");
    }
    r.function = v["function"].get<std::string>();
    return Ok{};
  }
  if (!v["table"].is_string() || !relative_path(v["table"].get<std::string>())) {
    return w.at(field + ".table", "expected a path relative to the spec's directory");
  }
  r.table = v["table"].get<std::string>();
  if (!v.contains("table_format")) return Ok{};
  const auto format = v["table_format"].is_string() ? table_format_by_name(v["table_format"].get<std::string>())
                                                    : std::nullopt;
  if (!format) return w.at(field + ".table_format", "expected \"npy\", \"u8\", \"u16\" or \"u32\"");
  r.table_format = *format;
  r.table_format_given = true;
  return Ok{};
}

// The table's format, checked against the output now that it is known.
Expected<Ok> check_table_format(const Where& w, const std::string& field, UserRecipe& r) {
  if (!r.table_format_given) r.table_format = default_table_format(r.table, r.card.output);
  const int width = raw_word_bytes(r.table_format);
  const FormatSpec& out = spec_of(r.card.output);
  if (width != 0 && width * 8 < out.bits) {
    return w.at(field + ".table_format",
                fmt::format("{} words cannot hold {}'s {} bits", table_format_name(r.table_format), out.name, out.bits));
  }
  return Ok{};
}

// A user recipe's name names it alone: no catalogue recipe has it as its name
// or label. (Its label may be a catalogue recipe's label, "plain" or "folded",
// but not that of another recipe in one of its claims: proof/spec.cpp.)
Expected<Ok> check_distinct(const Where& w, const std::string& field, const UserRecipe& r) {
  for (const RecipeEntry& e : all_recipes()) {
    if (r.name == e.card->name || r.name == e.card->label) {
      return w.at(field, fmt::format("\"{}\" is the {} of the catalogue recipe {}: give the user recipe a name of its "
                                     "own",
                                     r.name, r.name == e.card->name ? "name" : "label", e.card->name));
    }
  }
  return Ok{};
}

Expected<Ok> parse_recipe(const Where& w, const json& v, const std::string& field, UserRecipes& user) {
  if (!v.is_object()) return w.at(field, "expected an object");
  for (const auto& [key, value] : v.items()) {
    static const std::set<std::string> keys = {"name",   "label",  "function", "table",
                                               "table_format", "inputs", "output",   "intent"};
    if (!keys.contains(key)) return w.at(field + "." + printable(key), "unknown key");
  }
  for (const char* key : {"name", "inputs", "output"}) {
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
  if (auto ok = parse_origin(w, v, field, r); !ok) return ok.error();
  r.label = r.name.substr(r.name.rfind('.') + 1);
  if (v.contains("label")) {
    if (!v["label"].is_string() || !recipe_name(v["label"].get<std::string>())) {
      return w.at(field + ".label", "expected lower-case letters, digits, '.', '_' or '-'");
    }
    r.label = v["label"].get<std::string>();
  }
  if (auto ok = check_distinct(w, v.contains("label") ? field + ".label" : field + ".name", r); !ok) return ok.error();
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
  if (v.contains("intent")) {  // optional: proof/spec.cpp requires it where a claim needs it
    auto intent = intent_of(w, v["intent"], field + ".intent");
    if (!intent) return intent.error();
    r.card.intent = *intent;
    if ((*intent == Intent::kProduct && r.card.arity < 2) ||
        (*intent == Intent::kZeroPointProduct && r.card.arity < 3)) {
      return w.at(field + ".intent",
                  fmt::format("\"{}\" needs more inputs than {}", v["intent"].get<std::string>(), r.card.arity));
    }
    r.intent_name = v["intent"].get<std::string>();
  }
  if (!r.table.empty()) {
    if (auto ok = check_table_format(w, field, r); !ok) return ok.error();
  }
  user.recipes.push_back(std::move(r));
  UserRecipe& kept = user.recipes.back();
  std::string files;
  for (const std::string& f : user.files) files += (files.empty() ? "" : ", ") + f;
  kept.source = kept.table.empty() ? fmt::format("{}: {}", files, kept.function)
                                   : fmt::format("table {} ({})", kept.table, table_format_name(kept.table_format));
  kept.card.name = kept.name;
  kept.card.label = kept.label;
  kept.card.summary = kept.source;
  kept.card.source = kept.source;
  kept.card.role = Role::kUser;
  kept.entry = RecipeEntry{&kept.card, nullptr, nullptr, static_cast<int>(user.recipes.size() - 1)};
  return Ok{};
}

// What identifies a domain: each input's format and codes.
std::string fingerprint(std::span<const InputDomain> inputs) {
  std::string out;
  for (const InputDomain& in : inputs) {
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

bool UserRecipes::has_intent(const RecipeEntry* e) const {
  for (const UserRecipe& r : recipes) {
    if (&r.entry == e) return !r.intent_name.empty();
  }
  return true;  // a catalogue recipe
}

std::string missing_intent_text() { return fmt::format("give the user recipe an \"intent\", one of {}", kIntentNames); }

bool UserRecipes::has_tables() const {
  return std::any_of(recipes.begin(), recipes.end(), [](const UserRecipe& r) { return !r.table.empty(); });
}

std::size_t UserRecipes::function_count() const {
  return static_cast<std::size_t>(
      std::count_if(recipes.begin(), recipes.end(), [](const UserRecipe& r) { return r.table.empty(); }));
}

double UserRecipes::worker_time_limit(std::uint64_t cases) const {
  if (user_timeout_s > 0) return user_timeout_s;
  return kWorkerBaseSeconds +
         kWorkerSecondsPerEvaluation * static_cast<double>(cases) * static_cast<double>(function_count());
}

std::string compile_timeout_message(const UserRecipes& user) {
  std::string files;
  for (const std::string& f : user.files) files += (files.empty() ? "" : ", ") + printable(f);
  return fmt::format("{}: sources: compiling {} took longer than the {:g} s limit (--compile-timeout SECONDS sets it)",
                     user.spec_path, files, user.compile_timeout_s);
}

std::string worker_timeout_message(const UserRecipes& user, std::uint64_t cases, double limit, std::string_view where) {
  std::string recipes;
  for (std::size_t i = 0; i < user.recipes.size(); ++i) {
    const UserRecipe& r = user.recipes[i];
    if (r.function.empty()) continue;
    recipes += fmt::format("{}user_recipes[{}] {} ({})", recipes.empty() ? "" : ", ", i, r.name, r.function);
  }
  return fmt::format("{}: {}: did not return{} within the {:g} s limit over {} cases (--user-timeout SECONDS sets it)",
                     user.spec_path, recipes, where, limit, cases);
}

std::vector<std::string> UserRecipes::input_paths() const {
  const std::filesystem::path dir = base_dir.empty() ? std::filesystem::path(".") : std::filesystem::path(base_dir);
  std::vector<std::string> out;
  for (const std::string& f : files) out.push_back((dir / f).string());
  for (const UserRecipe& r : recipes) {
    if (!r.table.empty()) out.push_back((dir / r.table).string());
  }
  return out;
}

std::vector<TableDigest> UserRecipes::table_digests() const {
  std::vector<TableDigest> out;
  for (const auto& [slot, t] : read_) {
    const UserRecipe& r = recipes[static_cast<std::size_t>(slot)];
    out.push_back({r.name, r.table, t.layout, t.bytes, t.sha256});
  }
  return out;
}

Expected<Ok> UserRecipes::read_tables() {
  std::uint64_t cases = 1;
  for (const InputDomain& in : own_domain) cases *= in.count();
  if (cases > kMaxTableWords) {
    return Error{fmt::format("{}: user_recipes: the spec's domain has {} cases; an output table holds at most 2^26",
                             spec_path, cases)};
  }
  const std::filesystem::path dir = base_dir.empty() ? std::filesystem::path(".") : std::filesystem::path(base_dir);
  for (std::size_t i = 0; i < recipes.size(); ++i) {
    const UserRecipe& r = recipes[i];
    if (r.table.empty() || read_.contains(static_cast<int>(i))) continue;
    auto t = read_table((dir / r.table).string(), r.table_format, r.card.output, cases);
    if (!t) return Error{fmt::format("{}: user_recipes[{}].table: {}", spec_path, i, t.error().message)};
    read_.emplace(static_cast<int>(i), std::move(*t));
  }
  return Ok{};
}

// The table of `r` over `domain`: each case's word found at that case's codes in the
// spec's own domain, which must hold every code of `domain`.
Expected<std::vector<std::uint32_t>> UserRecipes::table_over(const UserRecipe& r, std::span<const InputDomain> domain) const {
  const int slot = r.entry.user_slot;
  const std::vector<std::uint32_t>& own = read_.at(slot).words;
  if (fingerprint(domain) == fingerprint(own_domain)) return own;
  // Per input: each code of the swept domain's position in the spec's own domain.
  std::vector<std::vector<std::uint64_t>> position(domain.size());
  for (std::size_t i = 0; i < domain.size(); ++i) {
    const InputDomain& mine = own_domain[i];
    std::unordered_map<std::uint32_t, std::uint64_t> where;
    for (std::uint64_t k = 0; k < mine.count(); ++k) where.emplace(mine.code(k), k);
    for (std::uint64_t k = 0; k < domain[i].count(); ++k) {
      const std::uint32_t code = domain[i].code(k);
      const auto it = where.find(code);
      if (it == where.end()) {
        return Error{fmt::format("{}: user_recipes[{}].table: {} holds the spec's own domain only; this sweep needs "
                                 "{} code {} (0x{:X}), which it lacks: a table cannot be widened (write a spec for "
                                 "that domain and run the kernel on its `bitproof spec cases`)",
                                 spec_path, slot, r.table, mine.name, code, code)};
      }
      position[i].push_back(it->second);
    }
  }
  std::vector<std::uint32_t> out(case_count(domain));
  for (std::uint64_t n = 0; n < out.size(); ++n) {
    std::uint64_t rest = n, index = 0, stride = 1;
    for (std::size_t i = 0; i < position.size(); ++i) {
      const std::uint64_t count = domain[i].count();
      index += stride * position[i][rest % count];
      rest /= count;
      stride *= own_domain[i].count();
    }
    out[n] = own[index];
  }
  return out;
}

Expected<Ok> UserRecipes::evaluate(std::span<const InputDomain> domain) {
  if (auto refused = refuse_user_code(*this)) return *refused;  // before the GPU fallback below: never swallowed
  const std::string key = fingerprint(domain);
  if (tables_.contains(key) || cpu_missing_.contains(key)) return Ok{};
  auto made = make_tables(domain, key);
  if (made || !gpu_runs) return made;
  cpu_missing_[key] = made.error().message;  // the GPU runs them alone; its report says why
  return Ok{};
}

Expected<Ok> UserRecipes::make_tables(std::span<const InputDomain> domain, const std::string& key) {
  const std::uint64_t words = case_count(domain) * recipes.size();
  if (case_count(domain) > kMaxTableWords || words > kMaxTableWords) {
    return Error{fmt::format("{}: user_recipes: {} cases x {} user recipes: the CPU path evaluates at most 2^26 "
                             "(a table of each function's bits); narrow the domain",
                             spec_path, case_count(domain), recipes.size())};
  }
  std::vector<std::vector<std::uint32_t>> by_slot(recipes.size());
  if (function_count() > 0) {
    if (build_error_) return *build_error_;
    if (!build_) {
      auto built = build_worker(*this);
      if (!built) return built.error();
      build_ = std::move(*built);
    }
    auto ran = run_worker(*build_, *this, domain);  // the functions' tables, in recipe order
    if (!ran) return ran.error();
    std::size_t next = 0;
    for (std::size_t i = 0; i < recipes.size(); ++i) {
      if (recipes[i].table.empty()) by_slot[i] = std::move((*ran)[next++]);
    }
  }
  if (has_tables()) {
    if (auto ok = read_tables(); !ok) return ok.error();
    for (std::size_t i = 0; i < recipes.size(); ++i) {
      if (recipes[i].table.empty()) continue;
      auto t = table_over(recipes[i], domain);
      if (!t) return t.error();
      by_slot[i] = std::move(*t);
    }
  }
  tables_[key] = std::move(by_slot);
  return Ok{};
}

std::string UserRecipes::cpu_witness_missing(std::span<const InputDomain> domain) const {
  const auto it = cpu_missing_.find(fingerprint(domain));
  return it == cpu_missing_.end() ? std::string() : it->second;
}

Expected<std::vector<SourceDigest>> UserRecipes::source_digests() const {
  if (build_) return build_->sources;
  if (!listed_) {
    auto listed = preprocessed_dependencies(*this);
    if (!listed) return listed.error();
    listed_ = std::move(*listed);
  }
  return listed_->sources;
}

Expected<std::vector<std::string>> UserRecipes::read_paths(bool build_host) {
  std::vector<std::string> paths = input_paths();
  if (function_count() == 0) return paths;
  if (build_host && !build_ && !build_error_) {
    auto built = build_worker(*this);
    if (built) {
      build_ = std::move(*built);
    } else {
      build_error_ = built.error();
    }
  }
  if (!build_) {
    if (auto s = source_digests(); !s) return build_error_ ? *build_error_ : s.error();  // the build's words first
  }
  const std::vector<std::string>& compiled = build_ ? build_->read : listed_->read;
  paths.insert(paths.end(), compiled.begin(), compiled.end());
  return paths;
}

Expected<Ok> UserRecipes::check_inputs(bool compile) {
  if (has_tables()) {
    if (auto ok = read_tables(); !ok) return ok.error();
  }
  if (function_count() == 0) return Ok{};
  if (auto ok = source_files_exist(*this); !ok) return ok.error();
  if (!compile) return Ok{};
  if (auto paths = read_paths(true); !paths) return paths.error();
  if (build_error_) return *build_error_;
  return Ok{};
}

const std::vector<std::uint32_t>* UserRecipes::table(std::span<const InputDomain> domain, int slot) const {
  const auto it = tables_.find(fingerprint(domain));
  if (it == tables_.end() || slot < 0 || static_cast<std::size_t>(slot) >= it->second.size()) return nullptr;
  return &it->second[static_cast<std::size_t>(slot)];
}

Expected<Ok> parse_sources(const Where& w, const json& sources, UserRecipes& user) {
  if (!sources.is_object()) return w.at("sources", "expected {\"files\": [...], \"include_dirs\": [...]}");
  for (const auto& [key, value] : sources.items()) {
    if (key != "files" && key != "include_dirs" && key != "fmad") {
      return w.at("sources." + printable(key), "unknown key");
    }
  }
  if (!sources.contains("files")) return w.at("sources.files", "missing");
  auto files = paths(w, sources["files"], "sources.files", true);
  if (!files) return files.error();
  user.files = std::move(*files);
  if (sources.contains("include_dirs")) {
    auto dirs = paths(w, sources["include_dirs"], "sources.include_dirs", false);
    if (!dirs) return dirs.error();
    user.include_dirs = std::move(*dirs);
  }
  if (sources.contains("fmad")) {
    if (!sources["fmad"].is_boolean()) {
      return w.at("sources.fmad", "expected true (the GPU compile may contract a*b+c into FMA, nvcc's default) or false");
    }
    user.fmad = sources["fmad"].get<bool>();
  }
  return Ok{};
}

Expected<std::shared_ptr<UserRecipes>> parse_user_recipes(const json& root, const std::string& spec_path) {
  const Where w{spec_path};
  const bool has_sources = root.contains("sources"), has_recipes = root.contains("user_recipes");
  if (!has_sources && !has_recipes) return std::shared_ptr<UserRecipes>{};
  if (!has_recipes) return w.at("user_recipes", "missing: sources name files, but no user recipe uses them");
  auto user = std::make_shared<UserRecipes>();
  user->spec_path = spec_path;
  user->base_dir = std::filesystem::path(spec_path).parent_path().string();
  if (has_sources) {
    if (auto ok = parse_sources(w, root["sources"], *user); !ok) return ok.error();
  }
  const json& list = root["user_recipes"];
  if (!list.is_array() || list.empty()) return w.at("user_recipes", "expected a non-empty array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (auto ok = parse_recipe(w, list[i], fmt::format("user_recipes[{}]", i), *user); !ok) return ok.error();
  }
  const bool functions = user->function_count() > 0;
  if (functions && !has_sources) return w.at("sources", "missing: user_recipes need the files that define them");
  if (!functions && has_sources) {
    return w.at("sources", "no user recipe names a function of them (table recipes need no sources)");
  }
  return user;
}

void user_recipes_json(const UserRecipes& user, nlohmann::ordered_json& spec) {
  if (!user.files.empty()) {
    nlohmann::ordered_json sources;
    sources["files"] = user.files;
    if (!user.include_dirs.empty()) sources["include_dirs"] = user.include_dirs;
    if (!user.fmad) sources["fmad"] = false;
    spec["sources"] = sources;
  }
  spec["user_recipes"] = nlohmann::ordered_json::array();
  for (const UserRecipe& r : user.recipes) {
    nlohmann::ordered_json j;
    j["name"] = r.name;
    if (r.label != r.name.substr(r.name.rfind('.') + 1)) j["label"] = r.label;
    if (r.table.empty()) {
      j["function"] = r.function;
    } else {
      j["table"] = r.table;
      if (r.table_format_given) j["table_format"] = table_format_name(r.table_format);
    }
    j["inputs"] = nlohmann::ordered_json::array();
    for (int i = 0; i < r.card.arity; ++i) j["inputs"].push_back(spec_of(r.card.inputs[i]).name);
    j["output"] = spec_of(r.card.output).name;
    if (!r.intent_name.empty()) j["intent"] = r.intent_name;
    spec["user_recipes"].push_back(j);
  }
}

}  // namespace bitproof::user
