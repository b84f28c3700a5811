// Digests (src/hash): SHA-256 against FIPS 180-2's known answers, and the
// case-table digest sensitive to order and content.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "hash/digest.hpp"

using namespace bitproof;

TEST_SUITE("hash") {
  TEST_CASE("SHA-256 known answers") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }

  TEST_CASE("case digest: order and content matter, chunking is invisible to equal tables") {
    auto digest = [](std::vector<std::uint32_t> outputs) {
      CaseTableDigest d(outputs.size(), 1, 1);
      for (std::uint32_t i = 0; i < outputs.size(); ++i) d.add(&i, &outputs[i]);
      return d.finish_hex();
    };
    CHECK(digest({1, 2, 3}) == digest({1, 2, 3}));
    CHECK(digest({1, 2, 3}) != digest({1, 3, 2}));
    CHECK(digest({1, 2, 3}) != digest({1, 2}));
  }
}
