// bitproof time SPEC: the timing gate. Two arms, each prepared and warmed on its
// own, sampled in counterbalanced blocks on the GPU; a verdict from the samples,
// and with --claim a gate (exit 0 when the claim holds, 1 when it does not).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "backend/cuda_timing.hpp"
#include "backend/kernel_modules.hpp"
#include "cli/cli.hpp"
#include "cli/cuda_twin.hpp"
#include "hash/digest.hpp"
#include "report/time_report.hpp"
#include "timing/isolate.hpp"
#include "user/user_code.hpp"
#include "user/user_recipes.hpp"

namespace bitproof::cli {
namespace {

struct TimeArgs {
  std::string spec;
  std::string claim;
  std::string checkpoint;
  bool calibrate = false;
  bool isolate = false;
  std::string cache = "cold";
  std::string order = "abba";
  std::string protocol = "counterbalanced";
  std::size_t min_samples = 50;
  std::size_t max_samples = 2000;
  std::size_t naive_samples = 3;
  double noise_percent = 0.5;
  double min_time_s = 1;
  double timeout_s = 20;
  double same_within_percent = 1;
  std::uint64_t seed = 1;
  bool quiet = false;
  double wait_timeout_s = timing::kDefaultWaitTimeout;        // --user-timeout
  double compile_timeout_s = timing::kDefaultCompileTimeout;  // --compile-timeout
  int serve_arm = -1;  // internal: this process serves one arm for --isolate
  Outputs out;
};

TimeProtocol protocol_of(const TimeArgs& a, double reference_clock_mhz) {
  TimeProtocol p;
  timing::SessionOptions& s = p.session;
  s.protocol = a.protocol == "naive" ? timing::Protocol::kNaive : timing::Protocol::kCounterbalanced;
  s.order = a.order == "random" ? timing::BlockOrder::kRandom : timing::BlockOrder::kAbba;
  s.flush_l2 = a.cache == "cold";
  s.min_samples = a.min_samples;
  s.max_samples = std::max(a.max_samples, a.min_samples);
  s.naive_samples = a.naive_samples;
  s.noise_target = a.noise_percent / 100;
  s.min_time_s = std::min(a.min_time_s, a.timeout_s);
  s.timeout_s = a.timeout_s;
  s.seed = a.seed;
  s.reference_clock_mhz = reference_clock_mhz;
  p.verdict.same_within = a.same_within_percent / 100;
  p.verdict.seed = a.seed;
  p.isolate = a.isolate;
  return p;
}

struct Loaded {
  timing::TimeSpec spec;
  std::optional<op::Weights> weights;
};

Expected<Loaded> load(const TimeArgs& a) {
  auto spec = timing::load_time_spec(a.spec);
  if (!spec) return spec.error();
  if (!spec->ab) {  // user CUDA kernels (an A/B spec's kernel arms are refused below, before their build)
    for (std::size_t i = 0; i < spec->arms.size(); ++i) {
      const timing::KernelArm& arm = spec->arms[i];
      if (auto e = user::refuse_user_code(fmt::format("{}: arms[{}] ({})", a.spec, i, arm.name),
                                          fmt::format("kernel {} of {}", arm.kernel, arm.file))) {
        return *e;
      }
    }
  }
  spec->wait_timeout_s = a.wait_timeout_s;
  spec->compile_timeout_s = a.compile_timeout_s;
  Loaded l{std::move(*spec), std::nullopt};
  if (!a.checkpoint.empty() && !l.spec.ab) return Error{"--checkpoint: only an A/B spec's arms read a checkpoint"};
  if (l.spec.ab) {
    if (!a.checkpoint.empty()) l.spec.ab->checkpoint_path = a.checkpoint;
    if (l.spec.ab->kernels) {  // kernel arms: the user's kernels, built before the weights are read
      if (auto e = user::refuse_user_code(fmt::format("{}: kernels", a.spec), "the kernel arms' code (run on the GPU)"))
        return *e;
      auto modules = build_kernel_modules(*l.spec.ab, a.compile_timeout_s);
      if (!modules) return modules.error();
      l.spec.ab_modules = std::move(*modules);
    }
    auto w = op::load_weights(*l.spec.ab, l.spec.ab->checkpoint_path);
    if (!w) return w.error();
    l.weights = std::move(*w);
  }
  return l;
}

// What the command reads, never written over: the spec, and each kernel arm's
// file with every header it includes (the preprocessor's list); for an A/B
// spec with kernel arms, every file its kernels' build read.
Expected<std::vector<std::string>> read_files(const TimeArgs& a, const timing::TimeSpec& spec) {
  std::vector<std::string> files{a.spec};
  if (spec.ab) {  // an A/B spec's kernels: every file their build read
    for (const std::string& path : kernel_module_paths(*spec.ab, spec.ab_modules)) files.push_back(path);
  }
  if (spec.ab || !a.out.any()) return files;  // no kernel file, or no output to check it against
  for (std::size_t i = 0; i < spec.arms.size(); ++i) {
    auto reads = user::kernel_file_reads(spec.arms[i].file_path, spec.include_dirs, spec.compile_timeout_s,
                                         fmt::format("{}: arms[{}].file", a.spec, i));
    if (!reads) return reads.error();
    files.insert(files.end(), reads->begin(), reads->end());
  }
  return files;
}

// This program again, serving arm `arm` of the same spec (--isolate).
std::vector<std::string> child_argv(const TimeArgs& a, std::size_t arm) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  std::vector<std::string> argv{self,
                                "time",
                                a.spec,
                                "--serve-arm",
                                std::to_string(arm),
                                "--user-timeout",
                                fmt::format("{}", a.wait_timeout_s),
                                "--compile-timeout",
                                fmt::format("{}", a.compile_timeout_s)};
  if (!a.checkpoint.empty()) argv.insert(argv.end(), {"--checkpoint", a.checkpoint});
  return argv;
}

using Arms = std::array<std::unique_ptr<timing::TimedArm>, 2>;

// Arms A and B (`calibration`: A twice), each its own instance.
Expected<Arms> make_arms(const TimeArgs& a, TimingBackend& backend, const Loaded& l, bool calibration) {
  Arms arms;
  const bool shared = a.protocol == "naive";
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t which = calibration ? 0 : i;
    auto arm = a.isolate ? timing::spawn_isolated_arm(child_argv(a, which), l.spec.arm_names()[which])
                         : backend.arm(l.spec, l.weights ? &*l.weights : nullptr, which, shared);
    if (!arm) return arm.error();
    arms[i] = std::move(*arm);
  }
  return arms;
}

// The driver's "--backend cuda: ..." said as this command's: time has no --backend.
Error no_gpu(Error e) {
  const std::string prefix = "--backend cuda: ";
  if (e.message.rfind(prefix, 0) == 0) e.message = "time: needs a CUDA GPU: " + e.message.substr(prefix.size());
  return e;
}

int serve(const TimeArgs& a) {
  auto l = load(a);
  if (!l) return fail(l.error());
  auto backend = open_cuda_timing();
  if (!backend) return fail(backend.error());
  if (a.serve_arm > 1) return fail({"--serve-arm: 0 (A) or 1 (B)"});
  auto arm = (*backend)->arm(l->spec, l->weights ? &*l->weights : nullptr, static_cast<std::size_t>(a.serve_arm), false);
  if (!arm) return fail(arm.error());
  return timing::serve_arm(**arm, stdin, stdout);
}

Expected<timing::Session> sample(const TimeArgs& a, TimingBackend& backend, const Loaded& l, const TimeProtocol& p,
                                 bool calibration) {
  auto arms = make_arms(a, backend, l, calibration);
  if (!arms) return arms.error();
  return timing::run_session(*(*arms)[0], *(*arms)[1], p.session);
}

// The device's description, and for an A/B spec's kernel arms what every arm
// loaded: each module's file, the SHA-256 of its PTX and its build options.
Json device_info(const TimingBackend& backend, const timing::TimeSpec& spec) {
  Json info = backend.info();
  if (spec.ab_modules.empty()) return info;
  Json modules = Json::array();
  for (const op::KernelModule& m : spec.ab_modules) {
    modules.push_back({{"file", m.file}, {"ptx_sha256", sha256_hex(m.ptx)}, {"options", m.options}});
  }
  info["kernel_modules"] = modules;
  return info;
}

int run_time_command(const TimeArgs& a) {
  if (a.serve_arm >= 0) return serve(a);
  if (auto e = hand_off_for_cuda("cuda")) return fail(*e);
  auto l = load(a);
  if (!l) return fail(l.error());
  const std::array<std::string, 2> names = l->spec.arm_names();
  TimeRun run;
  if (!a.claim.empty()) {
    auto claim = timing::parse_claim(a.claim, names);
    if (!claim) return fail(claim.error());
    run.claim = *claim;
  }
  if (a.protocol == "naive" && (run.claim || a.isolate || a.calibrate)) {
    return fail({"--protocol naive: a demonstration of the mistake in one process; it takes no --claim, --isolate or "
                 "--calibrate"});
  }
  auto reads = read_files(a, l->spec);
  if (!reads) return fail(reads.error());
  auto files = a.out.open(*reads);
  if (!files) return fail(files.error());
  auto backend = open_cuda_timing();
  if (!backend) return fail(no_gpu(backend.error()));
  const TimeProtocol p = protocol_of(a, (*backend)->reference_clock_mhz());
  if (!a.quiet) {
    std::fprintf(stderr, "time %s: A %s against B %s, %s\n", l->spec.name.c_str(), names[0].c_str(), names[1].c_str(),
                 a.protocol == "naive" ? "naive: A then B, no warm-up"
                                       : fmt::format("until the noise is {} % or {} s", a.noise_percent, a.timeout_s).c_str());
  }
  auto session = sample(a, **backend, *l, p, false);
  if (!session) return fail(session.error());
  run.session = std::move(*session);
  if (a.calibrate) {
    auto cal = sample(a, **backend, *l, p, true);
    if (!cal) return fail(cal.error());
    run.calibration = std::move(*cal);
  }
  Json report = time_report(l->spec, p, run, device_info(**backend, l->spec));
  record_invocation(report["environment"]);
  const bool passes = time_report_passes(report);
  if (!a.quiet || !passes) {
    std::printf("%s: A %s vs B %s\n", l->spec.name.c_str(), names[0].c_str(), names[1].c_str());
    for (const std::string& line : time_summary_lines(report)) std::printf("%s\n", painted(line, passes).c_str());
  }
  if (a.out.any()) {
    if (auto e = a.out.write(*files, report)) return fail(*e);
  }
  return passes ? kExitHolds : kExitRefuted;
}

CLI::Validator percent_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0' || !(v > lo) || !(v < hi)) return fmt::format("expected a number in ({}, {})", lo, hi);
        return "";
      },
      "PERCENT");
}

}  // namespace

void add_time_command(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<TimeArgs>();
  auto* p = app.add_subcommand("time", "time two arms on the GPU in counterbalanced blocks, each warmed on its own; "
                                       "--claim gates a speed claim");
  p->add_option("spec", args->spec,
                "timing spec (JSON: user CUDA kernels) or A/B spec (built-in operators or kernel arms)")
      ->required();
  p->add_option("--claim", args->claim, "gate: \"<arm> faster by P%\", \"<arm> slower by P%\" or \"same within P%\" "
                                        "(exit 0 when the whole interval lies beyond it and no order effect is found)");
  p->add_flag("--calibrate", args->calibrate, "also time A against an independently prepared A (the gate's resolution)");
  p->add_flag("--isolate", args->isolate, "prepare and run each arm in a fresh process of its own");
  p->add_option("--cache", args->cache, "cold (L2 flushed before every sample, default) or hot")
      ->check(CLI::IsMember({"cold", "hot"}));
  p->add_option("--order", args->order, "abba (counterbalanced A B B A / B A A B blocks, default) or random "
                                        "(each block a random order of A A B B)")
      ->check(CLI::IsMember({"abba", "random"}));
  p->add_option("--protocol", args->protocol,
                "counterbalanced (default) or naive (A then B, no warm-up: demonstrates the mistake, never a verdict)")
      ->check(CLI::IsMember({"counterbalanced", "naive"}));
  p->add_option("--min-samples", args->min_samples, "samples per arm before the noise target may stop (default 50)")
      ->check(whole_number(4, 1000000));
  p->add_option("--max-samples", args->max_samples, "samples per arm at most (default 2000)")->check(whole_number(4, 1000000));
  p->add_option("--naive-samples", args->naive_samples, "--protocol naive: replays timed per arm (default 3)")
      ->check(whole_number(1, 1000));
  p->add_option("--noise", args->noise_percent, "stop when each arm's median is known to this many percent (default 0.5)")
      ->check(percent_in(0, 100));
  p->add_option("--min-time", args->min_time_s, "seconds of sampling before the noise target may stop (default 1)")
      ->check(CLI::Range(0.0, 3600.0));
  p->add_option("--timeout", args->timeout_s, "seconds of sampling at most (default 20)")->check(CLI::Range(0.01, 3600.0));
  p->add_option("--same-within", args->same_within_percent,
                "percent: a ratio interval inside 1 ± this is \"same\", and an order effect below it is ignored (default 1)")
      ->check(percent_in(0, 50));
  p->add_option("--seed", args->seed, "seed of random block orders and of the bootstrap (default 1)");
  add_path_option(*p, "--checkpoint", args->checkpoint, "an A/B spec's checkpoint (default: the spec's)");
  p->add_flag("--quiet,-q", args->quiet, "print only a claim that does not pass");
  add_no_user_code_flag(*p);
  add_kernel_limit_flags(*p, args->wait_timeout_s, args->compile_timeout_s);
  p->add_option("--serve-arm", args->serve_arm)->group("");  // internal: the child side of --isolate
  args->out.add_flags(*p, OutputFlags{true, true,
                                      "one test case for the verdict, one per claim, one for the "
                                      "calibration"});
  commands.push_back({p, [args] { return run_time_command(*args); }});
}

}  // namespace bitproof::cli
