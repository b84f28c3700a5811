// The timing gate's device side: arms of a timing spec as TimedArms on the GPU.
//
// Per process: the first device's context, the helper kernels (kernels/timing.cu),
// an L2 flush buffer of twice the device's L2 and a word of mapped host memory
// the blocking kernel waits on. Per arm: its own module (kernel arms: its source
// compiled by NVRTC; operator arms: the operator image loaded once more, unless
// `shared_module`), its own buffers and weights, its own stream and CUDA Graph.
//
// One sample, on the arm's stream: the blocking kernel; the L2 flush (a memset of
// the flush buffer, a new value each time) when asked; start event; the graph;
// stop event; the clock probe. The host then releases the blocking kernel, so the
// timed span holds the graph alone, with no launch overhead, and the probe's
// clock is the SM clock right after it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "error.hpp"
#include "operator/tensors.hpp"
#include "report/report.hpp"
#include "timing/session.hpp"
#include "timing/time_spec.hpp"

namespace bitproof {

// An arm whose work is enqueued by its caller, not loaded from a spec (the Python face's
// callables, python/src/timing.cpp): `prepare` makes everything it needs (its own copies, its
// graph) once, untimed; `enqueue` puts one replay's work on `stream`, a CUstream of the first
// device's primary context, and returns without waiting. The sampling (blocking kernel, L2
// flush, events, clock probe) is the same as every arm's.
struct ExternalArm {
  std::string name;
  std::string what;  // names the arm in the line said when its work does not return in time
  std::uintptr_t stream = 0;
  std::function<Expected<Ok>()> prepare;
  std::function<Expected<Ok>()> enqueue;
  double wait_timeout_s = timing::kDefaultWaitTimeout;
};

class TimingBackend {
 public:
  virtual ~TimingBackend() = default;
  // Device, driver, clocks, L2 and what is flushed, for the report's environment.
  [[nodiscard]] virtual const Json& info() const = 0;
  // The device's maximum SM clock: the reference of the throttle check.
  [[nodiscard]] virtual double reference_clock_mhz() const = 0;
  // Arm `arm` (0: A, 1: B) of `spec`; `weights` for an A/B spec's operator arms.
  // `shared_module`: operator arms share one loaded image (the naive protocol's one process state).
  [[nodiscard]] virtual Expected<std::unique_ptr<timing::TimedArm>> arm(const timing::TimeSpec& spec,
                                                                        const op::Weights* weights, std::size_t arm,
                                                                        bool shared_module) = 0;
  [[nodiscard]] virtual Expected<std::unique_ptr<timing::TimedArm>> external_arm(ExternalArm arm) = 0;
};

// Exit 3 with one line when this build or machine has no CUDA device.
[[nodiscard]] Expected<std::unique_ptr<TimingBackend>> open_cuda_timing();

}  // namespace bitproof
