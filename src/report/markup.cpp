#include "report/markup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace bitproof {
namespace {

// The length of the UTF-8 bidirectional control at s[i] (3 bytes), or 0.
std::size_t bidi_control(std::string_view s, std::size_t i) {
  if (i + 2 >= s.size() || static_cast<unsigned char>(s[i]) != 0xE2) return 0;
  const auto b1 = static_cast<unsigned char>(s[i + 1]), b2 = static_cast<unsigned char>(s[i + 2]);
  const bool marks = b1 == 0x80 && (b2 == 0x8E || b2 == 0x8F || (b2 >= 0xAA && b2 <= 0xAE));  // LRM RLM LRE..RLO
  const bool isolates = b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9;                              // LRI..PDI
  return marks || isolates ? 3 : 0;
}

// Calls keep(text) for plain runs and escaped(text) for each control, in order.
template <class Keep, class Escaped>
void split_controls(std::string_view s, Keep keep, Escaped escaped) {
  std::size_t plain = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::string code;
    std::size_t width = 1;
    if (c < 0x20 || c == 0x7F) {
      code = fmt::format("\\x{:02X}", c);
    } else if (const std::size_t bidi = bidi_control(s, i); bidi != 0) {
      const unsigned point = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                             (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
      code = fmt::format("\\u{:04X}", point);
      width = bidi;
    } else {
      ++i;
      continue;
    }
    keep(s.substr(plain, i - plain));
    escaped(code);
    i += width;
    plain = i;
  }
  keep(s.substr(plain));
}

// The longest run of backticks in s.
std::size_t longest_backtick_run(std::string_view s) {
  std::size_t longest = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string control_free(std::string_view s) {
  std::string out;
  split_controls(
      s, [&](std::string_view t) { out += t; }, [&](const std::string& code) { out += code; });
  return out;
}

namespace {

bool ascii_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Appends text (no controls) with what could start Markdown or HTML escaped;
// characters that cannot, where they stand, are kept as written.
void append_inert(std::string& out, std::string_view t, bool pipes) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    // At the end of the text what follows is the renderer's: taken as the worst case.
    const char prev = i > 0 ? t[i - 1] : ' ', next = i + 1 < t.size() ? t[i + 1] : '(';
    switch (c) {
      case '\\': case '`': case '*': case '~':
        out += '\\';
        out += c;
        break;
      case '_':  // between two letters or digits an underscore emphasises nothing (CommonMark's flanking rules)
        if (!ascii_alnum(prev) || !ascii_alnum(next)) out += '\\';
        out += c;
        break;
      case ']':  // no inline link or image without "](", no reference definition without "]:" (and none is
                 // written: "[x][y]" stays text)
        if (next == '(' || next == ':') out += '\\';
        out += c;
        break;
      case '<':  // a tag, a comment or an autolink starts "<x", "</", "<!" or "<?"
        out += ascii_alnum(next) || next == '/' || next == '!' || next == '?' || next == '(' ? "&lt;" : "<";
        break;
      case '|':
        out += pipes ? "\\|" : "|";
        break;
      default: out += c;
    }
  }
}

std::string inert(std::string_view s, bool line_start, bool pipes) {
  std::string out;
  // A control's "\x1B" shows as written: its backslash escaped.
  split_controls(
      s, [&](std::string_view t) { append_inert(out, t, pipes); }, [&](const std::string& code) { out += "\\" + code; });
  if (line_start && !out.empty()) {
    std::size_t digits = 0;
    while (digits < out.size() && out[digits] >= '0' && out[digits] <= '9') ++digits;
    const bool ordered = digits > 0 && digits < out.size() && (out[digits] == '.' || out[digits] == ')');
    // One backslash before the marker (a char insert: GCC 12 warns falsely on a string's).
    if (ordered) {
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(digits), '\\');
    } else if (std::string_view("#>-+=").find(out[0]) != std::string_view::npos) {
      out.insert(out.begin(), '\\');
    }
  }
  return out;
}

}  // namespace

std::string md_text(std::string_view s, bool line_start) { return inert(s, line_start, false); }

std::string md_cell(std::string_view s) { return inert(s, false, true); }

std::string md_code(std::string_view s, bool in_table) {
  std::string body = control_free(s);
  if (in_table) {
    std::string cell;
    for (char c : body) cell += c == '|' ? std::string("\\|") : std::string(1, c);
    body = std::move(cell);
  }
  const std::string fence(longest_backtick_run(body) + 1, '`');
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string md_fenced(std::string_view s, std::string_view info) {
  std::string body;
  split_controls(
      s, [&](std::string_view t) { body += t; },
      [&](const std::string& code) { body += code == "\\x0A" ? std::string("\n") : code; });
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
  return fmt::format("{}{}\n{}\n{}\n", fence, info, body, fence);
}

namespace {

// `c` as HTML and XML text: one of the four entities, or itself.
void append_entity_escaped(std::string& out, char c) {
  switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
  }
}

}  // namespace

std::string html_text(std::string_view s) {
  std::string out;
  const auto keep = [&](std::string_view t) {
    for (char c : t) append_entity_escaped(out, c);
  };
  split_controls(s, keep, [&](const std::string& code) { out += code; });
  return out;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool control = static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
    append_entity_escaped(out, control ? '?' : c);
  }
  return out;
}

}  // namespace bitproof
