// JSON parsing for untrusted files (safetensors headers, index files, reports
// read back by `admit`): like nlohmann::json::parse, but a key repeated inside
// one object is an error instead of silently keeping the last value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "error.hpp"

namespace bitproof::audit {

// Parses `text`; errors read "<file>: <field>: <what>" where field is `what_field`
// for syntax errors and the enclosing top-level key for duplicates.
[[nodiscard]] Expected<nlohmann::json> parse_json_strict(std::string_view text, const std::string& file,
                                                         const std::string& what_field);

// Reads a whole (small) JSON file and parses it strictly; `what_field` as above.
[[nodiscard]] Expected<nlohmann::json> load_json_strict(const std::string& path, const std::string& what_field);

// `text` made safe for a one-line message: control and non-ASCII bytes become \xNN.
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace bitproof::audit
