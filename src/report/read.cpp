#include "report/read.hpp"

#include <fmt/format.h>

#include "report/kind.hpp"
#include "strict_json.hpp"

namespace bitproof {

Expected<Ok> validate_report(const Json& report, const std::string& path) {
  if (auto ok = check_report_envelope(report, path); !ok) return ok;
  const ReportKind* kind = report_kind_of(report);
  // The schema admits the table's kinds only (tests/report/test_kinds.cpp keeps them one list).
  if (kind == nullptr) return report_field_error(path, "kind", "no kind of report this bitproof reads");
  return kind->validate != nullptr ? kind->validate(report, path) : Ok{};
}

Expected<Json> parse_report(const std::string& text, const std::string& path) {
  auto report = parse_ordered_json_strict(text, path, "");
  if (!report) return report.error();
  if (auto ok = validate_report(*report, path); !ok) return ok.error();
  return report;
}

Expected<Json> parse_report_without_histograms(const std::string& text, const std::string& path) {
  PairLists histograms{"result.tensors[].histogram", {}};
  auto report = parse_ordered_json_strict(text, path, "", histograms);
  if (!report) return report.error();
  if (auto ok = validate_report(*report, path); !ok) return ok.error();
  return report;
}

Expected<Json> load_report(const std::string& path) {
  auto text = read_input_file(path, "the report", kMaxReportBytes);
  if (!text) return text.error();
  return parse_report(*text, path);
}

namespace {

// SAX events until the top-level object's "kind" string: then it stops the parse.
class KindPeek : public nlohmann::json_sax<Json> {
 public:
  std::optional<std::string> kind;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& s) override {
    if (depth_ == 1 && at_kind_) {
      kind = s;
      return false;  // found: read no further
    }
    return value();
  }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(); }
  bool key(string_t& k) override {
    at_kind_ = depth_ == 1 && k == "kind";
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool value() {
    at_kind_ = false;
    return true;
  }
  bool open() {
    at_kind_ = false;
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  int depth_ = 0;
  bool at_kind_ = false;
};

}  // namespace

std::optional<std::string> peek_report_kind(std::string_view text) {
  KindPeek peek;
  try {
    (void)Json::sax_parse(text, &peek, nlohmann::detail::input_format_t::json, false);
  } catch (const Json::exception&) {
    return std::nullopt;
  }
  return peek.kind;
}

}  // namespace bitproof
