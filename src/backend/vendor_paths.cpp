#include "backend/vendor_paths.hpp"

#include <fmt/format.h>

#include <charconv>
#include <optional>

namespace bitproof {
namespace {

struct Target {
  int number = 0;       // 90 for "90a-real"
  bool family = false;  // an "a" or "f" suffix: __CUDA_ARCH_FAMILY_SPECIFIC__ is defined
  std::string text;
};

std::optional<Target> parse_target(std::string_view entry) {
  Target t;
  t.text = std::string(entry);
  const auto [end, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), t.number);
  if (ec != std::errc{} || t.number <= 0) return std::nullopt;
  t.family = end != entry.data() + entry.size() && (*end == 'a' || *end == 'f');
  return t;
}

std::optional<Target> pick(std::string_view architectures, int major, int minor) {
  const int device = major * 10 + minor;
  std::optional<Target> best;
  std::size_t start = 0;
  while (start <= architectures.size()) {
    std::size_t stop = architectures.find(';', start);
    if (stop == std::string_view::npos) stop = architectures.size();
    if (auto t = parse_target(architectures.substr(start, stop - start))) {
      // Family-specific code runs only on its own major architecture.
      const bool fits = t->number <= device && (!t->family || t->number / 10 == major);
      if (fits && (!best || t->number > best->number || (t->number == best->number && t->family))) best = t;
    }
    start = stop + 1;
  }
  return best;
}

}  // namespace

std::string target_for_device(std::string_view architectures, int major, int minor) {
  auto t = pick(architectures, major, minor);
  return t ? t->text : std::string();
}

nlohmann::ordered_json vendor_conversion_paths(const Spec& spec, std::string_view architectures, int major, int minor) {
  nlohmann::ordered_json paths = nlohmann::ordered_json::object();
  const auto target = pick(architectures, major, minor);
  const int arch = target ? target->number * 10 : 0;  // as __CUDA_ARCH__: 900 for sm_90
  const bool family = target && target->family;
  const std::string where = target ? fmt::format("compiled for {}, run on sm_{}{}", target->text, major, minor)
                                   : fmt::format("no image target fits sm_{}{}", major, minor);
  for (const RecipeEntry* r : spec.recipes()) {
    const std::string_view name = r->card->name;
    if (!name.starts_with("cuda_vendor.")) continue;
    const bool fp8 = name.find("e4m3") != std::string_view::npos || name.find("e5m2") != std::string_view::npos;
    const bool hardware = fp8 ? arch >= 890 : (arch >= 1000 && family);
    const std::string how = fp8 ? "cvt.rn.f16x2.e4m3x2 / e5m2x2 from __CUDA_ARCH__ 890 (cuda_fp8.hpp)"
                                : "cvt for E2M1 / UE8M0 only on family-specific sm_100+ targets (cuda_fp8.h)";
    paths[std::string(name)] =
        fmt::format("{}: {}; {}", hardware ? "hardware cvt" : "software emulation (the header's C code)", where, how);
  }
  return paths;
}

}  // namespace bitproof
