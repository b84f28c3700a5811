// bitproof prove SPEC: every claim of a spec over its whole domain.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "audit/admission.hpp"
#include "backend/backend.hpp"
#include "cli/cli.hpp"
#include "proof/discovery.hpp"
#include "user/user_code.hpp"
#include "user/user_recipes.hpp"
#include "cli/cuda_twin.hpp"
#include "cli/progress.hpp"
#include "proof/spec.hpp"
#include "report/shard.hpp"

namespace bitproof::cli {
namespace {

struct ProveArgs {
  std::string spec;
  std::string backend = "all";
  std::string scales;
  std::vector<std::string> codes;  // "NAME=LO:HI": replace that input's codes (a slice of a large domain)
  std::string scales_from;        // an audit report: its observed set of codes becomes the scale codes
  std::string scales_from_range;  // an audit report: its observed interval becomes the scale codes
  bool allow_partial = false;  // --scales-from may be a partial audit
  bool no_cache = false;       // user recipes: compile even when the cache has them
  std::string specialize = "auto";  // cuda: link the sweep kernels for the spec's recipes (BackendOptions)
  std::string devices;              // cuda: "all" or device ordinals "0,1"; empty: device 0
  std::size_t keep = kDefaultKeep;
  std::size_t show = kDefaultShow;  // counterexamples printed per claim (the report keeps `keep`)
  unsigned threads = 0;  // CPU threads, 0: every core
  std::string shard;     // "I/N": sweep only that slice and write a shard report
  Outputs out;
  Gate gate;
  UserLimits limits;
};

// Applies --scales-from(-range), --codes and --scales to the spec, in that order.
Expected<Ok> override_domain(const ProveArgs& a, Spec& spec) {
  if (!a.scales_from.empty()) {
    if (auto ok = audit::apply_scales_from(spec, a.scales_from, a.allow_partial, audit::ScalesFrom::kSet); !ok)
      return ok.error();
  }
  if (!a.scales_from_range.empty()) {
    if (auto ok = audit::apply_scales_from(spec, a.scales_from_range, a.allow_partial, audit::ScalesFrom::kRange); !ok)
      return ok.error();
  }
  for (const std::string& flag : a.codes) {
    const auto eq = flag.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error{fmt::format("--codes: expected NAME=LO:HI, got \"{}\"", flag), kExitBadInput};
    }
    auto range = parse_range_flag(flag.substr(eq + 1), "--codes");
    if (!range) return range.error();
    if (auto ok = override_range(spec, flag.substr(0, eq), *range, "--codes"); !ok) return ok.error();
  }
  if (a.scales.empty()) return Ok{};
  auto range = parse_range_flag(a.scales, "--scales");
  if (!range) return range.error();
  return override_range(spec, "scale", *range, "--scales");
}

// Whether the spec states counts of its own domain (a finding's `expect`, `expected_cases`).
bool states_counts(const Spec& spec) {
  return std::any_of(spec.claims.begin(), spec.claims.end(),
                     [](const Claim& c) { return c.expect.has_value() || c.expected_cases.has_value(); });
}

// The spec with its domain flags applied; a note when that drops the counts the spec
// states for its own domain (an override drops them: proof/spec.hpp), printed once the
// new domain is known to be good.
Expected<Spec> load_with_override(const ProveArgs& a) {
  auto spec = load_spec(a.spec);
  if (!spec) return spec;
  const bool stated = states_counts(*spec);
  if (auto ok = override_domain(a, *spec); !ok) return ok.error();
  if (stated && !states_counts(*spec) && !a.gate.quiet) {
    std::printf("note: %s states counts for its own domain (expect, expected_cases); the domain given here "
                "replaces it, so they are not checked\n",
                spec->name.c_str());
  }
  return spec;
}

// The backends --backend names: "all" takes the CUDA backend only where it can
// run; "cuda" without a driver or device fails (exit 3, one line).
// User recipes under --backend all: the CPU (the host header) and the GPU
// (NVRTC) both run them and must agree. Where the CPU cannot (a construct its
// header does not model, a domain beyond its tables) and a GPU is here, the
// GPU runs them alone, this says so, and the report's cuda entry says the CPU
// witness is missing.
// --devices all|I,J,...: the CUDA device ordinals, each once.
Expected<std::vector<int>> parse_devices(const std::string& text) {
  if (text.empty()) return std::vector<int>{};
  if (text == "all") {
    auto count = cuda_device_count();
    if (!count) return count.error();
    std::vector<int> all(static_cast<std::size_t>(*count));
    for (int d = 0; d < *count; ++d) all[static_cast<std::size_t>(d)] = d;
    return all;
  }
  std::vector<int> devices;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    int d = -1;
    const auto [ptr, ec] = std::from_chars(text.data() + at, text.data() + comma, d);
    if (ec != std::errc{} || ptr != text.data() + comma || d < 0 ||
        std::find(devices.begin(), devices.end(), d) != devices.end()) {
      return Error{fmt::format("--devices: expected all or distinct device numbers like 0,1, got \"{}\"", text)};
    }
    devices.push_back(d);
    at = comma + 1;
  }
  return devices;
}

// The most cases the cpu backend takes on. Its sweep runs 10^7 to 10^9 cases a second
// (bench/RESULTS.md), so 2^40 is hours to days; all 2^48 FP16 triples would be years.
constexpr std::uint64_t kMostCpuCases = std::uint64_t{1} << 40;

Error too_many_for_cpu(const Spec& spec) {
  return Error{fmt::format("{}: {} cases: more than the 2^40 the cpu backend sweeps (days to years on a CPU); "
                           "prove it with --backend cuda, or a slice of it with --codes NAME=LO:HI",
                           spec.name, spec.case_count())};
}

Expected<std::vector<std::unique_ptr<Backend>>> select_backends(const std::string& which, const Spec& spec,
                                                                const std::string& devices_flag = "") {
  std::vector<std::unique_ptr<Backend>> backends;
  const bool cpu_can = spec.case_count() <= kMostCpuCases;
  if (which == "cpu" && !cpu_can) return too_many_for_cpu(spec);
  if (which != "cuda" && cpu_can) backends.push_back(make_cpu_backend());
  if (which == "cpu") {
    if (!devices_flag.empty()) return Error{"--devices: the cpu backend runs on every core (--threads); --devices picks GPUs"};
    return backends;
  }
  auto devices = parse_devices(devices_flag);
  if (!devices) return devices.error();
  auto cuda = make_cuda_backend(*devices);
  if (cuda) {
    backends.push_back(std::move(*cuda));
  } else if (which == "cuda" || !devices_flag.empty()) {
    return cuda.error();
  }
  if (backends.empty()) return too_many_for_cpu(spec);  // --backend all, past the CPU's cases, no GPU
  if (!cpu_can && which == "all") {  // said only where the user asked for it
    std::printf("%s: the cpu backend is left out (%llu cases; it takes at most 2^40)\n", spec.name.c_str(),
                static_cast<unsigned long long>(spec.case_count()));
  }
  if (!spec.user || backends.size() < 2) return backends;
  if (spec.user->has_tables()) {  // data, not code: nothing for a GPU to run
    std::printf("user recipes: output tables are checked on the cpu backend alone\n");
    backends.pop_back();
    return backends;
  }
  spec.user->gpu_runs = true;
  if (!spec.user->evaluate(spec.inputs)) return backends;  // the error comes again from the sweep
  if (const std::string missing = spec.user->cpu_witness_missing(spec.inputs); !missing.empty()) {
    std::printf("user recipes: no CPU witness (%s): the GPU runs them alone\n", missing.c_str());
    backends.erase(backends.begin());
  }
  return backends;
}

// The line after a claim's printed counterexamples saying what was not printed, empty
// when nothing was left out: the kept ones past --show (in the report; --show prints
// them) and the failing cases past --keep (counted in the report, not kept).
std::string unprinted_counterexamples(const ClaimResult& r, std::size_t show) {
  const std::uint64_t kept = r.counterexamples.size();
  const std::uint64_t shown = std::min<std::uint64_t>(kept, show);
  const std::uint64_t failing = r.cases - r.holding;
  std::string line;
  if (kept > shown) {
    line = fmt::format("  and {} more counterexample{} kept (all {} in the report: -o FILE; --show {} prints them)",
                       kept - shown, kept - shown == 1 ? "" : "s", kept, kept);
  }
  if (failing > kept) {
    line += fmt::format("{}{} more failing case{} not kept (--keep N keeps N per claim)",
                        line.empty() ? "  and " : "; ", failing - kept, failing - kept == 1 ? "" : "s");
  }
  return line;
}

std::string backend_labels(const std::vector<BackendRun>& runs) {
  std::string out;
  for (const BackendRun& run : runs) out += (out.empty() ? "" : ", ") + (run.label.empty() ? run.name : run.label);
  return out;
}

// One line a claim (each backend's when they differ) and its first `show` counterexamples,
// then what was not printed: how many more were kept (for the report) and how many failing
// cases were not kept; under --quiet only the claims that do not pass, unless the backends disagree.
void print_claims(const Spec& spec, const std::vector<BackendRun>& runs, const Agreement& agree, const Gate& gate,
                  std::size_t show) {
  const std::string label = domain_label(spec);
  for (std::size_t c = 0; c < spec.claims.size(); ++c) {
    const ClaimResult& r = runs.front().result.claims[c];
    const bool passes = verdict_passes(claim_verdict(spec.claims[c], r));
    if (agree.results_identical && !gate.shows(passes)) continue;
    if (agree.results_identical) {
      const std::string line = fmt::format("{} {} ({})", label, claim_summary(spec.claims[c], r), backend_labels(runs));
      std::printf("%s\n", painted(line, passes).c_str());
    } else {
      for (const BackendRun& run : runs) {
        std::printf("%s %s (%s only)\n", label.c_str(), claim_summary(spec.claims[c], run.result.claims[c]).c_str(),
                    (run.label.empty() ? run.name : run.label).c_str());
      }
    }
    const ClaimResult& first = runs.front().result.claims[c];
    if (claim_verdict(spec.claims[c], first) == ClaimVerdict::kRefutedAsExpected) continue;  // a known finding
    const auto& cxs = first.counterexamples;
    for (std::size_t i = 0; i < cxs.size() && i < show; ++i) print_lines(counterexample_lines(spec, cxs[i]));
    if (const std::string rest = unprinted_counterexamples(first, show); !rest.empty())
      std::printf("%s\n", rest.c_str());
  }
}

// Hardware backends: the three-way check and the --use_fast_math build.
// Under --quiet only a disagreement is printed.
void print_hardware(const Spec& spec, const BackendRun& run, bool quiet) {
  const ProofResult& r = run.result;
  if (r.model_compared == 0 || (quiet && r.model_disagreement_count == 0)) return;
  const std::uint64_t model_cases = run.info.value("model_cases", r.cases);  // sampled blocks on huge domains
  const std::string which =
      model_cases == r.cases ? "all" : fmt::format("every case of sampled blocks ({} of {} cases):", model_cases, r.cases);
  if (r.model_disagreement_count == 0) {
    std::printf("%s hardware ≡ soft model on %s %llu recipe evaluations; soft ≡ oracle witness on %llu cases (%s)\n",
                run.label.c_str(), which.c_str(), static_cast<unsigned long long>(r.model_compared),
                static_cast<unsigned long long>(r.witnessed_cases),
                std::string(witness_mode_name(r.witness_mode)).c_str());
  } else {
    std::printf("MODEL DISAGREEMENT: %s hardware and the soft model differ on %llu recipe evaluations\n",
                run.label.c_str(), static_cast<unsigned long long>(r.model_disagreement_count));
    for (const ModelDisagreement& m : r.model_disagreements) print_lines(model_lines(spec, run.label, m));
  }
  if (run.info.contains("vendor_conversion_paths")) {
    for (const auto& [recipe, path] : run.info["vendor_conversion_paths"].items()) {
      std::printf("  %s %s: %s\n", run.label.c_str(), recipe.c_str(), path.get<std::string>().c_str());
    }
  }
  if (!run.info.contains("fast_math")) return;
  const Json& claims = run.info["fast_math"]["claims"];
  for (std::size_t c = 0; c < spec.claims.size() && c < claims.size(); ++c) {
    const Json& fm = claims[c];
    std::printf("  %s --use_fast_math: claims[%zu] %s (%llu/%llu)\n", run.label.c_str(), c,
                fm["holds"].get<bool>() ? "survives" : "DOES NOT SURVIVE",
                static_cast<unsigned long long>(fm["holding"].get<std::uint64_t>()),
                static_cast<unsigned long long>(fm.value("cases", r.claims[c].cases)));
  }
}

// One slice of the domain: a shard report for `report merge`. Every selected
// backend sweeps the slice; their parts must agree (as whole proofs must).
// What the command reads, never written over: the spec, an audit, the spec's
// sources and tables, and every file the compiler reads for the sources (the
// headers they include: known once the worker is built, or the preprocessor
// has listed them where `backends` has no cpu backend to build it for).
// The outputs are checked against them and reserved (Outputs::open).
Expected<OutputFiles> open_outputs(const ProveArgs& a, const Spec& spec,
                                   const std::vector<std::unique_ptr<Backend>>& backends) {
  std::vector<std::string> files = {a.spec, a.scales_from, a.scales_from_range};
  if (spec.user) {
    const bool cpu = std::any_of(backends.begin(), backends.end(), [](const auto& b) { return b->name() == "cpu"; });
    auto deps = spec.user->read_paths(cpu);
    if (!deps) return deps.error();
    files.insert(files.end(), deps->begin(), deps->end());
  }
  return a.out.open(files);
}

BackendOptions backend_options(const ProveArgs& a) {
  BackendOptions options;
  options.engine.keep = a.keep;
  options.engine.threads = a.threads;
  options.specialize = a.specialize == "on"    ? BackendOptions::Specialize::kOn
                       : a.specialize == "off" ? BackendOptions::Specialize::kOff
                                               : BackendOptions::Specialize::kAuto;
  return options;
}

int run_shard(const ProveArgs& a, const Spec& spec) {
  auto shard = parse_shard_flag(a.shard, "--shard");
  if (!shard) return fail(shard.error());
  if (a.out.report.empty()) return fail({"--shard: give --report for the shard report"});
  if (!a.out.markdown.empty() || !a.out.junit.empty() || !a.out.svg.empty()) {
    return fail({"--shard: a shard writes only --report; render the merged report"});
  }
  auto backends = select_backends(a.backend, spec, a.devices);
  if (!backends) return fail(backends.error());
  auto files = open_outputs(a, spec, *backends);
  if (!files) return fail(files.error());
  const auto [begin, end] = shard_range(spec.case_count(), *shard);
  Progress progress(fmt::format("{} shard {}", spec.name, a.shard), a.gate.quiet);
  BackendOptions options = backend_options(a);
  options.engine.progress = progress.callback();
  options.engine.kept_chunks = shard_spot_chunks(spec.case_count(), *shard);
  std::vector<Json> reports;
  std::string names;
  for (const auto& backend : *backends) {
    auto part = backend->sweep_part(spec, options, begin, end);
    if (!part) return fail(part.error());
    Json info{{"name", backend->name()}, {"threads", resolve_threads(a.threads)}};
    info.update(backend->describe());
    reports.push_back(shard_report(spec, *part, *shard, a.keep, info));
    names += (names.empty() ? "" : ", ") + backend->name();
  }
  progress.done();
  // The hardware-vs-model counts are a backend's own; the rest must be equal.
  const auto without_model = [](Json result) {
    for (const char* key : {"model_compared", "model_count", "model"}) result["part"]["disagreements"].erase(key);
    return result;
  };
  Json report = reports.front();
  Json& model = report["result"]["part"]["disagreements"];
  for (const Json& other : reports) {
    if (&other == &reports.front()) continue;
    const Json& theirs = other["result"]["part"]["disagreements"];
    model["model_compared"] =
        model["model_compared"].get<std::uint64_t>() + theirs["model_compared"].get<std::uint64_t>();
    model["model_count"] = model["model_count"].get<std::uint64_t>() + theirs["model_count"].get<std::uint64_t>();
    for (const Json& m : theirs["model"]) model["model"].push_back(m);
  }
  const Json& first = reports.front();
  for (const Json& other : reports) {
    if (without_model(other["result"]) != without_model(first["result"])) {
      std::printf("BACKENDS DISAGREE on shard %s: %s's part differs from %s's\n", a.shard.c_str(),
                  other["backends"][0]["name"].get<std::string>().c_str(),
                  first["backends"][0]["name"].get<std::string>().c_str());
      return kExitRefuted;
    }
  }
  if (!a.gate.quiet) {
    std::printf("%s shard %s: cases %llu..%llu of %llu (%s)\n", domain_label(spec).c_str(), a.shard.c_str(),
                static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end),
                static_cast<unsigned long long>(spec.case_count()), names.c_str());
    const Json& claims = first["result"]["part"]["claims"];
    for (std::size_t c = 0; c < claims.size(); ++c) {
      std::printf("  claim %zu: %llu/%llu hold in this shard\n", c,
                  static_cast<unsigned long long>(claims[c]["holding"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(claims[c]["cases"].get<std::uint64_t>()));
    }
  }
  report["backends"] = Json::array();
  for (const Json& r : reports) report["backends"].push_back(r["backends"][0]);
  if (auto e = a.out.write(*files, report)) return fail(*e);
  return kExitHolds;  // a shard proves nothing alone: the verdict comes from the merge
}

int run_prove(const ProveArgs& a) {
  if (auto e = hand_off_for_cuda(a.backend)) return fail(*e);
  auto spec = load_with_override(a);
  if (!spec) return fail(spec.error());
  if (spec->user) {
    if (auto e = user::refuse_user_code(*spec->user)) return fail(*e);
  }
  if (auto e = a.gate.check_syntax(spec->claims.size())) return fail(*e);
  if (spec->user) spec->user->no_cache = a.no_cache;
  a.limits.apply(*spec);
  if (!a.shard.empty()) {
    if (!a.gate.expect.empty()) {
      return fail({"--expect: a shard's counts are not the domain's: give --expect to report merge"});
    }
    return run_shard(a, *spec);
  }
  auto backends = select_backends(a.backend, *spec, a.devices);
  if (!backends) return fail(backends.error());
  auto files = open_outputs(a, *spec, *backends);
  if (!files) return fail(files.error());
  // The case map sweeps the proof's own domain again, code by code of one input:
  // refused now if it cannot run, not after the proof.
  if (!a.out.svg.empty()) {
    if (auto e = check_proof_map(*spec)) return fail(*e);
  }
  BackendOptions options = backend_options(a);
  std::vector<BackendRun> runs;
  for (const auto& backend : *backends) {
    Progress progress(fmt::format("{} ({})", spec->name, backend->name()), a.gate.quiet);
    options.engine.progress = progress.callback();
    auto run = backend->prove(*spec, options);
    if (!run) return fail(run.error());
    runs.push_back(std::move(*run));
  }
  const Agreement agree = agreement(*spec, runs, a.keep);
  const ProofResult& first = runs.front().result;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> counts;
  for (const ClaimResult& c : first.claims) counts.emplace_back(c.holding, c.cases);
  const std::vector<std::string> unexpected = a.gate.mismatches(counts);
  print_claims(*spec, runs, agree, a.gate, a.show);
  for (const std::string& line : unexpected) std::printf("%s\n", painted(line, false).c_str());
  std::vector<bool> passes;
  for (std::size_t c = 0; c < spec->claims.size(); ++c) {
    passes.push_back(verdict_passes(claim_verdict(spec->claims[c], first.claims[c])));
  }
  print_lines(a.gate.counted_but_failing(spec->claims, first.claims, passes));
  const ProofResult& r = runs.front().result;
  print_witness(*spec, r.witness_disagreement_count, r.witness_disagreements);
  for (const BackendRun& run : runs) print_hardware(*spec, run, a.gate.quiet);
  if (!agree.results_identical) {
    std::string names;
    for (const std::string& n : agree.differing) names += " " + n;
    std::printf("BACKENDS DISAGREE: the result of%s differs from %s's\n", names.c_str(), runs.front().name.c_str());
  }
  if (a.out.any()) {
    Json report = proof_report(*spec, runs, a.keep);
    record_invocation(report["environment"]);
    if (auto e = a.out.write(*files, report)) return fail(*e);
  }
  return r.passes(*spec) && agree.holds() && unexpected.empty() ? kExitHolds : kExitRefuted;
}

}  // namespace

void add_prove_command(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ProveArgs>();
  auto* p = app.add_subcommand("prove", "prove every claim of a spec over its whole domain");
  p->add_option("spec", args->spec, "proof spec (JSON)")->required();
  p->add_option("--backend", args->backend, "cpu, cuda or all that are available")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  p->add_option("--specialize", args->specialize,
                "cuda, above 2^24 cases: link the sweep kernels for this spec's recipes alone (NVRTC + nvJitLink, "
                "cached): auto (from 2^40 cases), on or off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  p->add_option("--devices", args->devices,
                "cuda: the GPUs to sweep on, all or numbers like 0,1 (large domains are split among them, the "
                "result is one GPU's)");
  args->out.add_flags(*p);
  auto* scales = p->add_option("--scales", args->scales, "replace the codes of the input named scale by LO:HI");
  p->add_option("--codes", args->codes,
                "NAME=LO:HI: replace the codes of the input NAME (repeatable; a slice of a large domain, e.g. on "
                "the CPU)");
  auto* from = add_path_option(*p, "--scales-from", args->scales_from,
                               "replace them by the set of codes an audit report observed (a list)");
  from->excludes(scales);
  add_path_option(*p, "--scales-from-range", args->scales_from_range,
                  "replace them by the interval from the least to the greatest code an audit observed")
      ->excludes(scales)
      ->excludes(from);
  add_keep_option(*p, args->keep);
  add_show_option(*p, args->show);
  add_threads_option(*p, args->threads);
  add_no_user_code_flag(*p);
  p->add_flag("--no-cache", args->no_cache, "user recipes: compile their sources even when the cache has them");
  args->limits.add_flags(*p);
  p->add_flag("--allow-partial", args->allow_partial,
              "with --scales-from(-range): accept an audit that left scale tensors unread");
  p->add_option("--shard", args->shard, "sweep only slice I of N (1-based) and write a shard report; see report merge");
  args->gate.add_flags(*p);
  commands.push_back({p, [args] { return run_prove(*args); }});
}

}  // namespace bitproof::cli
