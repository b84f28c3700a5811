#include "report/schema.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace bitproof {

extern const char* const kReportSchemaText;  // generated from reports/schema.json (CMakeLists.txt)

namespace {

std::string type_name(const Json& j) {
  if (j.is_object()) return "an object";
  if (j.is_array()) return "an array";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "true or false";
  if (j.is_null()) return "null";
  if (j.is_number_integer()) return "an integer";
  return "a number";
}

// A schema type in words, as type_name gives a value's.
std::string type_words(const std::string& type) {
  static const std::map<std::string, std::string> words = {
      {"object", "an object"}, {"array", "an array"},    {"string", "a string"}, {"boolean", "true or false"},
      {"null", "null"},        {"integer", "an integer"}, {"number", "a number"}};
  const auto it = words.find(type);
  return it == words.end() ? type : it->second;
}

bool has_type(const Json& j, const std::string& type) {
  if (type == "object") return j.is_object();
  if (type == "array") return j.is_array();
  if (type == "string") return j.is_string();
  if (type == "boolean") return j.is_boolean();
  if (type == "null") return j.is_null();
  if (type == "integer") return j.is_number_integer();
  if (type == "number") return j.is_number();
  return false;
}

// `value` compared with a schema bound: -1, 0 or 1 (exact for every integer).
int compare(const Json& value, const Json& bound) {
  if (value.is_number_unsigned() && bound.is_number_unsigned()) {
    const auto a = value.get<std::uint64_t>(), b = bound.get<std::uint64_t>();
    return a < b ? -1 : a > b;
  }
  if (value.is_number_integer() && bound.is_number_integer() && !value.is_number_unsigned() &&
      !bound.is_number_unsigned()) {
    const auto a = value.get<std::int64_t>(), b = bound.get<std::int64_t>();
    return a < b ? -1 : a > b;
  }
  const auto a = value.get<long double>(), b = bound.get<long double>();
  return a < b ? -1 : a > b;
}

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

bool matches(const std::string& pattern, const std::string& text) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<RE2>> compiled;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& re = compiled[pattern];
  if (!re) re = std::make_unique<RE2>(pattern, RE2::Quiet);
  return re->ok() && RE2::PartialMatch(text, *re);
}

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string child(const std::string& path, std::size_t index) { return fmt::format("{}[{}]", path, index); }

const Json& empty_array() {
  static const Json empty = Json::array();
  return empty;
}

// Where a value sits in the document, built only when a check fails (a
// report's histograms are millions of values).
struct Path {
  const Path* parent = nullptr;      // null: the top level
  const std::string* key = nullptr;  // a member's key, or null: an item's index
  std::size_t index = 0;
  [[nodiscard]] Path member(const std::string& k) const { return {this, &k, 0}; }
  [[nodiscard]] Path item(std::size_t i) const { return {this, nullptr, i}; }
  [[nodiscard]] std::string text() const {
    if (!parent) return "";
    return key ? child(parent->text(), *key) : child(parent->text(), index);
  }
};

// The keywords of one schema object, each looked up once: every value is
// checked against one of a few schema objects, and an ordered JSON object
// finds a key by comparing it with each of its keys in turn.
struct Keywords {
  const Json* ref = nullptr;  // the definition "$ref" names
  const Json* type = nullptr;
  const Json* constant = nullptr;
  const Json* enumeration = nullptr;
  const Json* minimum = nullptr;
  const Json* maximum = nullptr;
  const Json* exclusive_minimum = nullptr;
  const Json* exclusive_maximum = nullptr;
  const Json* required = nullptr;
  const Json* min_properties = nullptr;
  const Json* properties = nullptr;
  const Json* additional_properties = nullptr;
  const Json* min_items = nullptr;
  const Json* max_items = nullptr;
  const Json* prefix_items = nullptr;
  const Json* items = nullptr;
  const Json* min_length = nullptr;
  const Json* max_length = nullptr;
  const Json* pattern = nullptr;
  const Json* all_of = nullptr;
  const Json* any_of = nullptr;
  const Json* one_of = nullptr;
  const Json* negation = nullptr;
  const Json* condition = nullptr;
  const Json* then = nullptr;
  const Json* otherwise = nullptr;

  Keywords(const Json& root, const Json& schema);
};

// The keywords the validator checks, each with its slot ("$ref" apart: it
// names a definition).
constexpr std::pair<std::string_view, const Json * Keywords::*> kCheckedKeywords[] = {
    {"type", &Keywords::type},
    {"const", &Keywords::constant},
    {"enum", &Keywords::enumeration},
    {"minimum", &Keywords::minimum},
    {"maximum", &Keywords::maximum},
    {"exclusiveMinimum", &Keywords::exclusive_minimum},
    {"exclusiveMaximum", &Keywords::exclusive_maximum},
    {"required", &Keywords::required},
    {"minProperties", &Keywords::min_properties},
    {"properties", &Keywords::properties},
    {"additionalProperties", &Keywords::additional_properties},
    {"minItems", &Keywords::min_items},
    {"maxItems", &Keywords::max_items},
    {"prefixItems", &Keywords::prefix_items},
    {"items", &Keywords::items},
    {"minLength", &Keywords::min_length},
    {"maxLength", &Keywords::max_length},
    {"pattern", &Keywords::pattern},
    {"allOf", &Keywords::all_of},
    {"anyOf", &Keywords::any_of},
    {"oneOf", &Keywords::one_of},
    {"not", &Keywords::negation},
    {"if", &Keywords::condition},
    {"then", &Keywords::then},
    {"else", &Keywords::otherwise},
};

Keywords::Keywords(const Json& root, const Json& schema) {
  for (const auto& [key, value] : schema.items()) {
    if (key == "$ref") {
      ref = &root["$defs"][value.get<std::string>().substr(std::string("#/$defs/").size())];
      continue;
    }
    for (const auto& [name, slot] : kCheckedKeywords) {
      if (key == name) this->*slot = &value;
    }
  }
}

// A keyword the validator checks, "$ref", or an annotation or container it reads past.
bool known_keyword(std::string_view key) {
  static constexpr std::string_view kOthers[] = {"$ref", "$schema", "$id", "$defs", "$comment", "title", "description"};
  const auto named = [key](std::string_view name) { return name == key; };
  return std::any_of(std::begin(kOthers), std::end(kOthers), named) ||
         std::any_of(std::begin(kCheckedKeywords), std::end(kCheckedKeywords),
                     [&named](const auto& k) { return named(k.first); });
}

// One validation: the first failure is kept; `quiet` depth > 0 inside branches
// of anyOf/oneOf/not/if, whose failures are not the document's error.
class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  bool check(const Json& schema, const Json& doc, const Path& path) {
    if (!schema.is_object()) return schema.is_boolean() ? schema.get<bool>() || fail(path, "not allowed here") : true;
    const Keywords& k = keywords(schema);
    return (!k.ref || check(*k.ref, doc, path)) && check_type(k, doc, path) && check_values(k, doc, path) &&
           check_object(k, doc, path) && check_array(k, doc, path) && check_string(k, doc, path) &&
           check_combinations(k, doc, path);
  }

  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  const Keywords& keywords(const Json& schema) {
    auto it = keywords_.find(&schema);
    if (it == keywords_.end()) it = keywords_.emplace(&schema, Keywords(root_, schema)).first;
    return it->second;
  }

  bool fail(const Path& path, const std::string& what) {
    if (quiet_ == 0 && error_.empty()) {
      const std::string where = path.text();
      error_ = fmt::format("{}: {}", where.empty() ? "(top level)" : where, what);
    }
    return false;
  }

  bool silently(const Json& schema, const Json& doc, const Path& path) {
    ++quiet_;
    const bool ok = check(schema, doc, path);
    --quiet_;
    return ok;
  }

  bool check_type(const Keywords& k, const Json& doc, const Path& path) {
    if (!k.type) return true;
    const Json& type = *k.type;
    if (type.is_string()) {
      if (has_type(doc, type.get_ref<const std::string&>())) return true;
      return fail(path, fmt::format("expected {} (got {})", type_words(type.get<std::string>()), type_name(doc)));
    }
    for (const Json& t : type) {
      if (has_type(doc, t.get_ref<const std::string&>())) return true;
    }
    return fail(path, fmt::format("has the wrong type ({})", type_name(doc)));
  }

  bool check_values(const Keywords& k, const Json& doc, const Path& path) {
    if (k.constant && doc != *k.constant) {
      return fail(path, fmt::format("expected {} (got {})", k.constant->dump(), doc.dump()));
    }
    if (k.enumeration) {
      bool found = false;
      for (const Json& v : *k.enumeration) found = found || v == doc;
      if (!found) return fail(path, fmt::format("expected one of {} (got {})", k.enumeration->dump(), doc.dump()));
    }
    if (!doc.is_number()) return true;
    if (k.minimum && compare(doc, *k.minimum) < 0) {
      return fail(path, fmt::format("{} is below the minimum {}", doc.dump(), k.minimum->dump()));
    }
    if (k.maximum && compare(doc, *k.maximum) > 0) {
      return fail(path, fmt::format("{} is above the maximum {}", doc.dump(), k.maximum->dump()));
    }
    if (k.exclusive_minimum && compare(doc, *k.exclusive_minimum) <= 0) {
      return fail(path, fmt::format("{} must lie above {}", doc.dump(), k.exclusive_minimum->dump()));
    }
    if (k.exclusive_maximum && compare(doc, *k.exclusive_maximum) >= 0) {
      return fail(path, fmt::format("{} must lie below {}", doc.dump(), k.exclusive_maximum->dump()));
    }
    return true;
  }

  // The schema "properties" gives the member `key`, or null.
  static const Json* property_schema(const Keywords& k, const std::string& key) {
    if (!k.properties) return nullptr;
    const auto it = k.properties->find(key);
    return it == k.properties->end() ? nullptr : &*it;
  }

  bool check_object(const Keywords& k, const Json& doc, const Path& path) {
    if (!doc.is_object()) return true;
    for (const Json& key : k.required ? *k.required : empty_array()) {
      const std::string& name = key.get_ref<const std::string&>();
      if (!doc.contains(name)) return fail(path.member(name), "missing");
    }
    if (k.min_properties && doc.size() < k.min_properties->get<std::size_t>()) {
      return fail(path, fmt::format("expected at least {} fields", k.min_properties->get<std::size_t>()));
    }
    for (const auto& [key, value] : doc.items()) {
      if (const Json* property = property_schema(k, key)) {
        if (!check(*property, value, path.member(key))) return false;
      } else if (k.additional_properties) {
        const Json& extra = *k.additional_properties;
        if (extra.is_boolean() && !extra.get<bool>()) return fail(path.member(key), "unknown field");
        if (!check(extra, value, path.member(key))) return false;
      }
    }
    return true;
  }

  bool check_array(const Keywords& k, const Json& doc, const Path& path) {
    if (!doc.is_array()) return true;
    if (k.min_items && doc.size() < k.min_items->get<std::size_t>()) {
      return fail(path,
                  fmt::format("expected at least {} items (got {})", k.min_items->get<std::size_t>(), doc.size()));
    }
    if (k.max_items && doc.size() > k.max_items->get<std::size_t>()) {
      return fail(path, fmt::format("expected at most {} items (got {})", k.max_items->get<std::size_t>(), doc.size()));
    }
    // prefixItems: item i against schema i; items: every item past them.
    const std::size_t prefix = k.prefix_items ? k.prefix_items->size() : 0;
    for (std::size_t i = 0; i < std::min(prefix, doc.size()); ++i) {
      if (!check((*k.prefix_items)[i], doc[i], path.item(i))) return false;
    }
    if (!k.items) return true;
    for (std::size_t i = prefix; i < doc.size(); ++i) {
      if (!check(*k.items, doc[i], path.item(i))) return false;
    }
    return true;
  }

  bool check_string(const Keywords& k, const Json& doc, const Path& path) {
    if (!doc.is_string()) return true;
    const std::string& text = doc.get_ref<const std::string&>();
    if (k.min_length && code_points(text) < k.min_length->get<std::size_t>()) return fail(path, "too short");
    if (k.max_length && code_points(text) > k.max_length->get<std::size_t>()) return fail(path, "too long");
    if (k.pattern && !matches(k.pattern->get<std::string>(), text)) {
      return fail(path, fmt::format("does not match {}", k.pattern->get<std::string>()));
    }
    return true;
  }

  bool check_combinations(const Keywords& k, const Json& doc, const Path& path) {
    for (const Json& sub : k.all_of ? *k.all_of : empty_array()) {
      if (!check(sub, doc, path)) return false;
    }
    if (k.any_of) {
      bool any = false;
      for (const Json& sub : *k.any_of) any = any || silently(sub, doc, path);
      if (!any) return fail(path, "matches none of the allowed forms");
    }
    if (k.one_of) {
      std::size_t n = 0;
      for (const Json& sub : *k.one_of) n += silently(sub, doc, path) ? 1 : 0;
      if (n != 1) return fail(path, n == 0 ? "matches none of the allowed forms" : "matches more than one allowed form");
    }
    if (k.negation && silently(*k.negation, doc, path)) return fail(path, "is not allowed");
    if (k.condition) {
      const bool holds = silently(*k.condition, doc, path);
      if (holds && k.then) return check(*k.then, doc, path);
      if (!holds && k.otherwise) return check(*k.otherwise, doc, path);
    }
    return true;
  }

  const Json& root_;
  int quiet_ = 0;
  std::string error_;
  std::unordered_map<const Json*, Keywords> keywords_;
};

Expected<Ok> check_keywords(const Json& root, const Json& schema, const std::string& where) {
  if (schema.is_boolean()) return Ok{};
  if (!schema.is_object()) return Error{fmt::format("schema: {}: not a schema", where)};
  for (const auto& [key, value] : schema.items()) {
    if (!known_keyword(key)) return Error{fmt::format("schema: {}: keyword {} is not supported", where, key)};
    if (key == "$ref") {
      const std::string ref = value.get<std::string>();
      if (ref.rfind("#/$defs/", 0) != 0 || !root.contains("$defs") || !root["$defs"].contains(ref.substr(8))) {
        return Error{fmt::format("schema: {}: $ref {} does not name a definition", where, ref)};
      }
    }
    if (key == "pattern" && !RE2(value.get<std::string>(), RE2::Quiet).ok()) {
      return Error{fmt::format("schema: {}: pattern {} does not compile", where, value.get<std::string>())};
    }
  }
  const auto each = [&](const char* key, bool map) -> Expected<Ok> {
    if (!schema.contains(key)) return Ok{};
    const Json& subs = schema[key];
    if (!map && subs.is_object()) return check_keywords(root, subs, child(where, key));
    for (const auto& [name, sub] : subs.items()) {
      if (auto ok = check_keywords(root, sub, child(child(where, key), name)); !ok) return ok;
    }
    return Ok{};
  };
  for (const char* key : {"properties", "$defs"}) {
    if (auto ok = each(key, true); !ok) return ok;
  }
  for (const char* key : {"additionalProperties", "items", "prefixItems", "not", "if", "then", "else", "allOf", "anyOf", "oneOf"}) {
    if (auto ok = each(key, false); !ok) return ok;
  }
  return Ok{};
}

}  // namespace

const Json& report_schema() {
  static const Json schema = Json::parse(kReportSchemaText);
  return schema;
}

Expected<Ok> check_schema(const Json& schema) { return check_keywords(schema, schema, "(top level)"); }

Expected<Ok> validate_json(const Json& doc, const Json& schema, const std::string& file) {
  Validator v(schema);
  if (v.check(schema, doc, Path{})) return Ok{};
  return Error{fmt::format("{}: {}", file, v.error())};
}

}  // namespace bitproof
