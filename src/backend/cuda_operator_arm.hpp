// One arm of an A/B spec on the device (CUDA builds only): its own buffers (its
// own copies of the weights, joined as the fused kernel's loader joins them), its
// own stream, and its stages captured once into its own CUDA Graph. Shared by
// `bitproof ab` (src/backend/cuda_operator.cpp: poison, replay, read back) and
// `bitproof time` (src/backend/cuda_timing.cpp: warm, replay, time).
//
// Two kinds: an arm of bitproof's built-in operators (DeviceOperatorArm: the
// embedded operator image) and an arm of the user's kernels (DeviceKernelArm:
// the spec's PTX modules, loaded by the driver's JIT into the arm's own
// CUmodules). An arm mixing both kinds is refused (exit 2): make_device_arm.
#pragma once

#if defined(BITPROOF_HAVE_CUDA)

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda_driver.hpp"
#include "operator/run.hpp"

namespace bitproof::cuda {

// The operator kernels of one loaded image (kernels/operators.cu).
struct OperatorKernels {
  CUmodule module = nullptr;
  CUfunction gemv = nullptr;
  CUfunction gemm = nullptr;
  CUfunction swiglu = nullptr;
};
// Loads the embedded operator image once more (each call: its own module) and
// finds its kernels; `image_sha256` receives the image's digest when not null.
[[nodiscard]] Expected<OperatorKernels> load_operator_kernels(const Driver* drv, std::string* image_sha256 = nullptr);

// Captures what `launch` enqueues on `stream` into a new executable graph; a failed
// launch ends the capture and is returned.
[[nodiscard]] Expected<CUgraphExec> capture_graph(const Driver* drv, CUstream stream,
                                                  const std::function<Expected<Ok>()>& launch);

// True for the errors a kernel's own execution raises (illegal or misaligned
// address, illegal instruction, trap, stack overflow ...): the user's kernel is
// at fault (exit 2), not the backend. After one the context is unusable.
[[nodiscard]] bool is_kernel_fault(CUresult rc);
// "CUDA_ERROR_X (the driver's text)".
[[nodiscard]] std::string fault_text(const Driver& drv, CUresult rc);

// The sequence every arm shares: allocate, launch (warm-up or eager replay),
// capture into a graph, write one case's activations. Buffers, stream and graph
// belong to the arm and are freed with it.
class DeviceArm {
 public:
  DeviceArm(const Driver* drv, const op::AbSpec& spec, std::size_t arm) : drv_(drv), spec_(spec), arm_(arm) {}
  DeviceArm(const DeviceArm&) = delete;
  DeviceArm& operator=(const DeviceArm&) = delete;
  virtual ~DeviceArm();

  // Allocates every tensor, uploads the weights and creates the arm's stream.
  [[nodiscard]] virtual Expected<Ok> allocate() = 0;
  // Launches the arm's stages on its stream (warm-up, graph off; capture() records the same).
  // `skip_last`: the last stage left out (fault injection for the GPU tests).
  [[nodiscard]] virtual Expected<Ok> launch(bool skip_last = false) = 0;
  // Launches the stages one by one, waiting for each within `wait_limit_s`
  // (user::Deadline: a kernel that never returns ends the process with one line,
  // exit 2); a kernel that faults is exit 2 naming the arm, the stage and the kernel.
  [[nodiscard]] virtual Expected<Ok> checked_launch(double wait_limit_s);
  [[nodiscard]] Expected<Ok> capture(bool skip_last = false);
  // Copies the activations into the arm's input buffers (async, on its stream).
  [[nodiscard]] virtual Expected<Ok> write_activations(const op::Activations& acts) = 0;
  // "<spec>: arms[i] (name)": the arm in messages.
  [[nodiscard]] std::string label() const;
  // The arm's kernels in stage order ("gemv_sep, gemv_sep, ..."), for a fault in a replay.
  [[nodiscard]] virtual std::string kernel_names() const { return "bitproof's operator kernels"; }

  [[nodiscard]] CUstream stream() const { return stream_; }
  [[nodiscard]] CUgraphExec graph() const { return graph_; }
  // Every tensor the arm's stages write, in stage order, with its device buffer.
  struct Buffer {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
  };
  [[nodiscard]] const std::vector<std::string>& written() const { return written_; }
  [[nodiscard]] const Buffer& tensor(const std::string& name) const { return tensors_.at(name); }

 protected:
  Expected<Buffer> upload(const void* data, std::size_t bytes);
  Expected<Ok> create_stream();

  const Driver* drv_;
  const op::AbSpec& spec_;
  std::size_t arm_;
  CUstream stream_ = nullptr;
  CUgraphExec graph_ = nullptr;
  std::map<std::string, Buffer> tensors_;  // every tensor the arm reads or writes (weights: its own copies)
  std::vector<std::string> written_;       // outputs of its stages, in order
  std::vector<CUdeviceptr> allocations_;
};

class DeviceOperatorArm final : public DeviceArm {
 public:
  DeviceOperatorArm(const Driver* drv, const op::AbSpec& spec, std::size_t arm, const op::Weights& weights,
                    OperatorKernels kernels);

  [[nodiscard]] Expected<Ok> allocate() override;
  [[nodiscard]] Expected<Ok> launch(bool skip_last = false) override;
  [[nodiscard]] Expected<Ok> write_activations(const op::Activations& acts) override;

 private:
  [[nodiscard]] std::string weight_key(const op::PreparedStage& ps) const;

  op::PreparedArm prepared_;
  OperatorKernels kernels_;
  std::vector<std::string> activations_;  // inputs written by write_activations
};

// An arm of the user's kernels: each stage a launch of a kernel found in exactly
// one of the spec's modules (PTX, loaded into this arm's own CUmodules), its
// arguments bound to the arm's buffers and the stage's scalars. Buffers: one per
// activation (rewritten every case), per weight part (f16 whole; mxfp4 codes or
// scales, the layout synth-checkpoint writes), per joined list (the rows
// concatenated) and per declared output (poisoned by the caller).
class DeviceKernelArm final : public DeviceArm {
 public:
  DeviceKernelArm(const Driver* drv, const op::AbSpec& spec, std::size_t arm, const op::Weights& weights,
                  const std::vector<op::KernelModule>& modules);
  ~DeviceKernelArm() override;

  // Also loads the modules (a PTX the JIT refuses: exit 2 with its log), finds
  // each stage's kernel and checks its parameters' count and sizes against the
  // stage's arguments (exit 2 naming the argument).
  [[nodiscard]] Expected<Ok> allocate() override;
  [[nodiscard]] Expected<Ok> launch(bool skip_last = false) override;
  [[nodiscard]] Expected<Ok> checked_launch(double wait_limit_s) override;
  [[nodiscard]] Expected<Ok> write_activations(const op::Activations& acts) override;
  [[nodiscard]] std::string kernel_names() const override;
  // Every buffer of the arm sits between two guards of kGuardBytes filled with kGuardByte; a
  // kernel that wrote into one (past a buffer's end or before its start, the writes the
  // executor's bounds checks catch on the CPU) is exit 2 naming the buffer, the offset and the
  // case. Call after the case's work has finished.
  [[nodiscard]] Expected<Ok> check_guards(std::uint64_t case_index) const;
  static constexpr std::size_t kGuardBytes = std::size_t{64} << 10;
  static constexpr std::uint8_t kGuardByte = 0xA5;
  // Per module: its file as written and the SHA-256 of the PTX loaded.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& module_digests() const { return digests_; }

 private:
  // A part of a buffer an activation fills each case: its bytes at `offset`.
  struct ActivationCopy {
    std::string buffer, input;
    std::size_t offset = 0;
  };
  struct Stage {
    const op::KernelLaunch* launch = nullptr;
    CUfunction function = nullptr;
    std::vector<std::uint64_t> values;  // one 8-byte slot per argument (little-endian: a u32 reads the low word)
    std::vector<void*> params;
  };
  [[nodiscard]] std::string stage_field(std::size_t s) const;
  Expected<Ok> load_modules();
  Expected<CUfunction> find_kernel(std::size_t s);
  Expected<Ok> check_params(std::size_t s, CUfunction f);
  Expected<std::string> bind(std::size_t s, std::size_t a);
  Expected<std::string> bind_input(const std::string& field, const std::vector<std::string>& names,
                                   op::TensorPart part);
  Expected<Ok> launch_stage(std::size_t s);
  Expected<Buffer> guarded(const std::string& name, std::size_t bytes);

  struct Guarded {
    std::string name;
    CUdeviceptr ptr = 0;  // the buffer's first byte; its guards lie just before and after
    std::size_t bytes = 0;
  };
  std::vector<Guarded> guarded_;
  const op::Weights& weights_;
  const std::vector<op::KernelModule>& modules_;
  std::vector<CUmodule> loaded_;
  std::vector<std::pair<std::string, std::string>> digests_;
  std::vector<Stage> stages_;
  std::vector<ActivationCopy> activations_;
};

// The arm's device form: kernel stages, built-in stages, or (refused, exit 2) both.
[[nodiscard]] Expected<std::unique_ptr<DeviceArm>> make_device_arm(const Driver* drv, const op::AbSpec& spec,
                                                                   std::size_t arm, const op::Weights& weights,
                                                                   OperatorKernels kernels,
                                                                   const std::vector<op::KernelModule>& modules);

// True when arm `arm` of `spec` launches the user's kernels.
[[nodiscard]] bool is_kernel_arm(const op::AbSpec& spec, std::size_t arm);

}  // namespace bitproof::cuda

#endif
