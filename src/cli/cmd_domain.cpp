// bitproof domain SPEC: where each claim holds over every code of one input.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli/cli.hpp"
#include "cli/cuda_twin.hpp"
#include "cli/progress.hpp"
#include "proof/discovery.hpp"
#include "proof/spec.hpp"
#include "user/user_code.hpp"
#include "user/user_recipes.hpp"

namespace bitproof::cli {
namespace {

struct DomainArgs {
  std::string spec;
  std::string over = "scale";
  std::size_t keep = kDefaultKeep;
  unsigned threads = 0;
  Outputs out;
  Gate gate;
  UserLimits limits;
};

std::string range_text(const CodeRange& r) { return fmt::format("{}..{}", r.lo, r.hi); }

// The runs of codes a claim holds on, for one terminal line: all of them when there are
// at most kPrintedRuns, else the first kPrintedRuns, how many more, and the codes in all
// (the report lists every run). A 16-bit input can hold on tens of thousands of runs.
constexpr std::size_t kPrintedRuns = 8;
std::string holding_text(const std::vector<CodeRange>& runs) {
  if (runs.empty()) return "no code";
  std::string text;
  for (std::size_t i = 0; i < runs.size() && i < kPrintedRuns; ++i) text += (i ? ", " : "") + range_text(runs[i]);
  if (runs.size() <= kPrintedRuns) return text;
  std::uint64_t codes = 0;
  for (const CodeRange& r : runs) codes += std::uint64_t{r.hi} - r.lo + 1;
  return fmt::format("{} codes in {} runs: {} and {} more runs (all in the report: -o FILE)", codes, runs.size(), text,
                     runs.size() - kPrintedRuns);
}

// The claim restricted to the spec's own interval, for its summary line.
ClaimResult within_spec_interval(const ClaimDiscovery& cd, CodeRange interval) {
  ClaimResult whole;
  for (const auto& v : cd.codes) {
    if (v.code < interval.lo || v.code > interval.hi) continue;
    whole.cases += v.cases;
    whole.holding += v.holding;
  }
  return whole;
}

// A claim as a sweep over one input can judge it: a finding's expected count over the
// spec's interval stays (its kinds are prove's to check); for a list domain, whose
// interval holds codes the spec does not, the expectation is dropped.
Claim judged_claim(const Spec& spec, const Discovery& d, std::size_t c) {
  Claim claim = spec.claims[c];
  if (claim.expect && spec.inputs[d.over_index].range) {
    claim.expect->kinds.clear();
  } else {
    claim.expect.reset();
  }
  return claim;
}

void print_edges(const Spec& spec, const Discovery& d, const ClaimDiscovery& cd) {
  const FormatId over_format = spec.inputs[d.over_index].format;
  std::printf("  maximal interval around the spec's %s: %s (%u codes)\n", range_text(d.spec_interval).c_str(),
              range_text(*cd.maximal).c_str(), cd.maximal->hi - cd.maximal->lo + 1);
  for (const auto& [side, code] : {std::pair{"below", cd.below}, std::pair{"above", cd.above}}) {
    if (!code) {
      std::printf("  nothing %s: the interval reaches the end of the format\n", side);
      continue;
    }
    std::printf("  first counterexample %s, %s %s:\n", side, d.over.c_str(), describe_code(over_format, *code).c_str());
    for (const std::string& line : counterexample_lines(spec, *cd.at(*code).first)) {
      std::printf("  %s\n", line.c_str());
    }
  }
}

// Each claim: its line over the spec's interval, where it holds over every code,
// its maximal interval and edges; under --quiet only the claims that do not pass.
void print_discovery(const Spec& spec, const Discovery& d, const std::vector<bool>& passes, const Gate& gate) {
  const FormatId over_format = spec.inputs[d.over_index].format;
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    if (!gate.shows(passes[c])) continue;
    const ClaimDiscovery& cd = d.claims[c];
    const ClaimResult whole = within_spec_interval(cd, d.spec_interval);
    std::printf(
        "%s\n",
        painted(fmt::format("{} {}", domain_label(spec), claim_summary(judged_claim(spec, d, c), whole)), passes[c])
            .c_str());
    std::printf("  over %s (%s, %zu codes): holds on %s\n", d.over.c_str(),
                std::string(spec_of(over_format).name).c_str(), cd.codes.size(), holding_text(cd.holding).c_str());
    if (cd.maximal) {
      print_edges(spec, d, cd);
    } else {
      std::printf("  no maximal interval: the claim fails inside the spec's interval %s\n",
                  range_text(d.spec_interval).c_str());
    }
  }
  print_witness(spec, d.witness_disagreement_count, d.witness_disagreements);
}

int run_domain(const DomainArgs& a) {
  auto spec = load_spec(a.spec);
  if (!spec) return fail(spec.error());
  if (spec->user) {
    if (auto e = user::refuse_user_code(*spec->user)) return fail(*e);
  }
  if (auto e = a.gate.check_syntax(spec->claims.size())) return fail(*e);
  a.limits.apply(*spec);
  std::vector<std::string> inputs = {a.spec};  // and the spec's sources and tables: never written over
  if (spec->user) {
    auto deps = spec->user->read_paths(true);  // and every file its compile reads (the CPU sweeps it)
    if (!deps) return fail(deps.error());
    inputs.insert(inputs.end(), deps->begin(), deps->end());
  }
  auto files = a.out.open(inputs);
  if (!files) return fail(files.error());
  Progress progress(fmt::format("{} domain over {}", spec->name, a.over), a.gate.quiet);
  EngineOptions options;
  options.keep = a.keep;
  options.threads = a.threads;
  options.progress = progress.callback();
  auto d = discover(*spec, a.over, options);
  progress.done();
  if (!d) return fail(d.error());
  std::vector<bool> passes;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> counts;
  std::vector<ClaimResult> wholes;
  std::vector<Claim> judged;  // the claims as this sweep judges them
  for (std::size_t c = 0; c < spec->claims.size(); ++c) {
    wholes.push_back(within_spec_interval(d->claims[c], d->spec_interval));
    judged.push_back(judged_claim(*spec, *d, c));
    passes.push_back(verdict_passes(claim_verdict(judged.back(), wholes.back())));
    counts.emplace_back(wholes.back().holding, wholes.back().cases);
  }
  print_discovery(*spec, *d, passes, a.gate);
  const std::vector<std::string> unexpected = a.gate.mismatches(counts);
  for (const std::string& line : unexpected) std::printf("%s\n", painted(line, false).c_str());
  print_lines(a.gate.counted_but_failing(judged, wholes, passes));
  if (a.out.any()) {
    Json report = discovery_report(*spec, *d);
    record_invocation(report["environment"]);
    if (auto e = a.out.write(*files, report)) return fail(*e);
  }
  const bool all_pass = d->witness_disagreement_count == 0 && unexpected.empty() &&
                        std::all_of(passes.begin(), passes.end(), [](bool p) { return p; });
  return all_pass ? kExitHolds : kExitRefuted;
}

}  // namespace

void add_domain_command(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<DomainArgs>();
  auto* d = app.add_subcommand("domain", "find, over every code of one input, where each claim holds");
  d->add_option("spec", args->spec, "proof spec (JSON)")->required();
  d->add_option("--over", args->over, "the input to sweep over all its codes (default: scale)");
  args->out.add_flags(*d, OutputFlags{true, true, "one test case per claim: whether it holds on the spec's interval"});
  add_keep_option(*d, args->keep);
  add_threads_option(*d, args->threads);
  add_no_user_code_flag(*d);
  args->gate.add_flags(*d);
  args->limits.add_flags(*d);
  commands.push_back({d, [args] { return run_domain(*args); }});
}

}  // namespace bitproof::cli
