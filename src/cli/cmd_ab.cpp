// bitproof ab SPEC: two arms of an operator on changing inputs, bit for bit, and
// with --prove the trace proof that they agree on every input.
#include <fmt/format.h>

#include <cstdio>

#include "operator/host_float.hpp"
#include "backend/cuda_operator.hpp"
#include "backend/kernel_modules.hpp"
#include "operator/kernel_cpu.hpp"
#include "operator/kernel_prove.hpp"
#include "cli/cli.hpp"
#include "cli/cuda_twin.hpp"
#include "cli/progress.hpp"
#include "audit/admission.hpp"
#include "proof/ab_proof.hpp"
#include "report/ab_report.hpp"
#include "timing/time_spec.hpp"
#include "user/user_code.hpp"

namespace bitproof::cli {
namespace {

struct AbArgs {
  std::string spec;
  std::string backend = "cpu";
  std::string checkpoint;
  std::string audit;
  std::uint64_t cases = 0;  // 0: the spec's
  bool prove = false;
  std::size_t keep = 8;
  unsigned threads = 0;
  bool quiet = false;
  std::string cpu_arith = "host";
  double compile_timeout_s = user::kDefaultCompileTimeout;  // each NVRTC compile of a kernel file
  std::string graph = "on";                                 // --graph: each arm's stages as one CUDA Graph
  double wait_timeout_s = timing::kDefaultWaitTimeout;      // --user-timeout: each wait for a kernel arm's work
  Outputs out;
};

// What the command reads, never written over: the spec, the audit, the element
// proofs' specs and, for those with user code (swept here under --prove), their
// sources, tables and every file the compiler reads for the sources (the
// preprocessor's list).
Expected<std::vector<std::string>> read_files(const AbArgs& a, const op::AbSpec& spec) {
  std::vector<std::string> files{a.spec};
  if (!a.audit.empty()) files.push_back(a.audit);
  for (const op::ElementProofRef& ref : spec.element_proofs) {
    files.push_back(ref.path);
    if (!a.out.any()) continue;  // no output to check them against: no preprocessor run
    auto proof = load_spec(ref.path);
    if (!proof || !proof->user) continue;  // its own errors are said where it is swept
    auto deps = proof->user->read_paths(false);
    if (!deps) return deps.error();
    files.insert(files.end(), deps->begin(), deps->end());
  }
  return files;
}

// Under --no-user-code: an element proof whose spec has user code is refused
// now, before the weights are read (its sweep would refuse it too).
std::optional<Error> refuse_element_proof_code(const op::AbSpec& spec) {
  if (user::user_code_refusal().empty()) return std::nullopt;
  for (const op::ElementProofRef& ref : spec.element_proofs) {
    auto proof = load_spec(ref.path);
    if (proof && proof->user) {
      if (auto e = user::refuse_user_code(*proof->user)) return e;
    }
  }
  return std::nullopt;
}

Expected<op::AbSpec> load(const AbArgs& a) {
  auto spec = op::load_ab_spec(a.spec);
  if (!spec) return spec.error();
  if (auto e = refuse_element_proof_code(*spec)) return *e;
  if (a.cases != 0) spec->cases = a.cases;
  if (!a.checkpoint.empty()) spec->checkpoint_path = a.checkpoint;
  if (!a.audit.empty() && !a.prove)
    return Error{"--audit: the audit gives the trace proof's scale domain: add --prove"};
  // Before anything is compiled: a spec the PTX proof cannot take is refused as such, not for a
  // compiler this build lacks.
  if (a.prove && spec->kernels) {
    if (auto ok = op::check_kernel_provable(*spec); !ok) return ok.error();
  }
  return spec;
}

int run_ab_command(const AbArgs& a) {
  if (auto e = hand_off_for_cuda(a.backend)) return fail(*e);
  auto spec = load(a);
  if (!spec) return fail(spec.error());
  // CUDA files are compiled by NVRTC, which the static command cannot load: the CUDA twin
  // compiles them (no GPU needed) and runs --backend cpu too.
  if (spec->kernels && !spec->kernels->files.empty()) {
    if (auto e = hand_off_for_cuda("cuda")) return fail(*e);
  }
  auto modules = build_kernel_modules(*spec, a.compile_timeout_s);  // none without kernel arms
  if (!modules) return fail(modules.error());
  auto reads = read_files(a, *spec);
  if (!reads) return fail(reads.error());
  for (const std::string& path : kernel_module_paths(*spec, *modules)) reads->push_back(path);
  auto files = a.out.open(*reads);
  if (!files) return fail(files.error());
  auto weights = op::load_weights(*spec, spec->checkpoint_path);
  if (!weights) return fail(weights.error());
  const unsigned threads = resolve_threads(a.threads);
  std::vector<std::unique_ptr<op::ArmRunner>> owned;
  std::vector<AbBackendInfo> infos;
  if (a.backend != "cuda") {
    const bool soft = a.cpu_arith == "soft";
    const op::CpuArith arith = soft ? op::CpuArith::kSoft : op::CpuArith::kHostFloat;
    auto cpu = spec->kernels ? op::make_cpu_kernel_runner(*spec, *weights, *modules, threads, arith)
                             : op::make_cpu_runner(*spec, *weights, threads, arith);
    if (!cpu) return fail(cpu.error());
    owned.push_back(std::move(*cpu));
    infos.push_back(
        {"cpu", Json{{"threads", threads},
                     {"kernel_arms", spec->kernels ? "the PTX executor (src/ptx): every thread, warps in lockstep, "
                                                     "IEEE arithmetic through the soft model; add/sub/mul without a "
                                                     "rounding modifier computed unfused"
                                                   : "none"},
                     {"arithmetic", soft ? "soft: the bit-exact software model throughout"
                                         : fmt::format("host: binary32 add, multiply and FMA on this CPU's IEEE unit, "
                                                       "NaN canonical, checked against the soft model on {} operations; "
                                                       "FP16 conversions and recipes from the soft model",
                                                       host_float_agrees().operations)}}});
  }
  if (a.backend != "cpu") {
    if (auto e = spec->kernels ? user::refuse_user_code(a.spec + ": kernels", "the kernel arms' code (run on the GPU)")
                               : std::nullopt) {
      return fail(*e);  // --no-user-code: refused before a device is looked for
    }
    Json info = Json::object();
    auto gpu = make_cuda_ab_runner(*spec, *weights, info, CudaAbOptions{&*modules, a.graph == "on", a.wait_timeout_s});
    if (!gpu) {
      // Kernel arms under `all` exist to set the GPU's bits against the executor's: without a
      // GPU that check did not happen, so the run does not pass as if it had (exit 3).
      if (a.backend == "cuda" || spec->kernels || gpu.error().exit_code != kExitNoBackend) return fail(gpu.error());
      if (!a.quiet) std::printf("(no CUDA device: the CPU model alone)\n");
    } else {
      infos.push_back({(*gpu)->name(), info});
      owned.push_back(std::move(*gpu));
    }
  }
  std::vector<op::ArmRunner*> runners;
  for (auto& r : owned) runners.push_back(r.get());
  Progress progress(fmt::format("ab {}", spec->name), a.quiet);
  const ProgressFn bar = progress.callback();
  AbOptions options{a.audit, audit::read_audited_scales, a.prove, a.keep, a.threads,
                    bar ? op::AbProgress(bar) : op::AbProgress(), spec->kernels ? &*modules : nullptr};
  auto outcome = run_ab_spec(*spec, *weights, options, runners);
  progress.done();
  if (!outcome) return fail(outcome.error());
  Json report = ab_report(*spec, *weights, *outcome, infos, spec->kernels ? &*modules : nullptr);
  record_invocation(report["environment"]);
  const bool passes = ab_report_passes(report);
  if (!a.quiet || !passes) {
    std::printf("%s: %s vs %s\n", spec->name.c_str(), spec->arms[0].name.c_str(), spec->arms[1].name.c_str());
    for (const std::string& line : ab_summary_lines(report)) std::printf("%s\n", painted(line, passes).c_str());
  }
  if (a.out.any()) {
    if (auto e = a.out.write(*files, report)) return fail(*e);
  }
  return passes ? kExitHolds : kExitRefuted;
}

}  // namespace

void add_ab_command(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<AbArgs>();
  auto* p = app.add_subcommand("ab", "compare two arms of an operator bit for bit on changing inputs; --prove: on "
                                     "every input");
  p->add_option("spec", args->spec, "A/B spec (JSON)")->required();
  p->add_option("--backend", args->backend, "cpu (the soft model), cuda (CUDA Graphs) or all (both must agree)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  p->add_flag("--prove", args->prove, "also prove the arms' graphs identical (every input; element proofs swept here)");
  add_path_option(*p, "--audit", args->audit,
                  "with --prove: the checkpoint's scale intervals from an audit report (bitproof audit --report)");
  add_path_option(*p, "--checkpoint", args->checkpoint, "read checkpoint tensors from here (default: the spec's)");
  p->add_option("--cases", args->cases, "changing-input cases (default: the spec's)")->check(whole_number(1, 1000000));
  add_keep_option(*p, args->keep);
  add_threads_option(*p, args->threads);
  add_no_user_code_flag(*p);  // element proofs may name specs with user recipes; kernel arms' CUDA files
  add_kernel_limit_flags(*p, args->wait_timeout_s, args->compile_timeout_s);  // kernel arms: NVRTC, the GPU
  p->add_option("--graph", args->graph,
                "on: each arm's stages captured into its own CUDA Graph and replayed (default); off: launched one by "
                "one every case (the same bits expected)")
      ->check(CLI::IsMember({"on", "off"}));
  p->add_flag("--quiet,-q", args->quiet, "print only what does not pass (nothing when every check passes)");
  p->add_option("--cpu-arith", args->cpu_arith,
                "the CPU backend's binary32 add/mul/FMA: host (this CPU's IEEE unit, checked against the soft model "
                "first; default) or soft (the software model, slower)")
      ->check(CLI::IsMember({"host", "soft"}));
  // An A/B report has no case map: no --svg.
  args->out.add_flags(*p, OutputFlags{true, false,
                                      "one test case per output compared, one for the trace proof, one "
                                      "per backend's agreement"});
  commands.push_back({p, [args] { return run_ab_command(*args); }});
}

}  // namespace bitproof::cli
