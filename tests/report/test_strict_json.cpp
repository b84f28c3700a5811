// The strict JSON reader's pair lists (src/strict_json.hpp, PairLists): arrays
// of [a, b] pairs at one place read apart from the document, every other value
// kept, and anything else at that place refused with its path.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "strict_json.hpp"

using namespace bitproof;

namespace {

using List = std::vector<std::array<std::uint64_t, 2>>;

// The message of a parse of `text` with the arrays at `place` read apart, or "" when it parses.
std::string refusal(const std::string& text, const std::string& place) {
  PairLists pairs{place, {}};
  auto j = parse_ordered_json_strict(text, "f.json", "report", pairs);
  return j ? "" : j.error().message;
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("pair lists: the arrays at the place are read apart and stand as [] in the document") {
    const std::string text =
        R"({"t":[{"h":[[1,2],[3,18446744073709551615]],"n":"a"},{"h":[]},{"h":[[7,8]]}],"h":[[5,6]],"u":{"h":[[9,9]]}})";
    PairLists pairs{"t[].h", {}};
    auto j = parse_ordered_json_strict(text, "f.json", "report", pairs);
    REQUIRE(j.ok());
    REQUIRE(pairs.lists.size() == 3);
    CHECK(pairs.lists[0] == List{{1, 2}, {3, 18446744073709551615ull}});
    CHECK(pairs.lists[1].empty());
    CHECK(pairs.lists[2] == List{{7, 8}});
    CHECK((*j)["t"].dump() == R"([{"h":[],"n":"a"},{"h":[]},{"h":[]}])");
    // Arrays elsewhere, with the same key or the same pairs, stay in the document.
    CHECK((*j)["h"].dump() == "[[5,6]]");
    CHECK((*j)["u"].dump() == R"({"h":[[9,9]]})");
    // Control: without pair lists the document holds them.
    auto whole = parse_ordered_json_strict(text, "f.json", "report");
    REQUIRE(whole.ok());
    CHECK((*whole)["t"][0]["h"].dump() == "[[1,2],[3,18446744073709551615]]");
    // A second parse starts from empty lists.
    REQUIRE(parse_ordered_json_strict(R"({"t":[]})", "f.json", "report", pairs).ok());
    CHECK(pairs.lists.empty());
  }

  TEST_CASE("pair lists: anything but pairs of integers from 0 at the place is refused with its path") {
    const std::string must = ": must hold [a, b] pairs of integers from 0";
    for (const std::string bad : {"[[1,2,3]]", "[[1]]", "[[]]", R"([[1,"2"]])", "[[-1,2]]", "[[1.5,2]]", "[[1,2e0]]",
                                  "[1,2]", R"([{"a":1}])", "[[[1,2]]]", "[null]", "[[1,null]]", "[[true,1]]"}) {
      CAPTURE(bad);
      CHECK(refusal(R"({"t":[{"h":[[0,1]]},{"h":)" + bad + "}]}", "t[].h") == "f.json: t[1].h" + must);
      // Control: elsewhere the same value is any JSON.
      CHECK(refusal(R"({"t":[{"g":)" + bad + "}]}", "t[].h").empty());
    }
    CHECK(refusal(R"({"t":[{"h":[[0,1]]}]})", "t[].h").empty());
    // A value that is no array at the place is the document's (the reader checks it).
    PairLists pairs{"t[].h", {}};
    auto j = parse_ordered_json_strict(R"({"t":[{"h":3}]})", "f.json", "report", pairs);
    REQUIRE(j.ok());
    CHECK(pairs.lists.empty());
    CHECK((*j)["t"][0]["h"] == 3);
    // Syntax errors and keys given twice read as without pair lists.
    CHECK(refusal(R"({"t":[{"h":[[0,1]}]})", "t[].h").find("f.json: report: invalid JSON: ") == 0);
    CHECK(refusal(R"({"t":[{"h":[[0,1]],"h":[]}]})", "t[].h") == "f.json: t[0].h: key given twice in one JSON object");
  }
}
