// Reading a report back, of any kind: strict JSON (no duplicate keys), the
// envelope and reports/schema.json (report/kind.hpp: check_report_envelope),
// then the checks of the report's own kind (its row's validator). A report of
// another version or a damaged one is a one-line error naming the file and the
// field (exit 2), never a crash. Rendering is report/render.hpp's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "error.hpp"
#include "report/report.hpp"

namespace bitproof {

// Reads and checks a report file.
[[nodiscard]] Expected<Json> load_report(const std::string& path);
// The same for report text already in memory; `path` names it in messages.
[[nodiscard]] Expected<Json> parse_report(const std::string& text, const std::string& path);
// parse_report for readers that need no tensor's histogram (the renderers): an
// audit's result.tensors[].histogram arrays (millions of pairs in a GPTQ
// checkpoint's) are checked to hold [code, count] pairs of integers from 0 and
// stand as empty arrays.
[[nodiscard]] Expected<Json> parse_report_without_histograms(const std::string& text, const std::string& path);
// Checks an in-memory report the same way; `path` names it in messages.
[[nodiscard]] Expected<Ok> validate_report(const Json& report, const std::string& path);

// The kind a report's text names at its top level ("kind": "audit"), read no
// further than that string; nullopt when the text names none before it ends
// or breaks. For choosing a kind's reader only: that reader checks the rest.
[[nodiscard]] std::optional<std::string> peek_report_kind(std::string_view text);

}  // namespace bitproof
