#include "operator/ab.hpp"

#include <fmt/format.h>

#include <memory>

#include "operator/host_float.hpp"
#include "hash/digest.hpp"

namespace bitproof::op {
namespace {

class CpuRunner final : public ArmRunner {
 public:
  CpuRunner(const AbSpec& spec, const Weights& weights, unsigned threads, CpuArith arith)
      : weights_(weights),
        threads_(threads),
        arith_(arith),
        arms_{prepare_arm(spec, 0, weights), prepare_arm(spec, 1, weights)} {}
  [[nodiscard]] std::string name() const override { return "cpu"; }
  Expected<std::array<ArmOutputs, 2>> run_case(std::uint64_t, const Activations& activations) override {
    return std::array<ArmOutputs, 2>{run_arm_cpu(arms_[0], weights_, activations, threads_, arith_),
                                     run_arm_cpu(arms_[1], weights_, activations, threads_, arith_)};
  }

 private:
  const Weights& weights_;
  unsigned threads_;
  CpuArith arith_;
  std::array<PreparedArm, 2> arms_;
};

// Per output and arm, the running SHA-256 of its bits over the cases.
struct Digests {
  std::vector<std::array<std::unique_ptr<Sha256>, 2>> hashes;
  explicit Digests(std::size_t outputs) : hashes(outputs) {
    for (auto& pair : hashes) {
      for (auto& h : pair) h = std::make_unique<Sha256>();
    }
  }
};

void compare_arms(const AbSpec& spec, const std::array<ArmOutputs, 2>& out, std::uint64_t c, std::size_t keep,
                  AbResult& r) {
  bool case_differs = false;
  for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
    OutputSummary& sum = r.outputs[o];
    const auto& a = out[0].at(sum.name);
    const auto& b = out[1].at(sum.name);
    std::uint64_t differing = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] == b[i]) continue;
      ++differing;
      if (r.first_differences.size() < keep) {
        r.first_differences.push_back(
            {sum.name, c, ab_case_seed(spec.seed, c), i / sum.cols, i % sum.cols, a[i], b[i]});
      }
    }
    sum.differing_elements += differing;
    sum.differing_cases += differing != 0 ? 1 : 0;
    r.differing_elements += differing;
    case_differs = case_differs || differing != 0;
  }
  r.differing_cases += case_differs ? 1 : 0;
}

void compare_backends(const AbSpec& spec, const std::string& backend, const std::array<ArmOutputs, 2>& reference,
                      const std::array<ArmOutputs, 2>& other, std::uint64_t c, std::size_t keep, AbResult& r) {
  for (std::size_t arm = 0; arm < 2; ++arm) {
    for (const auto& [name, ref] : reference[arm]) {
      const auto it = other[arm].find(name);
      for (std::size_t i = 0; i < ref.size(); ++i) {
        const std::uint16_t got = it == other[arm].end() || i >= it->second.size() ? static_cast<std::uint16_t>(~ref[i])
                                                                                    : it->second[i];
        if (got == ref[i]) continue;
        ++r.backend_disagreement_count;
        if (r.backend_disagreements.size() < keep)
          r.backend_disagreements.push_back({backend, spec.arms[arm].name, name, c, i, ref[i], got});
      }
    }
  }
}

}  // namespace

Expected<std::unique_ptr<ArmRunner>> make_cpu_runner(const AbSpec& spec, const Weights& weights, unsigned threads,
                                                     CpuArith arith) {
  if (spec.kernels)  // kernel stages run through the PTX executor: make_cpu_kernel_runner (kernel_cpu.hpp)
    return Error{fmt::format("{}: kernel arms run through the PTX executor, not the operator models", spec.path)};
  if (arith == CpuArith::kHostFloat && !host_float_agrees().agrees)
    return Error{fmt::format("--cpu-arith host: this CPU's binary32 unit differs from the soft model ({}): use "
                             "--cpu-arith soft",
                             host_float_agrees().detail)};
  return std::unique_ptr<ArmRunner>(std::make_unique<CpuRunner>(spec, weights, threads, arith));
}

Expected<AbResult> run_ab(const AbSpec& spec, const std::vector<ArmRunner*>& runners, std::size_t keep,
                          const AbProgress& progress) {
  AbResult r;
  r.cases = spec.cases;
  const auto shapes = spec.tensors_of(0);
  for (const std::string& name : spec.outputs) {
    OutputSummary s;
    s.name = name;
    for (const auto& [n, shape] : shapes) {
      if (n == name) {
        s.rows = shape.rows;
        s.cols = shape.cols;
      }
    }
    r.outputs.push_back(s);
  }
  Digests digests(spec.outputs.size());
  for (std::uint64_t c = 0; c < spec.cases; ++c) {
    const Activations acts = make_activations(spec, c);
    std::vector<std::array<ArmOutputs, 2>> per_backend;
    for (ArmRunner* runner : runners) {
      auto out = runner->run_case(c, acts);
      if (!out) return out.error();
      per_backend.push_back(std::move(*out));
    }
    const auto& ref = per_backend.front();
    compare_arms(spec, ref, c, keep, r);
    for (std::size_t b = 1; b < per_backend.size(); ++b)
      compare_backends(spec, runners[b]->name(), ref, per_backend[b], c, keep, r);
    for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
      for (std::size_t arm = 0; arm < 2; ++arm) {
        const auto& words = ref[arm].at(spec.outputs[o]);
        digests.hashes[o][arm]->update(words.data(), words.size() * sizeof(std::uint16_t));  // LE host
      }
    }
    if (progress) progress(c + 1, spec.cases);
  }
  for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
    for (std::size_t arm = 0; arm < 2; ++arm) r.outputs[o].digest[arm] = to_hex(digests.hashes[o][arm]->finish());
  }
  return r;
}

}  // namespace bitproof::op
