#include "user/npy.hpp"

#include <fmt/format.h>

#include <optional>

namespace bitproof::npy {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

Error bad(const std::string& what) { return Error{what}; }

std::string shown(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x7F ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02X}", u);
}

// A recursive-descent reader of the header's dict literal; `pos` is relative
// to the header text, errors give the file offset (`base` + pos).
class DictReader {
 public:
  DictReader(std::string_view text, std::size_t base) : text_(text), base_(base) {}

  Expected<Header> read(Header h) {
    skip_spaces();
    if (!take('{')) return expected("'{' (the header is a Python dict)");
    bool seen[3] = {false, false, false};
    skip_spaces();
    while (!at('}')) {
      auto ok = entry(h, seen);
      if (!ok) return ok.error();
      skip_spaces();
      if (take(',')) {
        skip_spaces();
        continue;
      }
      if (!at('}')) return expected("',' or '}'");
    }
    ++pos_;  // '}'
    static constexpr const char* kKeys[] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k) {
      if (!seen[k]) return bad(fmt::format("header: key '{}' missing", kKeys[k]));
    }
    skip_spaces();
    if (pos_ + 1 != text_.size() || text_[pos_] != '\n') {
      return expected("spaces and one '\\n' at the end of the header, after the dict");
    }
    return h;
  }

 private:
  [[nodiscard]] bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool take(char c) {
    if (!at(c)) return false;
    ++pos_;
    return true;
  }
  void skip_spaces() {
    while (at(' ')) ++pos_;
  }
  [[nodiscard]] Error expected(const std::string& what) const {
    const std::string found = pos_ < text_.size() ? shown(text_[pos_]) : std::string("the end of the header");
    return bad(fmt::format("header byte {}: expected {}, found {}", base_ + pos_, what, found));
  }

  // A quoted string without escapes: printable ASCII only.
  Expected<std::string> string() {
    const char quote = pos_ < text_.size() ? text_[pos_] : '\0';
    if (quote != '\'' && quote != '"') return expected("a quoted string");
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      const auto u = static_cast<unsigned char>(text_[pos_]);
      if (u < 0x20 || u >= 0x7F || u == '\\') return expected("printable ASCII in a string, without escapes");
      ++pos_;
    }
    if (pos_ == text_.size()) return expected(fmt::format("the closing {}", shown(quote)));
    return std::string(text_.substr(start, pos_++ - start));
  }

  Expected<std::uint64_t> integer() {
    const std::size_t start = pos_;
    std::uint64_t v = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const std::uint64_t digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (v > (UINT64_MAX - digit) / 10)
        return bad(fmt::format("header byte {}: shape: a dimension past 2^64", base_ + start));
      v = v * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) return expected("a non-negative integer");
    if (text_[start] == '0' && pos_ - start > 1) {
      return bad(fmt::format("header byte {}: shape: a leading zero (not a Python integer)", base_ + start));
    }
    return v;
  }

  Expected<std::vector<std::uint64_t>> tuple() {
    if (!take('(')) return expected("'(' (shape is a tuple)");
    std::vector<std::uint64_t> dims;
    bool trailing_comma = false;
    skip_spaces();
    while (!at(')')) {
      auto d = integer();
      if (!d) return d.error();
      dims.push_back(*d);
      skip_spaces();
      trailing_comma = take(',');
      skip_spaces();
      if (!trailing_comma && !at(')')) return expected("',' or ')'");
    }
    ++pos_;
    if (dims.size() == 1 && !trailing_comma) {
      return bad(fmt::format("header: shape ({}) is an integer, not a tuple (a 1-D shape is written ({},))", dims[0],
                             dims[0]));
    }
    return dims;
  }

  Expected<Ok> entry(Header& h, bool (&seen)[3]) {
    const std::size_t key_at = base_ + pos_;
    auto key = string();
    if (!key) return key.error();
    skip_spaces();
    if (!take(':')) return expected("':'");
    skip_spaces();
    int index = *key == "descr" ? 0 : *key == "fortran_order" ? 1 : *key == "shape" ? 2 : -1;
    if (index < 0)
      return bad(fmt::format("header byte {}: unknown key '{}' (descr, fortran_order, shape)", key_at, *key));
    if (seen[index]) return bad(fmt::format("header byte {}: key '{}' given twice", key_at, *key));
    seen[index] = true;
    if (index == 0) {
      const std::size_t value_at = base_ + pos_;
      auto d = string();
      if (!d)
        return at('[') ? bad(fmt::format("header byte {}: descr: a structured dtype (a list), not one word", value_at))
                       : d.error();
      return dtype(h, *d, value_at);
    }
    if (index == 1) {
      if (text_.substr(pos_, 4) == "True") {
        h.fortran_order = true;
        pos_ += 4;
      } else if (text_.substr(pos_, 5) == "False") {
        h.fortran_order = false;
        pos_ += 5;
      } else {
        return expected("True or False");
      }
      return Ok{};
    }
    auto dims = tuple();
    if (!dims) return dims.error();
    h.shape = std::move(*dims);
    return Ok{};
  }

  static Expected<Ok> dtype(Header& h, const std::string& d, std::size_t at) {
    const auto refuse = [&](const std::string& why) {
      return bad(fmt::format("header byte {}: descr '{}': {}", at, d, why));
    };
    if (d.size() != 3) return refuse("not a dtype bitproof reads (<u1 <u2 <u4 <u8, <i1 <i2 <i4 <i8, <f2 <f4, |u1 |i1)");
    const char order = d[0], kind = d[1], size = d[2];
    if (kind == 'u') {
      h.kind = Kind::kUnsigned;
    } else if (kind == 'i') {
      h.kind = Kind::kSigned;
    } else if (kind == 'f') {
      h.kind = Kind::kFloat;
    } else {
      return refuse("not an integer or float dtype");
    }
    if (size != '1' && size != '2' && size != '4' && size != '8')
      return refuse("an item size other than 1, 2, 4 or 8 bytes");
    h.item_bytes = size - '0';
    if (h.kind == Kind::kFloat && h.item_bytes == 1) return refuse("not a float dtype numpy has");
    if (order == '>')
      return refuse("big-endian: write the array little-endian (arr.astype(arr.dtype.newbyteorder('<')))");
    if (order == '|' && h.item_bytes != 1) return refuse("'|' (no byte order) for a multi-byte item");
    if (order != '<' && order != '|') return refuse("the byte order must be '<' (or '|' for one byte)");
    h.descr = d;
    return Ok{};
  }

  std::string_view text_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

std::uint32_t le(std::string_view bytes, std::size_t at, int n) {
  std::uint32_t v = 0;
  for (int i = 0; i < n; ++i) v |= std::uint32_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  return v;
}

}  // namespace

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::uint64_t Header::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;
  return n;
}

Expected<Header> parse_header(std::string_view file) {
  if (file.size() < kMagic.size() || file.substr(0, kMagic.size()) != kMagic) {
    return bad("not a .npy file (its first bytes are not \\x93NUMPY)");
  }
  if (file.size() < 8) return bad(fmt::format("truncated: {} bytes, the version is at bytes 6 and 7", file.size()));
  Header h;
  h.major = static_cast<unsigned char>(file[6]);
  h.minor = static_cast<unsigned char>(file[7]);
  if (h.minor != 0 || h.major < 1 || h.major > 3) {
    return bad(fmt::format("version {}.{}: bitproof reads .npy versions 1.0, 2.0 and 3.0", h.major, h.minor));
  }
  const int len_bytes = h.major == 1 ? 2 : 4;
  if (file.size() < 8 + static_cast<std::size_t>(len_bytes)) {
    return bad(fmt::format("truncated: {} bytes, the header length ends at byte {}", file.size(), 8 + len_bytes));
  }
  const std::size_t header_len = le(file, 8, len_bytes);
  const std::size_t base = 8 + static_cast<std::size_t>(len_bytes);
  if (header_len > kMaxHeaderBytes) {
    return bad(fmt::format("a header of {} bytes (bitproof reads at most {})", header_len, kMaxHeaderBytes));
  }
  if (file.size() - base < header_len) {
    return bad(fmt::format("truncated: {} bytes, the header says it ends at byte {}", file.size(), base + header_len));
  }
  const std::string_view text = file.substr(base, header_len);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if ((u < 0x20 && u != '\n') || u >= 0x7F)
      return bad(fmt::format("header byte {}: {} (not printable ASCII)", base + i, shown(text[i])));
  }
  auto parsed = DictReader(text, base).read(std::move(h));
  if (!parsed) return parsed.error();
  parsed->data_offset = base + header_len;
  std::uint64_t n = 1;
  for (std::uint64_t d : parsed->shape) {
    if (d != 0 && n > UINT64_MAX / 8 / d) return bad("header: shape: more elements than 64 bits count");
    n *= d;
  }
  return parsed;
}

Expected<Header> parse_file(std::string_view file) {
  auto h = parse_header(file);
  if (!h) return h;
  const std::uint64_t want = h->elements() * static_cast<std::uint64_t>(h->item_bytes);
  const std::uint64_t have = file.size() - h->data_offset;
  if (have != want) {
    return bad(fmt::format("{} data bytes after the header, but shape {} of {} needs {}{}", have, shape_text(h->shape),
                           h->descr, want, have < want ? " (truncated)" : " (trailing bytes)"));
  }
  return h;
}

std::string make_header(std::string_view descr, const std::vector<std::uint64_t>& shape) {
  std::string dims;
  for (std::uint64_t d : shape) dims += fmt::format("{}, ", d);
  if (shape.size() == 1)
    dims.pop_back();  // (N,)
  else if (!dims.empty())
    dims.resize(dims.size() - 2);
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  const std::size_t unpadded = kMagic.size() + 2 + 2 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

}  // namespace bitproof::npy
