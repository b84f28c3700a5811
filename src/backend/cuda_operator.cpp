#include "backend/cuda_operator.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "backend/cuda_driver.hpp"
#include "backend/cuda_operator_arm.hpp"
#include "backend/operator_abi.hpp"
#include "recipes/registry.hpp"
#include "hash/digest.hpp"

namespace bitproof {
namespace kernel_images {
extern const unsigned char* const kOperators;
extern const std::size_t kOperatorsSize;
}  // namespace kernel_images

namespace {

// A stage's kernel parameters; `ptr` gives a tensor's device address by name, `weight` the key of its weight.
template <class Ptr>
abi::OperatorParams stage_params(const op::PreparedStage& ps, Ptr ptr, const std::string& weight) {
  abi::OperatorParams p;
  const auto in = [&](const std::string& name) { return reinterpret_cast<const void*>(ptr(name)); };
  p.a = in(ps.stage->a);
  p.m = ps.m;
  p.k = ps.k;
  if (ps.stage->op == op::OpKind::kSwiglu) {
    p.b = in(ps.stage->b);
    p.n = ps.k;
    p.out[0] = reinterpret_cast<void*>(ptr(ps.stage->outputs[0]));
    return p;
  }
  p.weight = in(weight);
  if (ps.stage->op == op::OpKind::kMxfp4Gemm) {
    p.scales = in(weight + ".scales");
    p.splits = ps.stage->split_k;
    p.recipe = static_cast<std::int32_t>(ps.stage->dequant - all_recipes().data());
  }
  p.n = ps.weight()->rows;
  p.block_k = ps.stage->block_k;
  p.order = static_cast<std::uint32_t>(ps.stage->order);
  p.blocks = static_cast<std::uint32_t>(ps.stage->outputs.size());
  for (std::size_t b = 0; b < ps.stage->outputs.size(); ++b) {
    p.first_row[b] = ps.first_rows[b];
    p.rows[b] = ps.rows[b];
    p.out[b] = reinterpret_cast<void*>(ptr(ps.stage->outputs[b]));
  }
  return p;
}

}  // namespace

namespace cuda {

Expected<OperatorKernels> load_operator_kernels(const Driver* drv, std::string* image_sha256) {
  OperatorKernels k;
  BP_CU(drv->cuModuleLoadData(&k.module, kernel_images::kOperators));
  for (auto [name, fn] : {std::pair{"bp_op_gemv", &k.gemv}, std::pair{"bp_op_mxfp4", &k.gemm},
                          std::pair{"bp_op_swiglu", &k.swiglu}}) {
    const CUresult rc = drv->cuModuleGetFunction(fn, k.module, name);
    if (rc != CUDA_SUCCESS) {
      drv->cuModuleUnload(k.module);
      return failure(*drv, rc, "cuModuleGetFunction", __FILE__, __LINE__);
    }
  }
  if (image_sha256 != nullptr) {
    Sha256 h;
    h.update(kernel_images::kOperators, kernel_images::kOperatorsSize);
    *image_sha256 = to_hex(h.finish());
  }
  return k;
}

DeviceOperatorArm::DeviceOperatorArm(const Driver* drv, const op::AbSpec& spec, std::size_t arm,
                                     const op::Weights& weights, OperatorKernels kernels)
    : drv_(drv), spec_(spec), prepared_(op::prepare_arm(spec, arm, weights)), kernels_(kernels) {}

DeviceOperatorArm::~DeviceOperatorArm() {
  if (graph_ != nullptr) drv_->cuGraphExecDestroy(graph_);
  if (stream_ != nullptr) drv_->cuStreamDestroy(stream_);
  for (CUdeviceptr p : allocations_) drv_->cuMemFree(p);
}

Expected<DeviceOperatorArm::Buffer> DeviceOperatorArm::upload(const void* data, std::size_t bytes) {
  const Driver* drv = drv_;
  Buffer b{0, bytes};
  BP_CU(drv->cuMemAlloc(&b.ptr, std::max<std::size_t>(bytes, 1)));
  allocations_.push_back(b.ptr);
  if (data != nullptr && bytes != 0) BP_CU(drv->cuMemcpyHtoD(b.ptr, data, bytes));
  return b;
}

std::string DeviceOperatorArm::weight_key(const op::PreparedStage& ps) const {
  return fmt::format("#weight{}", &ps - prepared_.stages.data());
}

Expected<Ok> DeviceOperatorArm::allocate() {
  const Driver* drv = drv_;
  for (const auto& [name, shape] : prepared_.shapes) {
    const op::InputSpec* in = spec_.input(name);
    if (in != nullptr && in->role == op::InputRole::kWeight) continue;  // uploaded per stage, below
    auto b = upload(nullptr, shape.rows * shape.cols * sizeof(std::uint16_t));
    if (!b) return b.error();
    tensors_[name] = *b;
    if (in != nullptr) activations_.push_back(name);
  }
  for (const op::PreparedStage& ps : prepared_.stages) {
    for (const std::string& o : ps.stage->outputs) written_.push_back(o);
    if (ps.weight() == nullptr) continue;
    const op::HostTensor& w = *ps.weight();
    auto main = w.dtype == op::DType::kF16 ? upload(w.f16.data(), w.f16.size() * 2) : upload(w.codes.data(), w.codes.size());
    if (!main) return main.error();
    tensors_[weight_key(ps)] = *main;
    if (w.dtype == op::DType::kMxfp4) {
      auto scales = upload(w.scales.data(), w.scales.size());
      if (!scales) return scales.error();
      tensors_[weight_key(ps) + ".scales"] = *scales;
    }
  }
  BP_CU(drv->cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  return Ok{};
}

Expected<Ok> DeviceOperatorArm::launch(bool skip_last) {
  const Driver* drv = drv_;
  for (const op::PreparedStage& ps : prepared_.stages) {
    if (skip_last && &ps == &prepared_.stages.back()) continue;
    abi::OperatorParams p = stage_params(ps, [&](const std::string& name) { return tensors_.at(name).ptr; },
                                         weight_key(ps));
    void* args[] = {&p};
    const CUfunction f = ps.stage->op == op::OpKind::kGemv        ? kernels_.gemv
                         : ps.stage->op == op::OpKind::kMxfp4Gemm ? kernels_.gemm
                                                                  : kernels_.swiglu;
    const std::uint64_t threads = ps.stage->op == op::OpKind::kSwiglu ? p.m * p.k : p.n;
    const auto grid = static_cast<unsigned>((threads + abi::kOperatorThreads - 1) / abi::kOperatorThreads);
    BP_CU(drv->cuLaunchKernel(f, grid, 1, 1, abi::kOperatorThreads, 1, 1, 0, stream_, args, nullptr));
  }
  return Ok{};
}

Expected<CUgraphExec> capture_graph(const Driver* drv, CUstream stream, const std::function<Expected<Ok>()>& launch) {
  BP_CU(drv->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  const Expected<Ok> launched = launch();
  CUgraph graph = nullptr;
  const CUresult ended = drv->cuStreamEndCapture(stream, &graph);
  if (!launched) {
    if (graph != nullptr) drv->cuGraphDestroy(graph);
    return launched.error();
  }
  BP_CU(ended);
  CUgraphExec exec = nullptr;
  const CUresult rc = drv->cuGraphInstantiateWithFlags(&exec, graph, 0);
  drv->cuGraphDestroy(graph);
  BP_CU(rc);
  return exec;
}

Expected<Ok> DeviceOperatorArm::capture(bool skip_last) {
  auto exec = capture_graph(drv_, stream_, [&] { return launch(skip_last); });
  if (!exec) return exec.error();
  graph_ = *exec;
  return Ok{};
}

Expected<Ok> DeviceOperatorArm::write_activations(const op::Activations& acts) {
  const Driver* drv = drv_;
  for (const std::string& name : activations_) {
    const auto& words = acts.at(name).f16;
    BP_CU(drv->cuMemcpyHtoDAsync(tensors_.at(name).ptr, words.data(), words.size() * 2, stream_));
  }
  return Ok{};
}

}  // namespace cuda

namespace {

using cuda::DeviceOperatorArm;
using cuda::Driver;

class CudaAbRunner final : public op::ArmRunner {
 public:
  CudaAbRunner(const op::AbSpec& spec, const op::Weights& weights) : spec_(spec), weights_(weights) {}
  ~CudaAbRunner() override {
    for (auto& arm : arms_) arm.reset();
    if (drv_ != nullptr && kernels_.module != nullptr) drv_->cuModuleUnload(kernels_.module);
  }

  Expected<Ok> init(Json& info) {
    auto loaded = cuda::driver();
    if (!loaded) return loaded.error();
    drv_ = *loaded;
    auto dev = cuda::open_first_device(drv_, "ab --backend cuda");
    if (!dev) return dev.error();
    dev_ = std::move(*dev);
    std::string image_sha256;
    auto kernels = cuda::load_operator_kernels(drv_, &image_sha256);
    if (!kernels) return kernels.error();
    kernels_ = *kernels;
    info = Json{{"device", dev_.info}, {"image_sha256", image_sha256}, {"graphs", "one CUDA Graph per arm"},
                {"poison", "0xFF bytes in every written buffer before every replay"}};
    // Fault injection for the GPU tests (tests/gpu/ab_cuda.py): BITPROOF_AB_FAULT=skip-last-stage leaves
    // arm B's last launch out of its graph, so its outputs keep the poison and must be caught.
    const char* fault = std::getenv("BITPROOF_AB_FAULT");
    for (std::size_t arm = 0; arm < 2; ++arm) {
      const bool skip_last = arm == 1 && fault != nullptr && std::string_view(fault) == "skip-last-stage";
      arms_[arm] = std::make_unique<DeviceOperatorArm>(drv_, spec_, arm, weights_, kernels_);
      if (auto ok = arms_[arm]->allocate(); !ok) return ok;
      if (auto ok = arms_[arm]->capture(skip_last); !ok) return ok;
    }
    return Ok{};
  }

  [[nodiscard]] std::string name() const override { return dev_.label; }

  Expected<std::array<op::ArmOutputs, 2>> run_case(std::uint64_t, const op::Activations& acts) override {
    std::array<op::ArmOutputs, 2> out;
    for (std::size_t arm = 0; arm < 2; ++arm) {
      if (auto ok = replay(*arms_[arm], acts, out[arm]); !ok) return ok.error();
    }
    return out;
  }

 private:
  Expected<Ok> replay(DeviceOperatorArm& arm, const op::Activations& acts, op::ArmOutputs& out) {
    const Driver* drv = drv_;
    if (auto ok = arm.write_activations(acts); !ok) return ok;
    for (const std::string& name : arm.written()) {
      const auto& b = arm.tensor(name);
      BP_CU(drv->cuMemsetD8Async(b.ptr, 0xFF, b.bytes, arm.stream()));
    }
    BP_CU(drv->cuGraphLaunch(arm.graph(), arm.stream()));
    for (const std::string& name : arm.written()) {
      const auto& b = arm.tensor(name);
      auto& words = out[name];
      words.resize(b.bytes / 2);
      BP_CU(drv->cuMemcpyDtoHAsync(words.data(), b.ptr, b.bytes, arm.stream()));
    }
    BP_CU(drv->cuStreamSynchronize(arm.stream()));
    return Ok{};
  }

  const op::AbSpec& spec_;
  const op::Weights& weights_;
  const Driver* drv_ = nullptr;
  cuda::DeviceContext dev_;
  cuda::OperatorKernels kernels_;
  std::array<std::unique_ptr<DeviceOperatorArm>, 2> arms_;
};

}  // namespace

Expected<std::unique_ptr<op::ArmRunner>> make_cuda_ab_runner(const op::AbSpec& spec, const op::Weights& weights,
                                                             Json& info) {
  auto runner = std::make_unique<CudaAbRunner>(spec, weights);
  if (auto ok = runner->init(info); !ok) return ok.error();
  return std::unique_ptr<op::ArmRunner>(std::move(runner));
}

}  // namespace bitproof

#else

namespace bitproof {

Expected<std::unique_ptr<op::ArmRunner>> make_cuda_ab_runner(const op::AbSpec&, const op::Weights&, Json&) {
  return Error{"ab --backend cuda: this bitproof was built without the CUDA backend", kExitNoBackend};
}

}  // namespace bitproof

#endif
