// Proof spec parsing: the DeepSeek V4 spec as committed, and every kind of bad
// spec rejected with one message naming the file and the field.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "proof/spec.hpp"
#include "user/user_recipes.hpp"

using namespace bitproof;

namespace {

const std::string kGood = R"({
  "bitproof_spec": 1, "name": "t",
  "inputs": [{"name": "element", "format": "e2m1", "codes": "all"},
             {"name": "scale", "format": "ue8m0", "codes": {"range": [114, 126]}}],
  "output": "fp16",
  "claims": [{"claim": "equal", "recipes": ["turbomind.mxfp4_fp16.folded", "turbomind.mxfp4_fp16.ordinary"], "expected_cases": 208}]})";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return text.replace(at, from.size(), to);
}

// A spec's sources and one user recipe (E4M3 x UE8M0 -> FP16, a product), spliced after "output".
std::string kUserPart(const std::string& file, const std::string& function, const std::string& name) {
  return "\"output\": \"fp16\", \"sources\": {\"files\": [\"" + file + "\"]}, \"user_recipes\": [{\"name\": \"" + name +
         "\", \"function\": \"" + function +
         "\", \"inputs\": [\"e4m3\", \"ue8m0\"], \"output\": \"fp16\", \"intent\": \"product\"}]";
}

struct BadCase {
  std::string what;
  std::string text;
  std::string message;  // expected substring, after "t.json: "
};

}  // namespace

TEST_SUITE("proof") {
  TEST_CASE("the committed DeepSeek V4 spec parses to 16 x 13 = 208 cases") {
    auto spec = load_spec(std::string(BITPROOF_SOURCE_DIR "/proofs/dsv4-mxfp4-fp16-fold.json"));
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
    CHECK(spec->case_count() == 208);
    REQUIRE(spec->inputs[1].range.has_value());
    CHECK(spec->inputs[1].range->lo == 114);
    CHECK(spec->inputs[1].range->hi == 126);
    CHECK(spec->inputs[1].count() == 13);
    CHECK(spec->inputs[1].code(12) == 126);
    CHECK(spec->inputs[1].codes.empty());  // a range is kept as its ends
    CHECK(spec->claims.size() == 2);
    CHECK(spec->recipes().size() == 2);
  }

  TEST_CASE("the canonical JSON of a spec parses back to the same spec") {
    auto spec = parse_spec(kGood, "t.json");
    REQUIRE(spec.ok());
    auto again = parse_spec(spec_to_json(*spec).dump(), "t.json");
    REQUIRE(again.ok());
    CHECK(spec_to_json(*again) == spec_to_json(*spec));
  }

  TEST_CASE("a spec of output tables: no sources; table and table_format print back; --scales refused") {
    const std::string text = replaced(
        kGood, "\"output\": \"fp16\",",
        "\"output\": \"fp16\", \"user_recipes\": [{\"name\": \"u.t\", \"table\": \"o.bin\", \"table_format\": \"u32\", "
        "\"inputs\": [\"e2m1\", \"ue8m0\"], \"output\": \"fp16\", \"intent\": \"product\"}, {\"name\": \"u.n\", "
        "\"table\": \"o.npy\", \"inputs\": [\"e2m1\", \"ue8m0\"], \"output\": \"fp16\", \"intent\": \"product\"}],");
    auto spec = parse_spec(text, "dir/t.json");
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
    REQUIRE(spec->user);
    CHECK(spec->user->has_tables());
    CHECK(spec->user->function_count() == 0);
    CHECK(spec->user->own_domain.size() == 2);
    CHECK(spec->user->input_paths() == std::vector<std::string>{"dir/o.bin", "dir/o.npy"});
    const auto j = spec_to_json(*spec);
    CHECK_FALSE(j.contains("sources"));
    CHECK(j["user_recipes"][0]["table_format"] == "u32");
    CHECK_FALSE(j["user_recipes"][1].contains("table_format"));  // the default (from .npy) is not written
    auto again = parse_spec(j.dump(), "dir/t.json");
    REQUIRE(again.ok());
    CHECK(spec_to_json(*again) == j);
    auto scales = override_range(*spec, "scale", {114, 120}, "--scales");
    REQUIRE_FALSE(scales.ok());
    CHECK(scales.error().message.find("reads output tables (user_recipes[0].table: o.bin)") != std::string::npos);
  }

  TEST_CASE("lists and all") {
    auto spec = parse_spec(replaced(replaced(kGood, R"({"range": [114, 126]})", R"({"list": [126, 114, 120]})"),
                                    R"("expected_cases": 208)", R"("expected_cases": 48)"),
                           "t.json");
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
    CHECK(spec->inputs[1].codes == std::vector<std::uint32_t>{126, 114, 120});
    CHECK(spec->case_count() == 48);
  }

  TEST_CASE("exclude: classes and codes leave the range; the spec keeps them as written; comments are ignored") {
    // ue8m0 120..255: 255 is its NaN; 121 excluded by code. 136 codes - 2 = 134, x 16 elements.
    auto spec = parse_spec(replaced(replaced(kGood, R"({"range": [114, 126]})",
                                             R"({"range": [120, 255], "exclude": ["nan", 121]} /* NaN scales not claimed */)"),
                                    R"("expected_cases": 208)", R"("expected_cases": 2144 // 134 x 16
)"),
                           "t.json");
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
    const InputDomain& scale = spec->inputs[1];
    CHECK(scale.count() == 134);
    CHECK(scale.code(0) == 120);
    CHECK(scale.code(1) == 122);
    CHECK(scale.code(133) == 254);
    CHECK(spec_to_json(*spec)["inputs"][1]["codes"].dump() == R"({"range":[120,255],"exclude":["nan",121]})");
    auto again = parse_spec(spec_to_json(*spec).dump(), "again.json");
    REQUIRE(again.ok());
    CHECK(again->inputs[1].codes == scale.codes);
    auto zero = parse_spec(replaced(replaced(kGood, R"("codes": "all")", R"("codes": {"range": [0, 15], "exclude": ["zero"]})"),
                                    R"("expected_cases": 208)", R"("expected_cases": 182)"),
                           "t.json");
    REQUIRE_MESSAGE(zero.ok(), (zero.ok() ? "" : zero.error().message));
    CHECK(zero->inputs[0].codes.size() == 14);  // E2M1 +0 (0x0) and -0 (0x8) left out
  }

  TEST_CASE("an FP32 input's 2^32 codes are kept as a range, never listed") {
    auto spec = parse_spec(R"({"bitproof_spec": 1, "name": "t", "inputs": [{"name": "element", "format": "fp32",
        "codes": "all"}], "output": "fp16", "claims": [{"claim": "correctly_rounded", "recipes": ["fp16.float2half_rn"]}]})",
                           "t.json");
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
    CHECK(spec->case_count() == (std::uint64_t{1} << 32));
    CHECK(spec->inputs[0].codes.empty());
    CHECK(spec->inputs[0].code(0xFFFFFFFFu) == 0xFFFFFFFFu);
  }

  TEST_CASE("bad specs: one message naming file and field") {
    const std::vector<BadCase> cases = {
        {"invalid JSON", "{\"bitproof_spec\": 1,", "t.json: invalid JSON: parse error at line 1, column 21"},
        {"a key twice (a reviewer reads the first, a parser may keep the last)",
         replaced(kGood, "\"name\": \"t\"", "\"name\": \"t\", \"name\": \"u\""),
         "t.json: name: key given twice in one JSON object"},
        {"a nested key twice", replaced(kGood, "\"expected_cases\": 208", "\"expected_cases\": 208, \"expected_cases\": 1"),
         "t.json: claims[0].expected_cases: key given twice"},
        {"a control character in an input name", replaced(kGood, "\"name\": \"scale\"", "\"name\": \"sc\\u0001ale\""),
         "inputs[1].name: expected lower-case"},
        {"an input name with a space", replaced(kGood, "\"name\": \"scale\"", "\"name\": \"the scale\""),
         "inputs[1].name: expected lower-case"},
        {"a line break in the title", replaced(kGood, "\"name\": \"t\"", "\"name\": \"t\", \"title\": \"a\\nb\""),
         "t.json: title: a control character"},
        {"a function recipe without sources",
         replaced(kGood, "\"output\": \"fp16\"",
                  "\"output\": \"fp16\", \"user_recipes\": [{\"name\": \"u.f\", \"function\": \"f\", \"inputs\": "
                  "[\"e2m1\", \"ue8m0\"], \"output\": \"fp16\", \"intent\": \"product\"}]"),
         "t.json: sources: missing: user_recipes need the files"},
        {"an empty user_recipes", replaced(kGood, "\"output\": \"fp16\"", "\"output\": \"fp16\", \"user_recipes\": []"),
         "t.json: user_recipes: expected a non-empty array"},
        {"a table recipe's table_format unknown",
         replaced(kGood, "\"output\": \"fp16\"",
                  "\"output\": \"fp16\", \"user_recipes\": [{\"name\": \"u.t\", \"table\": \"o.bin\", \"table_format\": "
                  "\"u64\", \"inputs\": [\"e2m1\", \"ue8m0\"], \"output\": \"fp16\", \"intent\": \"product\"}]"),
         "t.json: user_recipes[0].table_format: expected \"npy\", \"u8\", \"u16\" or \"u32\""},
        {"a table path that is absolute",
         replaced(kGood, "\"output\": \"fp16\"",
                  "\"output\": \"fp16\", \"user_recipes\": [{\"name\": \"u.t\", \"table\": \"/o.npy\", \"inputs\": "
                  "[\"e2m1\", \"ue8m0\"], \"output\": \"fp16\", \"intent\": \"product\"}]"),
         "t.json: user_recipes[0].table: expected a path relative to the spec's directory"},
        {"a table_format on a function recipe",
         replaced(kGood, "\"output\": \"fp16\"",
                  "\"output\": \"fp16\", \"sources\": {\"files\": [\"a.cuh\"]}, \"user_recipes\": [{\"name\": \"u.f\", "
                  "\"function\": \"f\", \"table_format\": \"u16\", \"inputs\": [\"e2m1\", \"ue8m0\"], \"output\": "
                  "\"fp16\", \"intent\": \"product\"}]"),
         "t.json: user_recipes[0].table_format: only a table recipe takes a table_format"},
        {"sources without user recipes",
         replaced(kGood, "\"output\": \"fp16\"", "\"output\": \"fp16\", \"sources\": {\"files\": [\"a.cuh\"]}"),
         "t.json: user_recipes: missing"},
        {"a source path that is absolute", replaced(kGood, "\"output\": \"fp16\"", kUserPart("/etc/a.cuh", "f", "u.x")),
         "t.json: sources.files[0]: expected a path relative to the spec's directory"},
        {"a user recipe named as a catalogue recipe",
         replaced(kGood, "\"output\": \"fp16\"", kUserPart("a.cuh", "f", "turbomind.mxfp4_fp16.folded")),
         "t.json: user_recipes[0].name: \"turbomind.mxfp4_fp16.folded\" is already a recipe's name"},
        {"a function that is not a name", replaced(kGood, "\"output\": \"fp16\"", kUserPart("a.cuh", "f(1)", "u.x")),
         "t.json: user_recipes[0].function: expected a C++ function name"},
        {"a user recipe over other inputs",
         replaced(replaced(kGood, "\"output\": \"fp16\"", kUserPart("a.cuh", "f", "u.x")), "\"turbomind.mxfp4_fp16.folded\", ", "\"u.x\", "),
         "claims[0].recipes[0]: recipe \"u.x\" takes (e4m3, ue8m0) but the spec's inputs are (e2m1, ue8m0)"},
        {"a domain past 2^62 cases",
         R"({"bitproof_spec": 1, "name": "t", "inputs": [{"name": "a", "format": "fp32", "codes": "all"},
            {"name": "b", "format": "fp32", "codes": "all"}], "output": "fp16",
            "claims": [{"claim": "exact", "recipes": ["fp16.float2half_rn"]}]})",
         "t.json: inputs: the domain has 4294967296 x 4294967296 cases, more than the 2^62"},
        {"not an object", "[1, 2]", "t.json: (top level): expected a JSON object"},
        {"not a spec", "{}", "t.json: bitproof_spec: missing"},
        {"future version", replaced(kGood, "\"bitproof_spec\": 1", "\"bitproof_spec\": 2"), "bitproof_spec: version 2"},
        {"unknown key", replaced(kGood, "\"name\": \"t\"", "\"name\": \"t\", \"nmae\": 1"),
         "t.json: nmae: unknown key"},
        {"unknown nested key", replaced(kGood, "\"codes\": \"all\"", "\"codes\": \"all\", \"bits\": 4"),
         "inputs[0].bits: unknown key"},
        {"bad name", replaced(kGood, "\"name\": \"t\"", "\"name\": \"T T\""), "t.json: name: expected lower-case"},
        {"unknown format", replaced(kGood, "\"e2m1\"", "\"e2m2\""), "inputs[0].format: unknown format \"e2m2\""},
        {"unknown output format", replaced(kGood, "\"fp16\"", "\"fp15\""), "output: unknown format \"fp15\""},
        {"unknown recipe", replaced(kGood, "turbomind.mxfp4_fp16.folded", "turbomind.folded"),
         "claims[0].recipes[0]: unknown recipe \"turbomind.folded\""},
        {"recipe inputs do not match", replaced(kGood, "\"ue8m0\"", "\"e4m3\""),
         "claims[0].recipes[0]: recipe \"turbomind.mxfp4_fp16.folded\" takes (e2m1, ue8m0) but the spec's inputs are "
         "(e2m1, e4m3)"},
        {"recipe output does not match", replaced(kGood, "\"fp16\"", "\"bf16\""),
         "produces fp16 but the spec's output is bf16"},
        {"reversed interval", replaced(kGood, "[114, 126]", "[126, 114]"),
         "inputs[1].codes.range: reversed interval [126, 114]"},
        {"out of range", replaced(kGood, "[114, 126]", "[114, 256]"),
         "inputs[1].codes.range[1]: code 256 is outside ue8m0"},
        {"negative code", replaced(kGood, "[114, 126]", "[-1, 126]"),
         "inputs[1].codes.range[0]: expected a non-negative integer"},
        {"empty list", replaced(kGood, "{\"range\": [114, 126]}", "{\"list\": []}"),
         "inputs[1].codes.list: empty domain"},
        {"duplicate code", replaced(kGood, "{\"range\": [114, 126]}", "{\"list\": [1, 1]}"),
         "inputs[1].codes.list[1]: code 1 listed twice"},
        {"no inputs", R"({"bitproof_spec": 1, "name": "t", "inputs": [], "output": "fp16", "claims": []})",
         "t.json: inputs: empty domain: no inputs"},
        {"wrong type: inputs", R"({"bitproof_spec": 1, "name": "t", "inputs": {}, "output": "fp16", "claims": []})",
         "t.json: inputs: expected an array, found object"},
        {"wrong type: codes", replaced(kGood, "\"codes\": \"all\"", "\"codes\": 16"),
         "inputs[0].codes: expected \"all\""},
        {"wrong type: recipes",
         replaced(kGood, "[\"turbomind.mxfp4_fp16.folded\", \"turbomind.mxfp4_fp16.ordinary\"]", "\"a\""),
         "claims[0].recipes: expected an array of recipe names, found string"},
        {"wrong type: expected_cases", replaced(kGood, "\"expected_cases\": 208", "\"expected_cases\": \"208\""),
         "claims[0].expected_cases: expected a non-negative integer"},
        {"wrong type: name", replaced(kGood, "\"name\": \"t\"", "\"name\": 7"),
         "t.json: name: expected a string, found number"},
        {"expected count cannot match", replaced(kGood, "\"expected_cases\": 208", "\"expected_cases\": 200"),
         "claims[0].expected_cases: 200 cannot match the domain, which has 208 cases"},
        {"unknown claim", replaced(kGood, "\"claim\": \"equal\"", "\"claim\": \"same\""),
         "claims[0].claim: unknown claim \"same\""},
        {"equal needs two", replaced(kGood, "\"turbomind.mxfp4_fp16.folded\", ", ""),
         "claims[0].recipes: claim \"equal\" needs at least 2"},
        {"recipe twice", replaced(kGood, "\"turbomind.mxfp4_fp16.ordinary\"", "\"turbomind.mxfp4_fp16.folded\""),
         "claims[0].recipes[1]: recipe listed twice"},
        {"rounding on equal", replaced(kGood, "\"expected_cases\": 208", "\"rounding\": \"nearest_even\""),
         "claims[0].rounding: only a correctly_rounded claim takes a rounding"},
        {"input named twice", replaced(kGood, "\"name\": \"scale\"", "\"name\": \"element\""),
         "inputs[1].name: name used twice"},
    };
    for (const BadCase& c : cases) {
      CAPTURE(c.what);
      auto spec = parse_spec(c.text, "t.json");
      REQUIRE_FALSE(spec.ok());
      CHECK(spec.error().exit_code == 2);
      CHECK(spec.error().message.rfind("t.json: ", 0) == 0);
      CHECK(spec.error().message.find('\n') == std::string::npos);
      CHECK_MESSAGE(spec.error().message.find(c.message) != std::string::npos, spec.error().message);
    }
  }

  TEST_CASE("findings: an expected refutation parses, prints back, and is dropped by --scales") {
    const std::string text =
        replaced(kGood, R"("expected_cases": 208)",
                 R"("expected_cases": 208, "expect": {"refuted": 6, "kinds": {"nan-bits": 4, "value": 2}})");
    auto spec = parse_spec(text, "t.json");
    REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
    REQUIRE(spec->claims[0].expect.has_value());
    CHECK(spec->claims[0].expect->refuted == 6);
    CHECK(spec->claims[0].expect->kinds.at("nan-bits") == 4);
    auto again = parse_spec(spec_to_json(*spec).dump(), "again.json");
    REQUIRE(again.ok());
    CHECK(spec_to_json(*again) == spec_to_json(*spec));
    REQUIRE(override_range(*spec, "scale", {100, 110}, "--scales").ok());
    CHECK_FALSE(spec->claims[0].expect.has_value());
  }

  TEST_CASE("findings: malformed or impossible expectations are bad input naming the field") {
    const std::vector<BadCase> bad = {
        {"not an object", R"("expect": 6)", "claims[0].expect: expected an object"},
        {"no count", R"("expect": {})", "claims[0].expect.refuted: missing"},
        {"zero", R"("expect": {"refuted": 0})", "claims[0].expect.refuted: 0: an expected refutation"},
        {"negative", R"("expect": {"refuted": -1})", "claims[0].expect.refuted: expected a positive integer"},
        {"a string", R"("expect": {"refuted": "6"})", "claims[0].expect.refuted: expected a positive integer"},
        {"more than the domain", R"("expect": {"refuted": 209})", "209 cannot happen: the domain has 208 cases"},
        {"unknown key", R"("expect": {"refuted": 6, "refutd": 1})", "claims[0].expect.refutd: unknown key"},
        {"unknown kind", R"("expect": {"refuted": 6, "kinds": {"nans": 6}})", "unknown kind \"nans\""},
        {"kinds do not add up", R"("expect": {"refuted": 6, "kinds": {"nan": 5}})", "add up to 5, not to refuted = 6"},
        {"empty kinds", R"("expect": {"refuted": 6, "kinds": {}})", "claims[0].expect.kinds: expected an object"},
        {"zero kind", R"("expect": {"refuted": 6, "kinds": {"nan": 6, "value": 0}})", "kinds.value: 0"},
    };
    for (const BadCase& b : bad) {
      const std::string text = replaced(kGood, R"("expected_cases": 208)", R"("expected_cases": 208, )" + b.text);
      auto spec = parse_spec(text, "t.json");
      REQUIRE_MESSAGE(!spec.ok(), b.what);
      CHECK_MESSAGE(spec.error().message.find("t.json: ") == 0, b.what);
      CHECK_MESSAGE(spec.error().message.find(b.message) != std::string::npos, b.what, ": ", spec.error().message);
      CHECK(spec.error().exit_code == kExitBadInput);
    }
  }

  TEST_CASE("empty claims and empty inputs") {
    auto no_claims = parse_spec(
        replaced(
            kGood,
            R"("claims": [{"claim": "equal", "recipes": ["turbomind.mxfp4_fp16.folded", "turbomind.mxfp4_fp16.ordinary"], "expected_cases": 208}])",
            R"("claims": [])"),
        "t.json");
    REQUIRE_FALSE(no_claims.ok());
    CHECK(no_claims.error().message == "t.json: claims: no claims");
    auto missing = load_spec("/nonexistent/spec.json");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message == "/nonexistent/spec.json: cannot read the spec file: No such file or directory");
    auto directory = load_spec("/tmp");
    REQUIRE_FALSE(directory.ok());
    CHECK(directory.error().message == "/tmp: cannot read the spec file: is a directory");
  }

  TEST_CASE("--scales overrides the scale input and drops expected_cases") {
    auto spec = parse_spec(replaced(kGood, R"(, "expected_cases": 208)", ""), "t.json");
    REQUIRE(spec.ok());
    REQUIRE(override_range(*spec, "scale", {113, 128}, "--scales").ok());
    CHECK(spec->case_count() == 256);
    auto reversed = override_range(*spec, "scale", {128, 113}, "--scales");
    REQUIRE_FALSE(reversed.ok());
    CHECK(reversed.error().message == "--scales: scale: reversed interval 128:113");
    auto outside = override_range(*spec, "scale", {0, 300}, "--scales");
    REQUIRE_FALSE(outside.ok());
    auto counted = parse_spec(kGood, "t.json");
    REQUIRE(override_range(*counted, "scale", {0, 255}, "--scales").ok());
    CHECK_FALSE(counted->claims[0].expected_cases.has_value());  // written for the replaced domain
    CHECK(counted->case_count() == 4096);
    auto no_such_input = override_range(*counted, "scales", {0, 1}, "--scales");
    REQUIRE_FALSE(no_such_input.ok());
  }

  TEST_CASE("--scales flag syntax") {
    CHECK(parse_range_flag("114:126", "--scales")->lo == 114);
    CHECK(parse_range_flag("0x72:0x7E", "--scales")->hi == 126);
    for (const char* bad : {"114", "a:b", "114:", ":126", "1:2:3", "-1:5", "114 :126"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_range_flag(bad, "--scales").ok());
    }
  }
}
