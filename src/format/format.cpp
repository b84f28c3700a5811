#include "format/format.hpp"

#include <fmt/format.h>

namespace bitproof {

std::optional<FormatId> format_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    if (kFormats[i].name == name) return static_cast<FormatId>(i);
  }
  return std::nullopt;
}

std::string code_text(std::uint32_t code, int code_bits) {
  if (code_bits <= 8) return std::to_string(code);
  return code_bits == 16 ? fmt::format("0x{:04X}", code) : fmt::format("0x{:08X}", code);
}

}  // namespace bitproof
