// bitproof's command line: subcommands only. Everything they do lives in the
// libraries, which return errors; this file alone prints and picks exit codes
// (0 holds, 1 refuted, 2 bad input, 3 backend missing).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>

#include "error.hpp"
#include "format/format.hpp"
#include "oracle/exact.hpp"
#include "proof/discovery.hpp"
#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "recipes/registry.hpp"
#include "report/report.hpp"

#ifndef BITPROOF_GIT_COMMIT
#define BITPROOF_GIT_COMMIT "unknown"
#endif

namespace bp = bitproof;

namespace {

constexpr std::size_t kPrintedCounterexamples = 3;

int fail(const bp::Error& e) {
  std::fprintf(stderr, "bitproof: error: %s\n", e.message.c_str());
  return e.exit_code;
}

struct Outputs {
  std::string report;
  std::string markdown;
};

std::optional<bp::Error> check_outputs(const Outputs& out) {
  if (!out.report.empty()) {
    if (auto ok = bp::check_writable(out.report, "--report"); !ok) return ok.error();
  }
  if (!out.markdown.empty()) {
    if (auto ok = bp::check_writable(out.markdown, "--markdown"); !ok) return ok.error();
  }
  return std::nullopt;
}

std::optional<bp::Error> write_outputs(const Outputs& out, const bp::Json& report) {
  if (!out.report.empty()) {
    if (auto ok = bp::write_file(out.report, report.dump(2) + "\n"); !ok) return ok.error();
  }
  if (!out.markdown.empty()) {
    if (auto ok = bp::write_file(out.markdown, bp::render_markdown(report)); !ok) return ok.error();
  }
  return std::nullopt;
}

bp::Expected<bp::Spec> load_with_override(const std::string& path, const std::string& scales) {
  auto spec = bp::load_spec(path);
  if (!spec || scales.empty()) return spec;
  auto range = bp::parse_range_flag(scales, "--scales");
  if (!range) return range.error();
  if (auto ok = bp::override_range(*spec, "scale", *range, "--scales"); !ok) return ok.error();
  return spec;
}

void print_witness(const bp::Spec& spec, std::uint64_t count, const std::vector<bp::WitnessDisagreement>& first) {
  if (count == 0) return;
  std::printf("WITNESS DISAGREEMENT: soft and oracle arithmetic differ on %llu recipe evaluations\n",
              static_cast<unsigned long long>(count));
  for (const auto& w : first) {
    for (const std::string& line : bp::witness_lines(spec, w)) std::printf("%s\n", line.c_str());
  }
}

struct ProveArgs {
  std::string spec;
  std::string backend = "all";
  std::string scales;
  std::size_t keep = 8;
  Outputs out;
};

int run_prove(const ProveArgs& a) {
  auto spec = load_with_override(a.spec, a.scales);
  if (!spec) return fail(spec.error());
  if (a.backend == "cuda") {
    return fail({"--backend cuda: this bitproof was built without the CUDA backend", bp::kExitNoBackend});
  }
  if (auto e = check_outputs(a.out)) return fail(*e);
  std::vector<bp::BackendRun> runs;
  runs.push_back({"cpu", "soft arithmetic + oracle arithmetic witness", bp::run_proof(*spec, {a.keep})});
  const bp::ProofResult& r = runs.front().result;
  const std::string label = bp::domain_label(*spec);
  for (std::size_t c = 0; c < spec->claims.size(); ++c) {
    std::printf("%s %s (cpu)\n", label.c_str(), bp::claim_summary(spec->claims[c], r.claims[c]).c_str());
    const auto& cxs = r.claims[c].counterexamples;
    for (std::size_t i = 0; i < cxs.size() && i < kPrintedCounterexamples; ++i) {
      for (const std::string& line : bp::counterexample_lines(*spec, cxs[i])) std::printf("%s\n", line.c_str());
    }
  }
  print_witness(*spec, r.witness_disagreement_count, r.witness_disagreements);
  if (auto e = write_outputs(a.out, bp::proof_report(*spec, runs, a.keep))) return fail(*e);
  return r.holds() ? bp::kExitHolds : bp::kExitRefuted;
}

struct DomainArgs {
  std::string spec;
  std::string over = "scale";
  std::size_t keep = 8;
  Outputs out;
};

std::string range_text(const bp::CodeRange& r) { return fmt::format("{}..{}", r.lo, r.hi); }

void print_discovery(const bp::Spec& spec, const bp::Discovery& d) {
  const bp::FormatId over_format = spec.inputs[d.over_index].format;
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    const bp::ClaimDiscovery& cd = d.claims[c];
    bp::ClaimResult whole;  // the claim over the spec's own interval, for its summary line
    for (const auto& v : cd.codes) {
      if (v.code < d.spec_interval.lo || v.code > d.spec_interval.hi) continue;
      whole.cases += v.cases;
      whole.holding += v.holding;
    }
    std::printf("%s %s\n", bp::domain_label(spec).c_str(), bp::claim_summary(spec.claims[c], whole).c_str());
    std::string runs;
    for (const auto& run : cd.holding) runs += (runs.empty() ? "" : ", ") + range_text(run);
    std::printf("  over %s (%s, %llu codes): holds on %s\n", d.over.c_str(),
                std::string(bp::spec_of(over_format).name).c_str(),
                static_cast<unsigned long long>(cd.codes.size()), runs.empty() ? "no code" : runs.c_str());
    if (!cd.maximal) {
      std::printf("  the spec's interval %s does not hold throughout\n", range_text(d.spec_interval).c_str());
      continue;
    }
    std::printf("  maximal interval around the spec's %s: %s (%u codes)\n", range_text(d.spec_interval).c_str(),
                range_text(*cd.maximal).c_str(), cd.maximal->hi - cd.maximal->lo + 1);
    for (const auto& [side, code] : {std::pair{"below", cd.below}, std::pair{"above", cd.above}}) {
      if (!code) {
        std::printf("  nothing %s: the interval reaches the end of the format\n", side);
        continue;
      }
      std::printf("  first counterexample %s, %s %s:\n", side, d.over.c_str(),
                  bp::describe_code(over_format, *code).c_str());
      for (const std::string& line : bp::counterexample_lines(spec, *cd.codes[*code].first)) {
        std::printf("  %s\n", line.c_str());
      }
    }
  }
  print_witness(spec, d.witness_disagreement_count, d.witness_disagreements);
}

int run_domain(const DomainArgs& a) {
  auto spec = bp::load_spec(a.spec);
  if (!spec) return fail(spec.error());
  if (auto e = check_outputs(a.out)) return fail(*e);
  auto d = bp::discover(*spec, a.over, {a.keep});
  if (!d) return fail(d.error());
  print_discovery(*spec, *d);
  if (auto e = write_outputs(a.out, bp::discovery_report(*spec, *d))) return fail(*e);
  bool all_hold = d->witness_disagreement_count == 0;
  for (const auto& cd : d->claims) all_hold = all_hold && cd.spec_interval_holds;
  return all_hold ? bp::kExitHolds : bp::kExitRefuted;
}

int run_formats() {
  std::printf("%-6s %4s %3s %3s %5s %-8s %-8s %-14s %-14s %s\n", "format", "bits", "E", "M", "bias", "signed",
              "specials", "max", "min normal", "min subnormal");
  for (std::size_t i = 0; i < bp::kFormats.size(); ++i) {
    const auto id = static_cast<bp::FormatId>(i);
    const bp::FormatSpec& f = bp::kFormats[i];
    const char* specials[] = {"ieee", "fn", "finite", "e8m0"};
    const std::uint32_t min_normal = f.has_subnormals() ? (1u << f.man_bits) : 0u;
    const std::string min_sub = f.has_subnormals() ? bp::oracle::to_string(bp::oracle::exact_of(id, 1)) : "-";
    std::printf("%-6s %4d %3d %3d %5d %-8s %-8s %-14s %-14s %s\n", std::string(f.name).c_str(), f.bits, f.exp_bits,
                f.man_bits, f.bias, f.is_signed ? "yes" : "no", specials[static_cast<int>(f.specials)],
                bp::oracle::to_string(bp::oracle::exact_of(id, f.max_finite_code())).c_str(),
                bp::oracle::to_string(bp::oracle::exact_of(id, min_normal)).c_str(), min_sub.c_str());
  }
  return 0;
}

int run_recipes() {
  for (const bp::RecipeEntry& r : bp::all_recipes()) {
    const bp::RecipeCard& c = *r.card;
    std::string inputs;
    for (int i = 0; i < c.arity; ++i) inputs += (i ? "×" : "") + std::string(bp::spec_of(c.inputs[i]).name);
    const bool control = c.role == bp::Role::kControl;
    std::printf("%-48s %-8s %s→%s\n    %s\n", std::string(c.name).c_str(), control ? "control" : "recipe",
                inputs.c_str(), std::string(bp::spec_of(c.output).name).c_str(), std::string(c.summary).c_str());
    if (control) std::printf("    must be refuted against %s\n", std::string(c.control_of).c_str());
    std::printf("    source: %s\n", std::string(c.source).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bitproof: exhaustive, bit-for-bit proofs about low-precision GPU arithmetic"};
  app.set_version_flag("--version", fmt::format("bitproof {} (git {})", bp::tool_version(), BITPROOF_GIT_COMMIT));
  app.require_subcommand(1);

  ProveArgs prove;
  auto* p = app.add_subcommand("prove", "prove every claim of a spec over its whole domain");
  p->add_option("spec", prove.spec, "proof spec (JSON)")->required();
  p->add_option("--backend", prove.backend, "cpu, cuda or all that are available")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  p->add_option("--report", prove.out.report, "write the JSON report here");
  p->add_option("--markdown", prove.out.markdown, "write a Markdown rendering here");
  p->add_option("--scales", prove.scales, "replace the codes of the input named scale by LO:HI");
  p->add_option("--keep", prove.keep, "counterexamples kept per claim")->check(CLI::Range(0, 1000000));

  DomainArgs domain;
  auto* d = app.add_subcommand("domain", "find, over every code of one input, where each claim holds");
  d->add_option("spec", domain.spec, "proof spec (JSON)")->required();
  d->add_option("--over", domain.over, "the input to sweep over all its codes (default: scale)");
  d->add_option("--report", domain.out.report, "write the JSON discovery report here");
  d->add_option("--markdown", domain.out.markdown, "write a Markdown rendering here");
  d->add_option("--keep", domain.keep, "witness disagreements kept")->check(CLI::Range(0, 1000000));

  auto* f = app.add_subcommand("formats", "list the format catalogue");
  auto* r = app.add_subcommand("recipes", "list the recipe catalogue, negative controls included");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "bitproof: error: %s (see bitproof --help)\n", e.what());
    return bp::kExitBadInput;
  }
  if (p->parsed()) return run_prove(prove);
  if (d->parsed()) return run_domain(domain);
  if (f->parsed()) return run_formats();
  if (r->parsed()) return run_recipes();
  return bp::kExitBadInput;
}
