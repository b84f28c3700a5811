// The A/B run: for each case, new activations, both arms run on every backend,
// every output compared bit for bit (+0 and -0 differ; NaN payloads compared).
// The first backend's bits are the result; every other backend's bits must equal
// them, arm by arm (a difference is a backend disagreement, a failure of its own).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"
#include "operator/run.hpp"

namespace bitproof::op {

// One output element where the arms differ.
struct Difference {
  std::string output;
  std::uint64_t case_index = 0;
  std::uint64_t case_seed = 0;
  std::uint64_t row = 0;
  std::uint64_t col = 0;
  std::uint16_t a = 0;  // arm A's bits
  std::uint16_t b = 0;  // arm B's bits
};

// One output element where a backend's bits differ from the first backend's.
struct BackendDisagreement {
  std::string backend;  // the other backend
  std::string arm;
  std::string output;
  std::uint64_t case_index = 0;
  std::uint64_t index = 0;  // row-major element index in the output
  std::uint16_t reference = 0;  // the first backend's bits
  std::uint16_t other = 0;
};

struct OutputSummary {
  std::string name;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::array<std::string, 2> digest;  // SHA-256 of each arm's bits, case after case (u16 LE)
  std::uint64_t differing_elements = 0;
  std::uint64_t differing_cases = 0;
};

struct AbResult {
  std::uint64_t cases = 0;
  std::uint64_t differing_cases = 0;  // cases with at least one differing output element
  std::uint64_t differing_elements = 0;
  std::vector<OutputSummary> outputs;
  std::vector<Difference> first_differences;  // the first `keep`, in case order
  std::uint64_t backend_disagreement_count = 0;
  std::vector<BackendDisagreement> backend_disagreements;  // the first `keep`
  [[nodiscard]] bool arms_equal() const { return differing_elements == 0; }
};

// A backend that runs both arms of one case. Created per run (it owns device
// buffers, graphs ...); `name` labels it in messages and reports.
class ArmRunner {
 public:
  virtual ~ArmRunner() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual Expected<std::array<ArmOutputs, 2>> run_case(std::uint64_t case_index,
                                                                     const Activations& activations) = 0;
};

// The CPU backend. kHostFloat is refused (exit 2, the check's first difference
// named) where host_float_agrees() fails on this machine.
[[nodiscard]] Expected<std::unique_ptr<ArmRunner>> make_cpu_runner(const AbSpec& spec, const Weights& weights,
                                                                   unsigned threads, CpuArith arith);

using AbProgress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Runs every case of the spec on every runner (the first is the reference).
[[nodiscard]] Expected<AbResult> run_ab(const AbSpec& spec, const std::vector<ArmRunner*>& runners, std::size_t keep,
                                        const AbProgress& progress = {});

}  // namespace bitproof::op
