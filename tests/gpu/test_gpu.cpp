// GPU tests (ctest label `gpu`): every check runs a spec on the CUDA backend
// and on the CPU backend and demands the same `result`, plus zero hardware-vs-
// soft-model disagreements (the three-way check). Where there is no CUDA
// backend, driver or device the binary prints "skipped: no CUDA device" and
// exits 77, which ctest counts as skipped.
//
// Test cases whose name starts with "2^32" sweep all FP16 pairs; run the rest
// alone with --test-case-exclude='2^32*' (e.g. under compute-sanitizer).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "backend/backend.hpp"
#include "proof/spec.hpp"
#include "user/user_recipes.hpp"
#include "recipes/registry.hpp"
#include "report/report.hpp"

using namespace bitproof;

namespace {

Backend* gpu = nullptr;

Spec parse(const std::string& text) {
  auto spec = parse_spec(text, "gpu-test");
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

// The repository root: BITPROOF_SOURCE_DIR from the environment (a GPU machine
// that runs a carried binary in a copy of the tree), else the build's.
std::string source_dir() {
  const char* from_env = std::getenv("BITPROOF_SOURCE_DIR");
  return from_env != nullptr && *from_env != '\0' ? from_env : BITPROOF_SOURCE_DIR;
}

Spec load(const std::string& relative) {
  auto spec = load_spec(source_dir() + "/" + relative);
  REQUIRE_MESSAGE(spec.ok(), (spec.ok() ? "" : spec.error().message));
  return *spec;
}

std::string inputs_json(const RecipeCard& card) {
  std::string inputs;
  for (int i = 0; i < card.arity; ++i) {
    inputs += fmt::format(R"({}{{"name": "in{}", "format": "{}", "codes": "all"}})", i ? "," : "", i,
                          spec_of(card.inputs[i]).name);
  }
  return inputs;
}

struct Both {
  BackendRun cuda;
  BackendRun cpu;
};

BackendOptions both_options() {
  BackendOptions options;
  options.engine = {8, 0};
  return options;
}

// Runs the spec on both backends; demands identical results and no model disagreement.
Both run_both(const Spec& spec, const BackendOptions& options = both_options()) {
  auto cuda = gpu->prove(spec, options);
  REQUIRE_MESSAGE(cuda.ok(), (cuda.ok() ? "" : cuda.error().message));
  auto cpu = make_cpu_backend()->prove(spec, options);
  REQUIRE_MESSAGE(cpu.ok(), (cpu.ok() ? "" : cpu.error().message));
  for (const ModelDisagreement& m : cuda->result.model_disagreements) {
    for (const std::string& line : model_lines(spec, cuda->label, m)) MESSAGE(line);
  }
  CHECK_MESSAGE(cuda->result.model_disagreement_count == 0,
                fmt::format("{}: {} hardware-vs-model disagreements", spec.name, cuda->result.model_disagreement_count));
  CHECK(cuda->result.model_compared == spec.case_count() * spec.recipes().size());
  const std::string a = proof_result_json(spec, cuda->result, 8).dump();
  const std::string b = proof_result_json(spec, cpu->result, 8).dump();
  CHECK_MESSAGE(a == b, spec.name);
  CHECK(cuda->result.case_digest == cpu->result.case_digest);
  MESSAGE(fmt::format("{}: cuda {} | cpu {}", spec.name, cuda->info.dump(), cpu->info.dump()));
  return {std::move(*cuda), std::move(*cpu)};
}

}  // namespace

TEST_CASE("DeepSeek V4 fold: 208/208 on cuda, three-way agreement, the same result and digest as cpu") {
  const Both r = run_both(load("proofs/dsv4-mxfp4-fp16-fold.json"));
  CHECK(r.cuda.result.cases == 208);
  CHECK(r.cuda.result.claims[0].holding == 208);
  CHECK(r.cuda.result.claims[1].holding == 208);
  CHECK(r.cuda.result.holds());
  CHECK(r.cuda.info["kernel_image"]["sha256"].get<std::string>().size() == 64);
  CHECK(r.cuda.info["device"].contains("driver_version"));
  REQUIRE(r.cuda.info.contains("fast_math"));
  CHECK(r.cuda.info["fast_math"]["claims"][0]["holds"].get<bool>());
}

TEST_CASE("every negative control with a domain up to 2^24 cases is refuted on the GPU as on the CPU") {
  int controls = 0;
  for (const RecipeEntry& r : all_recipes()) {
    if (r.card->role != Role::kControl) continue;
    std::uint64_t cases = 1;
    for (int i = 0; i < r.card->arity; ++i) cases *= spec_of(r.card->inputs[i]).code_count();
    if (cases > kFullDigestLimit) continue;  // the FP16 pair controls: the 2^32 case below
    const Spec spec = parse(fmt::format(
        R"({{"bitproof_spec": 1, "name": "control", "inputs": [{}], "output": "{}",
            "claims": [{{"claim": "equal", "recipes": ["{}", "{}"]}}]}})",
        inputs_json(*r.card), spec_of(r.card->output).name, r.card->name, r.card->control_of));
    const Both b = run_both(spec);
    CHECK_MESSAGE(!b.cuda.result.claims[0].holds(), r.card->name);
    CHECK_FALSE(b.cuda.result.claims[0].counterexamples.empty());
    ++controls;
  }
  CHECK(controls >= 10);
}

TEST_CASE("NaN bits: half2float of all 65536 FP16 codes, hardware against the model") {
  const Both r = run_both(parse(R"({"bitproof_spec": 1, "name": "half2float-all", "inputs": [
      {"name": "h", "format": "fp16", "codes": "all"}], "output": "fp32",
      "claims": [{"claim": "exact", "recipes": ["fp16.half2float"]}]})"));
  CHECK(r.cuda.result.claims[0].holds());
}

TEST_CASE("NaN bits: float2half (nearest even, toward zero) of every FP32 Inf and NaN, both signs") {
  for (const char* range : {"[2139095040, 2147483647]", "[4286578688, 4294967295]"}) {
    const Both r = run_both(parse(fmt::format(R"({{"bitproof_spec": 1, "name": "float2half-nan", "inputs": [
        {{"name": "f", "format": "fp32", "codes": {{"range": {}}}}}], "output": "fp16",
        "claims": [{{"claim": "correctly_rounded", "recipes": ["fp16.float2half_rn"]}},
                   {{"claim": "correctly_rounded", "recipes": ["fp16.float2half_rz"], "rounding": "toward_zero"}}]}})",
                                             range)));
    CHECK(r.cuda.result.holds());
  }
}

TEST_CASE("vendor witness: cuda_fp4.h / cuda_fp8.h conversions exact on every code, host and device paths agree") {
  if (recipe_by_name("cuda_vendor.e2m1_fp16") == nullptr) {
    MESSAGE("skipped: built without the CUDA headers");
    return;
  }
  for (const char* name : {"cuda_vendor.e2m1_fp16", "cuda_vendor.e4m3_fp16", "cuda_vendor.e5m2_fp16",
                           "cuda_vendor.e8m0_bf16"}) {
    const RecipeCard& card = *recipe_by_name(name)->card;
    const Both r = run_both(parse(fmt::format(
        R"({{"bitproof_spec": 1, "name": "vendor", "inputs": [{}], "output": "{}",
            "claims": [{{"claim": "exact", "recipes": ["{}"]}}]}})",
        inputs_json(card), spec_of(card.output).name, name)));
    CHECK_MESSAGE(r.cuda.result.claims[0].holds(), name);
  }
}

TEST_CASE("--use_fast_math: the DeepSeek fold survives; the FP32 MXFP4 scale multiply (FP32 subnormals) does not") {
  if (recipe_by_name("cuda_vendor.mxfp4_fp32") == nullptr) return;
  const Both r = run_both(parse(R"({"bitproof_spec": 1, "name": "mxfp4-fp32", "inputs": [
      {"name": "element", "format": "e2m1", "codes": "all"}, {"name": "scale", "format": "ue8m0", "codes": "all"}],
      "output": "fp32", "claims": [{"claim": "correctly_rounded", "recipes": ["cuda_vendor.mxfp4_fp32"]}]})"));
  CHECK(r.cuda.result.claims[0].holds());
  REQUIRE(r.cuda.info.contains("fast_math"));
  CHECK_FALSE(r.cuda.info["fast_math"]["claims"][0]["holds"].get<bool>());
  CHECK(r.cuda.info["fast_math"]["evaluations_changed"].get<std::uint64_t>() > 0);
}

TEST_CASE("2^32: hmul ≡ fp32_round over every FP16 pair; hardware ≡ model on every case; same result as cpu") {
  const Both r = run_both(load("proofs/fp16-hmul-vs-fp32-round.json"));
  CHECK(r.cuda.result.cases == 4294967296ull);
  CHECK(r.cuda.result.claims[0].holds());
  CHECK(r.cuda.result.digest_mode == DigestMode::kChunkSums);
  CHECK(r.cuda.info["fast_math"]["claims"][0]["holds"].get<bool>());
}

TEST_CASE("2^32 controls: round toward zero and flush-to-zero refuted on the GPU as on the CPU; hmul_ftz, hmul_rz, "
          "NaN inputs: hardware ≡ model on every FP16 pair") {
  const Both r = run_both(parse(R"({"bitproof_spec": 1, "name": "fp16-controls", "inputs": [
      {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": "all"}],
      "output": "fp16", "claims": [
        {"claim": "equal", "recipes": ["fp16.fp32_round", "fp16.control.fp32_round_rz"]},
        {"claim": "equal", "recipes": ["fp16.hmul", "fp16.control.hmul_ftz"]},
        {"claim": "equal", "recipes": ["fp16.hmul", "fp16.control.hmul_rz"]},
        {"claim": "equal", "recipes": ["fp16.control.hmul_rz", "fp16.control.fp32_round_rz"]}]})"));
  CHECK_FALSE(r.cuda.result.claims[0].holds());
  CHECK_FALSE(r.cuda.result.claims[1].holds());
  CHECK_FALSE(r.cuda.result.claims[2].holds());
  CHECK(r.cuda.result.claims[3].holds());
  for (const ClaimResult& c : r.cuda.result.claims) {
    MESSAGE(fmt::format("{} of {} hold", c.holding, c.cases));
  }
}

// DeviceArith::dfma takes a NaN operand in code (b, c, a): which NaN fma.rn.f64 returns
// is the compiler's operand order and differed between kernels built from one line
// (docs/fma.md, 2026-12-03). Every BF16 a against NaN and ordinary b and c (2^25), through
// the generic kernel, the two-recipe specialized one and the five-recipe one: the GPU's
// result and case digest must be the CPU's, with no model disagreement. Negative control
// (2026-12-03, H200): a build without dfma's NaN lines fails here in all three kernels, on
// the CPU comparison; the on-device model check alone did not see it (docs/fma.md).
TEST_CASE("FP64 route, NaN operands: GPU ≡ CPU in the generic, specialized and five-recipe kernels") {
  const char* codes_b = R"([0, 1, 127, 128, 15360, 16256, 16257, 17024, 32639, 32640, 32641, 32642, 32703, 32704, 32705,
      32766, 32767, 32768, 32769, 32895, 48896, 48897, 49792, 65407, 65408, 65409, 65410, 65471,
      65472, 65473, 65534, 65535])";
  const char* codes_c = R"([0, 1, 16256, 16512, 32639, 32640, 32641, 32703, 32704, 32767, 32768, 48896, 65408, 65409,
      65472, 65535])";
  const std::string two = R"({"claim": "equal", "recipes": ["bf16fma.fp64_fma", "bf16fma.bfma"]})";
  const std::string five = two + R"(, {"claim": "equal", "recipes": ["bf16fma.fp32_fma", "bf16fma.bfma"]},
      {"claim": "equal", "recipes": ["bf16fma.rto", "bf16fma.bfma"]},
      {"claim": "equal", "recipes": ["bf16fma.control.signless_addend", "bf16fma.fp64_fma"]})";
  using S = BackendOptions::Specialize;
  for (const auto& [claims, specialize] : {std::pair{two, S::kOff}, std::pair{two, S::kOn}, std::pair{five, S::kOn}}) {
    const Spec spec = parse(fmt::format(R"({{"bitproof_spec": 1, "name": "bf16-fp64-nan", "inputs": [
        {{"name": "a", "format": "bf16", "codes": "all"}}, {{"name": "b", "format": "bf16", "codes": {{"list": {}}}}},
        {{"name": "c", "format": "bf16", "codes": {{"list": {}}}}}], "output": "bf16", "claims": [{}]}})",
                                        codes_b, codes_c, claims));
    REQUIRE(spec.case_count() == (std::uint64_t{1} << 25));
    BackendOptions options = both_options();
    options.fast_math = false;
    options.specialize = specialize;
    const Both r = run_both(spec, options);
    const std::string kernels = r.cuda.info["kernels"].dump();
    CHECK(kernels.find(specialize == S::kOn ? "specialized" : "generic") != std::string::npos);
    MESSAGE(fmt::format("{} recipes, {}: claims[0] {} of {} hold", spec.recipes().size(), kernels,
                        r.cuda.result.claims[0].holding, r.cuda.result.claims[0].cases));
  }
}

// The exact FMA oracle's run form (oracle/fma_exact.hpp fma_run: the GPU stages a
// batch of consecutive a through one shared alignment) against the CPU, which
// evaluates it case by case (fma()): every a with edge b and c, FP16 and BF16,
// in the generic and the specialized kernels, and an a range that starts off a
// batch boundary (its batches cross exponent fields and take the case-by-case
// path on the device too; its rows of 65,528 codes are not a whole number of
// chunks, so the walker's case-at-a-time path runs as well). Each must give the CPU's result and case digest.
TEST_CASE("exact FMA oracle: the GPU's batch form ≡ the CPU's case-by-case form, FP16 and BF16") {
  struct Form {
    const char* format;
    const char* hardware;
    const char* exact;
    const char* b;
    const char* c;
  };
  const Form forms[] = {
      {"fp16", "fp16fma.hfma", "exact.fma_fp16",
       "[0, 1, 2, 511, 1023, 1024, 1025, 2047, 4096, 8191, 13653, 15360, 15361, 16968, 20479, 23040, 27648, 30720, 31743, 31744, "
       "32257, 32768, 32769, 33791, 33792, 40960, 48128, 48129, 56320, 63487, 64511, 64512]",
       "[0, 1, 512, 4096, 11878, 15360, 24576, 31743, 31744, 32767, 32768, 32769, 48128, 57344, 64511, 64512]"},
      {"bf16", "bf16fma.bfma", "exact.fma_bf16",
       "[0, 1, 2, 63, 127, 128, 129, 255, 4096, 8191, 13653, 16256, 16257, 16457, 20479, 24576, 28672, 30720, 32639, 32640, "
       "32705, 32768, 32769, 32895, 32896, 40960, 49024, 49025, 57344, 63487, 65407, 65408]",
       "[0, 1, 64, 2048, 11878, 16256, 24576, 32639, 32640, 32767, 32768, 32769, 49024, 57344, 65407, 65408]"}};
  using S = BackendOptions::Specialize;
  for (const Form& f : forms) {
    // About 2^25 cases each: above the copy-back domains (2^24), so the claim sweep kernels run.
    for (const char* a : {R"("all")", R"({"range": [8, 65535]})"}) {
      const Spec spec = parse(fmt::format(R"({{"bitproof_spec": 1, "name": "{0}-exact-run", "inputs": [
          {{"name": "a", "format": "{0}", "codes": {1}}}, {{"name": "b", "format": "{0}", "codes": {{"list": {2}}}}},
          {{"name": "c", "format": "{0}", "codes": {{"list": {3}}}}}], "output": "{0}",
          "claims": [{{"claim": "equal", "recipes": ["{4}", "{5}"]}}]}})",
                                          f.format, a, f.b, f.c, f.hardware, f.exact));
      for (S specialize : {S::kOff, S::kOn}) {
        if (specialize == S::kOn && (std::string(f.format) != "fp16" || std::string(a) != R"("all")")) continue;
        BackendOptions options = both_options();
        options.fast_math = false;
        options.specialize = specialize;
        const Both r = run_both(spec, options);
        CHECK(r.cuda.info["mode"].dump().find("copy-back") == std::string::npos);  // the claim sweep ran
        CHECK(r.cuda.result.claims[0].holding == r.cuda.result.claims[0].cases);  // the hardware FMA is correctly rounded
        MESSAGE(fmt::format("{} a={} {}: {} of {} hold", f.format, a, r.cuda.info["kernels"].dump(),
                            r.cuda.result.claims[0].holding, r.cuda.result.claims[0].cases));
      }
    }
  }
}

// --devices: a large domain split among devices, joined in case order, gives one
// device's result. Two backends on device 0 stand in for two GPUs (the split, the
// threads and the join are the same code); with controls refuted, so the kept
// counterexamples and kinds come from both halves.
TEST_CASE("several devices (two backends on device 0): the same result as one, for chunk sums and block sums") {
  auto two = make_cuda_backend({0, 0});
  REQUIRE_MESSAGE(two.ok(), (two.ok() ? "" : two.error().message));
  BackendOptions options;
  options.engine = {8, 0};
  options.fast_math = false;
  const std::vector<Spec> specs = {
      parse(R"({"bitproof_spec": 1, "name": "fp16-controls", "inputs": [
      {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": "all"}],
      "output": "fp16", "claims": [{"claim": "equal", "recipes": ["fp16.hmul", "fp16.control.hmul_rz"]},
        {"claim": "equal", "recipes": ["fp16.hmul", "fp16.fp32_round"]}]})"),
      parse(R"({"bitproof_spec": 1, "name": "fma-slice", "inputs": [
      {"name": "a", "format": "fp16", "codes": "all"}, {"name": "b", "format": "fp16", "codes": "all"},
      {"name": "c", "format": "fp16", "codes": {"range": [31743, 31745]}}], "output": "fp16", "claims": [
        {"claim": "equal", "recipes": ["fp16fma.fp64_fma", "fp16fma.hfma"]},
        {"claim": "equal", "recipes": ["fp16fma.fp32_fma", "fp16fma.hfma"]}]})")};
  for (const Spec& spec : specs) {
    auto one = gpu->prove(spec, options);
    REQUIRE_MESSAGE(one.ok(), (one.ok() ? "" : one.error().message));
    auto split = (*two)->prove(spec, options);
    REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.error().message));
    CHECK_FALSE(one->result.claims[0].holds());
    CHECK(proof_result_json(spec, one->result, 8).dump() == proof_result_json(spec, split->result, 8).dump());
    CHECK(one->result.case_digest == split->result.case_digest);
    CHECK(one->result.model_compared == split->result.model_compared);
    MESSAGE(fmt::format("{}: {} cases, digest {} ({}); split: {}", spec.name, spec.case_count(),
                        one->result.case_digest.substr(0, 16), digest_mode_name(one->result.digest_mode),
                        split->info.dump()));
  }
}

// bitproof_gpu_tests --prove SPEC [REPEAT [generic|specialized]]: one spec on the CUDA and the CPU
// backend, printed the way `bitproof prove` prints it, with the agreement, the
// --use_fast_math verdicts and the kernel timings (the claim sweep launched
// REPEAT times); exit 0 holds and agrees, 1 otherwise. For device logs and
// bench/gpu_sweep.sh, where only this one binary may travel.
int prove_mode(const std::string& path, int repeat, const std::string& kernels) {
  auto spec = load_spec(path);
  if (!spec) {
    std::printf("%s\n", spec.error().message.c_str());
    return 2;
  }
  BackendOptions options;
  options.engine.threads = 0;
  options.repeat = repeat;
  if (kernels == "specialized") options.specialize = BackendOptions::Specialize::kOn;
  if (kernels == "generic") options.specialize = BackendOptions::Specialize::kOff;
  auto cuda = gpu->prove(*spec, options);
  if (!cuda) {
    std::printf("%s\n", cuda.error().message.c_str());
    return cuda.error().exit_code;
  }
  options.repeat = 1;
  if (spec->user && !spec->user->cpu_witness_missing(spec->inputs).empty()) {  // user recipes only the GPU runs
    const ProofResult& r = cuda->result;
    for (std::size_t c = 0; c < spec->claims.size(); ++c) {
      std::printf("%s %s (%s only; no CPU witness)\n", domain_label(*spec).c_str(),
                  claim_summary(spec->claims[c], r.claims[c]).c_str(), cuda->label.c_str());
    }
    std::printf("cuda: %s\n", cuda->info.dump().c_str());
    return r.passes(*spec) ? 0 : 1;
  }
  auto cpu = make_cpu_backend()->prove(*spec, options);
  if (!cpu) {
    std::printf("%s\n", cpu.error().message.c_str());
    return cpu.error().exit_code;
  }
  const std::vector<BackendRun> runs{std::move(*cpu), std::move(*cuda)};
  const Agreement agree = agreement(*spec, runs, 8);
  const ProofResult& r = runs[0].result;
  for (std::size_t c = 0; c < spec->claims.size(); ++c) {
    std::printf("%s %s (%s)\n", domain_label(*spec).c_str(), claim_summary(spec->claims[c], r.claims[c]).c_str(),
                agree.results_identical ? "cpu, cuda" : "cpu only");
    for (std::size_t k = 0; k < r.claims[c].counterexamples.size() && k < 2; ++k) {
      for (const std::string& line : counterexample_lines(*spec, r.claims[c].counterexamples[k])) {
        std::printf("%s\n", line.c_str());
      }
    }
  }
  const BackendRun& g = runs[1];
  std::printf("results identical: %s; case digest cpu %s, cuda %s\n", agree.results_identical ? "yes" : "NO",
              runs[0].result.case_digest.c_str(), g.result.case_digest.c_str());
  std::printf("three-way: %s hardware vs soft model: %llu disagreements in %llu evaluations; soft vs oracle witness: "
              "%llu disagreements in %llu cases (%s)\n",
              g.label.c_str(), static_cast<unsigned long long>(g.result.model_disagreement_count),
              static_cast<unsigned long long>(g.result.model_compared),
              static_cast<unsigned long long>(r.witness_disagreement_count),
              static_cast<unsigned long long>(r.witnessed_cases), std::string(witness_mode_name(r.witness_mode)).c_str());
  for (const ModelDisagreement& m : g.result.model_disagreements) {
    for (const std::string& line : model_lines(*spec, g.label, m)) std::printf("%s\n", line.c_str());
  }
  if (g.info.contains("fast_math")) {
    const Json& claims = g.info["fast_math"]["claims"];
    for (std::size_t c = 0; c < claims.size(); ++c) {
      std::printf("--use_fast_math: claims[%zu] %s\n", c, claims[c]["holds"].get<bool>() ? "survives" : "DOES NOT SURVIVE");
    }
  }
  std::printf("cuda: %s\ncpu: %s\n", g.info.dump().c_str(), runs[0].info.dump().c_str());
  return r.holds() && agree.holds() ? 0 : 1;
}

// --prove mode (doctest's own handler is not installed there): a crash prints
// the raw return addresses, for addr2line on the unstripped binary.
void print_backtrace(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  const char head[] = "bitproof_gpu_tests: fatal signal; backtrace:\n";
  (void)!write(2, head, sizeof head - 1);
  backtrace_symbols_fd(frames, n, 2);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

int main(int argc, char** argv) {
  // The CUDA backend's compile child (NVRTC under a time limit) is this program again.
  if (const auto child = run_backend_child(argc, argv)) return *child;
  std::signal(SIGSEGV, print_backtrace);
  // The NVRTC-linked sweeps compile bitproof's device headers: this program is not the
  // command of its build directory (which alone finds the source tree's), so name them
  // unless the caller did.
  const std::string headers = source_dir() + "/src/user/include:" + source_dir() + "/src";
  setenv("BITPROOF_INCLUDE_DIRS", headers.c_str(), 0);
  if (!cuda_backend_built()) {
    std::printf("skipped: no CUDA device (this build has no CUDA backend)\n");
    return 77;
  }
  auto backend = make_cuda_backend();
  if (!backend) {
    std::printf("skipped: no CUDA device (%s)\n", backend.error().message.c_str());
    return 77;
  }
  gpu = backend->get();
  if (argc >= 3 && std::string(argv[1]) == "--prove") {
    const int rc = prove_mode(argv[2], argc >= 4 ? std::atoi(argv[3]) : 1, argc >= 5 ? argv[4] : "auto");
    gpu = nullptr;
    return rc;
  }
  doctest::Context context(argc, argv);
  const int rc = context.run();
  gpu = nullptr;
  return rc;
}
