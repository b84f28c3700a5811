// Renderings of a report read back from its JSON: JUnit XML for CI systems and
// the SVG case map for reviewers. Reading a report validates what the
// renderers rely on, so a report of another version or a damaged one is a
// one-line error (exit 2), never a crash or a half-drawn picture.
#pragma once

#include <string>

#include "error.hpp"
#include "report/report.hpp"

namespace bitproof {

// Reads and checks a report file (version, kind, the fields renderers use).
[[nodiscard]] Expected<Json> load_report(const std::string& path);
// Checks an in-memory report the same way; `path` names it in messages.
[[nodiscard]] Expected<Ok> validate_report(const Json& report, const std::string& path);

// One <testcase> per claim and backend (proof), or per claim (domain).
[[nodiscard]] std::string render_junit(const Json& report);

// The case map: rows are the cases of the other inputs (element codes), columns
// the swept input's codes (scale bytes); each cell equal / mismatch, inside or
// outside the claimed interval; the maximal exact interval marked. Needs a
// domain report whose claims carry a map (domains of ≤ kDiscoveryMapLimit rows).
[[nodiscard]] Expected<std::string> render_svg(const Json& report, const std::string& path);

}  // namespace bitproof
