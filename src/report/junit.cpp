#include "report/junit.hpp"

#include <fmt/format.h>

#include "report/markup.hpp"

namespace bitproof {

std::string junit_document(const std::string& suite, const std::vector<JUnitCase>& cases) {
  std::size_t failures = 0;
  for (const JUnitCase& c : cases) failures += c.failed ? 1 : 0;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml += fmt::format("<testsuites name=\"bitproof\" tests=\"{}\" failures=\"{}\">\n", cases.size(), failures);
  xml += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                     xml_escape(suite), cases.size(), failures);
  for (const JUnitCase& c : cases) {
    xml += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", xml_escape(c.classname),
                       xml_escape(c.name));
    if (!c.failed && c.out.empty()) {
      xml += "/>\n";
      continue;
    }
    xml += ">\n";
    if (c.failed) {
      xml += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", xml_escape(c.type),
                         xml_escape(c.message), xml_escape(c.body));
    }
    if (!c.out.empty()) xml += fmt::format("      <system-out>{}</system-out>\n", xml_escape(c.out));
    xml += "    </testcase>\n";
  }
  xml += "  </testsuite>\n</testsuites>\n";
  return xml;
}

}  // namespace bitproof
