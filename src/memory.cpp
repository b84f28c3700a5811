#include "memory.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

namespace bitproof {
namespace {

// "123", "4G", "512M": bytes (suffixes are powers of 1024); nullopt when malformed.
std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::uint64_t n = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc{} || ptr == text.data()) return std::nullopt;
  const std::string_view suffix(ptr, static_cast<std::size_t>(end - ptr));
  int shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else if (!suffix.empty()) return std::nullopt;
  if (shift > 0 && n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

// The "Key:   123 kB" line of a /proc file (meminfo, self/status), in bytes.
std::optional<std::uint64_t> kb_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::uint64_t kb = 0;
    if (fields >> kb) return kb * 1024;
  }
  return std::nullopt;
}

// A one-number file (cgroup v2's memory.max, memory.current); nullopt for "max" or none.
std::optional<std::uint64_t> number_file(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word)) return std::nullopt;
  return parse_size(word);
}

// The cgroup v2 directory of this process ("0::/path" in /proc/self/cgroup).
std::string cgroup_dir() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return "";
}

void take_least(MemoryLimit& limit, std::uint64_t bytes, const std::string& source) {
  if (limit.source.empty() || bytes < limit.bytes) limit = {bytes, source};
}

}  // namespace

Expected<MemoryLimit> memory_limit() {
  if (const char* env = std::getenv("BITPROOF_MEMORY_LIMIT"); env != nullptr && *env != '\0') {
    const auto bytes = parse_size(env);
    if (!bytes) {
      return Error{fmt::format("BITPROOF_MEMORY_LIMIT: expected bytes or a number with K, M, G or T, got \"{}\"", env)};
    }
    return MemoryLimit{*bytes, "BITPROOF_MEMORY_LIMIT"};
  }
  MemoryLimit limit;
  if (const auto available = kb_field("/proc/meminfo", "MemAvailable")) take_least(limit, *available, "MemAvailable in /proc/meminfo");
  const std::uint64_t mapped = kb_field("/proc/self/status", "VmSize").value_or(0);  // already mapped
  for (const auto& [resource, name] : {std::pair{RLIMIT_AS, "ulimit -v"}, std::pair{RLIMIT_DATA, "ulimit -d"}}) {
    rlimit r{};
    if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) continue;
    const auto cap = static_cast<std::uint64_t>(r.rlim_cur);
    take_least(limit, cap > mapped ? cap - mapped : 0, name);
  }
  if (const std::string dir = cgroup_dir(); !dir.empty()) {
    if (const auto max = number_file(dir + "/memory.max")) {
      const std::uint64_t used = number_file(dir + "/memory.current").value_or(0);
      take_least(limit, *max > used ? *max - used : 0, "the cgroup's memory.max");
    }
  }
  if (limit.source.empty()) limit = {UINT64_MAX, "no limit found"};
  return limit;
}

std::string bytes_text(std::uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} bytes", bytes);
  const char* units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
  double v = static_cast<double>(bytes) / 1000;
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

Expected<Ok> check_memory(std::uint64_t needed, const std::string& what) {
  auto limit = memory_limit();
  if (!limit) return limit.error();
  if (needed <= limit->bytes) return Ok{};
  return Error{fmt::format("{}: {} of memory needed, but {} allows {} (BITPROOF_MEMORY_LIMIT=BYTES sets the limit)",
                           what, bytes_text(needed), limit->source, bytes_text(limit->bytes))};
}

}  // namespace bitproof
