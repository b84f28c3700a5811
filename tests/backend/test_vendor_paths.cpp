// Which path CUDA's conversions take on a device, from the image's target list.
#include <doctest/doctest.h>

#include "backend/vendor_paths.hpp"
#include "proof/spec.hpp"

using namespace bitproof;

TEST_SUITE("backend") {
  TEST_CASE("the image target a device runs: the highest not above it, family code only on its own major") {
    CHECK(target_for_device("90", 9, 0) == "90");
    CHECK(target_for_device("80;90", 9, 0) == "90");
    CHECK(target_for_device("80;90", 8, 9) == "80");
    CHECK(target_for_device("90", 8, 0).empty());
    CHECK(target_for_device("90;100a", 10, 0) == "100a");
    CHECK(target_for_device("90;100a", 12, 0) == "90");  // sm_100a code does not run on sm_120
    CHECK(target_for_device("100;100f-real", 10, 3) == "100f-real");
  }

  TEST_CASE("cuda_vendor recipes: FP8 in hardware from sm_89, E2M1 and E8M0 only on family targets") {
#if defined(BITPROOF_HAVE_CUDA_HEADERS)
    const std::string text = R"({"bitproof_spec": 1, "name": "t",
      "inputs": [{"name": "element", "format": "e5m2", "codes": "all"}], "output": "fp16",
      "claims": [{"claim": "equal", "recipes": ["cuda_vendor.e5m2_fp16", "fp8.e5m2_fp16.shift"]}]})";
    auto spec = parse_spec(text, "t.json");
    REQUIRE(spec.ok());
    auto on_h200 = vendor_conversion_paths(*spec, "90", 9, 0);
    REQUIRE(on_h200.size() == 1);  // the shift is not CUDA's
    CHECK(on_h200["cuda_vendor.e5m2_fp16"].get<std::string>().starts_with("hardware cvt"));
    CHECK(
        vendor_conversion_paths(*spec, "80", 8, 0)["cuda_vendor.e5m2_fp16"].get<std::string>().starts_with("software"));
    const std::string e8m0 = R"({"bitproof_spec": 1, "name": "t",
      "inputs": [{"name": "s", "format": "ue8m0", "codes": "all"}], "output": "bf16",
      "claims": [{"claim": "equal", "recipes": ["cuda_vendor.e8m0_bf16", "marlin.e8m0_bf16.shift"]}]})";
    auto scale = parse_spec(e8m0, "t.json");
    REQUIRE(scale.ok());
    CHECK(vendor_conversion_paths(*scale, "90", 9, 0)["cuda_vendor.e8m0_bf16"].get<std::string>().starts_with(
        "software"));
    CHECK(vendor_conversion_paths(*scale, "100", 10, 0)["cuda_vendor.e8m0_bf16"].get<std::string>().starts_with(
        "software"));
    CHECK(vendor_conversion_paths(*scale, "100a", 10, 0)["cuda_vendor.e8m0_bf16"].get<std::string>().starts_with(
        "hardware cvt"));
#endif
  }
}
