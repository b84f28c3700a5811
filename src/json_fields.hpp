// Strict field readers for the JSON files a user writes (proof specs, A/B specs):
// every error is "<file>: <field>: <what>", one line, exit 2.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "error.hpp"

namespace bitproof::fields {

// Builds "<file>: <field>: <what>" errors.
struct Where {
  const std::string& path;
  [[nodiscard]] Error at(const std::string& field, const std::string& what) const;
};

// Names (of specs, inputs, tensors) are identifiers a report, a file name and a
// JUnit suite can carry as they are: [a-z0-9._-]+.
[[nodiscard]] bool valid_name(const std::string& name);
// Free text (title, source) is one line a terminal and an XML file can carry: no control characters.
[[nodiscard]] bool printable_text(const std::string& text);
// `parent.key` ("key" when parent is empty).
[[nodiscard]] std::string join(const std::string& parent, std::string_view key);

// Every key of `object` is one of `allowed`.
[[nodiscard]] Expected<Ok> only_keys(const Where& w, const nlohmann::json& object, const std::string& field,
                                     std::initializer_list<std::string_view> allowed);
// A string member; "" when absent and not required.
[[nodiscard]] Expected<std::string> string_field(const Where& w, const nlohmann::json& object,
                                                 const std::string& parent, const std::string& key, bool required);
// A non-negative integer, written as one: 208, never 208.0 or "208". Every
// integer field of the spec readers (proof, A/B and timing specs) is read
// through it, their version fields included.
[[nodiscard]] Expected<std::uint64_t> unsigned_value(const Where& w, const nlohmann::json& v, const std::string& field);
// A file's format version (bitproof_spec, bitproof_ab, bitproof_time): an
// integer (unsigned_value) equal to `version`.
[[nodiscard]] Expected<Ok> version_value(const Where& w, const nlohmann::json& v, const std::string& field,
                                         std::uint64_t version);

}  // namespace bitproof::fields
