#include "checkpoint/safetensors.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "strict_json.hpp"
#include "parallel.hpp"

namespace bitproof::checkpoint {

using json = nlohmann::json;

namespace {

// Every dtype of the safetensors reference implementation, with its bit size.
constexpr std::array kDTypes = {
    DTypeInfo{DType::kBool, "BOOL", 8},
    DTypeInfo{DType::kF4, "F4", 4},
    DTypeInfo{DType::kF6E2M3, "F6_E2M3", 6},
    DTypeInfo{DType::kF6E3M2, "F6_E3M2", 6},
    DTypeInfo{DType::kU8, "U8", 8},
    DTypeInfo{DType::kI8, "I8", 8},
    DTypeInfo{DType::kF8E5M2, "F8_E5M2", 8},
    DTypeInfo{DType::kF8E4M3, "F8_E4M3", 8},
    DTypeInfo{DType::kF8E4M3Fnuz, "F8_E4M3FNUZ", 8},
    DTypeInfo{DType::kF8E5M2Fnuz, "F8_E5M2FNUZ", 8},
    DTypeInfo{DType::kF8E8M0, "F8_E8M0", 8},
    DTypeInfo{DType::kI16, "I16", 16},
    DTypeInfo{DType::kU16, "U16", 16},
    DTypeInfo{DType::kF16, "F16", 16},
    DTypeInfo{DType::kBF16, "BF16", 16},
    DTypeInfo{DType::kI32, "I32", 32},
    DTypeInfo{DType::kU32, "U32", 32},
    DTypeInfo{DType::kF32, "F32", 32},
    DTypeInfo{DType::kC64, "C64", 64},
    DTypeInfo{DType::kF64, "F64", 64},
    DTypeInfo{DType::kI64, "I64", 64},
    DTypeInfo{DType::kU64, "U64", 64},
};

consteval bool dtypes_in_enum_order() {
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    if (static_cast<std::size_t>(kDTypes[i].id) != i) return false;
  }
  return true;
}
static_assert(dtypes_in_enum_order());

constexpr std::string_view kMetadataKey = "__metadata__";

std::uint64_t read_le64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct HeaderWhere {
  const std::string& file;
  [[nodiscard]] Error at(std::string_view field, const std::string& what) const {
    return Error{fmt::format("{}: {}: {}", file, printable(field), what)};
  }
};

Expected<std::uint64_t> header_length(std::span<const unsigned char> bytes, const HeaderWhere& w) {
  if (bytes.size() < 8) {
    return w.at("header", fmt::format("truncated file: {} bytes, shorter than the 8-byte header length", bytes.size()));
  }
  const std::uint64_t n = read_le64(bytes.data());
  if (n > kMaxHeaderBytes) {
    return w.at("header", fmt::format("header length {} over the limit of {} bytes", n, kMaxHeaderBytes));
  }
  if (n > bytes.size() - 8) {
    return w.at("header", fmt::format("header length {} past the end of the file ({} bytes)", n, bytes.size()));
  }
  return n;
}

Expected<std::uint64_t> unsigned_number(const json& j, const HeaderWhere& w, const std::string& tensor,
                                        std::string_view what) {
  if (!j.is_number_unsigned()) {
    return w.at(tensor, fmt::format("{} must hold non-negative integers, found {}", what, printable(j.dump())));
  }
  return j.get<std::uint64_t>();
}

Expected<std::vector<std::uint64_t>> parse_shape(const json& j, const HeaderWhere& w, const std::string& tensor) {
  if (!j.is_array()) return w.at(tensor, fmt::format("shape must be an array, found {}", j.type_name()));
  std::vector<std::uint64_t> shape;
  for (const json& d : j) {
    auto v = unsigned_number(d, w, tensor, "shape");
    if (!v) return v.error();
    shape.push_back(*v);
  }
  return shape;
}

// Bytes of product(shape) elements of `bits` bits each, or an error on overflow or a partial byte.
Expected<std::uint64_t> byte_size(const std::vector<std::uint64_t>& shape, int bits, const HeaderWhere& w,
                                  const std::string& tensor) {
  unsigned __int128 total_bits = static_cast<unsigned>(bits);
  for (const std::uint64_t d : shape) {
    total_bits *= d;
    if (total_bits > (static_cast<unsigned __int128>(UINT64_MAX) << 3)) {
      return w.at(tensor, "shape overflows: more than 2^64 bytes");
    }
  }
  if (total_bits % 8 != 0) return w.at(tensor, "shape x dtype bits is not a whole number of bytes");
  return static_cast<std::uint64_t>(total_bits / 8);
}

Expected<TensorInfo> parse_tensor(const std::string& name, const json& j, const HeaderWhere& w) {
  if (!j.is_object()) return w.at(name, fmt::format("tensor entry must be an object, found {}", j.type_name()));
  for (const auto& [key, value] : j.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      return w.at(name, fmt::format("unknown key \"{}\"", printable(key)));
    }
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!j.contains(key)) return w.at(name, fmt::format("missing \"{}\"", key));
  }
  TensorInfo t;
  t.name = name;
  const json& dtype = j["dtype"];
  if (!dtype.is_string()) return w.at(name, fmt::format("dtype must be a string, found {}", dtype.type_name()));
  const auto id = dtype_from_name(dtype.get<std::string>());
  if (!id) return w.at(name, fmt::format("unknown dtype \"{}\"", printable(dtype.get<std::string>())));
  t.dtype = *id;
  auto shape = parse_shape(j["shape"], w, name);
  if (!shape) return shape.error();
  t.shape = std::move(*shape);
  const json& offsets = j["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) return w.at(name, "data_offsets must be [begin, end]");
  auto begin = unsigned_number(offsets[0], w, name, "data_offsets");
  if (!begin) return begin.error();
  auto end = unsigned_number(offsets[1], w, name, "data_offsets");
  if (!end) return end.error();
  if (*end < *begin) return w.at(name, fmt::format("data_offsets [{}, {}] end before they begin", *begin, *end));
  t.begin = *begin;
  t.end = *end;
  auto expected = byte_size(t.shape, dtype_bits(t.dtype), w, name);
  if (!expected) return expected.error();
  if (*expected != t.bytes()) {
    return w.at(name, fmt::format("data_offsets [{}, {}] hold {} bytes, but shape and dtype {} need {}", t.begin, t.end,
                                  t.bytes(), dtype_name(t.dtype), *expected));
  }
  return t;
}

Expected<std::vector<std::pair<std::string, std::string>>> parse_metadata(const json& j, const HeaderWhere& w) {
  if (!j.is_object()) return w.at(kMetadataKey, fmt::format("must be an object, found {}", j.type_name()));
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) {
      return w.at(kMetadataKey, fmt::format("\"{}\" must be a string, found {}", printable(key), value.type_name()));
    }
    out.emplace_back(key, value.get<std::string>());
  }
  return out;
}

// The tensors, sorted by offsets, must tile [0, buffer) exactly.
Expected<Ok> check_tiling(std::vector<TensorInfo>& tensors, std::uint64_t buffer, const HeaderWhere& w) {
  for (const TensorInfo& t : tensors) {
    if (t.end > buffer) {
      return w.at(t.name, fmt::format("data_offsets [{}, {}] out of bounds: the data buffer has {} bytes", t.begin,
                                      t.end, buffer));
    }
  }
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : (a.end != b.end ? a.end < b.end : a.name < b.name);
  });
  std::uint64_t covered = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo& t : tensors) {
    if (t.begin < covered) {
      return w.at(t.name, fmt::format("data_offsets [{}, {}] overlap tensor {} ending at {}", t.begin, t.end,
                                      printable(previous->name), covered));
    }
    if (t.begin > covered) {
      const std::string after = previous ? "after tensor " + printable(previous->name) : "at the start of the buffer";
      return w.at(t.name, fmt::format("data_offsets [{}, {}] leave a hole of {} bytes {}", t.begin, t.end,
                                      t.begin - covered, after));
    }
    covered = t.end;
    previous = &t;
  }
  if (covered != buffer) {
    const std::string field = previous ? previous->name : std::string("data buffer");
    return w.at(field, fmt::format("the tensors end at {} but the data buffer has {} bytes ({} trailing bytes)",
                                   covered, buffer, buffer - covered));
  }
  return Ok{};
}

// ---- plain readers: JSON in its common shape, straight from the text ----
//
// The headers and the index of a sharded checkpoint were most of an audit's
// serial time: a JSON document costs a dozen allocations a tensor. A plain
// reader takes a file in its common shape without one: every string printable
// ASCII without escapes, every number an unsigned integer, whitespace as JSON
// allows. Anything else, and any rule the full reader would refuse (a key
// given twice, an unknown dtype, sizes that disagree), makes it give up
// (nullopt): the full reader then answers. So a plain reader never refuses a
// file, and what it takes the full reader reads alike (the tests and the fuzz
// target compare the two).

// Sorts `items` by key(item); false when two items have the same key.
template <class T, class Key>
bool sort_unique(std::vector<T>& items, Key key) {
  std::sort(items.begin(), items.end(), [&key](const T& a, const T& b) { return key(a) < key(b); });
  return std::adjacent_find(items.begin(), items.end(), [&key](const T& a, const T& b) { return key(a) == key(b); }) ==
         items.end();
}

class PlainJson {
 public:
  explicit PlainJson(std::string_view text) : text_(text) {}

 protected:
  static constexpr int kMaxDepth = 64;

  bool take(char c) {
    skip_space();
    if (at_ == text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  // After an opening bracket: true when another item follows (after a comma
  // but for the first), false at `close`; false on anything else too, which
  // marks the text as not plain for good.
  bool next_item(char close, bool first) {
    if (take(close)) return false;
    if (first || take(',')) return true;
    not_plain_ = true;
    return false;
  }
  // The end of the text, every bracket closed in its place.
  [[nodiscard]] bool at_end() {
    skip_space();
    return at_ == text_.size() && !not_plain_;
  }

  // A string of printable ASCII other than '"' and '\\'.
  std::optional<std::string_view> string() {
    if (!take('"')) return std::nullopt;
    const std::size_t first = at_;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] < 0x20 || text_[at_] > 0x7E || text_[at_] == '\\') return std::nullopt;
      ++at_;
    }
    if (at_ == text_.size()) return std::nullopt;
    return text_.substr(first, at_++ - first);
  }
  // A member's key and its colon.
  std::optional<std::string_view> key() {
    auto k = string();
    if (!k || !take(':')) return std::nullopt;
    return k;
  }

  // 0 or a digit 1-9 and more digits, below 2^64, not the start of a fraction or exponent.
  std::optional<std::uint64_t> number() {
    skip_space();
    if (!next_is_digit()) return std::nullopt;
    std::uint64_t v = 0;
    const std::size_t first = at_;
    while (next_is_digit()) {
      const auto digit = static_cast<std::uint64_t>(text_[at_++] - '0');
      if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
      v = v * 10 + digit;
    }
    if (text_[first] == '0' && at_ - first > 1) return std::nullopt;
    if (at_ < text_.size() && (text_[at_] == '.' || text_[at_] == 'e' || text_[at_] == 'E')) return std::nullopt;
    return v;
  }

  // [n, ...] of number(), possibly empty.
  std::optional<std::vector<std::uint64_t>> numbers() {
    if (!take('[')) return std::nullopt;
    std::vector<std::uint64_t> out;
    for (bool first = true; next_item(']', first); first = false) {
      const auto v = number();
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }

  // {"key": "value", ...}, possibly empty, each key once; sorted by key.
  std::optional<std::vector<std::pair<std::string, std::string>>> string_pairs() {
    if (!take('{')) return std::nullopt;
    std::vector<std::pair<std::string, std::string>> out;
    for (bool first = true; next_item('}', first); first = false) {
      const auto k = key();
      const auto value = k ? string() : std::nullopt;
      if (!value) return std::nullopt;
      out.emplace_back(*k, *value);
    }
    if (!sort_unique(out, [](const auto& p) -> const std::string& { return p.first; })) return std::nullopt;
    return out;
  }

  // Any value made of the above, true, false, null, arrays and objects (each key once).
  bool skip_value(int depth = 0) {
    skip_space();
    if (depth > kMaxDepth || at_ == text_.size()) return false;
    const char c = text_[at_];
    if (c == '"') return string().has_value();
    if (c == '{' || c == '[') return skip_container(depth);
    for (const std::string_view word : {"true", "false", "null"}) {
      if (text_.substr(at_, word.size()) == word) {
        at_ += word.size();
        return true;
      }
    }
    return number().has_value();
  }

 private:
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }
  [[nodiscard]] bool next_is_digit() const { return at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9'; }

  bool skip_container(int depth) {
    const bool object = text_[at_++] == '{';
    const char close = object ? '}' : ']';
    std::vector<std::string_view> keys;
    for (bool first = true; next_item(close, first); first = false) {
      if (object) {
        const auto k = key();
        if (!k) return false;
        keys.push_back(*k);
      }
      if (!skip_value(depth + 1)) return false;
    }
    return sort_unique(keys, [](std::string_view k) { return k; });
  }

  std::string_view text_;
  std::size_t at_ = 0;
  bool not_plain_ = false;
};

// A safetensors header: tensor entries with exactly "dtype", "shape" and
// "data_offsets", and "__metadata__" an object of strings.
class PlainHeaderReader : PlainJson {
 public:
  using PlainJson::PlainJson;

  std::optional<Header> read() {
    Header header;
    bool metadata_seen = false;
    if (!take('{')) return std::nullopt;
    for (bool first = true; next_item('}', first); first = false) {
      const auto name = key();
      if (!name) return std::nullopt;
      if (*name == kMetadataKey) {
        auto metadata = string_pairs();
        if (metadata_seen || !metadata) return std::nullopt;
        header.metadata = std::move(*metadata);
        metadata_seen = true;
      } else if (auto t = tensor(*name)) {
        header.tensors.push_back(std::move(*t));
      } else {
        return std::nullopt;
      }
    }
    // The full parser's order (a JSON object's keys, sorted).
    if (!at_end() || !sort_unique(header.tensors, [](const TensorInfo& t) -> const std::string& { return t.name; })) {
      return std::nullopt;
    }
    return header;
  }

 private:
  std::optional<TensorInfo> tensor(std::string_view name) {
    constexpr unsigned kDtype = 1, kShape = 2, kOffsets = 4;
    TensorInfo t;
    t.name = name;
    std::vector<std::uint64_t> offsets;
    unsigned seen = 0;
    if (!take('{')) return std::nullopt;
    for (bool first = true; next_item('}', first); first = false) {
      const auto k = key();
      if (!k) return std::nullopt;
      const unsigned field = *k == "dtype" ? kDtype : *k == "shape" ? kShape : *k == "data_offsets" ? kOffsets : 0u;
      if (field == 0 || (seen & field) != 0) return std::nullopt;
      seen |= field;
      if (field == kDtype) {
        const auto dtype_text = string();
        const auto dtype = dtype_text ? dtype_from_name(*dtype_text) : std::nullopt;
        if (!dtype) return std::nullopt;
        t.dtype = *dtype;
      } else if (auto values = numbers()) {
        (field == kShape ? t.shape : offsets) = std::move(*values);
      } else {
        return std::nullopt;
      }
    }
    if (seen != (kDtype | kShape | kOffsets) || offsets.size() != 2 || offsets[1] < offsets[0]) return std::nullopt;
    t.begin = offsets[0];
    t.end = offsets[1];
    static const std::string kNoFile;
    const auto bytes = byte_size(t.shape, dtype_bits(t.dtype), HeaderWhere{kNoFile}, t.name);
    if (!bytes || *bytes != t.bytes()) return std::nullopt;
    return t;
  }
};

// An index file: "weight_map" an object of shard names, any other member any value.
class PlainIndexReader : PlainJson {
 public:
  using PlainJson::PlainJson;

  std::optional<std::vector<std::pair<std::string, std::string>>> read() {
    std::optional<std::vector<std::pair<std::string, std::string>>> weight_map;
    std::vector<std::string_view> keys;
    if (!take('{')) return std::nullopt;
    for (bool first = true; next_item('}', first); first = false) {
      const auto k = key();
      if (!k) return std::nullopt;
      keys.push_back(*k);
      if (*k == "weight_map" ? !(weight_map = string_pairs()) : !skip_value()) return std::nullopt;
    }
    if (!at_end() || !weight_map || !sort_unique(keys, [](std::string_view k) { return k; })) return std::nullopt;
    return weight_map;
  }
};

}  // namespace

std::span<const DTypeInfo> all_dtypes() { return kDTypes; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.name == name) return d.id;
  }
  return std::nullopt;
}

std::string_view dtype_name(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)].name; }
int dtype_bits(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)].bits; }

namespace detail {

Expected<Header> read_header_json(std::string_view text, const std::string& file) {
  const HeaderWhere w{file};
  auto parsed = parse_json_strict(text, file, "header");
  if (!parsed) return parsed.error();
  if (!parsed->is_object()) return w.at("header", fmt::format("must be a JSON object, found {}", parsed->type_name()));
  Header header;
  for (const auto& [key, value] : parsed->items()) {
    if (key == kMetadataKey) {
      auto metadata = parse_metadata(value, w);
      if (!metadata) return metadata.error();
      header.metadata = std::move(*metadata);
      continue;
    }
    auto tensor = parse_tensor(key, value, w);
    if (!tensor) return tensor.error();
    header.tensors.push_back(std::move(*tensor));
  }
  return header;
}

std::optional<Header> read_plain_header(std::string_view text) { return PlainHeaderReader(text).read(); }

Expected<std::vector<std::pair<std::string, std::string>>> read_index_json(std::string_view text,
                                                                           const std::string& file) {
  auto parsed = parse_json_strict(text, file, "index");
  if (!parsed) return parsed.error();
  const HeaderWhere w{file};
  if (!parsed->is_object()) return w.at("index", fmt::format("must be a JSON object, found {}", parsed->type_name()));
  if (!parsed->contains("weight_map")) return w.at("weight_map", "missing");
  const nlohmann::json& map = (*parsed)["weight_map"];
  if (!map.is_object()) return w.at("weight_map", fmt::format("must be an object, found {}", map.type_name()));
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& [tensor, shard] : map.items()) {
    if (!shard.is_string()) return w.at(tensor, fmt::format("shard must be a file name, found {}", shard.type_name()));
    entries.emplace_back(tensor, shard.get<std::string>());
  }
  return entries;
}

std::optional<std::vector<std::pair<std::string, std::string>>> read_plain_index(std::string_view text) {
  return PlainIndexReader(text).read();
}

}  // namespace detail

Expected<Header> parse_safetensors(std::span<const unsigned char> file_bytes, const std::string& file) {
  const HeaderWhere w{file};
  auto n = header_length(file_bytes, w);
  if (!n) return n.error();
  const std::string_view text(reinterpret_cast<const char*>(file_bytes.data() + 8), *n);
  auto header = detail::read_plain_header(text);
  if (!header) {
    auto full = detail::read_header_json(text, file);
    if (!full) return full.error();
    header = std::move(*full);
  }
  header->header_bytes = *n;
  if (auto ok = check_tiling(header->tensors, file_bytes.size() - header->data_start(), w); !ok) return ok.error();
  return std::move(*header);
}

// ---- MappedFile ----

Expected<MappedFile> MappedFile::open(const std::string& path) {
  // O_NONBLOCK: a FIFO named like a shard is refused below instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("{}: file: cannot open: {}", path, std::strerror(errno))};
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{fmt::format("{}: file: not a regular file", path)};
  }
  MappedFile m;
  m.size_ = static_cast<std::size_t>(st.st_size);
  m.fd_ = fd;
  if (m.size_ > 0) {
    void* p = mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return Error{fmt::format("{}: file: cannot map: {}", path, std::strerror(errno))};
    m.data_ = static_cast<const unsigned char*>(p);
  }
  return m;
}

Expected<Ok> MappedFile::read_at(std::uint64_t offset, std::span<unsigned char> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{n < 0 ? std::strerror(errno) : "the file ended early (it changed while read)"};
    done += static_cast<std::size_t>(n);
  }
  return Ok{};
}

std::span<unsigned char> PageOffsetBuffer::room_for(std::uint64_t offset, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
  const std::size_t to_page = (kPage - address % kPage) % kPage;
  return {storage_.data() + to_page + offset % kPage, bytes};
}

void MappedFile::release() {
  if (data_) munmap(const_cast<unsigned char*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      fd_(std::exchange(other.fd_, -1)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

// ---- checkpoints ----

namespace {

namespace fs = std::filesystem;

Expected<CheckpointFile> open_file(const fs::path& path, const std::string& name) {
  CheckpointFile f;
  f.path = path.string();
  f.name = name;
  auto map = MappedFile::open(f.path);
  if (!map) return map.error();
  f.map = std::move(*map);
  auto header = parse_safetensors(f.map.bytes(), f.path);
  if (!header) return header.error();
  f.header = std::move(*header);
  return f;
}

// Shard name -> the tensors the weight map puts there, in index order.
using WeightMap = std::map<std::string, std::vector<std::string>>;

Expected<WeightMap> parse_index(const std::string& index_path) {
  auto text = read_input_file(index_path, "the file", kMaxIndexBytes);
  if (!text) return text.error();
  auto entries = detail::read_plain_index(*text);
  if (!entries) {
    auto full = detail::read_index_json(*text, index_path);
    if (!full) return full.error();
    entries = std::move(*full);
  }
  const HeaderWhere w{index_path};
  WeightMap shards;
  for (auto& [tensor, name] : *entries) {
    auto it = shards.find(name);
    if (it == shards.end()) {  // a shard's name is checked once, not once a tensor
      const fs::path p(name);
      if (name.empty() || p.is_absolute() || std::find(p.begin(), p.end(), "..") != p.end()) {
        return w.at(tensor, fmt::format("shard \"{}\" must be a relative path inside the checkpoint", printable(name)));
      }
      it = shards.emplace(name, std::vector<std::string>{}).first;
    }
    it->second.push_back(std::move(tensor));
  }
  return shards;
}

// Tensor name -> its shard's name, both held by the WeightMap.
using ShardOf = std::unordered_map<std::string_view, std::string_view>;

// Every tensor must be where the weight map says, and nowhere else.
Expected<Ok> check_against_index(const CheckpointFile& f, const std::vector<std::string>& listed,
                                 const ShardOf& shard_of, const std::string& index_path) {
  const HeaderWhere w{index_path};
  std::unordered_set<std::string_view> present;
  for (const TensorInfo& t : f.header.tensors) {
    const auto it = shard_of.find(t.name);
    if (it == shard_of.end()) {
      return HeaderWhere{f.path}.at(t.name, fmt::format("tensor not in the weight map of {}", index_path));
    }
    if (it->second != f.name) {
      return HeaderWhere{f.path}.at(
          t.name, fmt::format("the weight map of {} puts this tensor in {}", index_path, printable(it->second)));
    }
    present.insert(t.name);
  }
  for (const std::string& tensor : listed) {
    if (!present.contains(tensor)) return w.at(tensor, fmt::format("tensor missing from shard {}", printable(f.name)));
  }
  return Ok{};
}

// Opens and parses the files on every core (the headers of a large sharded
// checkpoint are megabytes of JSON); results in the order given, so the first
// error reported is the same whatever the thread timing.
std::vector<Expected<CheckpointFile>> open_files(const std::vector<std::pair<fs::path, std::string>>& files) {
  std::vector<std::optional<Expected<CheckpointFile>>> opened(files.size());
  parallel_for(files.size(), resolve_threads(0),
               [&](std::size_t i) { opened[i].emplace(open_file(files[i].first, files[i].second)); });
  std::vector<Expected<CheckpointFile>> out;
  for (auto& f : opened) out.push_back(std::move(*f));
  return out;
}

Expected<Checkpoint> open_indexed(const fs::path& index_path, const std::string& root) {
  auto shards = parse_index(index_path.string());
  if (!shards) return shards.error();
  ShardOf shard_of;
  for (const auto& [shard, tensors] : *shards) {
    for (const std::string& t : tensors) shard_of.emplace(t, shard);
  }
  Checkpoint ck;
  ck.root = root;
  ck.index = index_path.filename().string();
  const fs::path dir = index_path.parent_path();
  std::vector<std::pair<fs::path, std::string>> paths;
  for (const auto& [shard, tensors] : *shards) {
    const fs::path p = dir / shard;
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      return HeaderWhere{index_path.string()}.at(tensors.front(), fmt::format("shard {} is missing", printable(p.string())));
    }
    paths.emplace_back(p, shard);
  }
  auto opened = open_files(paths);
  std::size_t k = 0;
  for (const auto& [shard, tensors] : *shards) {
    auto& f = opened[k++];
    if (!f) return f.error();
    if (auto ok = check_against_index(*f, tensors, shard_of, index_path.string()); !ok) return ok.error();
    ck.files.push_back(std::move(*f));
  }
  return ck;
}

Expected<Ok> check_unique_names(const Checkpoint& ck) {
  std::unordered_map<std::string_view, const CheckpointFile*> seen;
  for (const CheckpointFile& f : ck.files) {
    for (const TensorInfo& t : f.header.tensors) {
      const auto [it, inserted] = seen.emplace(t.name, &f);
      if (!inserted) {
        return HeaderWhere{f.path}.at(t.name, fmt::format("duplicate tensor name: also in {}", it->second->path));
      }
    }
  }
  return Ok{};
}

Expected<fs::path> index_in_directory(const fs::path& dir) {
  std::vector<fs::path> indexes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == kIndexName) return entry.path();
    if (name.ends_with(".safetensors.index.json")) indexes.push_back(entry.path());
  }
  if (ec) return Error{fmt::format("{}: directory: cannot list: {}", dir.string(), ec.message())};
  if (indexes.size() == 1) return indexes.front();
  if (indexes.size() > 1) {
    return Error{
        fmt::format("{}: index: several *.safetensors.index.json and no {}; name one", dir.string(), kIndexName)};
  }
  return fs::path();
}

Expected<Checkpoint> open_directory(const fs::path& dir, const std::string& root) {
  auto index = index_in_directory(dir);
  if (!index) return index.error();
  if (!index->empty()) return open_indexed(*index, root);
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
  }
  if (files.empty()) return Error{fmt::format("{}: directory: no .safetensors files", dir.string())};
  std::sort(files.begin(), files.end());
  Checkpoint ck;
  ck.root = root;
  std::vector<std::pair<fs::path, std::string>> paths;
  for (const fs::path& p : files) paths.emplace_back(p, p.filename().string());
  for (auto& f : open_files(paths)) {
    if (!f) return f.error();
    ck.files.push_back(std::move(*f));
  }
  return ck;
}

}  // namespace

Expected<Checkpoint> open_checkpoint(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) {
    // The system's reason: no such file, a symbolic link loop, a directory that cannot be searched, ...
    const std::string reason = ec ? ec.message() : std::string("no such file or directory");
    return Error{fmt::format("{}: checkpoint: {}", path, reason)};
  }
  Expected<Checkpoint> ck = Error{};
  if (fs::is_directory(p, ec)) {
    ck = open_directory(p, path);
  } else if (p.extension() == ".json") {
    ck = open_indexed(p, path);
  } else {
    auto f = open_file(p, p.filename().string());
    if (!f) return f.error();
    Checkpoint single;
    single.root = path;
    single.files.push_back(std::move(*f));
    ck = std::move(single);
  }
  if (!ck) return ck;
  if (auto ok = check_unique_names(*ck); !ok) return ok.error();
  return ck;
}

}  // namespace bitproof::checkpoint
