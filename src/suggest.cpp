#include "suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace bitproof {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and
// adjacent transpositions cost one each.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  std::iota(d[0].begin(), d[0].end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// `word` inside `name`, or its characters in order with the first ones equal.
bool abbreviates(std::string_view word, std::string_view name) {
  if (word.size() < 2) return false;
  if (name.find(word) != std::string_view::npos) return true;
  if (name.front() != word.front()) return false;
  std::size_t at = 0;
  for (char c : name) at += at < word.size() && c == word[at] ? 1 : 0;
  return at == word.size();
}

}  // namespace

std::vector<std::string> nearest_names(std::string_view word, const std::vector<std::string>& candidates,
                                       std::size_t most) {
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 4);
  std::vector<std::pair<std::size_t, std::string>> near;
  std::size_t best = limit;
  for (const std::string& name : candidates) {
    const std::size_t distance = edit_distance(word, name);
    if (distance <= limit) {
      near.emplace_back(distance, name);
      best = std::min(best, distance);
    } else if (abbreviates(word, name)) {
      near.emplace_back(limit + 1 + (name.size() - word.size()), name);  // after every close spelling
    }
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [distance, name] : near) {
    if (out.size() == most || (distance <= limit && distance > best + 1)) break;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> near = nearest_names(word, candidates);
  if (near.empty()) return "";
  std::string names;
  for (std::size_t i = 0; i < near.size(); ++i) {
    names += fmt::format("{}\"{}\"", i == 0 ? "" : (i + 1 == near.size() ? " or " : ", "), near[i]);
  }
  return fmt::format(" (did you mean {}?)", names);
}

}  // namespace bitproof
