#include "proof/element_proofs.hpp"

#include <fmt/format.h>

#include "proof/engine.hpp"
#include "hash/digest.hpp"
#include "strict_json.hpp"

namespace bitproof {
namespace {

// The ue8m0 input whose codes the A/B spec's interval replaces; the e2m1 input must cover every code.
Expected<std::string> scale_input(const Spec& proof, const std::string& where) {
  std::string scale;
  bool element_all = false;
  for (const InputDomain& in : proof.inputs) {
    if (in.format == FormatId::ue8m0) scale = in.name;
    if (in.format == FormatId::e2m1) element_all = in.all;
  }
  if (scale.empty()) return Error{fmt::format("{}: the proof spec {} has no ue8m0 input", where, proof.path)};
  if (!element_all)
    return Error{fmt::format("{}: the proof spec {} must sweep every e2m1 code (\"codes\": \"all\"): the trace proof "
                             "quantifies over every weight code",
                             where, proof.path)};
  return scale;
}

}  // namespace

Expected<std::vector<ElementProofRun>> run_element_proofs(const op::AbSpec& spec, unsigned threads) {
  std::vector<ElementProofRun> runs;
  for (std::size_t i = 0; i < spec.element_proofs.size(); ++i) {
    const op::ElementProofRef& ref = spec.element_proofs[i];
    const std::string where = fmt::format("{}: element_proofs[{}]", spec.path, i);
    auto text = read_input_file(ref.path, "the element proof spec", kMaxSpecBytes);
    if (!text) return Error{fmt::format("{}: {}", where, text.error().message)};
    auto proof = parse_spec(*text, ref.path);
    if (!proof) return proof.error();
    if (ref.claim >= proof->claims.size())
      return Error{fmt::format("{}.claim: {} has {} claim(s)", where, ref.path, proof->claims.size())};
    const Claim& claim = proof->claims[ref.claim];
    if (claim.kind != ClaimKind::kEqual)
      return Error{fmt::format("{}.claim: claim {} of {} is not an equal claim", where, ref.claim, ref.path)};
    auto scale = scale_input(*proof, where);
    if (!scale) return scale.error();
    if (auto ok = override_range(*proof, *scale, ref.scales, where + ".scales"); !ok) return ok.error();
    if (auto ok = check_sweepable(*proof); !ok) return ok.error();
    EngineOptions options;
    options.threads = threads;
    const ProofResult result = run_proof(*proof, options);
    ElementProofRun run;
    run.ref = ref;
    run.spec_name = proof->name;
    run.spec_sha256 = sha256_hex(*text);
    run.case_digest = result.case_digest;
    run.cases = result.claims[ref.claim].cases;
    run.holding = result.claims[ref.claim].holding;
    run.recipes = claim.recipes;
    run.user = proof->user;
    if (result.witness_disagreement_count != 0) run.holding = 0;  // the two CPU witnesses disagree: no proof
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<op::Substitution> substitutions_of(const std::vector<ElementProofRun>& runs) {
  std::vector<op::Substitution> subs;
  for (const ElementProofRun& run : runs) {
    op::Substitution s;
    s.recipes = run.recipes;
    s.holds = run.holds();
    s.scales = run.ref.scales;
    s.proof = fmt::format("element proof {} (claim {}, {}/{} on scales {}..{})", run.spec_name, run.ref.claim,
                          run.holding, run.cases, run.ref.scales.lo, run.ref.scales.hi);
    subs.push_back(std::move(s));
  }
  return subs;
}

}  // namespace bitproof
