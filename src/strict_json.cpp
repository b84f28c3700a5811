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
  void open(bool array) {
    open_.emplace_back();
    open_.back().array = array;
  }
  void close() {
    if (!open_.empty()) open_.pop_back();
    value_done();
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
  [[nodiscard]] const std::optional<std::string>& duplicate_path() const { return duplicate_; }

 private:
  struct Open {
    bool array = false;
    std::size_t index = 0;  // arrays: the element being parsed
    std::string key;        // objects: the member being parsed
    std::unordered_set<std::string> keys;
  };

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

// nlohmann's DOM builder with every event also shown to the detector. (Not
// nlohmann's parse callback: its parser walks the enclosing object at every
// object's end, looking for discarded members, which made a safetensors
// header of n tensors cost n^2 / 2 map steps: 2.1 M for 4,128 tensors.)
template <class Json>
class StrictSax {
 public:
  explicit StrictSax(Json& result) : dom_(result, true) {}
  using Int = typename Json::number_integer_t;
  using Unsigned = typename Json::number_unsigned_t;
  using Float = typename Json::number_float_t;
  using String = typename Json::string_t;
  using Binary = typename Json::binary_t;

  bool null() { return value(dom_.null()); }
  bool boolean(bool v) { return value(dom_.boolean(v)); }
  bool number_integer(Int v) { return value(dom_.number_integer(v)); }
  bool number_unsigned(Unsigned v) { return value(dom_.number_unsigned(v)); }
  bool number_float(Float v, const String& text) { return value(dom_.number_float(v, text)); }
  bool string(String& v) { return value(dom_.string(v)); }
  bool binary(Binary& v) { return value(dom_.binary(v)); }
  bool start_object(std::size_t n) {
    detector_.open(false);
    return dom_.start_object(n);
  }
  bool key(String& k) {
    detector_.on_key(k);
    return dom_.key(k);
  }
  bool end_object() {
    detector_.close();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    detector_.open(true);
    return dom_.start_array(n);
  }
  bool end_array() {
    detector_.close();
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }
  [[nodiscard]] const std::optional<std::string>& duplicate_path() const { return detector_.duplicate_path(); }

 private:
  bool value(bool kept) {
    detector_.value_done();
    return kept;
  }
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  DuplicateKeyDetector detector_;
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
  Json value;
  StrictSax<Json> sax(value);
  try {
    Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true, comments);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers like 1E999
    if (what_field.empty()) return Error{fmt::format("{}: invalid JSON: {}", file, syntax_message(e))};
    return Error{fmt::format("{}: {}: invalid JSON: {}", file, what_field, syntax_message(e))};
  }
  if (const auto& path = sax.duplicate_path()) {
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
