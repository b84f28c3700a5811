// --no-user-code in the library (src/user/user_code.hpp): a process that refuses
// user code refuses a spec's function recipes by name, and UserRecipes::evaluate
// refuses them too, even where a GPU would otherwise run what the CPU could not
// build (that fallback must never swallow the refusal). Output tables stay allowed.
#include <doctest/doctest.h>

#include <string>

#include "proof/spec.hpp"
#include "user/user_code.hpp"
#include "user/user_recipes.hpp"

namespace bitproof {
namespace {

// A table recipe first, then a function recipe (user_recipes[1]), or the table alone.
Expected<Spec> user_spec(bool with_function) {
  const std::string table = R"({"name": "t.e2m1_fp16.table", "table": "t.npy", "inputs": ["e2m1"], "output": "fp16",
                                "intent": "value"})";
  const std::string function = R"({"name": "t.e2m1_fp16.f", "function": "bp_f", "inputs": ["e2m1"], "output": "fp16",
                                   "intent": "value"})";
  const std::string text =
      R"({"bitproof_spec": 1, "name": "t", "inputs": [{"name": "element", "format": "e2m1", "codes": "all"}],
          "output": "fp16", )" +
      (with_function
           ? R"("sources": {"files": ["a.cuh", "b.cuh"]}, "user_recipes": [)" + table + ", " + function + "], "
           : R"("user_recipes": [)" + table + "], ") +
      R"("claims": [{"claim": "exact", "recipes": ["t.e2m1_fp16.table"]}]})";
  return parse_spec(text, "dir/t.json");
}

// Clears the refusal when a test case ends, passed or not: the setting is process-wide.
struct Refusing {
  explicit Refusing(const std::string& why) { user::set_user_code_refusal(why); }
  ~Refusing() { user::set_user_code_refusal(""); }
};

}  // namespace

TEST_SUITE("user_code") {
  TEST_CASE("allowed unless refused; a refusal names the spec, the recipe, its function and files") {
    auto spec = user_spec(true);
    REQUIRE(spec);
    REQUIRE(spec->user);
    CHECK(user::user_code_refusal().empty());
    CHECK_FALSE(user::refuse_user_code(*spec->user));  // the negative control: nothing refused by default
    Refusing refusing("--no-user-code");
    auto e = user::refuse_user_code(*spec->user);
    REQUIRE(e);
    CHECK(e->exit_code == kExitBadInput);
    CHECK(e->message ==
          "dir/t.json: user_recipes[1] (t.e2m1_fp16.f): function bp_f of a.cuh, b.cuh is user code (compiled and run "
          "on this machine with the rights of whoever runs bitproof): refused by --no-user-code");
    CHECK(e->message.find('\n') == std::string::npos);
  }

  TEST_CASE("output tables are data: allowed while user code is refused") {
    Refusing refusing("BITPROOF_NO_USER_CODE=1");
    auto spec = user_spec(false);
    REQUIRE(spec);
    REQUIRE(spec->user);
    CHECK_FALSE(user::refuse_user_code(*spec->user));
  }

  TEST_CASE("evaluate refuses before building, even where the GPU would run the recipes alone") {
    auto spec = user_spec(true);
    REQUIRE(spec);
    Refusing refusing("--no-user-code");
    spec->user->gpu_runs = true;  // a build failure would otherwise become "no CPU witness" and pass
    auto ok = spec->user->evaluate(spec->inputs);
    REQUIRE_FALSE(ok);
    CHECK(ok.error().message.find("user_recipes[1] (t.e2m1_fp16.f)") != std::string::npos);
    CHECK(ok.error().message.find("refused by --no-user-code") != std::string::npos);
    CHECK(spec->user->build() == nullptr);  // nothing was compiled
  }

  TEST_CASE("a refusal of a named piece of code") {
    CHECK_FALSE(user::refuse_user_code("k.json: arms[0] (once)", "kernel k of k.cu"));
    Refusing refusing("--no-user-code");
    auto e = user::refuse_user_code("k.json: arms[0] (once)", "kernel k of k.cu");
    REQUIRE(e);
    CHECK(e->message.rfind("k.json: arms[0] (once): kernel k of k.cu is user code", 0) == 0);
  }
}

}  // namespace bitproof
