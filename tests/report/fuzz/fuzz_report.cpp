// libFuzzer target: reading a report back. Arbitrary bytes go through the
// report reader (duplicate keys, version, reports/schema.json) and the
// renderers' reader (an audit's tensors' histograms read apart); whatever each
// accepts is rendered (Markdown, JUnit XML, SVG for domain reports with a map),
// judged and compared with itself, and the kind `report verify` peeks from
// its text must be the kind read; an audit report also goes through the
// reader admit and prove --scales-from use (its aggregates re-derived from
// its tensors). None of it may crash, hang or leak; an error must be one line
// naming the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "audit/admission.hpp"
#include "report/compare.hpp"
#include "report/kind_domain.hpp"
#include "report/kind_proof.hpp"
#include "report/render.hpp"
#include "report/time_report.hpp"

namespace {

void require_one_line(const bitproof::Error& e) {
  if (e.message.find('\n') != std::string::npos || e.message.rfind("fuzz.json: ", 0) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The renderers' reader (an audit's tensors' histograms read apart) accepts or says why in one line.
  auto without = bitproof::parse_report_without_histograms(text, "fuzz.json");
  if (!without) {
    require_one_line(without.error());
  } else if ((*without)["kind"] != "shard") {
    (void)bitproof::render_markdown(*without);
    (void)bitproof::render_junit(*without);
  }
  // report verify peeks the kind from the text (any bytes: no crash, no hang).
  const auto peeked = bitproof::peek_report_kind(text);
  auto report = bitproof::parse_report(text, "fuzz.json");
  if (!report) {
    require_one_line(report.error());
    return 0;
  }
  // Of a report the reader accepts, the kind peeked is the kind it read.
  if (!peeked || *peeked != (*report)["kind"].get<std::string>()) std::abort();
  if ((*report)["kind"] == "shard") return 0;  // fuzz_merge's
  if ((*report)["kind"] == "audit") {
    auto audit = bitproof::audit::parse_audit_report_text(text, "fuzz.json");
    if (!audit) require_one_line(audit.error());
  }
  (void)bitproof::render_markdown(*report);
  (void)bitproof::render_junit(*report);
  const auto& kind = (*report)["kind"];
  if (kind == "proof") (void)bitproof::judge_proof_report(*report);  // the proof verdict's reader
  if (kind == "domain") (void)bitproof::judge_domain_report(*report);
  if (kind == "time") {  // a timing report re-derives from its samples or says why not, in one line
    auto again = bitproof::rederive_time_result((*report)["result"], "fuzz.json");
    if (!again) require_one_line(again.error());
  }
  if (!bitproof::diff_results((*report)["result"], (*report)["result"]).empty()) std::abort();
  if ((*report)["kind"] == "domain") {
    auto svg = bitproof::render_svg(*report, "fuzz.svg");
    if (!svg) require_one_line({"fuzz.json: " + svg.error().message});
  }
  return 0;
}
