#include "format/format.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "suggest.hpp"

namespace bitproof {

std::optional<FormatId> format_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    if (kFormats[i].name == name) return static_cast<FormatId>(i);
  }
  return std::nullopt;
}

std::string unknown_format_text(std::string_view name) {
  std::vector<std::string> names;
  for (const FormatSpec& f : kFormats) names.emplace_back(f.name);
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  return fmt::format("unknown format \"{}\"{} (formats: {})", name, did_you_mean(name, names), all);
}

std::string code_text(std::uint32_t code, int code_bits) {
  if (code_bits <= 8) return std::to_string(code);
  return code_bits == 16 ? fmt::format("0x{:04X}", code) : fmt::format("0x{:08X}", code);
}

}  // namespace bitproof
