#include "name_filter.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include "strict_json.hpp"

namespace bitproof {

// A compiled pattern may use this much memory; a pattern that needs more is refused.
constexpr std::int64_t kPatternMemory = std::int64_t{8} << 20;

Expected<NameFilter> NameFilter::make(const std::string& pattern, const std::string& flag) {
  NameFilter filter;
  filter.pattern_ = pattern;
  if (pattern.empty()) return filter;
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kPatternMemory);
  filter.re_ = std::make_unique<RE2>(pattern, options);
  if (!filter.re_->ok()) {
    return Error{fmt::format("{}: {}: invalid regular expression: {}", flag, printable(pattern),
                             printable(filter.re_->error()))};
  }
  return filter;
}

NameFilter::NameFilter(NameFilter&&) noexcept = default;
NameFilter& NameFilter::operator=(NameFilter&&) noexcept = default;
NameFilter::~NameFilter() = default;

bool NameFilter::selects(std::string_view name) const { return re_ == nullptr || RE2::PartialMatch(name, *re_); }

}  // namespace bitproof
