// Backends: what runs a proof. Each one sweeps the whole domain of a spec and
// returns a BackendRun (report/report.hpp): its ProofResult, whose `result`
// JSON must be identical across backends, plus what it is (`info`).
//
//   cpu   the soft arithmetic on every core (std::thread), the domain split
//         into chunk-aligned ranges merged in case order (engine.hpp); large
//         domains of vector-capable recipes use the AVX-512 sweep (cpu_simd.hpp).
//   cuda  the same recipes compiled into CUDA kernels and run on the real
//         instructions (DeviceArith); see cuda_backend.cpp. Every case's
//         hardware bits are compared with the soft model: on the CPU, case by
//         case, for small domains; on the device for large ones.
//
// Cross-backend agreement (agreement()) is a check of its own: every backend's
// `result` must be identical and no hardware backend may disagree with the model.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "proof/engine.hpp"
#include "report/report.hpp"

namespace bitproof {

struct BackendOptions {
  EngineOptions engine;  // keep; threads (0: every core)
  bool vector = true;    // cpu: the vector sweep where it applies
  bool fast_math = true; // cuda: also run the --use_fast_math kernel image, per claim
  int repeat = 1;        // cuda: launches of the timed sweep kernel (benchmarks)
  // cuda, catalogue recipes on a large domain: link the sweep kernels for this
  // spec's recipes alone (NVRTC + nvJitLink, cached like a user image), so no
  // recipe switch is left in them. kAuto: from kSpecializeCases on, where the
  // link's seconds (once; cached after) are small beside the sweep.
  enum class Specialize : std::uint8_t { kAuto, kOn, kOff };
  Specialize specialize = Specialize::kAuto;
};
inline constexpr std::uint64_t kSpecializeCases = std::uint64_t{1} << 40;

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // What a shard report records of the machine that swept it (the GPU, its
  // driver and kernel build); empty where the report's environment says it.
  [[nodiscard]] virtual Json describe() const { return Json::object(); }
  // Runs every claim of the spec over its whole domain.
  [[nodiscard]] virtual Expected<BackendRun> prove(const Spec& spec, const BackendOptions& options) = 0;
  // Runs every claim over the chunk-aligned case range [begin, end) only: one
  // shard (`prove --shard`). Joined in case order, the parts of any split give
  // the whole proof's result (merge_parts; the sampled witness is added there).
  [[nodiscard]] virtual Expected<SweepPart> sweep_part(const Spec& spec, const BackendOptions& options,
                                                       std::uint64_t begin, std::uint64_t end) = 0;
};

[[nodiscard]] std::unique_ptr<Backend> make_cpu_backend();
// Error (exit 3) when this build has no CUDA backend, or no driver or device is there.
// `devices`: the CUDA device ordinals to sweep on (--devices); none means device 0.
[[nodiscard]] Expected<std::unique_ptr<Backend>> make_cuda_backend(const std::vector<int>& devices = {});
// How many CUDA devices this machine has (exit 3 without a driver or device).
[[nodiscard]] Expected<int> cuda_device_count();
// Whether this build has the CUDA backend compiled in.
[[nodiscard]] bool cuda_backend_built();

// The argument that makes a program the compile child of the CUDA backend
// (NVRTC and nvJitLink in a process of their own, so that a compile is bounded
// by wall clock: src/backend/cuda_user.cpp). Every program that may compile
// user code for the GPU calls run_backend_child first thing in main: when its
// arguments are {program, kCompileChildFlag}, it serves the request on stdin
// and returns the exit status; otherwise nullopt.
inline constexpr std::string_view kCompileChildFlag = "--bitproof-nvrtc-child";
[[nodiscard]] std::optional<int> run_backend_child(int argc, char** argv);

// Do the runs agree? Every run's `result` JSON equal to the first's, and no
// hardware run with model disagreements.
struct Agreement {
  bool results_identical = true;
  std::vector<std::string> differing;  // backends whose result differs from the first's
  std::uint64_t model_disagreements = 0;
  [[nodiscard]] bool holds() const { return results_identical && model_disagreements == 0; }
};
[[nodiscard]] Agreement agreement(const Spec& spec, const std::vector<BackendRun>& runs, std::size_t keep);

}  // namespace bitproof
