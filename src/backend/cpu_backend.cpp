// The CPU backend: the engine's sweep on every core, vectorised where it can be.
#include <fmt/format.h>

#include <chrono>

#include "backend/backend.hpp"
#include "proof/cpu_simd.hpp"

namespace bitproof {
namespace {

class CpuBackend : public Backend {
 public:
  [[nodiscard]] std::string name() const override { return "cpu"; }

  [[nodiscard]] Expected<BackendRun> prove(const Spec& spec, const BackendOptions& options) override {
    if (auto ok = check_sweepable(spec); !ok) return ok.error();
    EngineOptions engine = options.engine;
    engine.threads = resolve_threads(engine.threads);
    const CaseEvaluator eval(spec);
    const Sweeper sweeper = choose(spec, options, eval, engine);
    const auto start = std::chrono::steady_clock::now();
    ProofResult result = run_sweep(spec, engine, sweeper.sweep);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    BackendRun run{"cpu", fmt::format("soft arithmetic ({}, {} threads) + oracle witness ({})", sweeper.note,
                                      engine.threads, witness_mode_name(result.witness_mode)),
                   std::move(result)};
    run.label = "cpu";
    run.info = Json{{"threads", engine.threads},
                    {"sweep", sweeper.note},
                    {"seconds", seconds},
                    {"cases_per_second", seconds > 0 ? static_cast<double>(spec.case_count()) / seconds : 0.0}};
    return run;
  }

  [[nodiscard]] Expected<SweepPart> sweep_part(const Spec& spec, const BackendOptions& options, std::uint64_t begin,
                                               std::uint64_t end) override {
    if (auto ok = check_sweepable(spec); !ok) return ok.error();
    EngineOptions engine = options.engine;
    engine.threads = resolve_threads(engine.threads);
    const CaseEvaluator eval(spec);
    return sweep_parts(spec, engine, choose(spec, options, eval, engine).sweep, begin, end);
  }

 private:
  struct Sweeper {
    RangeSweeper sweep;
    std::string note;  // which sweep, and why not the vector one
  };

  // The vector sweep for large domains of vector-capable recipes, else the
  // scalar one (same results, tested bit for bit).
  static Sweeper choose(const Spec& spec, const BackendOptions& options, const CaseEvaluator& eval,
                        const EngineOptions& engine) {
    const simd::SimdImpl* impl = nullptr;
    std::string note = "scalar";
    if (digest_mode_for(spec.case_count()) != DigestMode::kFull) {
      impl = options.vector ? simd::best_impl() : nullptr;
      if (impl == nullptr) {
        note = options.vector ? "scalar (" + simd::no_vector_reason() + ")" : "scalar (vector off)";
      } else if (auto why = simd::unsupported_reason(*impl, spec)) {
        note = "scalar (" + *why + ")";
        impl = nullptr;
      } else {
        note = impl->name;
      }
    }
    RangeSweeper sweep = [&spec, &eval, &engine, impl](std::uint64_t begin, std::uint64_t end) {
      if (impl != nullptr) return simd::sweep_range_simd(*impl, eval, spec, engine, begin, end);
      return sweep_range(eval, spec, engine, begin, end);
    };
    return {std::move(sweep), std::move(note)};
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

Agreement agreement(const Spec& spec, const std::vector<BackendRun>& runs, std::size_t keep) {
  Agreement a;
  if (runs.empty()) return a;
  for (const BackendRun& run : runs) a.model_disagreements += run.result.model_disagreement_count;
  if (runs.size() == 1) return a;
  const std::string first = proof_result_json(spec, runs.front().result, keep).dump();
  for (const BackendRun& run : runs) {
    if (&run != &runs.front() && proof_result_json(spec, run.result, keep).dump() != first) {
      a.results_identical = false;
      a.differing.push_back(run.name);
    }
  }
  return a;
}

}  // namespace bitproof
