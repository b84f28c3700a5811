// Proof specs: the JSON files in proofs/ (// and /* */ comments allowed). Parsing is strict: unknown keys,
// wrong types, unknown formats or recipes, recipes whose inputs do not match
// the domain, empty or out-of-range domains are all errors naming the field.
//
// {
//   "bitproof_spec": 1,
//   "name": "dsv4-mxfp4-fp16-fold",           identifier, [a-z0-9._-]+
//   "title": "...", "source": "...",          optional prose
//   "inputs": [                               the domain: the product of these code sets,
//     {"name": "element", "format": "e2m1", "codes": "all"},            first input fastest
//     {"name": "scale", "format": "ue8m0", "codes": {"range": [114, 126]}}
//   ],                                        codes: "all" | {"range": [lo, hi]} | {"list": [...]}
//                                             either object may add "exclude": ["nan", "inf", "zero",
//                                             "subnormal" or codes]: those codes are not swept
//   "output": "fp16",
//   "claims": [
//     {"claim": "equal", "recipes": ["a", "b"], "expected_cases": 208},
//     {"claim": "correctly_rounded", "recipes": ["a"], "rounding": "nearest_even"},
//     {"claim": "exact", "recipes": ["a"]},
//     {"claim": "equal", "recipes": ["c", "d"], "expect": {"refuted": 6, "kinds": {"nan-bits": 6}}}
//   ]                                         expect: a finding (proof/expect.hpp)
// }
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "format/domain.hpp"
#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "proof/expect.hpp"
#include "recipes/registry.hpp"

namespace bitproof {
namespace user {
class UserRecipes;
}

inline constexpr int kSpecVersion = 1;

// The most cases a domain may have: counts, indices and chunk numbers stay
// exact in 64 bits far beyond it.
inline constexpr std::uint64_t kMaxCases = std::uint64_t{1} << 62;

enum class ClaimKind : std::uint8_t { kEqual, kCorrectlyRounded, kExact };

struct Claim {
  ClaimKind kind;
  std::vector<const RecipeEntry*> recipes;
  std::optional<std::uint64_t> expected_cases;
  oracle::Rounding rounding = oracle::Rounding::kNearestEven;
  std::optional<Expectation> expect = std::nullopt;  // a finding: the refutation this claim records (proof/expect.hpp)
};

struct Spec {
  std::string path;  // where it was read from, for messages
  std::string name;
  std::string title;
  std::string source;
  std::vector<InputDomain> inputs;
  FormatId output;
  std::vector<Claim> claims;
  // The spec's sources and user recipes (src/user), shared by copies of the
  // spec (a discovery's widened domain); null when it names none.
  std::shared_ptr<user::UserRecipes> user;

  [[nodiscard]] std::uint64_t case_count() const;
  // The distinct recipes of all claims, in order of first appearance.
  [[nodiscard]] std::vector<const RecipeEntry*> recipes() const;
  // Index of the input with this name, if any.
  [[nodiscard]] std::optional<std::size_t> input_index(std::string_view name) const;
};

[[nodiscard]] Expected<Spec> parse_spec(const std::string& text, const std::string& path);
[[nodiscard]] Expected<Spec> load_spec(const std::string& path);

// Replaces the codes of input `input_name` by the range; checks it as parse does.
// The claims' expected_cases and expectations, written for the spec's own
// domain, are dropped: a finding's claim is then judged as a plain claim.
// Refused for a spec with output tables (src/user/table.hpp): a table holds the
// spec's own domain, and the report records the spec as proven.
[[nodiscard]] Expected<Ok> override_range(Spec& spec, const std::string& input_name, CodeRange range,
                                          const std::string& origin);
// Replaces the codes of input `input_name` by the list (sorted, each once), as override_range does.
[[nodiscard]] Expected<Ok> override_codes(Spec& spec, const std::string& input_name, std::vector<std::uint32_t> codes,
                                          const std::string& origin);
// Parses "LO:HI" (decimal or 0x hex).
[[nodiscard]] Expected<CodeRange> parse_range_flag(const std::string& text, const std::string& flag);

// The canonical JSON of the spec as it will be proven (after any override).
[[nodiscard]] nlohmann::ordered_json spec_to_json(const Spec& spec);

// A commented spec to start from (bitproof spec new): a claim of `kind`
// ("equal", "correctly_rounded", "exact") over `recipes`, its inputs and output
// those of the first recipe; no recipes: the DeepSeek V4 fold as the example.
// It parses as it is written; an unknown kind or recipe, or too few recipes, is
// an error naming `origin` (the flag).
[[nodiscard]] Expected<std::string> spec_template(const std::string& kind, const std::vector<std::string>& recipes,
                                                  const std::string& origin);

// What spec new read of a user recipe to start from: a function in a source file
// (--user FILE:FUNCTION; its parameter count) or an output table (--table FILE;
// its .npy dtype and element count, or only its path for a raw table).
struct UserStart {
  std::string path;      // as the spec names it (relative to the spec's directory)
  std::string function;  // empty for a table
  int arity = 0;         // the function's parameters; 0 for a table
  std::string descr;     // a table's .npy dtype ("<u2"); empty when not .npy
  std::uint64_t cases = 0;
  int item_bytes = 0;
};

// The string every value spec new cannot read starts with; parse_spec refuses a
// spec that still holds one ("inputs[0].format: ... a placeholder of spec new").
inline constexpr std::string_view kPlaceholder = "<fill in: ";

// spec_template with user recipes: the template's claim names them (and
// `recipes`); what the files do not say (formats without a catalogue recipe of
// the same arity, intents, the inputs of a table) is a kPlaceholder string.
[[nodiscard]] Expected<std::string> spec_template(const std::string& kind, const std::vector<std::string>& recipes,
                                                  const std::vector<UserStart>& users, const std::string& origin);


[[nodiscard]] std::string_view claim_name(ClaimKind kind);
[[nodiscard]] std::string_view rounding_name(oracle::Rounding mode);

}  // namespace bitproof
