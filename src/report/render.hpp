// Renderings of a report read back from its JSON, of any kind, through its
// kind's row (report/kind.hpp): Markdown for a PR comment, JUnit XML for CI
// systems, the SVG picture where the kind has one. Each expects a report that
// the readers (report/read.hpp, included for the renderers' callers) accepted.
#pragma once

#include <string>

#include "error.hpp"
#include "report/read.hpp"
#include "report/report.hpp"

namespace bitproof {

// The kind's Markdown; empty for a kind without one (a shard, which callers
// refuse first: ReportKind::refused_alone).
[[nodiscard]] std::string render_markdown(const Json& report);
// The kind's JUnit XML: one <testcase> per claim and backend (proof), per
// claim (domain), per tensor (audit, admission), per verdict (ab, time); empty
// for a kind without one.
[[nodiscard]] std::string render_junit(const Json& report);
// The kind's picture: a domain report's case map (every code it swept), a
// proof's (a discovery over the proof's own domain), a timing report's
// samples. "PATH: an audit report has no case map (give --markdown or
// --junit)" for a kind without one; `path` names the picture in messages.
[[nodiscard]] Expected<std::string> render_svg(const Json& report, const std::string& path);

}  // namespace bitproof
