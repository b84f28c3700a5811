// Text a report carries, made inert for the format it is rendered into. A
// report read back is input: a name or a path in it may hold Markdown, HTML,
// control characters or bidirectional overrides meant to rewrite the verdict a
// reviewer sees. Every string a renderer takes from a report goes through one
// of these (numbers and the renderers' own words need not).
#pragma once

#include <string>
#include <string_view>

namespace bitproof {

// A byte or character that no rendering carries as it is: C0 controls, DEL and
// the bidirectional controls (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069),
// written "\x1B" or "\u202E".
[[nodiscard]] std::string control_free(std::string_view s);

// Markdown inline text: what could start Markdown or HTML where it stands is
// escaped (\ ` * ~ always; _ unless between two letters or digits; ] before
// ( or :, which no inline link, image or definition lacks; < before a letter,
// / ! ? or ( as an entity; at the end of `s` as if ( followed), controls as
// control_free writes them. With `line_start`, a leading block marker
// (# > - + = or "12." / "12)") is escaped too.
[[nodiscard]] std::string md_text(std::string_view s, bool line_start = false);
// md_text for a table cell: | escaped too (GFM ends a cell at it).
[[nodiscard]] std::string md_cell(std::string_view s);

// A Markdown code span showing `s` literally: fenced by more backticks than the
// longest run inside it (padded with spaces where it starts or ends with one),
// controls as control_free writes them. `in_table` escapes | (GFM ends a table
// cell at | even inside a code span).
[[nodiscard]] std::string md_code(std::string_view s, bool in_table = false);

// A fenced code block showing `s` (which may span lines) literally, with the
// info string `info`: the fence is longer than any backtick run in `s`; other
// controls as control_free writes them.
[[nodiscard]] std::string md_fenced(std::string_view s, std::string_view info);

// Text inside an HTML element (<summary>...</summary>): & < > " escaped, controls as control_free writes them.
[[nodiscard]] std::string html_text(std::string_view s);

// Text for XML attributes and elements (JUnit, SVG): & < > " escaped; other C0
// controls, which XML 1.0 cannot carry even as references, as '?'.
[[nodiscard]] std::string xml_escape(std::string_view s);

}  // namespace bitproof
