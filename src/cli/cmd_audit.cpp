// bitproof audit PATH: scale-code histograms of a safetensors checkpoint, every scale format.
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

struct AuditArgs {
  std::string path;
  std::string select;
  std::string dtypes;
  std::string formats;
  std::vector<std::string> views;
  unsigned threads = 0;
  Outputs out;
};

// Writes the report (compact: histograms of 16-bit codes are long) and any
// Markdown or JUnit rendering of it, all or none.
int write_outputs(const Outputs& out, OutputFiles& files, const Json& report, std::string report_text) {
  if (!out.any()) return kExitHolds;
  Outputs renderings = out;
  renderings.report.clear();
  if (!out.report.empty()) files.set(out.report, std::move(report_text));
  if (auto e = renderings.write(files, report)) return fail(*e);
  return kExitHolds;
}

int run_audit_command(const AuditArgs& a) {
  auto selection = audit::make_selection(a.dtypes, a.select, a.formats);
  if (!selection) return fail(selection.error());
  auto views = audit::make_views(a.views);
  if (!views) return fail(views.error());
  auto files = a.out.open({a.path});
  if (!files) return fail(files.error());
  const auto start = std::chrono::steady_clock::now();
  auto checkpoint = checkpoint::open_checkpoint(a.path);
  if (!checkpoint) return fail(checkpoint.error());
  const unsigned threads = resolve_threads(a.threads);
  auto result = audit::run_audit(*checkpoint, {*selection, threads, *views});
  if (!result) return fail(result.error());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_lines(audit::summary_lines(*result));
  const audit::Json run{{"threads", threads}, {"seconds", seconds}};
  // The report is written as text; renderings read JSON values, but no tensor's histogram.
  const bool renderings = !a.out.markdown.empty() || !a.out.junit.empty();
  const Json report = renderings ? audit::audit_report(*result, run, false) : Json();
  std::string report_text;
  if (!a.out.report.empty()) (report_text = audit::audit_report_text(*result, run)) += '\n';
  return write_outputs(a.out, *files, report, std::move(report_text));
}

struct AdmitArgs {
  std::string audit;
  std::string domain;
  std::optional<std::size_t> claim;
  std::string select;
  std::uint64_t max_outside = 0;
  bool allow_partial = false;
  Outputs out;
};

int run_admit(const AdmitArgs& a) {
  auto files = a.out.open({a.audit, a.domain});
  if (!files) return fail(files.error());
  auto audited = audit::load_checked_audit(a.audit);  // the checkpoint on disk must be what it read
  if (!audited) return fail(audited.error());
  auto proven = audit::load_domain_report(a.domain, a.claim);
  if (!proven) return fail(proven.error());
  auto admission = audit::admit(*audited, *proven, a.select, a.allow_partial, a.max_outside);
  if (!admission) return fail(admission.error());
  print_lines(audit::admission_lines(*audited, *proven, *admission, kListedOutside));
  const Json report = a.out.any() ? audit::admission_report(*audited, *proven, *admission) : Json();
  if (const int rc = write_outputs(a.out, *files, report, a.out.report.empty() ? "" : report.dump(1) + "\n"); rc != 0)
    return rc;
  return admission->admitted() ? kExitHolds : kExitRefuted;
}

struct SynthArgs {
  audit::SynthOptions options;
  std::string layout = "dsv4";
  std::string scale_range;
  bool no_weights = false;
};

int run_synth(SynthArgs a) {
  const audit::SynthLayoutInfo* layout = audit::synth_layout(a.layout);
  if (!layout) return fail({fmt::format("synth-checkpoint: --layout: {}: not a layout (dsv4, nvfp4, gptq)", a.layout)});
  a.options.layout = layout->id;
  a.options.scale_lo = layout->scale_lo;
  a.options.scale_hi = layout->scale_hi;
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
  auto* c = app.add_subcommand("audit", "histogram every scale code of a safetensors checkpoint, in its scale format");
  c->add_option("path", args->path, "a .safetensors file, an index .json, or a checkpoint directory")->required();
  // An audit has no case map: no --svg.
  args->out.add_flags(*c, OutputFlags{true, false,
                                      "one test case per scale tensor, failed when it holds NaN, Inf or "
                                      "codes of no value"});
  c->add_option("--select", args->select, "only tensors whose name matches this regular expression (RE2 syntax)");
  c->add_option("--dtype", args->dtypes,
                "comma-separated scale dtypes (default all: F8_E8M0,U8,F8_E4M3,F16,BF16,F32; "
                "all but F8_E8M0 need a name whose last component contains \"scale\")");
  c->add_option("--format", args->formats,
                "read a dtype in another scale format: ue4m3 (F8_E4M3 as NVFP4's UE4M3 block scales)");
  c->add_option("--view", args->views, "a recipe's view of the codes, e.g. turbomind (adjusted and folded exponents)");
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
  // An admission has no case map: no --svg.
  args->out.add_flags(*c, OutputFlags{true, false,
                                      "one test case per audited tensor, failed when codes of it lie "
                                      "outside the proven interval (beyond --max-outside)"});
  c->add_option("--select", args->select, "only tensors whose name matches this regular expression (RE2 syntax)");
  c->add_option("--max-outside", args->max_outside,
                "admit when at most N codes of the selected tensors lie outside the proven interval (default 0)")
      ->check(whole_number(0, UINT64_MAX));
  c->add_flag("--allow-partial", args->allow_partial,
              "accept an audit that left scale tensors unread (--select, --dtype); the admission says so");
  commands.push_back({c, [args] { return run_admit(*args); }});
}

void add_synth(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<SynthArgs>();
  auto& o = args->options;
  auto* c = app.add_subcommand("synth-checkpoint",
                               "write a synthetic checkpoint: DeepSeek V4 MXFP4 (I8 + F8_E8M0), NVFP4 (U8 + F8_E4M3 + "
                               "F32 global) or GPTQ INT4 (I32 + F16 group scales)");
  c->add_option("--layout", args->layout, "dsv4 (default), nvfp4 or gptq");
  c->add_option("out_dir", o.out_dir, "new or empty output directory")->required();
  c->add_option("--layers", o.layers, "layers")->required();
  c->add_option("--experts", o.experts, "routed experts per layer")->required();
  c->add_option("--rows", o.rows, "rows of each expert matrix")->required();
  c->add_option("--cols", o.cols, "columns of each expert matrix (a multiple of 32; gptq: of 128)")->required();
  c->add_option("--scale-range", args->scale_range,
                "scale codes uniform in LO:HI (defaults: dsv4 114:126, nvfp4 32:120, gptq 0x1C00:0x2400)");
  c->add_option("--shards", o.shards, "files, with model.safetensors.index.json when more than one");
  c->add_option("--seed", o.seed, "random seed (output is a pure function of the options)");
  c->add_option("--nan-bytes", o.nan_bytes, "scale codes set to the format's NaN (0xFF, 0x7F, 0x7E00)");
  c->add_flag("--no-weights", args->no_weights,
              "leave the expert weights (and GPTQ qzeros) out (scale-only benchmarks)");
  commands.push_back({c, [args] { return run_synth(*args); }});
}

}  // namespace

void add_audit_commands(CLI::App& app, Commands& commands) {
  add_audit(app, commands);
  add_admit(app, commands);
  add_synth(app, commands);
}

}  // namespace bitproof::cli
