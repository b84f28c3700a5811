// The table of report kinds (src/report/kind.hpp): one row per kind the schema
// names, every committed report read through its own kind's row, a domain
// report read for admission by the domain kind's reader alone, and the kind
// peeked from a report's text without reading it whole.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "report/kind.hpp"
#include "report/kind_domain.hpp"
#include "report/kind_proof.hpp"
#include "report/read.hpp"
#include "report/render.hpp"
#include "report/schema.hpp"
#include "support.hpp"

using namespace bitproof;

namespace {

Json committed(const std::string& name) {
  auto report = load_report(std::string(BITPROOF_SOURCE_DIR "/") + name);
  REQUIRE_MESSAGE(report.ok(), (report ? std::string() : report.error().message));
  return *report;
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("the table has one row per kind the schema names, in the schema's order") {
    std::vector<std::string> schema_kinds, rows;
    for (const Json& k : report_schema()["properties"]["kind"]["enum"]) schema_kinds.push_back(k.get<std::string>());
    for (const ReportKind& k : report_kinds()) rows.emplace_back(k.name);
    CHECK(rows == schema_kinds);
    for (const std::string& name : schema_kinds) CHECK(find_report_kind(name) != nullptr);
    CHECK(find_report_kind("kernel-ab") == nullptr);  // not until its row is added
  }

  TEST_CASE("each committed report is read, rendered and compared through its own kind's row") {
    for (const char* name : {"reports/dsv4-mxfp4-fp16-fold.json", "reports/dsv4-mxfp4-fp16-fold.domain.json",
                             "reports/ab/dsv4-fused-aux-gemv.json", "reports/time/k-loop-twice.json"}) {
      CAPTURE(name);
      const Json report = committed(name);
      const ReportKind* kind = report_kind_of(report);
      REQUIRE(kind != nullptr);
      CHECK(kind->name == report["kind"].get<std::string>());
      CHECK(kind->refused_alone.empty());
      REQUIRE((kind->markdown != nullptr));
      CHECK(render_markdown(report) == kind->markdown(report));
      CHECK(!render_markdown(report).empty());
      REQUIRE((kind->junit != nullptr));
      CHECK(render_junit(report) == kind->junit(report));
      REQUIRE((kind->diff != nullptr));
      CHECK(kind->diff(report["result"], report["result"]).empty());
      CHECK(kind->verify);
    }
  }

  TEST_CASE("kinds without a rendering or a verifier say so through their rows") {
    const ReportKind* shard = find_report_kind("shard");
    REQUIRE(shard != nullptr);
    CHECK(test::contains(std::string(shard->refused_alone), "merge the shards first"));
    for (const char* name : {"audit", "admission"}) {
      const ReportKind* kind = find_report_kind(name);
      REQUIRE(kind != nullptr);
      CHECK((kind->validate == nullptr));  // the schema is their contract
      CHECK((kind->svg == nullptr));
      CHECK((kind->diff == nullptr));
    }
    Json audit = Json::object();
    audit["kind"] = "audit";
    auto svg = render_svg(audit, "--svg");
    REQUIRE_FALSE(svg.ok());
    CHECK(svg.error().message == "--svg: an audit report has no case map (give --markdown or --junit)");
  }

  TEST_CASE("a verifier registered from above fills its row") {
    const ReportKind* admission = find_report_kind("admission");
    REQUIRE(admission != nullptr);
    const ReportVerifier before = admission->verify;
    set_report_verifier("admission",
                        [](const Json&, const std::string&, const VerifyOptions&) -> Expected<Verification> {
                          return Verification{true, "registered", {}};
                        });
    REQUIRE(admission->verify);
    auto v = admission->verify(Json::object(), "a.json", {});
    CHECK((v.ok() && v->headline == "registered"));
    set_report_verifier("admission", before);
  }

  TEST_CASE("a domain report for admission is read by the domain kind's reader") {
    const std::string path = BITPROOF_SOURCE_DIR "/reports/dsv4-mxfp4-fp16-fold.domain.json";
    Json domain = Json::parse(test::read_text(path));
    CHECK(validate_domain_report(domain, "d.json").ok());
    CHECK(validate_domain_report(domain, "d.json").ok() == validate_report(domain, "d.json").ok());
    // What validate_report refuses, the domain reader refuses with the same line.
    Json forged = domain;
    forged["result"]["over"]["input"] = "<script>";
    const auto alone = validate_domain_report(forged, "d.json");
    REQUIRE_FALSE(alone.ok());
    CHECK(alone.error().message == "d.json: result.over.input: is not an input of the recorded spec");
    CHECK(alone.error().message == validate_report(forged, "d.json").error().message);
    Json digest = domain;
    digest["result"]["spec_sha256"] = std::string(64, '0');
    CHECK(validate_domain_report(digest, "d.json").error().message ==
          "d.json: result.spec_sha256: is not the digest of the recorded spec");
    // A report of another kind is not read as a domain report.
    const Json proof = Json::parse(test::read_text(BITPROOF_SOURCE_DIR "/reports/dsv4-mxfp4-fp16-fold.json"));
    REQUIRE(validate_report(proof, "p.json").ok());
    const auto other = validate_domain_report(proof, "p.json");
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().message == "p.json: kind: a proof report, not a domain report");
  }

  TEST_CASE("the kind is peeked from the top level of a report's text, and no further") {
    CHECK(peek_report_kind(R"({"bitproof_report": 1, "kind": "audit", "result": {)") ==
          std::optional<std::string>("audit"));
    CHECK(peek_report_kind(R"({"result": {"kind": "audit"}, "kind": "proof"})") == std::optional<std::string>("proof"));
    CHECK(peek_report_kind(R"([{"kind": "audit"}])") == std::nullopt);
    CHECK(peek_report_kind(R"({"kind": 3, "x": "audit"})") == std::nullopt);
    CHECK(peek_report_kind(R"({"result": {"kind": "audit"})") == std::nullopt);
    CHECK(peek_report_kind("not json") == std::nullopt);
    CHECK(peek_report_kind("") == std::nullopt);
  }
}
