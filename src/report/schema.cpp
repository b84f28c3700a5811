#include "report/schema.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace bitproof {

extern const char* const kReportSchemaText;  // generated from reports/schema.json (CMakeLists.txt)

namespace {

const std::set<std::string>& known_keywords() {
  static const std::set<std::string> keywords = {
      // checked
      "type", "const", "enum", "required", "properties", "additionalProperties", "minProperties", "items", "minItems",
      "maxItems", "prefixItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "allOf", "anyOf", "oneOf", "not", "if",
      "then", "else", "$ref",
      // annotations and containers
      "$schema", "$id", "$defs", "$comment", "title", "description"};
  return keywords;
}

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

// One validation: the first failure is kept; `quiet` depth > 0 inside branches
// of anyOf/oneOf/not/if, whose failures are not the document's error.
class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  bool check(const Json& schema, const Json& doc, const std::string& path) {
    if (!schema.is_object()) return schema.is_boolean() ? schema.get<bool>() || fail(path, "not allowed here") : true;
    return check_ref(schema, doc, path) && check_type(schema, doc, path) && check_values(schema, doc, path) &&
           check_object(schema, doc, path) && check_array(schema, doc, path) && check_string(schema, doc, path) &&
           check_combinations(schema, doc, path);
  }

  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  bool fail(const std::string& path, const std::string& what) {
    if (quiet_ == 0 && error_.empty()) error_ = fmt::format("{}: {}", path.empty() ? "(top level)" : path, what);
    return false;
  }

  bool silently(const Json& schema, const Json& doc, const std::string& path) {
    ++quiet_;
    const bool ok = check(schema, doc, path);
    --quiet_;
    return ok;
  }

  bool check_ref(const Json& schema, const Json& doc, const std::string& path) {
    if (!schema.contains("$ref")) return true;
    const std::string ref = schema["$ref"].get<std::string>();
    const std::string name = ref.substr(std::string("#/$defs/").size());
    return check(root_["$defs"][name], doc, path);
  }

  bool check_type(const Json& schema, const Json& doc, const std::string& path) {
    if (!schema.contains("type")) return true;
    const Json& type = schema["type"];
    if (type.is_string()) {
      if (has_type(doc, type.get<std::string>())) return true;
      return fail(path, fmt::format("expected {} (got {})", type_words(type.get<std::string>()), type_name(doc)));
    }
    for (const Json& t : type) {
      if (has_type(doc, t.get<std::string>())) return true;
    }
    return fail(path, fmt::format("has the wrong type ({})", type_name(doc)));
  }

  bool check_values(const Json& schema, const Json& doc, const std::string& path) {
    if (schema.contains("const") && doc != schema["const"]) {
      return fail(path, fmt::format("expected {} (got {})", schema["const"].dump(), doc.dump()));
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const Json& v : schema["enum"]) found = found || v == doc;
      if (!found) return fail(path, fmt::format("expected one of {} (got {})", schema["enum"].dump(), doc.dump()));
    }
    if (!doc.is_number()) return true;
    if (schema.contains("minimum") && compare(doc, schema["minimum"]) < 0) {
      return fail(path, fmt::format("{} is below the minimum {}", doc.dump(), schema["minimum"].dump()));
    }
    if (schema.contains("maximum") && compare(doc, schema["maximum"]) > 0) {
      return fail(path, fmt::format("{} is above the maximum {}", doc.dump(), schema["maximum"].dump()));
    }
    if (schema.contains("exclusiveMinimum") && compare(doc, schema["exclusiveMinimum"]) <= 0) {
      return fail(path, fmt::format("{} must lie above {}", doc.dump(), schema["exclusiveMinimum"].dump()));
    }
    if (schema.contains("exclusiveMaximum") && compare(doc, schema["exclusiveMaximum"]) >= 0) {
      return fail(path, fmt::format("{} must lie below {}", doc.dump(), schema["exclusiveMaximum"].dump()));
    }
    return true;
  }

  bool check_object(const Json& schema, const Json& doc, const std::string& path) {
    if (!doc.is_object()) return true;
    for (const Json& key : schema.value("required", Json::array())) {
      if (!doc.contains(key.get<std::string>())) return fail(child(path, key.get<std::string>()), "missing");
    }
    if (schema.contains("minProperties") && doc.size() < schema["minProperties"].get<std::size_t>()) {
      return fail(path, fmt::format("expected at least {} fields", schema["minProperties"].get<std::size_t>()));
    }
    const Json& properties = schema.value("properties", Json::object());
    for (const auto& [key, value] : doc.items()) {
      if (properties.contains(key)) {
        if (!check(properties[key], value, child(path, key))) return false;
      } else if (schema.contains("additionalProperties")) {
        const Json& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) return fail(child(path, key), "unknown field");
        if (!check(extra, value, child(path, key))) return false;
      }
    }
    return true;
  }

  bool check_array(const Json& schema, const Json& doc, const std::string& path) {
    if (!doc.is_array()) return true;
    if (schema.contains("minItems") && doc.size() < schema["minItems"].get<std::size_t>()) {
      return fail(path, fmt::format("expected at least {} items (got {})", schema["minItems"].get<std::size_t>(), doc.size()));
    }
    if (schema.contains("maxItems") && doc.size() > schema["maxItems"].get<std::size_t>()) {
      return fail(path, fmt::format("expected at most {} items (got {})", schema["maxItems"].get<std::size_t>(), doc.size()));
    }
    // prefixItems: item i against schema i; items: every item past them.
    const std::size_t prefix = schema.contains("prefixItems") ? schema["prefixItems"].size() : 0;
    for (std::size_t i = 0; i < std::min(prefix, doc.size()); ++i) {
      if (!check(schema["prefixItems"][i], doc[i], child(path, i))) return false;
    }
    if (!schema.contains("items")) return true;
    for (std::size_t i = prefix; i < doc.size(); ++i) {
      if (!check(schema["items"], doc[i], child(path, i))) return false;
    }
    return true;
  }

  bool check_string(const Json& schema, const Json& doc, const std::string& path) {
    if (!doc.is_string()) return true;
    const std::string& text = doc.get_ref<const std::string&>();
    if (schema.contains("minLength") && code_points(text) < schema["minLength"].get<std::size_t>()) {
      return fail(path, "too short");
    }
    if (schema.contains("maxLength") && code_points(text) > schema["maxLength"].get<std::size_t>()) {
      return fail(path, "too long");
    }
    if (schema.contains("pattern") && !matches(schema["pattern"].get<std::string>(), text)) {
      return fail(path, fmt::format("does not match {}", schema["pattern"].get<std::string>()));
    }
    return true;
  }

  bool check_combinations(const Json& schema, const Json& doc, const std::string& path) {
    for (const Json& sub : schema.value("allOf", Json::array())) {
      if (!check(sub, doc, path)) return false;
    }
    if (schema.contains("anyOf")) {
      bool any = false;
      for (const Json& sub : schema["anyOf"]) any = any || silently(sub, doc, path);
      if (!any) return fail(path, "matches none of the allowed forms");
    }
    if (schema.contains("oneOf")) {
      std::size_t n = 0;
      for (const Json& sub : schema["oneOf"]) n += silently(sub, doc, path) ? 1 : 0;
      if (n != 1) return fail(path, n == 0 ? "matches none of the allowed forms" : "matches more than one allowed form");
    }
    if (schema.contains("not") && silently(schema["not"], doc, path)) return fail(path, "is not allowed");
    if (schema.contains("if")) {
      const bool condition = silently(schema["if"], doc, path);
      if (condition && schema.contains("then")) return check(schema["then"], doc, path);
      if (!condition && schema.contains("else")) return check(schema["else"], doc, path);
    }
    return true;
  }

  const Json& root_;
  int quiet_ = 0;
  std::string error_;
};

Expected<Ok> check_keywords(const Json& root, const Json& schema, const std::string& where) {
  if (schema.is_boolean()) return Ok{};
  if (!schema.is_object()) return Error{fmt::format("schema: {}: not a schema", where)};
  for (const auto& [key, value] : schema.items()) {
    if (!known_keywords().contains(key)) return Error{fmt::format("schema: {}: keyword {} is not supported", where, key)};
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
  if (v.check(schema, doc, "")) return Ok{};
  return Error{fmt::format("{}: {}", file, v.error())};
}

}  // namespace bitproof
