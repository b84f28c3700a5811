// Reports: the committed DeepSeek V4 report regenerates byte for byte, the
// result part is deterministic and free of environment, and outputs are written whole or not at all.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hash/digest.hpp"
#include "proof/engine.hpp"
#include "report/render.hpp"
#include "report/report.hpp"
#include "report/schema.hpp"
#include "support.hpp"

using namespace bitproof;

namespace {

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("the committed report's result part regenerates byte for byte") {
    const Spec spec = test::dsv4_spec();
    const Json committed =
        Json::parse(test::read_text(std::string(BITPROOF_SOURCE_DIR "/reports/dsv4-mxfp4-fp16-fold.json")));
    const Json regenerated = proof_result_json(spec, run_proof(spec, {8}), 8);
    CHECK(committed.at("result").dump(2) == regenerated.dump(2));
    CHECK(committed.at("bitproof_report") == kReportVersion);
  }

  TEST_CASE("result is deterministic; environment lives apart from it") {
    const Spec spec = test::dsv4_spec();
    const Json a = proof_report(spec, {{"cpu", "", run_proof(spec, {8})}}, 8);
    const Json b = proof_report(spec, {{"cpu", "", run_proof(spec, {8})}}, 8);
    CHECK(a["result"].dump() == b["result"].dump());
    CHECK(a["result"].dump().find("time_utc") == std::string::npos);
    CHECK(a["environment"].contains("time_utc"));
    CHECK(a["result"]["verdict"] == "holds");
    CHECK(a["result"]["spec_sha256"] == sha256_hex(a["result"]["spec"].dump()));
  }

  TEST_CASE("summary lines in the users' own style") {
    const Spec spec = test::dsv4_spec();
    const ProofResult r = run_proof(spec, {8});
    CHECK(domain_label(spec) + " " + claim_summary(spec.claims[0], r.claims[0]) ==
          "e2m1×ue8m0[114..126]→fp16 folded≡ordinary: 208/208 bit patterns equal");
    ClaimResult refuted = r.claims[0];
    refuted.holding = 200;
    CHECK(claim_summary(spec.claims[0], refuted) == "folded≡ordinary: REFUTED, 200/208 bit patterns equal (8 fail)");
  }

  TEST_CASE("codes described in hex with separated fields and value") {
    CHECK(describe_code(FormatId::fp16, 0x3800) == "0x3800 [0|01110|0000000000] 0.5");
    CHECK(describe_code(FormatId::e2m1, 0b1'11'1) == "0xF [1|11|1] -6");
    CHECK(describe_code(FormatId::ue8m0, 0xFF) == "0xFF [11111111] nan");
  }

  TEST_CASE("Markdown carries the claims once (the table, no code block repeating it) and the verdict") {
    const Spec spec = test::dsv4_spec();
    const std::string md = render_markdown(proof_report(spec, {{"cpu", "", run_proof(spec, {8})}}, 8));
    CHECK(md.find("| 208/208 | holds |") != std::string::npos);
    CHECK(md.find("folded≡ordinary: 208/208 bit patterns equal") == std::string::npos);
    CHECK(md.find("**Verdict: holds**") != std::string::npos);
  }
}

TEST_CASE("report schema: every keyword of reports/schema.json is one the validator checks or reads past") {
  const auto ok = check_schema(report_schema());
  CHECK_MESSAGE(ok.ok(), (ok ? std::string() : ok.error().message));
  // Negative controls: a keyword the validator does not check, at the top and nested.
  Json unknown = report_schema();
  unknown["uniqueItems"] = true;
  CHECK(test::contains(check_schema(unknown).error().message, "keyword uniqueItems is not supported"));
  Json nested = Json::parse(R"({"properties": {"a": {"type": "string", "format": "date"}}})");
  CHECK(test::contains(check_schema(nested).error().message, "keyword format is not supported"));
  CHECK(check_schema(Json::parse(R"({"properties": {"a": {"type": "string", "maxLength": 3}}})")).ok());
}
