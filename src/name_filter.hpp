// --select: a regular expression searched in tensor names, matched in time
// linear in the name (RE2: no backtracking, no recursion), so no pattern and
// no name can hang the audit or overflow the stack. The syntax is RE2's
// (Perl-like; no backreferences or lookaround: those are refused as invalid).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "error.hpp"

namespace re2 {
class RE2;
}

namespace bitproof {

class NameFilter {
 public:
  // An empty pattern selects every name. Fails (exit 2) on a pattern RE2 refuses,
  // naming `flag` and RE2's reason.
  [[nodiscard]] static Expected<NameFilter> make(const std::string& pattern, const std::string& flag);
  NameFilter(NameFilter&&) noexcept;
  NameFilter& operator=(NameFilter&&) noexcept;
  ~NameFilter();

  // Whether the pattern occurs anywhere in `name` (a search, not a full match).
  [[nodiscard]] bool selects(std::string_view name) const;
  [[nodiscard]] const std::string& pattern() const { return pattern_; }
  [[nodiscard]] bool selects_all() const { return re_ == nullptr; }

 private:
  NameFilter() = default;
  std::string pattern_;
  std::unique_ptr<re2::RE2> re_;
};

}  // namespace bitproof
