// first_difference (src/report/compare.cpp) walks the lines of dump(2) one at a
// time; here it is checked against the plain way (print both documents whole,
// split them into lines, compare) on random documents and their mutations.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "report/compare.hpp"

namespace bitproof {
namespace {

// The plain way, as first_difference printed it before it walked lines.
std::string first_difference_whole(const Json& a, const Json& b) {
  const auto lines = [](const Json& j) {
    std::vector<std::string> out;
    std::istringstream in(j.dump(2));
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  };
  const auto la = lines(a), lb = lines(b);
  for (std::size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    const std::string x = i < la.size() ? la[i] : "(end)", y = i < lb.size() ? lb[i] : "(end)";
    if (x != y) return fmt::format("line {}: recorded {} | now {}", i + 1, x, y);
  }
  return "";
}

// A random document: objects, arrays (empty ones too), strings that need
// escaping, integers of both signs, floats, booleans and null.
Json random_json(std::mt19937& rng, int depth) {
  const auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const int kind = depth == 0 ? 3 + pick(6) : pick(9);
  switch (kind) {
    case 0:
    case 1: {
      Json o = Json::object();
      const int n = pick(4);
      for (int i = 0; i < n; ++i) o[fmt::format("k{}\"\\é{}", pick(5), i)] = random_json(rng, depth - 1);
      return o;
    }
    case 2: {
      Json a = Json::array();
      const int n = pick(5);
      for (int i = 0; i < n; ++i) a.push_back(random_json(rng, depth - 1));
      return a;
    }
    case 3: return Json(std::string("s\n\t\"") + static_cast<char>('a' + pick(3)) + "\u00e9");
    case 4: return Json(static_cast<std::int64_t>(pick(7)) - 3);
    case 5: return Json(static_cast<std::uint64_t>(rng()) << 20);
    case 6: return Json(0.5 * pick(5) - 1e-3);
    case 7: return Json(pick(2) == 0);
    default: return Json(nullptr);
  }
}

// `j` with one random change somewhere: a value replaced, an element added or
// removed, a container emptied.
void mutate(Json& j, std::mt19937& rng) {
  const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  Json* at = &j;
  while (at->is_structured() && !at->empty() && pick(3) != 0) {
    auto it = at->begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick(at->size())));
    at = &*it;
  }
  switch (pick(4)) {
    case 0: *at = random_json(rng, 2); break;
    case 1:
      if (at->is_array())
        at->push_back(random_json(rng, 1));
      else if (at->is_object())
        (*at)["new"] = random_json(rng, 1);
      else
        *at = Json::array({*at});
      break;
    case 2:
      if (at->is_array() && !at->empty())
        at->erase(at->size() - 1);
      else
        *at = Json();
      break;
    default: *at = at->is_object() ? Json::object() : Json::array(); break;
  }
}

TEST_SUITE("report") {
  TEST_CASE("first_difference: the first line where dump(2) differs, found without printing either document") {
    std::mt19937 rng(7);
    int differing = 0;
    for (int round = 0; round < 3000; ++round) {
      const Json a = random_json(rng, 4);
      Json b = a;
      CHECK(first_difference(a, b).empty());
      mutate(b, rng);
      const std::string expected = first_difference_whole(a, b);
      differing += !expected.empty();
      const std::string got = first_difference(a, b);
      if (got != expected) {
        FAIL_CHECK(fmt::format("round {}:\n  walked: {}\n  whole:  {}\n  a: {}\n  b: {}", round, got, expected,
                               a.dump(), b.dump()));
        break;
      }
    }
    CHECK(differing > 2000);  // the mutations mostly change the text

    // An audit-sized histogram differing in its last pair's count: line 3 + 4 * 199,999 + 2 of dump(2).
    Json big = {{"histogram", Json::array()}};
    for (std::uint32_t c = 0; c < 200000; ++c) big["histogram"].push_back({c, 1});
    Json other = big;
    other["histogram"].back()[1] = 2;
    CHECK(first_difference(big, other) == "line 800001: recorded       1 | now       2");
    CHECK(first_difference(big, other) == first_difference_whole(big, other));
  }

  TEST_CASE("first_difference with histograms kept apart: as with them in the documents") {
    using Pairs = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
    // A document of `tensors` whose histograms stand apart as [], and the same with them in place.
    struct Doc {
      Json lean, whole;
      std::vector<Pairs> lists;
      PairsApart apart;
    };
    const auto doc = [](Doc& d, const std::vector<Pairs>& lists,
                        const Json& tail) {  // d in place: `apart` holds addresses
      d.lists = lists;
      d.lean = {{"tensors", Json::array()}, {"tail", tail}};
      d.whole = d.lean;
      for (const Pairs& h : lists) {
        Json pairs = Json::array();
        for (const auto& [code, count] : h) pairs.push_back({code, count});
        d.lean["tensors"].push_back({{"name", "t"}, {"histogram", Json::array()}});
        d.whole["tensors"].push_back({{"name", "t"}, {"histogram", pairs}});
      }
      for (std::size_t i = 0; i < lists.size(); ++i) d.apart[&d.lean["tensors"][i]["histogram"]] = d.lists[i];
    };
    std::mt19937 rng(11);
    const auto random_lists = [&rng] {
      std::vector<Pairs> lists(rng() % 4);
      for (Pairs& h : lists) {
        for (std::uint32_t c = 0, n = rng() % 4; c < n; ++c) h.emplace_back(c + rng() % 3, 1 + rng() % 2);
      }
      return lists;
    };
    int differing = 0;
    for (int round = 0; round < 2000; ++round) {
      const std::vector<Pairs> lists = random_lists();
      std::vector<Pairs> changed = lists;
      if (round % 3 == 0)
        changed = random_lists();
      else if (!changed.empty() && !changed[0].empty())
        changed[0].back().second += round % 2;
      const Json tail = round % 5 == 0 ? Json::array({1, 2}) : Json(round % 2);
      Doc a, b;
      doc(a, lists, tail);
      doc(b, changed, round % 7 == 0 ? Json("x") : tail);
      const std::string expected = first_difference(a.whole, b.whole);
      REQUIRE(expected == first_difference_whole(a.whole, b.whole));
      differing += !expected.empty();
      const std::string got = first_difference(a.lean, b.lean, a.apart, b.apart);
      if (got != expected) {
        FAIL_CHECK(fmt::format("round {}:\n  apart: {}\n  whole: {}\n  a: {}\n  b: {}", round, got, expected,
                               a.whole.dump(), b.whole.dump()));
        break;
      }
      // One side kept apart, the other whole.
      CHECK(first_difference(a.lean, b.whole, a.apart, {}) == expected);
    }
    CHECK(differing > 500);
  }
}

}  // namespace
}  // namespace bitproof
