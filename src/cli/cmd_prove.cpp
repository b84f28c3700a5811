// bitproof prove SPEC: every claim of a spec over its whole domain.
#include <cstdio>

#include "audit/admission.hpp"
#include "cli/cli.hpp"
#include "proof/spec.hpp"

namespace bitproof::cli {
namespace {

constexpr std::size_t kPrintedCounterexamples = 3;

struct ProveArgs {
  std::string spec;
  std::string backend = "all";
  std::string scales;
  std::string scales_from;  // an audit report: its observed interval becomes the scale codes
  std::size_t keep = 8;
  Outputs out;
};

Expected<Spec> load_with_override(const std::string& path, const std::string& scales, const std::string& scales_from) {
  auto spec = load_spec(path);
  if (spec && !scales_from.empty()) {
    if (auto ok = audit::apply_scales_from(*spec, scales_from); !ok) return ok.error();
  }
  if (!spec || scales.empty()) return spec;
  auto range = parse_range_flag(scales, "--scales");
  if (!range) return range.error();
  if (auto ok = override_range(*spec, "scale", *range, "--scales"); !ok) return ok.error();
  return spec;
}

int run_prove(const ProveArgs& a) {
  auto spec = load_with_override(a.spec, a.scales, a.scales_from);
  if (!spec) return fail(spec.error());
  if (a.backend == "cuda") {
    return fail({"--backend cuda: this bitproof was built without the CUDA backend", kExitNoBackend});
  }
  if (auto e = a.out.check()) return fail(*e);
  std::vector<BackendRun> runs;
  runs.push_back({"cpu", "soft arithmetic + oracle arithmetic witness", run_proof(*spec, {a.keep})});
  const ProofResult& r = runs.front().result;
  const std::string label = domain_label(*spec);
  for (std::size_t c = 0; c < spec->claims.size(); ++c) {
    std::printf("%s %s (cpu)\n", label.c_str(), claim_summary(spec->claims[c], r.claims[c]).c_str());
    const auto& cxs = r.claims[c].counterexamples;
    for (std::size_t i = 0; i < cxs.size() && i < kPrintedCounterexamples; ++i) {
      print_lines(counterexample_lines(*spec, cxs[i]));
    }
  }
  print_witness(*spec, r.witness_disagreement_count, r.witness_disagreements);
  if (auto e = a.out.write(proof_report(*spec, runs, a.keep))) return fail(*e);
  return r.holds() ? kExitHolds : kExitRefuted;
}

}  // namespace

void add_prove_command(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ProveArgs>();
  auto* p = app.add_subcommand("prove", "prove every claim of a spec over its whole domain");
  p->add_option("spec", args->spec, "proof spec (JSON)")->required();
  p->add_option("--backend", args->backend, "cpu, cuda or all that are available")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  args->out.add_flags(*p);
  auto* scales = p->add_option("--scales", args->scales, "replace the codes of the input named scale by LO:HI");
  p->add_option("--scales-from", args->scales_from, "replace them by the observed interval of an audit report")
      ->excludes(scales);
  p->add_option("--keep", args->keep, "counterexamples kept per claim")->check(CLI::Range(0, 1000000));
  commands.push_back({p, [args] { return run_prove(*args); }});
}

}  // namespace bitproof::cli
