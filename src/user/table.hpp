// Output tables: the bits a team's own kernel (Triton, PyTorch, anything that
// is not CUDA C++) wrote for every case of a spec's domain, in case order
// (`bitproof spec cases` writes the inputs in that order). A user recipe names
// one instead of a function:
//   {"name": "team.e4m3_fp16.torch", "table": "out.npy", "inputs": [...], "output": "fp16", "intent": "product"}
// with "table_format" (optional): "npy", or raw little-endian words "u8",
// "u16", "u32"; default "npy" for a name ending in .npy, else raw words of the
// output format's storage width (u8 up to 8 bits, u16 up to 16, u32 up to 32).
//
// A .npy table (npy.hpp for the header) has shape (N,), N the spec's case
// count, C order, and one of these dtypes:
//   unsigned   <u1 |u1 <u2 <u4 <u8   at least the output's bits wide
//   signed     <i1 |i1 <i2 <i4       exactly the output's storage width: a
//                                    bit view (torch's out.view(torch.int16)),
//                                    read as the two's-complement bits
//   float      <f2 for an fp16 output, <f4 for an fp32 output: the dtype is
//                                    the format, its bytes are the bits (np.save
//                                    keeps NaN payloads); any other float is a
//                                    value, not bits, and is refused
// A word with bits set above the output format's width is refused with its
// case index and value. Wrong length, dtype, shape, byte order, Fortran order
// and trailing bytes are refused: a table is bad input, never a guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "format/format.hpp"

namespace bitproof::user {

enum class TableFormat : std::uint8_t { kNpy, kRaw8, kRaw16, kRaw32 };

[[nodiscard]] std::optional<TableFormat> table_format_by_name(std::string_view name);
[[nodiscard]] std::string_view table_format_name(TableFormat format);
// Bytes of the smallest of 1, 2 and 4 that holds `format`'s bits.
[[nodiscard]] int storage_bytes(FormatId format);
// "npy" for a path ending in .npy, else raw words of the output's storage width.
[[nodiscard]] TableFormat default_table_format(std::string_view path, FormatId output);
// Bytes per word of a raw format (0 for npy).
[[nodiscard]] int raw_word_bytes(TableFormat format);

struct TableFile {
  std::vector<std::uint32_t> words;  // one per case, in case order
  std::string sha256;                // of the file's bytes
  std::uint64_t bytes = 0;
  std::string layout;  // for the report: "npy <u2 (16384,)", "raw u16"
};

// Decodes a table's bytes as the bits of `output` over `cases` cases. Errors
// say what is wrong, without the file's name (the caller adds it).
[[nodiscard]] Expected<TableFile> decode_table(std::string_view bytes, TableFormat format, FormatId output,
                                               std::uint64_t cases);
// Reads and decodes the file; a file far larger than `cases` allows is
// refused before it is read. Errors start with "PATH: ".
[[nodiscard]] Expected<TableFile> read_table(const std::string& path, TableFormat format, FormatId output,
                                             std::uint64_t cases);

}  // namespace bitproof::user
