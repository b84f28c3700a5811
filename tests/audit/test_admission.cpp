// Admission: a checkpoint inside the proven interval is admitted, one byte
// outside refuses it (the negative control), and every inconsistent or
// mismatched input is refused as bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "audit/admission.hpp"
#include "audit/synth.hpp"
#include "proof/discovery.hpp"
#include "report/digest.hpp"
#include "report/report.hpp"
#include "st_builder.hpp"

namespace bitproof::audit {
namespace {

using testing::TempDir;

std::string spec_path() { return std::string(BITPROOF_SOURCE_DIR) + "/proofs/dsv4-mxfp4-fp16-fold.json"; }

Json domain_json() {
  auto spec = load_spec(spec_path());
  REQUIRE(spec.ok());
  auto d = discover(*spec, "scale", {4});
  REQUIRE(d.ok());
  return discovery_report(*spec, *d);
}

void save(const std::string& path, const Json& j) { std::ofstream(path) << j.dump(); }

// Synthesizes a checkpoint, audits it and writes the audit report; returns its path.
std::string audited(const TempDir& dir, const std::string& name, std::uint32_t lo, std::uint32_t hi,
                    std::uint64_t nan_bytes = 0, const std::string& select = "") {
  SynthOptions o;
  o.out_dir = dir / name;
  o.layers = 2;
  o.experts = 2;
  o.rows = 4;
  o.cols = 64;
  o.scale_lo = lo;
  o.scale_hi = hi;
  o.nan_bytes = nan_bytes;
  REQUIRE(synthesize_checkpoint(o).ok());
  auto ck = open_checkpoint(o.out_dir);
  REQUIRE(ck.ok());
  auto r = run_audit(*ck, {Selection{{DType::kF8E8M0, DType::kU8}, select}, 2});
  REQUIRE(r.ok());
  const std::string path = dir / (name + ".audit.json");
  save(path, audit_report(*r, Json{{"threads", 2}}));
  return path;
}

Expected<Admission> admit_files(const std::string& audit_path, const std::string& domain_path,
                                std::optional<std::size_t> claim = std::nullopt, const std::string& select = "",
                                bool allow_partial = false) {
  auto a = load_audit_report(audit_path);
  if (!a) return a.error();
  auto p = load_domain_report(domain_path, claim);
  if (!p) return p.error();
  static AuditReport keep;  // admission points into the audit
  keep = std::move(*a);
  return admit(keep, *p, select, allow_partial);
}

std::string error_of(const Expected<Admission>& a) {
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().message.find('\n') == std::string::npos);
  return a.error().message;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_SUITE("audit") {
  TEST_CASE("inside the proven interval: admitted; one byte outside: refused (negative control)") {
    TempDir dir;
    const std::string domain = dir / "domain.json";
    save(domain, domain_json());
    auto proven = load_domain_report(domain, std::nullopt);
    REQUIRE(proven.ok());
    REQUIRE(proven->range.has_value());
    CHECK(proven->range->lo == 113);
    CHECK(proven->range->hi == 128);

    auto inside = admit_files(audited(dir, "inside", 113, 128), domain);
    REQUIRE(inside.ok());
    CHECK(inside->admitted());
    CHECK(inside->tensors.size() == 12);

    auto above = admit_files(audited(dir, "above", 114, 129), domain);
    REQUIRE(above.ok());
    CHECK_FALSE(above->admitted());
    CHECK(above->outside == 12);

    auto below = admit_files(audited(dir, "below", 112, 126), domain);
    REQUIRE(below.ok());
    CHECK_FALSE(below->admitted());
  }

  TEST_CASE("NaN bytes lie outside; --select narrows the tensors; layers are reported") {
    TempDir dir;
    const std::string domain = dir / "domain.json";
    save(domain, domain_json());
    const std::string audit = audited(dir, "nan", 114, 126, 1);  // the NaN lands in layers.0...experts.0.w1.scale
    auto all = admit_files(audit, domain);
    REQUIRE(all.ok());
    CHECK(all->outside == 1);
    REQUIRE(all->layers.size() == 2);
    CHECK(all->layers[0].outside == 1);
    CHECK(all->layers[1].outside == 0);
    auto layer1 = admit_files(audit, domain, std::nullopt, "^layers\\.1\\.");
    REQUIRE(layer1.ok());
    CHECK(layer1->admitted());
    CHECK(layer1->tensors.size() == 6);
    CHECK(contains(error_of(admit_files(audit, domain, std::nullopt, "^nothing")), "selects none"));
    CHECK(contains(error_of(admit_files(audit, domain, std::nullopt, "(")), "invalid regular expression"));
    // The manifest says the same.
    auto a = load_audit_report(audit);
    auto p = load_domain_report(domain, std::nullopt);
    auto m = admit(*a, *p, "", false);
    REQUIRE(m.ok());
    const Json j = admission_report(*a, *p, *m);
    CHECK(j["kind"] == "admission");
    CHECK(j["result"]["verdict"] == "refused");
    CHECK(j["result"]["counts"]["outside"] == 1);
    CHECK(j["result"]["proven"] == Json::array({113, 128}));
  }

  TEST_CASE("--claim picks one claim; out of range is bad input") {
    TempDir dir;
    const std::string domain = dir / "domain.json";
    save(domain, domain_json());
    auto one = load_domain_report(domain, 1);
    REQUIRE(one.ok());
    CHECK(one->claims.size() == 1);
    CHECK(one->claims[0].claim == "exact");
    auto bad = load_domain_report(domain, 2);
    REQUIRE_FALSE(bad.ok());
    CHECK(contains(bad.error().message, "--claim 2: the report has 2 claims"));
  }

  TEST_CASE("mismatched or inconsistent domain reports are refused") {
    TempDir dir;
    const std::string audit = audited(dir, "ck", 114, 126);
    const std::string d = dir / "d.json";
    auto refuse = [&](const Json& j, const std::string& part, int code = kExitBadInput) {
      save(d, j);
      auto p = load_domain_report(d, std::nullopt);
      REQUIRE_FALSE(p.ok());
      CHECK(p.error().exit_code == code);
      CHECK_MESSAGE(contains(p.error().message, part), p.error().message);
      CHECK(p.error().message.rfind(d + ": ", 0) == 0);
    };
    const Json good = domain_json();
    // Another kind of report.
    auto a = load_audit_report(audit);
    REQUIRE(a.ok());
    std::ifstream in(audit);
    refuse(nlohmann::ordered_json::parse(in), "kind: a report of kind \"domain\" is needed");
    Json j = good;
    j["bitproof_report"] = 99;
    refuse(j, "bitproof_report");
    // A maximal interval that the report's own per-code counts do not support.
    j = good;
    j["result"]["claims"][0]["maximal"] = Json::array({100, 128});
    refuse(j, "claims[0].maximal: code 100 is in the interval but does not hold");
    j = good;
    j["result"]["claims"][0]["maximal"] = Json::array({130, 120});
    refuse(j, "claims[0].maximal: must be null or [lo, hi]");
    // Swept over something that is not a UE8M0 byte.
    j = good;
    j["result"]["over"]["format"] = "e2m1";
    refuse(j, "result.over.format: the swept input scale is e2m1");
    // The other input proven only on some codes.
    j = good;
    j["result"]["spec"]["inputs"][0]["codes"] = Json{{"range", {0, 3}}};
    for (Json& c : j["result"]["spec"]["claims"]) c.erase("expected_cases");
    refuse(j, "result.spec_sha256: is not the digest of the recorded spec");
    j["result"]["spec_sha256"] = sha256_hex(j["result"]["spec"].dump());
    refuse(j, "result.spec.inputs[0].codes: input element covers only some codes");
    // The two witnesses disagreed: nothing is proven (exit 1, like a failed gate).
    j = good;
    j["result"]["witness"]["disagreements"] = 1;
    refuse(j, "witness disagreements", kExitRefuted);
    j = good;
    j["result"].erase("claims");
    refuse(j, "result.claims: missing");
    // Issue 12's forgery: a run over every code appended and the interval widened to 0..255.
    j = good;
    Json& claim0 = j["result"]["claims"][0];
    claim0["codes"].push_back(Json{{"from", 0}, {"to", 255}, {"cases", 16}, {"holding", 16}});
    claim0["maximal"] = Json::array({0, 255});
    refuse(j, "claims[0].codes[");
    refuse(j, "the runs must tile 0..255 in order");
    // A run's counts that are not the domain's cases per code.
    j = good;
    j["result"]["claims"][0]["codes"][0]["cases"] = 17;
    refuse(j, "claims[0].codes[0]: ");
    // The same forgery made consistent: one run, every code holding, maximal 0..255.
    // Every count adds up; only sweeping the recorded spec again shows it false.
    j = good;
    for (Json& c : j["result"]["claims"]) {
      c["codes"] = Json::array({Json{{"from", 0}, {"to", 255}, {"cases", 16}, {"holding", 16}}});
      c["maximal"] = Json::array({0, 255});
    }
    refuse(j, "result: does not reproduce here");
    // Control: the untouched report is accepted.
    save(d, good);
    CHECK(load_domain_report(d, std::nullopt).ok());
  }

  TEST_CASE("a partial audit is refused unless allowed; then the admission says so") {
    TempDir dir;
    const std::string domain = dir / "domain.json";
    save(domain, domain_json());
    // Layer 0 holds a NaN byte; an audit of layer 1 alone would admit the checkpoint.
    const std::string partial = audited(dir, "partial", 114, 126, 1, "layers\\.1\\.");
    const std::string refused = error_of(admit_files(partial, domain));
    CHECK_MESSAGE(contains(refused, "partial audit (6 scale tensors left out by --select layers\\.1\\.)"), refused);
    CHECK(contains(refused, "--allow-partial"));
    auto allowed = admit_files(partial, domain, std::nullopt, "", true);
    REQUIRE(allowed.ok());
    CHECK(allowed->admitted());
    CHECK(allowed->partial_audit == 6);
    auto a = load_audit_report(partial);
    auto p = load_domain_report(domain, std::nullopt);
    REQUIRE((a.ok() && p.ok()));
    const std::vector<std::string> lines = admission_lines(*a, *p, *allowed, 8);
    CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return contains(l, "PARTIAL AUDIT: 6"); }));
    CHECK(admission_report(*a, *p, *allowed)["result"]["partial_audit"]["left_out"] == 6);
    // --scales-from: the same rule.
    auto spec = load_spec(spec_path());
    REQUIRE(spec.ok());
    auto scales = apply_scales_from(*spec, partial, false);
    REQUIRE_FALSE(scales.ok());
    CHECK(contains(scales.error().message, "partial audit"));
    CHECK(apply_scales_from(*spec, partial, true).ok());
    // Control: a --select that leaves nothing out is a whole audit.
    const std::string whole = audited(dir, "whole", 114, 126, 1, "scale$");
    auto all = admit_files(whole, domain);
    REQUIRE(all.ok());
    CHECK(all->partial_audit == 0);
    CHECK_FALSE(all->admitted());
  }

  TEST_CASE("malformed or inconsistent audit reports are refused; --scales-from uses the observed interval") {
    TempDir dir;
    const std::string audit = audited(dir, "ck", 114, 126);
    std::ifstream in(audit);
    const Json good = Json::parse(in);
    const std::string f = dir / "a.json";
    auto refuse = [&](const Json& j, const std::string& part) {
      save(f, j);
      auto a = load_audit_report(f);
      REQUIRE_FALSE(a.ok());
      CHECK_MESSAGE(contains(a.error().message, part), a.error().message);
    };
    Json j = good;
    j["result"]["tensors"][0]["max"] = 127;
    refuse(j, "disagree with the histogram");
    j = good;
    j["result"]["tensors"][0]["histogram"] = Json::array({Json::array({114, 1})});
    refuse(j, "disagree with the histogram");
    j = good;
    j["result"]["overall"]["max"] = 128;
    refuse(j, "result.overall.max: disagrees with the tensors");
    j = good;
    j["result"]["tensors"] = Json::array();
    refuse(j, "no scale tensor");
    j = good;
    j["kind"] = "domain";
    refuse(j, "kind: a report of kind \"audit\" is needed");
    std::ofstream(f) << "{\"kind\": \"audit\", \"kind\": \"audit\"}";
    auto dup = load_audit_report(f);
    REQUIRE_FALSE(dup.ok());
    CHECK(contains(dup.error().message, "kind: key given twice in one JSON object"));
    std::ofstream(f) << "not json";
    REQUIRE_FALSE(load_audit_report(f).ok());

    auto spec = load_spec(spec_path());
    REQUIRE(spec.ok());
    REQUIRE(apply_scales_from(*spec, audit, false).ok());
    const auto s = spec->input_index("scale");
    REQUIRE(s.has_value());
    REQUIRE(spec->inputs[*s].range.has_value());
    CHECK(spec->inputs[*s].range->lo == 114);
    CHECK(spec->inputs[*s].range->hi == 126);
    const std::string wide = audited(dir, "wide", 100, 140, 1);
    REQUIRE(apply_scales_from(*spec, wide, false).ok());
    CHECK(spec->inputs[*s].range->hi == 255);  // the NaN byte is observed, so it is proven over too
  }
}

}  // namespace bitproof::audit
