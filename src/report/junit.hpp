// JUnit XML, the form every kind's JUnit rendering takes: test cases in one
// suite of one document.
#pragma once

#include <string>
#include <vector>

namespace bitproof {

// One <testcase>: a <failure> of `type` with `message` and `body` when it
// failed; `out`, when not empty, as its <system-out>.
struct JUnitCase {
  std::string classname;
  std::string name;
  bool failed = false;
  std::string message;
  std::string body;
  std::string type = "refuted";
  std::string out;
};
// A case of the default type ("refuted") and no captured output.
[[nodiscard]] inline JUnitCase junit_case(std::string classname, std::string name, bool failed, std::string message,
                                          std::string body) {
  JUnitCase c;
  c.classname = std::move(classname);
  c.name = std::move(name);
  c.failed = failed;
  c.message = std::move(message);
  c.body = std::move(body);
  return c;
}
// One <testsuites> document with one suite of `cases`.
[[nodiscard]] std::string junit_document(const std::string& suite, const std::vector<JUnitCase>& cases);

}  // namespace bitproof
