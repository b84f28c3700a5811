// --select's matcher (src/name_filter): a search, RE2 syntax, and linear time:
// the patterns that made std::regex backtrack for ever or recurse off the stack
// (issue 12) answer at once. No timing is asserted; a backtracking matcher
// would hang these cases rather than fail them.
#include <doctest/doctest.h>

#include <string>

#include "name_filter.hpp"

namespace bitproof {

TEST_SUITE("audit") {
  TEST_CASE("--select: a search in the name, RE2 syntax, refusals in one line") {
    auto layer = NameFilter::make("layers\\.1\\.", "--select");
    REQUIRE(layer.ok());
    CHECK(layer->selects("model.layers.1.ffn.experts.0.w1.scale"));
    CHECK_FALSE(layer->selects("model.layers.10.ffn.experts.0.w1.scale"));
    CHECK_FALSE(layer->selects("model.layers.0.ffn.experts.0.w1.scale"));  // negative control
    auto anchored = NameFilter::make("^layers", "--select");
    REQUIRE(anchored.ok());
    CHECK_FALSE(anchored->selects("model.layers.1.x"));
    auto all = NameFilter::make("", "--select");
    REQUIRE(all.ok());
    CHECK(all->selects_all());
    CHECK(all->selects("anything"));
    for (const char* bad : {"(", "(\\w)\\1", "(?=x)", "a{2,1}"}) {
      CAPTURE(bad);
      auto refused = NameFilter::make(bad, "--select");
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.error().message.rfind("--select: ", 0) == 0);
      CHECK(refused.error().message.find("invalid regular expression") != std::string::npos);
      CHECK(refused.error().message.find('\n') == std::string::npos);
    }
  }

  TEST_CASE("--select: catastrophic patterns and a 50,000-character name answer in linear time") {
    auto nested = NameFilter::make("^(a+)+$", "--select");
    REQUIRE(nested.ok());
    CHECK_FALSE(nested->selects(std::string(37, 'a') + "!"));
    CHECK(nested->selects(std::string(37, 'a')));
    auto stars = NameFilter::make("^(.*)*(.*)*(.*)*(.*)*(.*)*x$", "--select");
    REQUIRE(stars.ok());
    CHECK_FALSE(stars->selects(std::string(4000, 'y')));
    auto layers = NameFilter::make("layers\\..*scale", "--select");
    REQUIRE(layers.ok());
    const std::string long_name = "layers." + std::string(50'000, 'x') + "scale";
    CHECK(layers->selects(long_name));
    CHECK_FALSE(layers->selects("layers." + std::string(50'000, 'x')));
  }
}

}  // namespace bitproof
