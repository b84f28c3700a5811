#include "strict_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <vector>

namespace bitproof {

using json = nlohmann::json;

std::string printable(std::string_view text) {
  const auto plain = [](char c) { return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F; };
  // Backslashes are escaped only beside other escapes, so a plain regular expression reads as typed.
  const bool escapes = !std::all_of(text.begin(), text.end(), plain);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (!plain(c) || (escapes && c == '\\')) {
      out += fmt::format("\\x{:02X}", u);
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// Tracks the open objects and arrays while nlohmann parses: the keys seen in
// each object, and where the innermost one sits, so that the first key given
// twice is named by its whole path ("result.claims[0].keep").
class DuplicateKeyDetector {
 public:
  template <class Parsed>
  bool on_event(nlohmann::detail::parse_event_t event, const Parsed& parsed) {
    using Event = nlohmann::detail::parse_event_t;
    switch (event) {
      case Event::object_start: open(false); break;
      case Event::array_start: open(true); break;
      case Event::object_end:
      case Event::array_end:
        if (!open_.empty()) open_.pop_back();
        value_done();
        break;
      case Event::key: on_key(parsed.template get<std::string>()); break;
      case Event::value: value_done(); break;
    }
    return true;
  }
  [[nodiscard]] const std::optional<std::string>& duplicate_path() const { return duplicate_; }

 private:
  struct Open {
    bool array = false;
    std::size_t index = 0;  // arrays: the element being parsed
    std::string key;        // objects: the member being parsed
    std::unordered_set<std::string> keys;
  };

  void open(bool array) {
    open_.emplace_back();
    open_.back().array = array;
  }
  void value_done() {
    if (!open_.empty() && open_.back().array) ++open_.back().index;
  }
  void on_key(const std::string& key) {
    if (open_.empty()) return;
    Open& object = open_.back();
    object.key = key;
    if (!object.keys.insert(key).second && !duplicate_) duplicate_ = path();
  }
  // The path of the member being parsed: every open container's position.
  [[nodiscard]] std::string path() const {
    std::string out;
    for (const Open& o : open_) {
      if (o.array) {
        out += fmt::format("[{}]", o.index);
      } else {
        out += (out.empty() ? "" : ".") + o.key;
      }
    }
    return out;
  }

  std::vector<Open> open_;
  std::optional<std::string> duplicate_;
};

// nlohmann's messages are one line; keep only the part after the exception id.
std::string syntax_message(const json::exception& e) {
  std::string_view what = e.what();
  if (const auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
  return printable(what);
}

template <class Json>
Expected<Json> parse_strictly(std::string_view text, const std::string& file, const std::string& what_field,
                              bool comments = false) {
  DuplicateKeyDetector detector;
  Json value;
  try {
    value = Json::parse(text.begin(), text.end(),
                        [&detector](int /*depth*/, typename Json::parse_event_t event, Json& parsed) {
                          return detector.on_event(event, parsed);
                        },
                        true, comments);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers like 1E999
    if (what_field.empty()) return Error{fmt::format("{}: invalid JSON: {}", file, syntax_message(e))};
    return Error{fmt::format("{}: {}: invalid JSON: {}", file, what_field, syntax_message(e))};
  }
  if (const auto& path = detector.duplicate_path()) {
    return Error{fmt::format("{}: {}: key given twice in one JSON object", file, printable(*path))};
  }
  return value;
}

}  // namespace

Expected<json> parse_json_strict(std::string_view text, const std::string& file, const std::string& what_field,
                                 bool comments) {
  return parse_strictly<json>(text, file, what_field, comments);
}

Expected<nlohmann::ordered_json> parse_ordered_json_strict(std::string_view text, const std::string& file,
                                                           const std::string& what_field) {
  return parse_strictly<nlohmann::ordered_json>(text, file, what_field);
}

Expected<std::string> read_input_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{fmt::format("{}: cannot read {}: is a directory", path, what)};
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int reason = errno;
    return Error{fmt::format("{}: cannot read {}: {}", path, what, reason ? std::strerror(reason) : "cannot open it")};
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{fmt::format("{}: cannot read {}: a read error", path, what)};
  return text.str();
}

Expected<json> load_json_strict(const std::string& path, const std::string& what_field) {
  auto text = read_input_file(path, "the file");
  if (!text) return text.error();
  return parse_json_strict(*text, path, what_field);
}

}  // namespace bitproof
