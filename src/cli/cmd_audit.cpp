// bitproof audit PATH: scale-byte histograms of a safetensors checkpoint.
// bitproof admit --audit A.json --domain D.json: which tensors a proven interval admits.
// bitproof synth-checkpoint OUT_DIR ...: DeepSeek V4 layout test checkpoints.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "audit/admission.hpp"
#include "audit/audit.hpp"
#include "audit/synth.hpp"
#include "cli/cli.hpp"
#include "report/render.hpp"
#include "parallel.hpp"

namespace bitproof::cli {
namespace {

constexpr std::size_t kListedOutside = 20;

// -o/--report and --markdown, where given, reserved before any work.
Expected<Ok> add_outputs(OutputFiles& files, const std::string& report, const std::string& markdown) {
  for (const auto& [flag, path] : {std::pair{"--report", &report}, std::pair{"--markdown", &markdown}}) {
    if (path->empty()) continue;
    if (auto ok = files.add(flag, *path); !ok) return ok.error();
  }
  return Ok{};
}

struct AuditArgs {
  std::string path;
  std::string report;
  std::string markdown;
  std::string select;
  std::string dtypes;
  unsigned threads = 0;
};

int run_audit_command(const AuditArgs& a) {
  auto selection = audit::make_selection(a.dtypes, a.select);
  if (!selection) return fail(selection.error());
  OutputFiles files;
  files.add_input(a.path);
  if (auto ok = add_outputs(files, a.report, a.markdown); !ok) return fail(ok.error());
  const auto start = std::chrono::steady_clock::now();
  auto checkpoint = audit::open_checkpoint(a.path);
  if (!checkpoint) return fail(checkpoint.error());
  const unsigned threads = resolve_threads(a.threads);
  auto result = audit::run_audit(*checkpoint, {*selection, threads});
  if (!result) return fail(result.error());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s\n", audit::summary_line(*result).c_str());
  if (!a.report.empty()) {
    const audit::Json run{{"threads", threads}, {"seconds", seconds}};
    files.set(a.report, audit::audit_report(*result, run).dump() + "\n");
  }
  if (!a.markdown.empty()) files.set(a.markdown, render_lines_markdown("audit: " + a.path, {audit::summary_line(*result)}));
  if (auto ok = files.commit(); !ok) return fail(ok.error());
  return kExitHolds;
}

struct AdmitArgs {
  std::string audit;
  std::string domain;
  std::optional<std::size_t> claim;
  std::string report;
  std::string markdown;
  std::string select;
  bool allow_partial = false;
};

int run_admit(const AdmitArgs& a) {
  OutputFiles files;
  files.add_input(a.audit);
  files.add_input(a.domain);
  if (auto ok = add_outputs(files, a.report, a.markdown); !ok) return fail(ok.error());
  auto audited = audit::load_audit_report(a.audit);
  if (!audited) return fail(audited.error());
  auto proven = audit::load_domain_report(a.domain, a.claim);
  if (!proven) return fail(proven.error());
  auto admission = audit::admit(*audited, *proven, a.select, a.allow_partial);
  if (!admission) return fail(admission.error());
  const std::vector<std::string> lines = audit::admission_lines(*audited, *proven, *admission, kListedOutside);
  print_lines(lines);
  if (!a.report.empty()) {
    const std::string text = audit::admission_report(*audited, *proven, *admission).dump(1) + "\n";
    files.set(a.report, text);
  }
  if (!a.markdown.empty()) files.set(a.markdown, render_lines_markdown("admit: " + a.audit + " against " + a.domain, lines));
  if (auto ok = files.commit(); !ok) return fail(ok.error());
  return admission->admitted() ? kExitHolds : kExitRefuted;
}

struct SynthArgs {
  audit::SynthOptions options;
  std::string scale_range;
  bool no_weights = false;
};

int run_synth(SynthArgs a) {
  if (!a.scale_range.empty()) {
    auto range = parse_range_flag(a.scale_range, "--scale-range");
    if (!range) return fail(range.error());
    a.options.scale_lo = range->lo;
    a.options.scale_hi = range->hi;
  }
  a.options.weights = !a.no_weights;
  auto result = audit::synthesize_checkpoint(a.options);
  if (!result) return fail(result.error());
  std::printf("wrote %zu files, %llu bytes, %zu scale tensors of %llu bytes in all, to %s\n", result->files.size(),
              static_cast<unsigned long long>(result->total_bytes), result->scales.size(),
              static_cast<unsigned long long>(result->scale_bytes), a.options.out_dir.c_str());
  return kExitHolds;
}

void add_audit(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<AuditArgs>();
  auto* c = app.add_subcommand("audit", "histogram every scale byte of a safetensors checkpoint");
  c->add_option("path", args->path, "a .safetensors file, an index .json, or a checkpoint directory")->required();
  add_report_option(*c, args->report, "write the JSON audit report here");
  add_path_option(*c, "--markdown", args->markdown, "write the summary as Markdown here (for a PR comment)");
  c->add_option("--select", args->select, "only tensors whose name matches this regular expression (RE2 syntax)");
  c->add_option("--dtype", args->dtypes,
                "comma-separated one-byte dtypes (default F8_E8M0,U8; non-E8M0 need *scale names)");
  add_threads_option(*c, args->threads);
  commands.push_back({c, [args] { return run_audit_command(*args); }});
}

void add_admit(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<AdmitArgs>();
  auto* c = app.add_subcommand("admit",
                               "which audited tensors lie inside a proven-exact interval (exit 1 if any lies outside)");
  c->add_option("--audit", args->audit, "audit report (bitproof audit --report)")->required();
  c->add_option("--domain", args->domain, "domain report (bitproof domain SPEC --report)")->required();
  c->add_option("--claim", args->claim, "use this claim's maximal interval (default: all claims' intersection)")
      ->check(whole_number(0, 1000000));
  add_report_option(*c, args->report, "write the JSON admission manifest here");
  add_path_option(*c, "--markdown", args->markdown, "write the admission as Markdown here (for a PR comment)");
  c->add_option("--select", args->select, "only tensors whose name matches this regular expression (RE2 syntax)");
  c->add_flag("--allow-partial", args->allow_partial,
              "accept an audit that left scale tensors unread (--select, --dtype); the admission says so");
  commands.push_back({c, [args] { return run_admit(*args); }});
}

void add_synth(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<SynthArgs>();
  auto& o = args->options;
  auto* c = app.add_subcommand("synth-checkpoint", "write a synthetic DeepSeek V4 layout checkpoint (I8 + F8_E8M0)");
  c->add_option("out_dir", o.out_dir, "new or empty output directory")->required();
  c->add_option("--layers", o.layers, "layers")->required();
  c->add_option("--experts", o.experts, "routed experts per layer")->required();
  c->add_option("--rows", o.rows, "rows of each expert matrix")->required();
  c->add_option("--cols", o.cols, "columns of each expert matrix (a multiple of 32)")->required();
  c->add_option("--scale-range", args->scale_range, "scale bytes uniform in LO:HI (default 114:126)");
  c->add_option("--shards", o.shards, "files, with model.safetensors.index.json when more than one");
  c->add_option("--seed", o.seed, "random seed (output is a pure function of the options)");
  c->add_option("--nan-bytes", o.nan_bytes, "scale bytes set to 0xFF (NaN)");
  c->add_flag("--no-weights", args->no_weights, "leave the I8 expert weights out (scale-only benchmarks)");
  commands.push_back({c, [args] { return run_synth(*args); }});
}

}  // namespace

void add_audit_commands(CLI::App& app, Commands& commands) {
  add_audit(app, commands);
  add_admit(app, commands);
  add_synth(app, commands);
}

}  // namespace bitproof::cli
