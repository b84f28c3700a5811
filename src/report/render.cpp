#include "report/render.hpp"

#include <fmt/format.h>

#include "report/kind.hpp"

namespace bitproof {

std::string render_markdown(const Json& report) {
  const ReportKind* kind = report_kind_of(report);
  return kind != nullptr && kind->markdown != nullptr ? kind->markdown(report) : std::string();
}

std::string render_junit(const Json& report) {
  const ReportKind* kind = report_kind_of(report);
  return kind != nullptr && kind->junit != nullptr ? kind->junit(report) : std::string();
}

Expected<std::string> render_svg(const Json& report, const std::string& path) {
  const ReportKind* kind = report_kind_of(report);
  if (kind != nullptr && kind->svg != nullptr) return kind->svg(report, path);
  const std::string_view noun = kind == nullptr ? "unknown" : kind->noun.empty() ? kind->name : kind->noun;
  return Error{fmt::format("{}: an {} report has no case map (give --markdown or --junit)", path, noun)};
}

}  // namespace bitproof
