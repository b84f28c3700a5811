#include "user/table.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "hash/digest.hpp"
#include "strict_json.hpp"
#include "user/npy.hpp"

namespace bitproof::user {
namespace {

using npy::shape_text;

// Whether a .npy dtype carries `output`'s bits (table.hpp lists the rules).
Expected<Ok> check_dtype(const npy::Header& h, FormatId output) {
  const FormatSpec& f = spec_of(output);
  const std::string name(f.name);
  switch (h.kind) {
    case npy::Kind::kUnsigned:
      if (h.item_bytes * 8 < f.bits) {
        return Error{
            fmt::format("dtype {} is {} bits, narrower than {}'s {}", h.descr, h.item_bytes * 8, name, f.bits)};
      }
      return Ok{};
    case npy::Kind::kSigned:
      if (h.item_bytes != storage_bytes(output)) {
        return Error{
            fmt::format("dtype {}: a signed table must be a bit view of {}'s {}-byte storage (|i1, <i2 or <i4 "
                        "to match), or unsigned",
                        h.descr, name, storage_bytes(output))};
      }
      return Ok{};
    case npy::Kind::kFloat:
      if ((h.item_bytes == 2 && output == FormatId::fp16) || (h.item_bytes == 4 && output == FormatId::fp32))
        return Ok{};
      return Error{
          fmt::format("dtype {} holds values of another float format than the output {}: store the bits "
                      "(e.g. out.view(torch.int16) or .view(np.uint16)), not a converted value",
                      h.descr, name)};
  }
  return Ok{};
}

// Words of `item_bytes` little-endian bytes from `data`, each checked against the output's width.
Expected<std::vector<std::uint32_t>> words_of(std::string_view data, int item_bytes, FormatId output,
                                              std::uint64_t cases) {
  const FormatSpec& f = spec_of(output);
  std::vector<std::uint32_t> words(cases);
  for (std::uint64_t k = 0; k < cases; ++k) {
    std::uint64_t v = 0;
    for (int b = 0; b < item_bytes; ++b) {
      v |= std::uint64_t{static_cast<unsigned char>(data[k * item_bytes + b])} << (8 * b);
    }
    if ((v >> f.bits) != 0) {
      return Error{fmt::format("case {}: value 0x{:X} has bits set above {}'s {} bits", k, v, f.name, f.bits)};
    }
    words[k] = static_cast<std::uint32_t>(v);
  }
  return words;
}

Expected<TableFile> decode_npy(std::string_view bytes, FormatId output, std::uint64_t cases) {
  auto h = npy::parse_file(bytes);
  if (!h) return h.error();
  if (h->fortran_order) return Error{"fortran_order True: write a C-order array (np.ascontiguousarray)"};
  if (h->shape.size() != 1) {
    return Error{
        fmt::format("shape {}: expected ({},), one word per case of the spec in case order (flatten it: "
                    ".reshape(-1))",
                    shape_text(h->shape), cases)};
  }
  if (h->shape[0] != cases) {
    return Error{
        fmt::format("shape {}: the spec's domain has {} cases (a table covers exactly the spec's domain, in "
                    "case order: bitproof spec cases)",
                    shape_text(h->shape), cases)};
  }
  if (auto ok = check_dtype(*h, output); !ok) return ok.error();
  auto words = words_of(bytes.substr(h->data_offset), h->item_bytes, output, cases);
  if (!words) return words.error();
  return TableFile{std::move(*words), "", bytes.size(), fmt::format("npy {} {}", h->descr, shape_text(h->shape))};
}

Expected<TableFile> decode_raw(std::string_view bytes, TableFormat format, FormatId output, std::uint64_t cases) {
  const int width = raw_word_bytes(format);
  if (width * 8 < spec_of(output).bits) {
    return Error{fmt::format("table_format {}: words narrower than {}'s {} bits", table_format_name(format),
                             spec_of(output).name, spec_of(output).bits)};
  }
  const std::uint64_t want = cases * static_cast<std::uint64_t>(width);
  if (bytes.size() != want) {
    return Error{
        fmt::format("{} bytes, but the spec's {} cases of {}-byte words ({}) need {}{}", bytes.size(), cases, width,
                    table_format_name(format), want,
                    bytes.size() % static_cast<std::uint64_t>(width) != 0 ? " (not a whole number of words)" : "")};
  }
  auto words = words_of(bytes, width, output, cases);
  if (!words) return words.error();
  return TableFile{std::move(*words), "", bytes.size(), fmt::format("raw {}", table_format_name(format))};
}

}  // namespace

std::optional<TableFormat> table_format_by_name(std::string_view name) {
  for (TableFormat f : {TableFormat::kNpy, TableFormat::kRaw8, TableFormat::kRaw16, TableFormat::kRaw32}) {
    if (table_format_name(f) == name) return f;
  }
  return std::nullopt;
}

std::string_view table_format_name(TableFormat format) {
  switch (format) {
    case TableFormat::kNpy: return "npy";
    case TableFormat::kRaw8: return "u8";
    case TableFormat::kRaw16: return "u16";
    case TableFormat::kRaw32: return "u32";
  }
  return "?";
}

int storage_bytes(FormatId format) {
  const int bits = spec_of(format).bits;
  return bits <= 8 ? 1 : bits <= 16 ? 2 : 4;
}

int raw_word_bytes(TableFormat format) {
  switch (format) {
    case TableFormat::kNpy: return 0;
    case TableFormat::kRaw8: return 1;
    case TableFormat::kRaw16: return 2;
    case TableFormat::kRaw32: return 4;
  }
  return 0;
}

TableFormat default_table_format(std::string_view path, FormatId output) {
  if (path.size() >= 4 && path.substr(path.size() - 4) == ".npy") return TableFormat::kNpy;
  const int bytes = storage_bytes(output);
  return bytes == 1 ? TableFormat::kRaw8 : bytes == 2 ? TableFormat::kRaw16 : TableFormat::kRaw32;
}

Expected<TableFile> decode_table(std::string_view bytes, TableFormat format, FormatId output, std::uint64_t cases) {
  auto t = format == TableFormat::kNpy ? decode_npy(bytes, output, cases) : decode_raw(bytes, format, output, cases);
  if (t) t->sha256 = sha256_hex(std::string(bytes));
  return t;
}

Expected<TableFile> read_table(const std::string& path, TableFormat format, FormatId output, std::uint64_t cases) {
  // A file far larger than any table of `cases` words is refused before it is read.
  const std::uint64_t largest = format == TableFormat::kNpy
                                    ? npy::kMaxHeaderBytes + 12 + cases * 8
                                    : cases * static_cast<std::uint64_t>(raw_word_bytes(format));
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > largest) {
    return Error{fmt::format("{}: {} bytes, more than a table of the spec's {} cases can be ({} at most)", path, size,
                             cases, largest)};
  }
  auto bytes = read_input_file(path, "the table", largest);
  if (!bytes) return bytes.error();
  auto t = decode_table(*bytes, format, output, cases);
  if (!t) return Error{fmt::format("{}: {}", path, t.error().message)};
  return t;
}

}  // namespace bitproof::user
