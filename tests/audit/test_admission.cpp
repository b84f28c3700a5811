// Admission: a checkpoint inside the proven interval is admitted, one code
// outside refuses it (the negative control), the codes outside are counted
// below and above and the first decoded, --max-outside tolerates exactly
// its count, domain reports of 8- and 16-bit scale formats are read, one of
// another format is refused, and every inconsistent input is bad input.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "audit/admission.hpp"
#include "audit/synth.hpp"
#include "proof/discovery.hpp"
#include "report/compare.hpp"
#include "hash/digest.hpp"
#include "report/report.hpp"
#include "st_builder.hpp"
#include "support.hpp"

namespace bitproof::audit {
namespace {

using testing::TempDir;

// A spec of proofs/ by name, or of tests/audit/data when the name starts with "data/".
std::string spec_path(const std::string& name = "dsv4-mxfp4-fp16-fold") {
  return fmt::format("{}/{}{}.json", BITPROOF_SOURCE_DIR, name.starts_with("data/") ? "tests/audit/" : "proofs/", name);
}

Json domain_json(const std::string& name = "dsv4-mxfp4-fp16-fold") {
  auto spec = load_spec(spec_path(name));
  REQUIRE(spec.ok());
  auto d = discover(*spec, "scale", {4});
  REQUIRE(d.ok());
  return discovery_report(*spec, *d);
}

void save(const std::string& path, const Json& j) { std::ofstream(path) << j.dump(); }

// Synthesizes a checkpoint, audits it and writes the audit report; returns its path.
std::string audited(const TempDir& dir, const std::string& name, std::uint32_t lo, std::uint32_t hi,
                    std::uint64_t nan_bytes = 0, const std::string& select = "",
                    SynthLayout layout = SynthLayout::kDsv4, const std::string& formats = "") {
  SynthOptions o;
  o.out_dir = dir / name;
  o.layout = layout;
  o.layers = 2;
  o.experts = 2;
  o.rows = layout == SynthLayout::kGptq ? 8 : 4;
  o.cols = layout == SynthLayout::kGptq ? 128 : 64;
  o.scale_lo = lo;
  o.scale_hi = hi;
  o.nan_bytes = nan_bytes;
  REQUIRE(synthesize_checkpoint(o).ok());
  auto ck = checkpoint::open_checkpoint(o.out_dir);
  REQUIRE(ck.ok());
  auto selection = make_selection("", select, formats);
  REQUIRE(selection.ok());
  auto r = run_audit(*ck, {*selection, 2});
  REQUIRE(r.ok());
  const std::string path = dir / (name + ".audit.json");
  save(path, audit_report(*r, Json{{"threads", 2}}));
  return path;
}

Expected<Admission> admit_files(const std::string& audit_path, const std::string& domain_path,
                                std::optional<std::size_t> claim = std::nullopt, const std::string& select = "",
                                bool allow_partial = false, std::uint64_t max_outside = 0) {
  auto a = load_audit_report(audit_path);
  if (!a) return a.error();
  auto p = load_domain_report(domain_path, claim);
  if (!p) return p.error();
  static AuditReport keep;  // admission points into the audit
  keep = std::move(*a);
  return admit(keep, *p, select, allow_partial, max_outside);
}

std::string error_of(const Expected<Admission>& a) {
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().message.find('\n') == std::string::npos);
  return a.error().message;
}

using test::contains;

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
    CHECK(above->below == 0);
    CHECK(above->above >= 12);  // every tensor starts with 114, 129
    for (const TensorAdmission& t : above->tensors) {
      REQUIRE(t.first_outside.size() == 1);
      CHECK(t.first_outside[0].first == 129);
      CHECK(t.above == t.first_outside[0].second);
    }

    auto below = admit_files(audited(dir, "below", 112, 126), domain);
    REQUIRE(below.ok());
    CHECK_FALSE(below->admitted());
    CHECK(below->above == 0);
    CHECK(below->below >= 12);
    CHECK(below->tensors[0].first_outside[0].first == 112);
  }

  TEST_CASE("--max-outside: a tolerant gate admits exactly up to its count (negative control one below)") {
    TempDir dir;
    const std::string domain = dir / "domain.json";
    save(domain, domain_json());
    const std::string audit = audited(dir, "nan", 114, 126, 3);
    auto strict = admit_files(audit, domain);
    REQUIRE(strict.ok());
    CHECK_FALSE(strict->admitted());
    CHECK(strict->codes_outside() == 3);
    CHECK(strict->above == 3);
    auto tolerant = admit_files(audit, domain, std::nullopt, "", false, 3);
    REQUIRE(tolerant.ok());
    CHECK(tolerant->admitted());
    CHECK(tolerant->outside == 3);  // still counted and listed
    auto one_short = admit_files(audit, domain, std::nullopt, "", false, 2);
    REQUIRE(one_short.ok());
    CHECK_FALSE(one_short->admitted());
  }

  TEST_CASE("16-bit scales: a GPTQ checkpoint's FP16 group scales admitted against a domain report over fp16") {
    TempDir dir;
    const std::string domain = dir / "fp16.json";
    save(domain, domain_json("data/gptq-fp16-subnormal-scales"));
    auto proven = load_domain_report(domain, std::nullopt);
    REQUIRE_MESSAGE(proven.ok(), (proven.ok() ? "" : proven.error().message));
    CHECK(proven->format == FormatId::fp16);
    REQUIRE(proven->range.has_value());
    CHECK(proven->range->lo == 1);  // the subnormal scales 1..16, as `domain` finds
    CHECK(proven->range->hi == 16);
    const std::uint32_t lo = proven->range->lo, hi = proven->range->hi;
    auto inside = admit_files(audited(dir, "in", lo, hi, 0, "", SynthLayout::kGptq), domain);
    REQUIRE(inside.ok());
    CHECK(inside->admitted());
    CHECK(inside->tensors.size() == 12);
    // Negative control: the range one code past the proven interval; the FP16 NaN 0x7E00 lies above it too.
    auto past = admit_files(audited(dir, "past", lo, hi + 1, 2, "", SynthLayout::kGptq), domain);
    REQUIRE(past.ok());
    CHECK_FALSE(past->admitted());
    CHECK(past->outside == 12);
    CHECK(past->below == 0);
    std::uint64_t nan = 0;
    for (const TensorAdmission& t : past->tensors) {
      CHECK(t.first_outside[0].first == hi + 1);
      for (const auto& [code, count] : t.first_outside) nan += code == 0x7E00 ? count : 0;
    }
    CHECK(nan == 2);
    // A domain report of another format: one line, exit 2.
    const std::string ue8m0 = dir / "ue8m0.json";
    save(ue8m0, domain_json());
    const std::string other = error_of(admit_files(audited(dir, "other", lo, hi, 0, "", SynthLayout::kGptq), ue8m0));
    CHECK_MESSAGE(contains(other, "ue8m0.json: result.over.format: the domain report sweeps ue8m0 codes, but the audit "), other);
    CHECK(contains(other, "holds fp16 scales: a domain report of another format"));
  }

  TEST_CASE("NVFP4: UE4M3 block scales admitted after --select leaves the FP32 global scales out") {
    TempDir dir;
    const std::string domain = dir / "ue4m3.json";
    save(domain, domain_json("marlin-nvfp4-bf16"));
    auto proven = load_domain_report(domain, std::nullopt);
    REQUIRE(proven.ok());
    CHECK(proven->format == FormatId::ue4m3);
    REQUIRE(proven->range.has_value());
    const std::string audit = audited(dir, "nv", 32, 120, 0, "", SynthLayout::kNvfp4, "ue4m3");
    const std::string mixed = error_of(admit_files(audit, domain));
    CHECK_MESSAGE(contains(mixed, "tensor layers.0.ffn.experts.0.w1.weight_scale_2: fp32 scales, but the domain report"),
                  mixed);
    CHECK(contains(mixed, "select the ue4m3 tensors with --select"));
    auto blocks = admit_files(audit, domain, std::nullopt, "weight_scale$");
    REQUIRE(blocks.ok());
    CHECK(blocks->tensors.size() == 12);
    CHECK(blocks->admitted() == (proven->range->lo <= 32 && 120 <= proven->range->hi));
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
    CHECK(j["result"]["counts"]["codes_above"] == 1);
    CHECK(j["result"]["proven"] == Json::array({113, 128}));
    CHECK(j["result"]["tensors"][0]["first_outside"][0]["code"] == 255);
    CHECK(j["result"]["tensors"][0]["first_outside"][0]["described"] == describe_scale_code(FormatId::ue8m0, 255));
    CHECK(contains(describe_scale_code(FormatId::ue8m0, 255), "nan"));
    CHECK(describe_scale_code(FormatId::ue4m3, 0x80) == "0x80 (no ue4m3 code)");
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
    // A swept format that is not the recorded spec's: refused when the report's strings are checked.
    j = good;
    j["result"]["over"]["format"] = "e2m1";
    refuse(j, "result.over.format: is not the format of that input in the recorded spec");
    // Swept over something that is no scale format (the spec's e2m1 input).
    j = good;
    j["result"]["over"]["input"] = "element";
    j["result"]["over"]["format"] = "e2m1";
    refuse(j, "which is no scale format the audit reads");
    // The other input proven only on some codes.
    j = good;
    j["result"]["spec"]["inputs"][0]["codes"] = Json{{"range", {0, 3}}};
    for (Json& c : j["result"]["spec"]["claims"]) c.erase("expected_cases");
    refuse(j, "result.spec_sha256: is not the digest of the recorded spec");
    j["result"]["spec_sha256"] = sha256_hex(j["result"]["spec"].dump());
    refuse(j, "result.spec.inputs[0].codes: input element covers only some codes");
    // The two witnesses disagreed: the report proves nothing to admit against (bad input, exit 2).
    j = good;
    j["result"]["witness"]["disagreements"] = 1;
    refuse(j, "result.witness: 1 witness disagreements", kExitBadInput);
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

  TEST_CASE("malformed or inconsistent audit reports are refused; --scales-from sweeps the observed set or range") {
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
    j["result"]["tensors"][0]["specials"]["nan"] = 1;
    refuse(j, "disagree with the histogram");
    j = good;
    j["result"]["tensors"][0]["format"] = "fp16";
    refuse(j, "F8_E8M0 read as fp16 is not a scale format of the audit");
    j = good;
    j["result"]["tensors"][0]["histogram"] = Json::array({Json::array({300, 1})});
    refuse(j, "codes ascending below 2^8");
    j = good;
    j["result"]["overall"]["codes"] = 1;
    refuse(j, "result.overall: tensors or codes disagree with the tensors");
    j = good;
    j["result"]["tensors"] = Json::array();
    refuse(j, "result.tensors");
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
    const auto s = spec->input_index("scale");
    REQUIRE(s.has_value());
    // The set: exactly the codes the audit saw (a list), each once, ascending.
    REQUIRE(apply_scales_from(*spec, audit, false).ok());
    CHECK_FALSE(spec->inputs[*s].range.has_value());
    CHECK(spec->inputs[*s].codes == std::vector<std::uint32_t>{114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126});
    CHECK(spec_to_json(*spec)["inputs"][1]["codes"].contains("list"));
    // One NaN byte adds the one code 255 to the set, not 127..254 (the range would).
    const std::string nan = audited(dir, "nan", 114, 126, 1);
    REQUIRE(apply_scales_from(*spec, nan, false, ScalesFrom::kSet).ok());
    CHECK(spec->inputs[*s].codes.size() == 14);
    CHECK(spec->inputs[*s].codes.back() == 255);
    REQUIRE(apply_scales_from(*spec, nan, false, ScalesFrom::kRange).ok());
    REQUIRE(spec->inputs[*s].range.has_value());
    CHECK(spec->inputs[*s].range->lo == 114);
    CHECK(spec->inputs[*s].range->hi == 255);
    CHECK(spec_to_json(*spec)["inputs"][1]["codes"].contains("range"));
    // An audit of another format: bad input naming what it holds.
    const std::string gptq = audited(dir, "gptq", 0x1C00, 0x2400, 0, "", SynthLayout::kGptq);
    const auto other = apply_scales_from(*spec, gptq, false);
    REQUIRE_FALSE(other.ok());
    CHECK(contains(other.error().message, "result.tensors: no ue8m0 scale tensor (the audit holds fp16)"));
    // UE4M3 bytes with the sign bit set are no codes: they cannot be swept.
    auto nv = load_spec(spec_path("marlin-nvfp4-bf16"));
    REQUIRE(nv.ok());
    const std::string signed_bytes = audited(dir, "signed", 100, 200, 0, "weight_scale$", SynthLayout::kNvfp4, "ue4m3");
    const auto refused = apply_scales_from(*nv, signed_bytes, true);
    REQUIRE_FALSE(refused.ok());
    CHECK_MESSAGE(contains(refused.error().message, "are no ue4m3 code (0x80 and up): they cannot be swept"),
                  refused.error().message);
  }

  TEST_CASE("an audit identifies the bytes it read; the checkpoint on disk must be them (negative controls)") {
    TempDir dir;
    const std::string path = audited(dir, "ck", 114, 126);
    auto a = load_audit_report(path);
    REQUIRE(a.ok());
    REQUIRE(a->files.size() == 1);
    CHECK(a->files[0].header_sha256.size() == 64);
    // The digest is of the tensor's bytes, as any SHA-256 of them gives it.
    auto ck = checkpoint::open_checkpoint(dir / "ck");
    REQUIRE(ck.ok());
    const checkpoint::CheckpointFile& file = ck->files[0];
    const auto t = std::find_if(file.header.tensors.begin(), file.header.tensors.end(),
                                [&](const checkpoint::TensorInfo& i) { return i.name == a->tensors[0].name; });
    REQUIRE(t != file.header.tensors.end());
    Sha256 sha;
    sha.update(file.tensor_bytes(*t).data(), file.tensor_bytes(*t).size());
    CHECK(a->tensors[0].sha256 == to_hex(sha.finish()));
    // The checkpoint as the audit read it: checked (the negative control of each refusal below).
    REQUIRE(check_checkpoint(*a).ok());
    CHECK(load_checked_audit(path).ok());
    const auto refused = [&](const AuditReport& report, const std::string& part) {
      auto ok = check_checkpoint(report);
      REQUIRE_FALSE(ok.ok());
      CHECK(ok.error().exit_code == kExitBadInput);
      CHECK(ok.error().message.find('\n') == std::string::npos);
      CHECK_MESSAGE(contains(ok.error().message, part), ok.error().message);
    };
    // Codes that are not the bytes' (the digests are): a report forged with honest digests.
    AuditReport forged = *a;
    forged.tensors[0].histogram = {{114, forged.tensors[0].histogram.front().second}};
    refused(forged, "records other codes than they hold");
    // Another tensor digest, another header digest, another size, another file list.
    AuditReport other = *a;
    other.tensors[1].sha256 = std::string(64, '0');
    refused(other, fmt::format("tensor {}: SHA-256 ", other.tensors[1].name));
    other = *a;
    other.files[0].header_sha256 = std::string(64, 'f');
    refused(other, "header SHA-256 ");
    other = *a;
    other.files[0].bytes += 1;
    refused(other, "bytes on disk, the audit read");
    other = *a;
    other.files[0].name = "elsewhere.safetensors";
    refused(other, "elsewhere.safetensors: not in the checkpoint on disk, the audit read it");
    // One scale byte changed on disk after the audit: refused, naming the file and the tensor.
    {
      std::fstream f(file.path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(file.tensor_offset(*t)));
      f.put(static_cast<char>(0xFF));
    }
    refused(*a, fmt::format("is not the checkpoint this audit read: {}: tensor {}: SHA-256 ", file.name, t->name));
    auto spec = load_spec(spec_path());
    REQUIRE(spec.ok());
    const auto scales = apply_scales_from(*spec, path, false);
    REQUIRE_FALSE(scales.ok());
    CHECK(contains(scales.error().message, "result.checkpoint: "));
    // Gone: refused too.
    std::filesystem::remove_all(dir / "ck");
    refused(*a, "the checkpoint the audit read cannot be read again");
  }

  TEST_CASE("an audit report as bitproof writes it is read apart from its histograms, to the same result") {
    TempDir dir;
    // Quotes, brackets and a backslash in the checkpoint's path: the result part's text holds them escaped.
    const std::string name = "ck \"}]{[\\ odd";
    const std::string path = audited(dir, name, 114, 126, 1);
    const std::string text = test::read_text(path);
    REQUIRE(text.starts_with(R"({"bitproof_report":1,"kind":"audit","result":{)"));
    // The same report written otherwise (indented) is read as a whole document.
    const std::string indented = Json::parse(text).dump(1);
    auto lean = parse_audit_report_text(text, path);
    auto whole = parse_audit_report_text(indented, path);
    REQUIRE(lean.ok());
    REQUIRE(whole.ok());
    CHECK(lean->checkpoint == dir / name);
    CHECK(lean->checkpoint == whole->checkpoint);
    CHECK(lean->summary == whole->summary);
    REQUIRE(lean->tensors.size() == whole->tensors.size());
    for (std::size_t i = 0; i < lean->tensors.size(); ++i) {
      CHECK(lean->tensors[i].name == whole->tensors[i].name);
      CHECK(lean->tensors[i].histogram == whole->tensors[i].histogram);
      CHECK(lean->tensors[i].stats.codes == whole->tensors[i].stats.codes);
    }
    CHECK(std::any_of(lean->tensors.begin(), lean->tensors.end(),
                      [](const AuditedTensor& t) { return t.histogram.back().first == 255; }));  // the NaN byte

    // report verify's fast way: the checkpoint audited again gives the text byte for byte.
    const FastReaudit fast = reaudit_fast(text, path, 2);
    const auto& same = fast.reproduced;
    REQUIRE(same.has_value());
    CHECK(fast.difference.empty());
    CHECK(same->checkpoint == lean->checkpoint);
    CHECK(same->summary == lean->summary);
    // Not for the indented text (the whole document then verifies it) ...
    CHECK_FALSE(reaudit_fast(indented, path, 2).reproduced.has_value());
    CHECK(reaudit_fast(indented, path, 2).difference.empty());
    auto indented_again = reaudit_result(Json::parse(indented), path, 2);
    REQUIRE(indented_again.ok());
    CHECK_FALSE(indented_again->has_value());
    // ... nor for a report whose histogram was edited (the whole read names it) ...
    std::string edited = text;
    const auto pair = edited.find("[126,");
    REQUIRE(pair != std::string::npos);
    edited.replace(pair, 5, "[125,");
    CHECK_FALSE(reaudit_fast(edited, path, 2).reproduced.has_value());
    CHECK(reaudit_fast(edited, path, 2).difference.empty());
    auto refused = parse_audit_report_text(edited, path);
    REQUIRE_FALSE(refused.ok());
    CHECK_MESSAGE(contains(refused.error().message, "result: does not follow from its tensors' histograms"),
                  refused.error().message);
    // Two tensors' names swapped: the report reads the fast way, and the first difference comes
    // after a tensor's histogram, which the fast way counts in lines without printing it.
    const auto tensors_at = text.find(R"(,"tensors":[)");
    const auto name_at = [&text](std::size_t from) { return text.find(R"("name":")", from) + 8; };
    const std::size_t first_name = name_at(name_at(tensors_at)), second_name = name_at(first_name);  // tensors 1, 2
    const std::size_t first_end = text.find('"', first_name), second_end = text.find('"', second_name);
    std::string swapped = text.substr(0, first_name) + text.substr(second_name, second_end - second_name) +
                          text.substr(first_end, second_name - first_end) +
                          text.substr(first_name, first_end - first_name) + text.substr(second_end);
    REQUIRE(swapped.size() == text.size());
    const FastReaudit names = reaudit_fast(swapped, path, 2);
    CHECK_FALSE(names.reproduced.has_value());
    auto names_whole = reaudit_result(Json::parse(swapped), path, 2);
    REQUIRE(names_whole.ok());
    REQUIRE(names_whole->has_value());
    CHECK(names.difference == first_difference(Json::parse(swapped)["result"], **names_whole));
    CHECK_MESSAGE(names.difference.find(R"("name": )") != std::string::npos, names.difference);
    // ... and once the checkpoint changed, the fast way names the first difference as the whole read does.
    std::filesystem::remove_all(dir / name);
    audited(dir, name, 114, 127, 1);
    const FastReaudit changed = reaudit_fast(text, path, 2);
    CHECK_FALSE(changed.reproduced.has_value());
    auto differs = reaudit_result(Json::parse(text), path, 2);
    REQUIRE(differs.ok());
    REQUIRE(differs->has_value());
    // The fast way names the line the whole read names, without the histograms as JSON values.
    const std::string whole_difference = first_difference(Json::parse(text)["result"], **differs);
    CHECK(whole_difference.starts_with("line "));
    CHECK(changed.difference == whole_difference);

    // A histogram written otherwise in the compact text (a leading zero: not JSON) goes the whole way.
    const auto first = text.find(R"("histogram":[[)", text.find(R"(,"tensors":[)"));
    REQUIRE(first != std::string::npos);
    const std::string zero = text.substr(0, first + 14) + "0" + text.substr(first + 14);
    CHECK_FALSE(reaudit_fast(zero, path, 2).reproduced.has_value());
    CHECK(reaudit_fast(zero, path, 2).difference.empty());
    auto not_json = parse_audit_report_text(zero, path);
    REQUIRE_FALSE(not_json.ok());
    CHECK_MESSAGE(contains(not_json.error().message, "invalid JSON"), not_json.error().message);

    // 16-bit codes: a GPTQ checkpoint's FP16 group scales.
    const std::string gptq = audited(dir, "gptq", 0x1C00, 0x2400, 0, "", SynthLayout::kGptq);
    const std::string gptq_text = test::read_text(gptq);
    REQUIRE(reaudit_fast(gptq_text, gptq, 2).reproduced.has_value());
    auto gptq_lean = parse_audit_report_text(gptq_text, gptq);
    auto gptq_whole = parse_audit_report_text(Json::parse(gptq_text).dump(1), gptq);
    REQUIRE(gptq_lean.ok());
    REQUIRE(gptq_whole.ok());
    CHECK(gptq_lean->tensors.front().histogram == gptq_whole->tensors.front().histogram);
    CHECK(gptq_lean->tensors.front().format == FormatId::fp16);

    // A tensor named like a histogram member: JSON escapes its quotes, so the fast way is not misled.
    const std::string odd = "w\"histogram\":[[1,2]],\"x.scale";
    const Json header{{odd, {{"dtype", "F8_E8M0"}, {"shape", {2}}, {"data_offsets", {0, 2}}}}};
    testing::write_bytes(dir / "odd.safetensors", testing::st_bytes(header.dump(), {114, 115}));
    auto ck = checkpoint::open_checkpoint(dir / "odd.safetensors");
    REQUIRE(ck.ok());
    auto r = run_audit(*ck, {Selection{}, 2});
    REQUIRE(r.ok());
    REQUIRE(r->tensors.size() == 1);
    const std::string odd_path = dir / "odd.audit.json";
    save(odd_path, audit_report(*r, Json{{"threads", 2}}));
    const std::string odd_text = test::read_text(odd_path);
    REQUIRE(contains(odd_text, R"(w\"histogram\":[[1,2]],\"x.scale)"));
    REQUIRE(reaudit_fast(odd_text, odd_path, 2).reproduced.has_value());
    auto odd_lean = parse_audit_report_text(odd_text, odd_path);
    REQUIRE(odd_lean.ok());
    CHECK(odd_lean->tensors.front().name == odd);
    CHECK(odd_lean->tensors.front().histogram == CodeCounts{{114, 1}, {115, 1}});
  }
}

}  // namespace bitproof::audit
