#include "json_fields.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace bitproof::fields {

Error Where::at(const std::string& field, const std::string& what) const {
  return Error{fmt::format("{}: {}: {}", path, field, what)};
}

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
  });
}

bool printable_text(const std::string& text) {
  return std::none_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
}

std::string join(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

Expected<Ok> only_keys(const Where& w, const nlohmann::json& object, const std::string& field,
                       std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) return w.at(join(field, key), "unknown key");
  }
  return Ok{};
}

Expected<std::string> string_field(const Where& w, const nlohmann::json& object, const std::string& parent,
                                   const std::string& key, bool required) {
  const std::string field = join(parent, key);
  if (!object.contains(key)) {
    if (required) return w.at(field, "missing");
    return std::string{};
  }
  const nlohmann::json& v = object.at(key);
  if (!v.is_string()) return w.at(field, std::string("expected a string, found ") + v.type_name());
  return v.get<std::string>();
}

Expected<std::uint64_t> unsigned_value(const Where& w, const nlohmann::json& v, const std::string& field) {
  if (!v.is_number_unsigned()) return w.at(field, "expected a non-negative integer, found " + v.dump());
  return v.get<std::uint64_t>();
}

Expected<Ok> version_value(const Where& w, const nlohmann::json& v, const std::string& field, std::uint64_t version) {
  auto n = unsigned_value(w, v, field);
  if (!n) return n.error();
  if (*n != version)
    return w.at(field, fmt::format("version {} is not supported (this bitproof reads {})", *n, version));
  return Ok{};
}

}  // namespace bitproof::fields
