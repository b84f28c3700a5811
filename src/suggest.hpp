// "did you mean …?": the known names nearest to a mistyped one (a subcommand,
// a flag, a recipe, a format), for one-line errors that help.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bitproof {

// The candidates nearest to `word`, best first, at most `most`: those within an
// edit distance of max(2, |word| / 4) and at most one more than the nearest (an
// adjacent swap counts one), then those
// that hold `word` whole or as an abbreviation (its characters in order, the
// first one first: "md" → "markdown"). Empty when none is near.
[[nodiscard]] std::vector<std::string> nearest_names(std::string_view word, const std::vector<std::string>& candidates,
                                                     std::size_t most = 3);

// " (did you mean \"a\" or \"b\"?)", or "" when no candidate is near.
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace bitproof
