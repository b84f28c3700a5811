// Kernel arms in A/B specs (issue 47): the syntax of "kernels", kernel stages and output
// declarations, every check made before anything runs (one line "<file>: <field>: <what>"),
// and the canonical JSON's round trip (what reports record and verify re-reads).
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "operator/ab_spec.hpp"

using namespace bitproof;
using nlohmann::json;

namespace {

json f16_input(const char* name, const char* role, std::uint64_t rows, std::uint64_t cols) {
  return {
      {"name", name}, {"role", role}, {"dtype", "f16"}, {"shape", {rows, cols}}, {"values", {{"uniform", {-1, 1}}}}};
}

json out_decl(const char* name, std::uint64_t cols) { return {{"name", name}, {"dtype", "f16"}, {"shape", {1, cols}}}; }

json sep_stage(const char* w, const char* y, std::uint64_t rows) {
  return {{"kernel", "gemv_sep"},
          {"grid", {rows}},
          {"block", {128}},
          {"args", {{{"tensor", "x"}}, {{"tensor", w}}, {{"output", y}}, {{"u32", 256}}}}};
}

// The fused-aux-GEMV pair, small: three launches against one over the joined buffer.
json kernel_spec() {
  json fused = {{"kernel", "gemv_fused"},
                {"grid", {56}},
                {"block", {128}},
                {"args",
                 {{{"tensor", "x"}},
                  {{"joined", {"w.a", "w.b", "w.c"}}},
                  {{"output", "y.a"}},
                  {{"output", "y.b"}},
                  {{"output", "y.c"}},
                  {{"u32", 32}},
                  {{"u32", 16}},
                  {{"u32", 256}}}}};
  return {{"bitproof_ab", 1},
          {"name", "k"},
          {"seed", 3},
          {"cases", 2},
          {"inputs",
           {f16_input("x", "activation", 1, 256),
            f16_input("w.a", "weight", 32, 256),
            f16_input("w.b", "weight", 16, 256),
            f16_input("w.c", "weight", 8, 256),
            {{"name", "m"},
             {"role", "weight"},
             {"dtype", "mxfp4"},
             {"shape", {8, 256}},
             {"scales", {{"range", {114, 126}}}}}}},
          {"kernels", {{"files", {"gemv.cu"}}, {"include_dirs", {"inc"}}, {"fmad", true}}},
          {"outputs", {out_decl("y.a", 32), out_decl("y.b", 16), out_decl("y.c", 8)}},
          {"arms",
           {{{"name", "separate"},
             {"stages", {sep_stage("w.a", "y.a", 32), sep_stage("w.b", "y.b", 16), sep_stage("w.c", "y.c", 8)}}},
            {{"name", "fused"}, {"stages", {fused}}}}},
          {"expect", "equal"}};
}

Expected<op::AbSpec> parse(const json& j) { return op::parse_ab_spec(j.dump(), "/specs/k.json"); }

void expect_refused(const json& j, const std::string& answer) {
  auto spec = parse(j);
  REQUIRE_MESSAGE(!spec.ok(), "accepted; expected: " << answer);
  CHECK_MESSAGE(spec.error().message.find(answer) != std::string::npos, spec.error().message);
  CHECK_MESSAGE(spec.error().message.rfind("/specs/k.json: ", 0) == 0, spec.error().message);
  CHECK(spec.error().message.find('\n') == std::string::npos);
  CHECK(spec.error().exit_code == 2);
}

}  // namespace

TEST_SUITE("operator") {
  TEST_CASE("kernel arms: the issue's shape parses, paths resolved, and round-trips through its canonical JSON") {
    auto spec = parse(kernel_spec());
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? std::string() : spec.error().message));
    REQUIRE(spec->kernels.has_value());
    CHECK(spec->kernels->file_paths == std::vector<std::string>{"/specs/gemv.cu"});
    CHECK(spec->kernels->include_dirs == std::vector<std::string>{"/specs/inc"});
    CHECK(spec->kernels->fmad);
    REQUIRE(spec->arms[1].stages.size() == 1);
    const op::KernelLaunch& l = *spec->arms[1].stages[0].launch;
    CHECK(l.kernel == "gemv_fused");
    CHECK(l.grid == std::array<unsigned, 3>{56, 1, 1});
    CHECK(l.args[1].kind == op::LaunchArg::Kind::kJoined);
    CHECK(l.args[1].tensors.size() == 3);
    CHECK(l.args[7].bits == 256);
    CHECK(spec->output_decls.size() == 3);
    CHECK(spec->outputs == std::vector<std::string>{"y.a", "y.b", "y.c"});
    const auto shapes = spec->tensors_of(1);
    bool found = false;
    for (const auto& [name, shape] : shapes) found |= name == "y.b" && shape.rows == 1 && shape.cols == 16;
    CHECK(found);
    const auto canonical = op::ab_spec_to_json(*spec);
    auto again = op::parse_ab_spec(canonical.dump(), "/specs/k.json");
    REQUIRE_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error().message));
    CHECK(op::ab_spec_to_json(*again).dump() == canonical.dump());
  }

  TEST_CASE("kernel arms: scalars keep their bits; mxfp4 parts; PTX modules; a built-in arm against a kernel arm") {
    json j = kernel_spec();
    j["kernels"] = {{"ptx", {"g.ptx"}}};
    auto& args = j["arms"][1]["stages"][0]["args"];
    args.push_back({{"i32", -2}});
    args.push_back({{"f32", 0.5}});
    args.push_back({{"u64", 1ull << 40}});
    args.push_back({{"tensor", "m"}, {"part", "codes"}});
    args.push_back({{"part", "scales"}, {"tensor", "m"}});
    auto spec = parse(j);
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? std::string() : spec.error().message));
    const auto& a = spec->arms[1].stages[0].launch->args;
    CHECK(a[8].bits == 0xFFFFFFFEu);
    CHECK(a[9].bits == 0x3F000000u);
    CHECK(a[10].bits == (1ull << 40));
    CHECK(a[11].part == op::TensorPart::kCodes);
    CHECK(a[12].part == op::TensorPart::kScales);
    CHECK(spec->kernels->ptx_paths == std::vector<std::string>{"/specs/g.ptx"});
    const auto canonical = op::ab_spec_to_json(*spec);
    auto again = op::parse_ab_spec(canonical.dump(), "/specs/k.json");
    REQUIRE_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error().message));
    CHECK(op::ab_spec_to_json(*again).dump() == canonical.dump());

    // Conformance: arm A bitproof's fp16_gemv model, arm B the user's kernel, one output.
    json c = kernel_spec();
    c["outputs"] = json::array({out_decl("y.a", 32)});  // json::array: a braced json alone is a copy to clang
    c["arms"][0]["stages"] = {
        {{"op", "fp16_gemv"}, {"x", "x"}, {"weights", {"w.a"}}, {"outputs", {"y.a"}}, {"block_k", 256}}};
    c["arms"][1]["stages"] = json::array({sep_stage("w.a", "y.a", 32)});
    auto conf = parse(c);
    REQUIRE_MESSAGE(conf.ok(), (conf.ok() ? std::string() : conf.error().message));
  }

  TEST_CASE("kernel arms: every name, shape, part and launch limit is checked before anything runs") {
    struct Row {
      std::string what;
      std::function<void(json&)> edit;
      const char* answer;
    };
    auto fused = [](json& j) -> json& { return j["arms"][1]["stages"][0]; };
    const std::vector<Row> rows = {
        {"no kernels", [](json& j) { j.erase("kernels"); }, "kernels: missing: arms[0].stages[0] launches a kernel"},
        {"kernels without sources", [](json& j) { j["kernels"] = json::object(); },
         "kernels: expected \"files\" (CUDA source) or \"ptx\""},
        {"unknown kernels key", [](json& j) { j["kernels"]["arch"] = "sm_90"; }, "kernels.arch"},
        {"fmad not a bool", [](json& j) { j["kernels"]["fmad"] = 1; }, "kernels.fmad: expected true or false"},
        {"empty path", [](json& j) { j["kernels"]["files"] = {""}; }, "kernels.files[0]: expected a non-empty path"},
        {"kernel name", [&](json& j) { fused(j)["kernel"] = "9x"; }, "arms[1].stages[0].kernel: expected a kernel's"},
        {"block past 1024 threads",
         [&](json& j) {
           fused(j)["block"] = {64, 32};
         },
         "arms[1].stages[0].block: 2048 threads a block: at most 1024"},
        {"block x past 1024", [&](json& j) { fused(j)["block"] = {2048}; },
         "arms[1].stages[0].block[0]: 2048 is outside 1..1024"},
        {"block z past 64",
         [&](json& j) {
           fused(j)["block"] = {1, 1, 65};
         },
         "block[2]: 65 is outside 1..64"},
        {"grid y past 65535",
         [&](json& j) {
           fused(j)["grid"] = {1, 65536};
         },
         "grid[1]: 65536 is outside 1..65535"},
        {"grid zero", [&](json& j) { fused(j)["grid"] = {0}; }, "grid[0]: 0 is outside"},
        {"grid of four dims",
         [&](json& j) {
           fused(j)["grid"] = {1, 1, 1, 1};
         },
         "grid: expected [x], [x, y] or [x, y, z]"},
        {"shared past 48 KiB", [&](json& j) { fused(j)["shared_bytes"] = 49153; }, "shared_bytes: 49153 bytes"},
        {"no args", [&](json& j) { fused(j).erase("args"); }, "arms[1].stages[0].args: missing"},
        {"unknown arg kind",
         [&](json& j) {
           fused(j)["args"][7] = {{"u16", 1}};
         },
         "args[7].u16: unknown argument kind"},
        {"two kinds in one arg",
         [&](json& j) {
           fused(j)["args"][7] = {{"u32", 1}, {"u64", 1}};
         },
         "args[7]: expected one of"},
        {"u32 too big",
         [&](json& j) {
           fused(j)["args"][7] = {{"u32", 1ull << 32}};
         },
         "args[7].u32: 4294967296 is outside u32"},
        {"i32 too small",
         [&](json& j) {
           fused(j)["args"][7] = {{"i32", -2147483649LL}};
         },
         "args[7].i32: -2147483649 is outside i32"},
        {"f32 not representable",
         [&](json& j) {
           fused(j)["args"][7] = {{"f32", 0.1}};
         },
         "args[7].f32: 0.1 is not exactly a finite binary32 value"},
        {"a tensor no one has",
         [&](json& j) {
           fused(j)["args"][0] = {{"tensor", "z"}};
         },
         "args[0].tensor: \"z\" is neither an input nor a declared output"},
        {"an output read before written",
         [&](json& j) {
           fused(j)["args"][0] = {{"tensor", "y.a"}};
         },
         "args[0].tensor: \"y.a\" is read before a stage of this arm writes it"},
        {"joined with an unknown name", [&](json& j) { fused(j)["args"][1]["joined"][2] = "w.z"; },
         "args[1].joined[2]: \"w.z\" is not an input"},
        {"joined tensors of other widths",
         [&](json& j) {
           j["inputs"][3]["shape"] = {8, 128};
         },
         "args[1].joined[2]: \"w.c\" is f16 with 128 columns, \"w.a\" f16 with 256"},
        {"joined tensors of other dtypes", [&](json& j) { fused(j)["args"][1]["joined"][2] = "m"; },
         "joined tensors share dtype and columns"},
        {"joined once", [&](json& j) { fused(j)["args"][1]["joined"] = {"w.a"}; }, "at least two input names"},
        {"joined twice", [&](json& j) { fused(j)["args"][1]["joined"][1] = "w.a"; }, "\"w.a\" joined twice"},
        {"part on f16", [&](json& j) { fused(j)["args"][0]["part"] = "codes"; },
         "args[0].tensor: \"x\" is f16: only an mxfp4"},
        {"mxfp4 without part",
         [&](json& j) {
           fused(j)["args"].push_back({{"tensor", "m"}});
         },
         "args[8].tensor: \"m\" is mxfp4: pass its \"part\""},
        {"unknown part",
         [&](json& j) {
           fused(j)["args"].push_back({{"tensor", "m"}, {"part", "nibbles"}});
         },
         "args[8].part: expected \"codes\" or \"scales\""},
        {"part on a scalar", [&](json& j) { fused(j)["args"][7]["part"] = "codes"; }, "args[7].part: only a tensor"},
        {"an undeclared output",
         [&](json& j) {
           fused(j)["args"][2] = {{"output", "y.z"}};
         },
         "args[2].output: \"y.z\" is not declared in outputs"},
        {"an input written",
         [&](json& j) {
           fused(j)["args"][2] = {{"output", "w.a"}};
         },
         "\"w.a\" is an input: kernels write outputs"},
        {"a declared output one arm does not write",
         [&](json& j) {
           fused(j)["args"][4] = {{"output", "y.b"}};
         },
         "outputs[2]: arm \"fused\" does not compute \"y.c\""},
        {"an output declared twice", [](json& j) { j["outputs"].push_back(out_decl("y.a", 32)); },
         "outputs[3]: \"y.a\" listed twice"},
        {"an output of unknown dtype", [](json& j) { j["outputs"][0]["dtype"] = "f32"; },
         "outputs[0].dtype: unknown output dtype \"f32\" (f16, bf16)"},
        {"an output of 2^32 elements",
         [](json& j) {
           j["outputs"][0]["shape"] = {65536, 65536};
         },
         "outputs[0].shape: 65536 x 65536 elements"},
        {"an output named as an input", [](json& j) { j["outputs"][0] = out_decl("x", 256); },
         "outputs[0]: \"x\" is an input"},
        {"a built-in stage writing a declared output of another shape",
         [](json& j) {
           j["outputs"][0]["shape"] = {1, 31};
           j["arms"][0]["stages"] = {
               {{"op", "fp16_gemv"}, {"x", "x"}, {"weights", {"w.a"}}, {"outputs", {"y.a"}}, {"block_k", 256}}};
         },
         "\"y.a\" is declared f16 1x31 in outputs; this stage writes f16 1x32"},
        {"kernel and built-in stages mixed in one arm",
         [](json& j) {
           j["arms"][0]["stages"][0] = {
               {"op", "fp16_gemv"}, {"x", "x"}, {"weights", {"w.a"}}, {"outputs", {"y.a"}}, {"block_k", 256}};
         },
         "arms[0].stages[1]: an arm's stages are all kernel launches or all built-in operators"},
        {"kernels but no kernel stage",
         [](json& j) {
           j["outputs"] = {"y.a"};
           for (int i = 0; i < 2; ++i)
             j["arms"][i]["stages"] = {
                 {{"op", "fp16_gemv"}, {"x", "x"}, {"weights", {"w.a"}}, {"outputs", {"y.a"}}, {"block_k", 256}}};
         },
         "kernels: no stage launches a kernel"},
    };
    for (const Row& row : rows) {
      CAPTURE(row.what);
      json j = kernel_spec();
      row.edit(j);
      expect_refused(j, row.answer);
    }
  }
}
