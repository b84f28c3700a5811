#include "format/format.hpp"

namespace bitproof {

std::optional<FormatId> format_by_name(std::string_view name) {
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    if (kFormats[i].name == name) return static_cast<FormatId>(i);
  }
  return std::nullopt;
}

}  // namespace bitproof
