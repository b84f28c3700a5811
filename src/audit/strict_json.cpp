#include "audit/strict_json.hpp"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <vector>

namespace bitproof::audit {

using json = nlohmann::json;

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F || c == '\\') {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// Tracks the keys of every open object while nlohmann parses.
class DuplicateKeyDetector {
 public:
  bool on_event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: open_.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!open_.empty()) open_.pop_back();
        break;
      case json::parse_event_t::key: on_key(parsed.get<std::string>()); break;
      default: break;
    }
    return true;
  }
  [[nodiscard]] const std::optional<std::string>& duplicate() const { return duplicate_; }
  [[nodiscard]] const std::string& top_key() const { return duplicate_top_; }

 private:
  void on_key(const std::string& key) {
    if (open_.size() == 1) top_ = key;
    if (open_.empty()) return;
    if (!open_.back().insert(key).second && !duplicate_) {
      duplicate_ = key;
      duplicate_top_ = open_.size() == 1 ? key : top_;
    }
  }
  std::vector<std::unordered_set<std::string>> open_;
  std::string top_;
  std::optional<std::string> duplicate_;
  std::string duplicate_top_;
};

// nlohmann's messages are one line; keep only the part after the exception id.
std::string syntax_message(const json::exception& e) {
  std::string_view what = e.what();
  if (const auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
  return printable(what);
}

}  // namespace

Expected<json> parse_json_strict(std::string_view text, const std::string& file, const std::string& what_field) {
  DuplicateKeyDetector detector;
  json value;
  try {
    value = json::parse(text.begin(), text.end(), [&detector](int /*depth*/, json::parse_event_t event, json& parsed) {
      return detector.on_event(event, parsed);
    });
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1E999
    return Error{fmt::format("{}: {}: invalid JSON: {}", file, what_field, syntax_message(e))};
  }
  if (const auto& dup = detector.duplicate()) {
    const std::string where = printable(detector.top_key());
    if (*dup == detector.top_key()) return Error{fmt::format("{}: {}: duplicate name in the JSON object", file, where)};
    return Error{fmt::format("{}: {}: duplicate key \"{}\"", file, where, printable(*dup))};
  }
  return value;
}

Expected<json> load_json_strict(const std::string& path, const std::string& what_field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: {}: cannot read the file", path, what_field)};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{fmt::format("{}: {}: cannot read the file", path, what_field)};
  return parse_json_strict(text.str(), path, what_field);
}

}  // namespace bitproof::audit
