// A strict reader of NumPy's .npy header, and the writer bitproof uses for
// `spec cases`. The format (numpy.lib.format, versions 1.0, 2.0 and 3.0):
//   "\x93NUMPY" major minor   magic and version (1.0, 2.0 or 3.0; nothing else)
//   HEADER_LEN                u16 LE (1.0) or u32 LE (2.0, 3.0)
//   HEADER                    HEADER_LEN bytes: a Python dict literal with exactly
//                             the keys 'descr' (a dtype string), 'fortran_order'
//                             (True/False) and 'shape' (a tuple of integers), each
//                             once, in any order; spaces after it and one '\n' last
//   data                      the array's bytes
// Only what bitproof can read as words is accepted: a plain dtype string (no
// structured or sub-array dtypes), kind u, i or f, 1, 2, 4 or 8 bytes,
// little-endian ('<', or '|' for one byte). Versions 3.0's UTF-8 is refused
// outside ASCII (only structured field names need it). Errors are one line
// saying what is wrong and where (byte offsets).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"

namespace bitproof::npy {

enum class Kind : std::uint8_t { kUnsigned, kSigned, kFloat };

struct Header {
  int major = 1, minor = 0;
  std::string descr;  // as written, e.g. "<u2"
  Kind kind = Kind::kUnsigned;
  int item_bytes = 1;
  bool fortran_order = false;
  std::vector<std::uint64_t> shape;
  std::size_t data_offset = 0;                   // where the data starts
  [[nodiscard]] std::uint64_t elements() const;  // product of shape (1 for ()); parse_header checks it fits
};

// The longest header accepted (numpy itself refuses more than 10,000 bytes by default).
inline constexpr std::size_t kMaxHeaderBytes = 65536;

// Parses the header at the start of `file` (the data need not follow: the
// caller checks the length). Refuses a wrong magic, an unknown version, a
// HEADER_LEN past the end, a header that is not exactly the dict above, a
// dtype outside the list above, and a shape whose element count times the
// item size overflows 64 bits.
[[nodiscard]] Expected<Header> parse_header(std::string_view file);

// Parses `file` as a whole array: the header, then exactly elements() x
// item_bytes data bytes (truncated data and trailing bytes are refused).
[[nodiscard]] Expected<Header> parse_file(std::string_view file);

// A shape as Python writes a tuple: "(8,)", "(2, 4)", "()".
[[nodiscard]] std::string shape_text(const std::vector<std::uint64_t>& shape);

// A version 1.0 header for a C-order array of `descr` and `shape`, padded to a
// multiple of 64 bytes as numpy writes it.
[[nodiscard]] std::string make_header(std::string_view descr, const std::vector<std::uint64_t>& shape);

}  // namespace bitproof::npy
