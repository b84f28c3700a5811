// The ABI check in the GPU path (src/backend/cuda_user.cpp): NVRTC compiles the
// generated unit without a GPU, so this runs wherever the CUDA toolkit's NVRTC
// is (else it says it skipped). The adapters of tests/cli/data/user-code/ex/half.cuh
// that return a half, or take an int, must be refused naming their type; the
// ones of the ABI must compile and link (the negative control).
#include <doctest/doctest.h>

#if defined(BITPROOF_HAVE_CUDA)

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/cuda_user.hpp"
#include "user/user_recipes.hpp"

namespace bitproof {
namespace {

std::shared_ptr<user::UserRecipes> half_spec(const std::string& a, const std::string& b) {
  const std::string dir = std::string(BITPROOF_SOURCE_DIR) + "/tests/cli/data/user-code/ex";
  const nlohmann::json spec = nlohmann::json::parse(R"({"sources": {"files": ["half.cuh"]}, "user_recipes": [
    {"name": "t.e2m1_fp16.a", "function": ")" + a + R"(", "inputs": ["e2m1"], "output": "fp16", "intent": "value"},
    {"name": "t.e2m1_fp16.b", "function": ")" + b + R"(", "inputs": ["e2m1"], "output": "fp16", "intent": "value"}]})");
  auto user = user::parse_user_recipes(spec, dir + "/half.json");
  REQUIRE(user.ok());
  (*user)->no_cache = true;
  return *user;
}

TEST_SUITE("nvrtc_abi") {
  TEST_CASE("NVRTC refuses a user recipe of another type, naming the function and its type") {
    setenv("BITPROOF_INCLUDE_DIRS", (std::string(BITPROOF_SOURCE_DIR) + "/src/user/include").c_str(), 0);
    const std::string cache = (std::filesystem::temp_directory_path() / "bitproof-nvrtc-abi-cache").string();
    setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    auto good = cuda::build_user_image(*half_spec("bp_bits", "bp_bits"), {0, 1}, 9, 0, {});
    if (!good && good.error().exit_code == kExitNoBackend) {
      MESSAGE("skipped: " << good.error().message);
      return;
    }
    CHECK_MESSAGE(good.ok(), (good ? std::string() : good.error().message));
    auto half = cuda::build_user_image(*half_spec("bp_half_a", "bp_half_b"), {0, 1}, 9, 0, {});
    REQUIRE_FALSE(half.ok());
    CHECK(half.error().exit_code == kExitBadInput);
    CHECK_MESSAGE(
        half.error().message.find("half.json: user_recipes[0].function: bp_half_a has the type ") != std::string::npos,
        half.error().message);
    CHECK_MESSAGE(half.error().message.find("not std::uint32_t(std::uint32_t)") != std::string::npos,
                  half.error().message);
    auto param = cuda::build_user_image(*half_spec("bp_bits", "bp_int_param"), {0, 1}, 9, 0, {});
    REQUIRE_FALSE(param.ok());
    CHECK_MESSAGE(
        param.error().message.find("user_recipes[1].function: bp_int_param has the type ") != std::string::npos,
        param.error().message);
    CHECK_MESSAGE(param.error().message.find("(int)") != std::string::npos, param.error().message);
    std::filesystem::remove_all(cache);
  }
}

}  // namespace
}  // namespace bitproof

#endif
