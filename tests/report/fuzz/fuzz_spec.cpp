// libFuzzer target: the spec reader. Arbitrary bytes go through parse_spec
// (strict JSON, every field checked); whatever it accepts must print back to
// canonical JSON that parses to the same spec, report a case count that is
// the product of its inputs' code counts, and evaluate its first and last
// cases without crashing (specs with user recipes: parsed and printed back only). An error must be one line naming the
// file. The same bytes also go through the A/B spec reader (operator/ab_spec.hpp), with the same rules: one-line
// errors, and what it accepts prints back to canonical JSON that parses to the same spec. And through the timing spec
// reader (timing/time_spec.hpp): one-line errors, two arms, every buffer an argument names exists, launch shapes inside
// the CUDA limits. And through other_file_kind, which names another kind of bitproof file in the loaders' errors.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "operator/ab_spec.hpp"
#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "strict_json.hpp"
#include "timing/time_spec.hpp"

namespace {

void fuzz_ab_spec(const std::string& text) {
  auto spec = bitproof::op::parse_ab_spec(text, "fuzz.json");
  if (!spec) {
    const std::string& m = spec.error().message;
    if (m.find('\n') != std::string::npos || m.rfind("fuzz.json: ", 0) != 0) std::abort();
    return;
  }
  const auto canonical = bitproof::op::ab_spec_to_json(*spec).dump();
  auto again = bitproof::op::parse_ab_spec(canonical, "fuzz.json");
  if (!again || bitproof::op::ab_spec_to_json(*again).dump() != canonical) std::abort();
  for (std::size_t arm = 0; arm < 2; ++arm) {
    for (const auto& [name, shape] : spec->tensors_of(arm)) {
      if (shape.rows == 0 || shape.cols == 0) std::abort();
    }
  }
}

void fuzz_time_spec(const std::string& text) {
  auto spec = bitproof::timing::parse_time_spec(text, "fuzz.json");
  if (!spec) {
    const std::string& m = spec.error().message;
    if (m.find('\n') != std::string::npos || m.rfind("fuzz.json: ", 0) != 0) std::abort();
    return;
  }
  if (spec->ab) return;  // an A/B spec: fuzz_ab_spec's
  for (const bitproof::timing::KernelArm& arm : spec->arms) {
    if (arm.block[0] * arm.block[1] * arm.block[2] > 1024 || arm.grid[0] == 0) std::abort();
    for (const bitproof::timing::KernelArg& a : arm.args) {
      if (a.kind == bitproof::timing::KernelArg::Kind::kBuffer && spec->buffer(a.buffer) == nullptr) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz_ab_spec(text);
  fuzz_time_spec(text);
  // The file-kind probe the loaders' errors use (strict_json.hpp): no throw, at most a phrase.
  if (bitproof::other_file_kind(text, {"bitproof_spec"}).find('\n') != std::string::npos) std::abort();
  auto spec = bitproof::parse_spec(text, "fuzz.json");
  if (!spec) {
    const std::string& m = spec.error().message;
    if (m.find('\n') != std::string::npos || m.rfind("fuzz.json: ", 0) != 0) std::abort();
    return 0;
  }
  const auto canonical = bitproof::spec_to_json(*spec).dump();
  auto again = bitproof::parse_spec(canonical, "fuzz.json");
  if (!again || bitproof::spec_to_json(*again).dump() != canonical) std::abort();
  std::uint64_t product = 1;
  for (const bitproof::InputDomain& in : spec->inputs) product *= in.count();
  if (product != spec->case_count() || product == 0) std::abort();
  // User recipes are compiled and run, not fuzzed here: their tables exist only after UserRecipes::evaluate.
  if (spec->user) return 0;
  const bitproof::CaseEvaluator eval(*spec);
  std::array<std::uint32_t, bitproof::kMaxArity> codes{};
  std::vector<std::uint32_t> soft(eval.recipes().size()), witness(eval.recipes().size());
  for (const std::uint64_t i : {std::uint64_t{0}, spec->case_count() - 1}) {
    eval.codes_of(i, codes.data());
    eval.outputs(codes.data(), soft.data(), witness.data());
    for (const bitproof::Claim& c : spec->claims) (void)eval.check(c, codes.data(), soft.data());
  }
  return 0;
}
