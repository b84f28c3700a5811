// One arm of an A/B spec on the device (CUDA builds only): its own buffers (its
// own copies of the weights, joined as the fused kernel's loader joins them), its
// own stream, and its stages captured once into its own CUDA Graph. Shared by
// `bitproof ab` (src/backend/cuda_operator.cpp: poison, replay, read back) and
// `bitproof time` (src/backend/cuda_timing.cpp: warm, replay, time).
#pragma once

#if defined(BITPROOF_HAVE_CUDA)

#include <functional>
#include <map>
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

class DeviceOperatorArm {
 public:
  DeviceOperatorArm(const Driver* drv, const op::AbSpec& spec, std::size_t arm, const op::Weights& weights,
                    OperatorKernels kernels);
  DeviceOperatorArm(const DeviceOperatorArm&) = delete;
  DeviceOperatorArm& operator=(const DeviceOperatorArm&) = delete;
  ~DeviceOperatorArm();

  // Allocates every tensor, uploads the weights and creates the arm's stream.
  [[nodiscard]] Expected<Ok> allocate();
  // Launches the arm's stages on its stream (warm-up; capture() records the same).
  // `skip_last`: the last stage left out (fault injection for the GPU tests).
  [[nodiscard]] Expected<Ok> launch(bool skip_last = false);
  [[nodiscard]] Expected<Ok> capture(bool skip_last = false);
  // Copies the activations into the arm's input buffers (async, on its stream).
  [[nodiscard]] Expected<Ok> write_activations(const op::Activations& acts);

  [[nodiscard]] CUstream stream() const { return stream_; }
  [[nodiscard]] CUgraphExec graph() const { return graph_; }
  // Every tensor the arm's stages write, in stage order, with its device buffer.
  struct Buffer {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
  };
  [[nodiscard]] const std::vector<std::string>& written() const { return written_; }
  [[nodiscard]] const Buffer& tensor(const std::string& name) const { return tensors_.at(name); }

 private:
  Expected<Buffer> upload(const void* data, std::size_t bytes);
  [[nodiscard]] std::string weight_key(const op::PreparedStage& ps) const;

  const Driver* drv_;
  const op::AbSpec& spec_;
  op::PreparedArm prepared_;
  OperatorKernels kernels_;
  CUstream stream_ = nullptr;
  CUgraphExec graph_ = nullptr;
  std::map<std::string, Buffer> tensors_;  // every tensor the arm reads or writes (weights: its own copies)
  std::vector<std::string> written_;       // outputs of its stages, in order
  std::vector<std::string> activations_;   // inputs written by write_activations
  std::vector<CUdeviceptr> allocations_;
};

}  // namespace bitproof::cuda

#endif
