// The ABI check in the GPU path (src/backend/cuda_user.cpp): NVRTC compiles the
// generated unit without a GPU, so this runs wherever the CUDA toolkit's NVRTC
// is (else it says it skipped). The adapters of tests/cli/data/user-code/ex/half.cuh
// that return a half, or take an int, must be refused naming their type; the
// ones of the ABI must compile and link (the negative control). The compile runs
// in a child process under --compile-timeout: a source NVRTC blocks on (a FIFO
// it opens) is exit 2 at the limit, naming the sources and the limit; the same
// source with a regular file there compiles (the negative control).
#include <doctest/doctest.h>
#include <sys/stat.h>

#if defined(BITPROOF_HAVE_CUDA)

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

// bitproof's device headers in the source tree: the user header directory and the one
// its headers include from (this test program is not the command, which finds them itself).
constexpr const char* kSourceHeaderDirs = BITPROOF_SOURCE_DIR "/src/user/include:" BITPROOF_SOURCE_DIR "/src";

TEST_SUITE("nvrtc_abi") {
  TEST_CASE("NVRTC refuses a user recipe of another type, naming the function and its type") {
    setenv("BITPROOF_INCLUDE_DIRS", kSourceHeaderDirs, 0);
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

  TEST_CASE("an NVRTC compile that never ends is stopped at --compile-timeout, naming the sources and the limit") {
    namespace fs = std::filesystem;
    setenv("BITPROOF_INCLUDE_DIRS", kSourceHeaderDirs, 0);
    const fs::path dir = fs::temp_directory_path() / "bitproof-nvrtc-timeout";
    fs::remove_all(dir);
    fs::create_directories(dir);
    setenv("XDG_CACHE_HOME", (dir / "cache").c_str(), 1);
    // NVRTC alone opens "block.h" (the host preprocessor that lists the sources does not).
    std::ofstream(dir / "fifo.cuh") << "#include <cstdint>\n#ifdef __CUDACC_RTC__\n#include \"block.h\"\n#endif\n"
                                       "__device__ std::uint32_t bp_fifo(std::uint32_t c) { return c; }\n";
    const nlohmann::json spec = nlohmann::json::parse(R"({"sources": {"files": ["fifo.cuh"]}, "user_recipes": [
      {"name": "t.e2m1_fp16.fifo", "function": "bp_fifo", "inputs": ["e2m1"], "output": "fp16", "intent": "value"}]})");
    auto user = user::parse_user_recipes(spec, (dir / "fifo.json").string());
    REQUIRE(user.ok());
    (*user)->no_cache = true;
    (*user)->compile_timeout_s = 1;
    REQUIRE(mkfifo((dir / "block.h").c_str(), 0600) == 0);  // opened for reading, it blocks for ever
    const auto start = std::chrono::steady_clock::now();
    auto blocked = cuda::build_user_image(**user, {0, -1}, 9, 0, {});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!blocked && blocked.error().exit_code == kExitNoBackend) {
      MESSAGE("skipped: " << blocked.error().message);
      fs::remove_all(dir);
      return;
    }
    REQUIRE_FALSE(blocked.ok());
    CHECK(blocked.error().exit_code == kExitBadInput);
    CHECK_MESSAGE(blocked.error().message.find("fifo.json: sources: NVRTC compiling fifo.cuh took longer than the 1 s "
                                               "limit (--compile-timeout SECONDS sets it)") != std::string::npos,
                  blocked.error().message);
    CHECK(seconds < 30);
    // The negative control: a regular file there, the same compile links.
    fs::remove(dir / "block.h");
    std::ofstream(dir / "block.h") << "// empty\n";
    (*user)->compile_timeout_s = 120;
    auto linked = cuda::build_user_image(**user, {0, -1}, 9, 0, {});
    CHECK_MESSAGE(linked.ok(), (linked ? std::string() : linked.error().message));
    if (linked) CHECK_FALSE(linked->cubin.empty());
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace bitproof

#endif
