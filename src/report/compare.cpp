#include "report/compare.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <utility>

namespace bitproof {
namespace {

// The lines of j.dump(2), one at a time: a document of millions of values
// (an audit's histograms) is never printed whole. An array of `apart` prints
// as its pairs.
class DumpLines {
 public:
  DumpLines(const Json& j, const PairsApart& apart) : root_(&j), apart_(apart) {}

  // Sets `line` to the next line; false after the last.
  bool next(std::string& line) {
    if (root_ != nullptr) {
      value_line(line, 0, "", *std::exchange(root_, nullptr), false);
      return true;
    }
    if (open_.empty()) return false;
    Open& o = open_.back();
    line.assign(2 * (o.depth + 1), ' ');
    switch (o.kind) {
      case Kind::kJson: return json_member(line, o);
      case Kind::kPairs: return pair_list_member(line, o);
      case Kind::kPair: return pair_member(line, o);
    }
    return false;
  }

 private:
  enum class Kind : std::uint8_t { kJson, kPairs, kPair };
  // A container printed up to its next member: a JSON object or array, a list
  // of pairs kept apart, or one of its pairs ([code, count]).
  struct Open {
    Kind kind;
    int depth;
    bool comma;  // after the closing bracket
    const Json* container = nullptr;
    Json::const_iterator it = {};
    CodePairs pairs = {};
    std::size_t at = 0;  // kPairs: the next pair; kPair: 0 code, 1 count, 2 the closing bracket
  };

  // `line` holds the member's indentation. Each may push onto open_, so `o` is not used after.
  bool json_member(std::string& line, Open& o) {
    if (o.it == o.container->cend()) return close(line, o.container->is_object() ? '}' : ']');
    const std::string key = o.container->is_object() ? Json(o.it.key()).dump() + ": " : "";
    const Json& child = *o.it;
    const bool comma = ++o.it != o.container->cend();
    value_line(line, o.depth + 1, key, child, comma);
    return true;
  }
  bool pair_list_member(std::string& line, Open& o) {
    if (o.at == o.pairs.size()) return close(line, ']');
    const CodePairs pair = o.pairs.subspan(o.at++, 1);
    line += '[';
    open_.push_back({.kind = Kind::kPair, .depth = o.depth + 1, .comma = o.at < o.pairs.size(), .pairs = pair});
    return true;
  }
  bool pair_member(std::string& line, Open& o) {
    const auto& [code, count] = o.pairs[0];
    switch (o.at++) {
      case 0: line += fmt::format("{},", code); return true;
      case 1: line += fmt::format("{}", count); return true;
      default: return close(line, ']');
    }
  }
  bool close(std::string& line, char bracket) {
    line.resize(line.size() - 2);
    line += bracket;
    if (open_.back().comma) line += ',';
    open_.pop_back();
    return true;
  }

  // The line of `value` at `depth` after `key`; a container with members is opened.
  void value_line(std::string& line, int depth, const std::string& key, const Json& value, bool comma) {
    line.assign(2 * depth, ' ');
    line += key;
    if (const auto kept = value.is_array() ? apart_.find(&value) : apart_.end(); kept != apart_.end()) {
      if (kept->second.empty()) {
        line += "[]";
        if (comma) line += ',';
      } else {
        line += '[';
        open_.push_back({.kind = Kind::kPairs, .depth = depth, .comma = comma, .pairs = kept->second});
      }
      return;
    }
    if (value.is_structured() && !value.empty()) {
      line += value.is_object() ? '{' : '[';
      open_.push_back({.kind = Kind::kJson, .depth = depth, .comma = comma, .container = &value, .it = value.cbegin()});
      return;
    }
    line += value.dump();
    if (comma) line += ',';
  }

  const Json* root_;
  const PairsApart& apart_;
  std::vector<Open> open_;
};

std::string text(const Json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

// Recorded counterexamples by case index: their outputs, printed.
std::map<std::uint64_t, std::string> cases_of(const Json& claim) {
  std::map<std::uint64_t, std::string> cases;
  for (const Json& cx : claim.value("counterexamples", Json::array())) {
    std::string outputs;
    for (const Json& out : cx["outputs"]) outputs += fmt::format(" {}={}", text(out["recipe"]), text(out["bits"]));
    cases[cx["case"].get<std::uint64_t>()] = outputs;
  }
  return cases;
}

// Lines for the keys of two maps that only one holds or that map to different values.
template <class Value, class OnlyA, class OnlyB, class Differ>
void diff_maps(std::vector<std::string>& out, const std::map<std::uint64_t, Value>& a,
               const std::map<std::uint64_t, Value>& b, OnlyA only_a, OnlyB only_b, Differ differ) {
  for (const auto& [key, value] : a) {
    const auto other = b.find(key);
    if (other == b.end()) {
      out.push_back(only_a(key, value));
    } else if (other->second != value) {
      out.push_back(differ(key, value, other->second));
    }
  }
  for (const auto& [key, value] : b) {
    if (!a.contains(key)) out.push_back(only_b(key, value));
  }
}

void diff_counterexamples(std::vector<std::string>& out, std::size_t c, const Json& a, const Json& b) {
  diff_maps(
      out, cases_of(a), cases_of(b),
      [c](auto index, const std::string& outputs) { return fmt::format("claim {}: case {} fails in A only:{}", c, index, outputs); },
      [c](auto index, const std::string& outputs) { return fmt::format("claim {}: case {} fails in B only:{}", c, index, outputs); },
      [c](auto index, const std::string& x, const std::string& y) {
        return fmt::format("claim {}: case {} differs: A{} | B{}", c, index, x, y);
      });
}

// Per-code holding counts from a domain claim's runs (see code_runs_json).
std::map<std::uint64_t, std::uint64_t> holding_by_code(const Json& runs) {
  std::map<std::uint64_t, std::uint64_t> by_code;
  for (const Json& run : runs) {
    for (std::uint64_t code = run["from"]; code <= run["to"].get<std::uint64_t>(); ++code) by_code[code] = run["holding"];
  }
  return by_code;
}

// Whether runs can be listed code by code: from <= to, at most 2^20 codes in all
// (a format's codes; a report read back may say anything).
bool listable(const Json& runs) {
  std::uint64_t codes = 0;
  for (const Json& run : runs) {
    const auto from = run["from"].get<std::uint64_t>(), to = run["to"].get<std::uint64_t>();
    if (from > to || to - from >= (std::uint64_t{1} << 20)) return false;
    codes += to - from + 1;
  }
  return codes <= (std::uint64_t{1} << 20);
}

void diff_code_runs(std::vector<std::string>& out, std::size_t c, const Json& a, const Json& b) {
  if (!listable(a) || !listable(b)) {
    out.push_back(fmt::format("claim {}: codes: the runs differ (and cannot be listed code by code)", c));
    return;
  }
  diff_maps(
      out, holding_by_code(a), holding_by_code(b),
      [c](auto code, std::uint64_t holding) { return fmt::format("claim {}: code {}: A {} | B absent", c, code, holding); },
      [c](auto code, std::uint64_t holding) { return fmt::format("claim {}: code {}: A absent | B {}", c, code, holding); },
      [c](auto code, std::uint64_t x, std::uint64_t y) { return fmt::format("claim {}: code {}: A {} | B {}", c, code, x, y); });
}

void diff_claim(std::vector<std::string>& out, std::size_t c, const Json& a, const Json& b) {
  for (const char* key : {"claim", "recipes", "holds", "cases", "holding", "by_kind", "spec_interval_holds", "maximal"}) {
    const Json va = a.value(key, Json()), vb = b.value(key, Json());
    if (va != vb) out.push_back(fmt::format("claim {}: {}: A {} | B {}", c, key, va.dump(), vb.dump()));
  }
  if (a.contains("codes") && b.contains("codes") && a["codes"] != b["codes"]) diff_code_runs(out, c, a["codes"], b["codes"]);
  diff_counterexamples(out, c, a, b);
}

}  // namespace

std::string first_difference(const Json& a, const Json& b) { return first_difference(a, b, {}, {}); }

std::string first_difference(const Json& a, const Json& b, const PairsApart& a_apart, const PairsApart& b_apart) {
  DumpLines la(a, a_apart), lb(b, b_apart);
  std::string x, y;
  for (std::uint64_t line = 1;; ++line) {
    const bool more_a = la.next(x), more_b = lb.next(y);
    if (!more_a && !more_b) return "";
    if (!more_a) x = "(end)";
    if (!more_b) y = "(end)";
    if (x != y) return fmt::format("line {}: recorded {} | now {}", line, x, y);
  }
}

std::vector<std::string> diff_results(const Json& a, const Json& b) {
  std::vector<std::string> out;
  // Results of every kind: a key one lacks (an A/B or timing result has no claims) reads as empty.
  const auto name = [](const Json& r) { return r.contains("spec") ? r["spec"].value("name", Json()) : Json(); };
  if (a.value("spec_sha256", Json()) != b.value("spec_sha256", Json())) {
    out.push_back(fmt::format("spec: A {} ({}) | B {} ({})", text(name(a)), text(a.value("spec_sha256", Json())),
                              text(name(b)), text(b.value("spec_sha256", Json()))));
  }
  const Json ca = a.value("claims", Json::array());
  const Json cb = b.value("claims", Json::array());
  if (ca.size() != cb.size()) out.push_back(fmt::format("claims: A has {} | B has {}", ca.size(), cb.size()));
  for (std::size_t c = 0; c < std::min(ca.size(), cb.size()); ++c) diff_claim(out, c, ca[c], cb[c]);
  const Json da = a.value("case_digest", Json()), db = b.value("case_digest", Json());
  if (da != db) {
    out.push_back(fmt::format("case digest: A {} | B {}", text(da.value("sha256", Json())), text(db.value("sha256", Json()))));
  }
  if (out.empty() && a != b) out.push_back("results differ: " + first_difference(a, b));
  return out;
}

}  // namespace bitproof
