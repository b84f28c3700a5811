// Markdown and JUnit of audit and admission reports (src/report/render_audit.cpp):
// the tensors holding NaN or codes outside come first and fail their test case;
// a clean checkpoint renders no failure (the negative control).
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "../audit/st_builder.hpp"
#include "audit/admission.hpp"
#include "audit/audit.hpp"
#include "audit/synth.hpp"
#include "proof/discovery.hpp"
#include "report/render.hpp"

namespace bitproof {
namespace {

using audit::testing::TempDir;

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

// The audit report of a small DeepSeek V4 checkpoint, with one NaN byte
// written into layer 1's first scale tensor when `nan`.
Json audit_json(const TempDir& dir, const std::string& name, bool nan) {
  audit::SynthOptions o;
  o.out_dir = dir / name;
  o.layers = 2;
  o.experts = 1;
  o.rows = 4;
  o.cols = 64;
  REQUIRE(audit::synthesize_checkpoint(o).ok());
  if (nan) {
    auto before = checkpoint::open_checkpoint(o.out_dir);
    REQUIRE(before.ok());
    const checkpoint::CheckpointFile& f = before->files[0];
    for (const checkpoint::TensorInfo& t : f.header.tensors) {
      if (t.name != "layers.1.ffn.experts.0.w1.scale") continue;
      std::fstream file(f.path, std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(static_cast<std::streamoff>(f.tensor_offset(t) + 2));
      file.put(static_cast<char>(0xFF));
    }
  }
  auto ck = checkpoint::open_checkpoint(o.out_dir);
  REQUIRE(ck.ok());
  auto r = audit::run_audit(*ck, {audit::Selection{}, 1});
  REQUIRE(r.ok());
  return audit::audit_report(*r, Json::object());
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("audit reports: NaN tensors first in Markdown, one failing JUnit case each; a clean one fails none") {
    TempDir dir;
    const Json nan = audit_json(dir, "nan", true);
    CHECK(validate_report(nan, "nan.json").ok());
    const std::string md = render_markdown(nan);
    CHECK(md.find("**1 tensors hold NaN, Inf or non-codes:**") < md.find("| layer | format |"));
    CHECK(md.find("| `layers.1.ffn.experts.0.w1.scale` | 1 | ue8m0 | 1 nan |") != std::string::npos);
    const std::string xml = render_junit(nan);
    CHECK(count(xml, "<testcase ") == 6);
    CHECK(xml.find("tests=\"6\" failures=\"1\"") != std::string::npos);
    const Json clean = audit_json(dir, "clean", false);
    CHECK(render_junit(clean).find("tests=\"6\" failures=\"0\"") != std::string::npos);
    CHECK(render_markdown(clean).find("hold NaN") == std::string::npos);
  }

  TEST_CASE("admission reports: the tensors outside first, layers outside first, refused cases fail") {
    TempDir dir;
    auto spec = load_spec(std::string(BITPROOF_SOURCE_DIR "/proofs/dsv4-mxfp4-fp16-fold.json"));
    REQUIRE(spec.ok());
    auto d = discover(*spec, "scale", {2});
    REQUIRE(d.ok());
    std::ofstream(dir / "d.json") << discovery_report(*spec, *d).dump();
    std::ofstream(dir / "a.json") << audit_json(dir, "nan", true).dump();
    auto a = audit::load_audit_report(dir / "a.json");
    auto p = audit::load_domain_report(dir / "d.json", std::nullopt);
    REQUIRE((a.ok() && p.ok()));
    for (const std::uint64_t tolerated : {0, 1}) {
      auto m = audit::admit(*a, *p, "", false, tolerated);
      REQUIRE(m.ok());
      const Json report = audit::admission_report(*a, *p, *m);
      CHECK(validate_report(report, "m.json").ok());
      const std::string md = render_markdown(report);
      CHECK(md.find(tolerated ? "**Verdict: admitted**" : "**Verdict: refused**") != std::string::npos);
      CHECK(md.find("| tensor outside |") < md.find("| layer | tensors |"));
      // Layer 1 holds the code outside: its row comes before layer 0's (negative control: ascending would not).
      const auto layer1 = md.find("| 1 | 3 | 1 | 0 | 1 |"), layer0 = md.find("| 0 | 3 | 0 | 0 | 0 |");
      REQUIRE(layer1 != std::string::npos);
      REQUIRE(layer0 != std::string::npos);
      CHECK(layer1 < layer0);
      const std::string xml = render_junit(report);
      CHECK(count(xml, "<testcase ") == 6);
      // Refused: the tensor outside fails; tolerated by --max-outside 1: it passes, noted in system-out.
      CHECK(xml.find(tolerated ? "failures=\"0\"" : "failures=\"1\"") != std::string::npos);
      CHECK((xml.find("<system-out>tolerated: ") != std::string::npos) == (tolerated == 1));
    }
  }
}

}  // namespace bitproof
