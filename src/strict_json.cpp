#include "strict_json.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
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
  // The place of the member being parsed: its path with "[]" for every item index.
  [[nodiscard]] std::string place() const {
    std::string out;
    for (const Open& o : open_) out += o.array ? std::string("[]") : (out.empty() ? "" : ".") + o.key;
    return out;
  }

 private:
  struct Open {
    bool array = false;
    std::size_t index = 0;  // arrays: the element being parsed
    std::string key;        // objects: the member being parsed
    std::unordered_set<std::string> keys;
  };

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
  // With `pairs`, the arrays at pairs->place go into pairs->lists (PairLists).
  explicit StrictSax(Json& result, PairLists* pairs = nullptr) : dom_(result, true), pairs_(pairs) {}
  using Int = typename Json::number_integer_t;
  using Unsigned = typename Json::number_unsigned_t;
  using Float = typename Json::number_float_t;
  using String = typename Json::string_t;
  using Binary = typename Json::binary_t;

  bool null() { return diverting() ? stop() : value(dom_.null()); }
  bool boolean(bool v) { return diverting() ? stop() : value(dom_.boolean(v)); }
  bool number_integer(Int v) { return diverting() ? stop() : value(dom_.number_integer(v)); }
  bool number_unsigned(Unsigned v) { return diverting() ? pair_number(v) : value(dom_.number_unsigned(v)); }
  bool number_float(Float v, const String& text) { return diverting() ? stop() : value(dom_.number_float(v, text)); }
  bool string(String& v) { return diverting() ? stop() : value(dom_.string(v)); }
  bool binary(Binary& v) { return diverting() ? stop() : value(dom_.binary(v)); }
  bool start_object(std::size_t n) {
    if (diverting()) return stop();
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
    if (diverting()) return pair_start();
    if (pairs_ != nullptr && detector_.place() == pairs_->place) {
      add_pair_list(pairs_->lists);
      depth_ = 1;
      return true;
    }
    detector_.open(true);
    return dom_.start_array(n);
  }
  bool end_array() {
    if (diverting()) return pair_end();
    detector_.close();
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }
  [[nodiscard]] const std::optional<std::string>& duplicate_path() const { return detector_.duplicate_path(); }
  // The path of a diverted array that held something other than pairs of unsigned integers.
  [[nodiscard]] const std::optional<std::string>& unexpected() const { return unexpected_; }

 private:
  bool value(bool kept) {
    detector_.value_done();
    return kept;
  }
  // Inside a diverted array (depth_ 1) or one of its pairs (depth_ 2).
  [[nodiscard]] bool diverting() const { return depth_ > 0; }
  bool pair_start() {
    if (depth_ != 1) return stop();
    depth_ = 2;
    filled_ = 0;
    return true;
  }
  bool pair_number(Unsigned v) {
    if (depth_ != 2 || filled_ == 2) return stop();
    pair_[filled_++] = v;
    return true;
  }
  bool pair_end() {
    if (depth_ == 2) {
      if (filled_ != 2) return stop();
      pairs_->lists.back().push_back(pair_);
      depth_ = 1;
      return true;
    }
    depth_ = 0;  // the diverted array ends: an empty array in its place
    detector_.open(true);
    detector_.close();
    return dom_.start_array(static_cast<std::size_t>(-1)) && dom_.end_array();
  }
  bool stop() {
    unexpected_ = detector_.path();
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  DuplicateKeyDetector detector_;
  PairLists* pairs_ = nullptr;
  int depth_ = 0;
  int filled_ = 0;
  std::array<std::uint64_t, 2> pair_{};
  std::optional<std::string> unexpected_;
};

// nlohmann's messages are one line; keep only the part after the exception id.
std::string syntax_message(const json::exception& e) {
  std::string_view what = e.what();
  if (const auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
  return printable(what);
}

template <class Json>
Expected<Json> parse_strictly(std::string_view text, const std::string& file, const std::string& what_field,
                              bool comments = false, PairLists* pairs = nullptr) {
  Json value;
  StrictSax<Json> sax(value, pairs);
  try {
    Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true, comments);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers like 1E999
    if (what_field.empty()) return Error{fmt::format("{}: invalid JSON: {}", file, syntax_message(e))};
    return Error{fmt::format("{}: {}: invalid JSON: {}", file, what_field, syntax_message(e))};
  }
  if (const auto& place = sax.unexpected()) {
    return Error{fmt::format("{}: {}: must hold [a, b] pairs of integers from 0", file, printable(*place))};
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

Expected<nlohmann::ordered_json> parse_ordered_json_strict(std::string_view text, const std::string& file,
                                                           const std::string& what_field, PairLists& pairs) {
  pairs.lists.clear();
  return parse_strictly<nlohmann::ordered_json>(text, file, what_field, false, &pairs);
}

namespace {

// "a FIFO", "a character device" ...: what a path that is no regular file is.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Expected<std::string> read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO waits for a writer otherwise; a regular file ignores it.
  const Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) return Error{fmt::format("{}: cannot read {}: {}", path, what, std::strerror(errno))};
  struct stat st {};
  if (fstat(f.fd, &st) != 0) return Error{fmt::format("{}: cannot read {}: {}", path, what, std::strerror(errno))};
  if (S_ISDIR(st.st_mode)) return Error{fmt::format("{}: cannot read {}: is a directory", path, what)};
  if (!S_ISREG(st.st_mode)) {
    return Error{fmt::format("{}: cannot read {}: not a regular file ({})", path, what, file_kind(st.st_mode))};
  }
  const auto too_large = [&](std::uint64_t size) {
    return Error{fmt::format("{}: cannot read {}: {} bytes, more than the {} bytes bitproof reads as {}", path, what,
                             size, max_bytes, what)};
  };
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) return too_large(size);
  // Read into a string of the file's size (a report of 86 MB took 1.1 s through
  // a string stream, growing and copying); a file that grows meanwhile in
  // further steps, up to the limit.
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  char more[64 * 1024];
  for (;;) {
    const bool sized = done < text.size();  // into the string while its size lasts, then in steps
    const ssize_t n = sized ? ::read(f.fd, text.data() + done, text.size() - done) : ::read(f.fd, more, sizeof more);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{fmt::format("{}: cannot read {}: a read error", path, what)};
    if (n == 0) break;
    if (!sized) {
      if (done + static_cast<std::size_t>(n) > max_bytes) return too_large(done + static_cast<std::size_t>(n));
      text.append(more, static_cast<std::size_t>(n));
    }
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

Expected<json> load_json_strict(const std::string& path, const std::string& what_field) {
  auto text = read_input_file(path, "the file", kMaxSpecBytes);
  if (!text) return text.error();
  return parse_json_strict(*text, path, what_field);
}

std::string other_file_kind(std::string_view text, std::initializer_list<std::string_view> expected_keys) {
  // Only the top-level keys are looked at; comments are allowed as proof specs allow them.
  const json root = json::parse(text.begin(), text.end(), nullptr, false, true);
  if (!root.is_object()) return "";
  for (std::string_view key : expected_keys) {
    if (root.contains(std::string(key))) return "";
  }
  static constexpr std::pair<const char*, const char*> kinds[] = {
      {"bitproof_spec", "a proof spec (\"bitproof_spec\"), which prove, domain and spec check take"},
      {"bitproof_ab", "an A/B spec (\"bitproof_ab\"), which ab and time take"},
      {"bitproof_time", "a timing spec (\"bitproof_time\"), which time takes"},
      {"bitproof_report", "a report (\"bitproof_report\"), which the report commands take"},
  };
  for (const auto& [key, kind] : kinds) {
    if (root.contains(key)) return kind;
  }
  return "";
}

}  // namespace bitproof
