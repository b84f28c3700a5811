#include "backend/cuda_operator.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "backend/cuda_driver.hpp"
#include "backend/operator_abi.hpp"
#include "recipes/registry.hpp"
#include "report/digest.hpp"

namespace bitproof {
namespace kernel_images {
extern const unsigned char* const kOperators;
extern const std::size_t kOperatorsSize;
}  // namespace kernel_images

namespace {

using cuda::Driver;

// Device memory freed with the runner.
struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
};

struct ArmState {
  const op::PreparedArm* prepared = nullptr;
  CUstream stream = nullptr;
  CUgraphExec graph = nullptr;
  std::map<std::string, DeviceBuffer> tensors;  // every tensor the arm reads or writes (weights: its own copies)
  std::vector<std::string> written;             // outputs of its stages, in order
  std::vector<std::string> activations;         // inputs rewritten every case
};

class CudaAbRunner final : public op::ArmRunner {
 public:
  CudaAbRunner(const op::AbSpec& spec, const op::Weights& weights) : spec_(spec), weights_(weights) {}
  ~CudaAbRunner() override { release(); }

  Expected<Ok> init(Json& info) {
    auto loaded = cuda::driver();
    if (!loaded) return loaded.error();
    drv_ = *loaded;
    auto dev = cuda::open_first_device(drv_, "ab --backend cuda");
    if (!dev) return dev.error();
    dev_ = std::move(*dev);
    const Driver* drv = drv_;
    BP_CU(drv->cuModuleLoadData(&module_, kernel_images::kOperators));
    for (auto [name, fn] : {std::pair{"bp_op_gemv", &gemv_}, std::pair{"bp_op_mxfp4", &gemm_},
                            std::pair{"bp_op_swiglu", &swiglu_}})
      BP_CU(drv->cuModuleGetFunction(fn, module_, name));
    Sha256 h;
    h.update(kernel_images::kOperators, kernel_images::kOperatorsSize);
    info = Json{{"device", dev_.info}, {"image_sha256", to_hex(h.finish())}, {"graphs", "one CUDA Graph per arm"},
                {"poison", "0xFF bytes in every written buffer before every replay"}};
    for (std::size_t arm = 0; arm < 2; ++arm) {
      prepared_[arm] = op::prepare_arm(spec_, arm, weights_);
      if (auto ok = prepare(arm); !ok) return ok;
    }
    return Ok{};
  }

  [[nodiscard]] std::string name() const override { return dev_.label; }

  Expected<std::array<op::ArmOutputs, 2>> run_case(std::uint64_t, const op::Activations& acts) override {
    std::array<op::ArmOutputs, 2> out;
    for (std::size_t arm = 0; arm < 2; ++arm) {
      if (auto ok = replay(arms_[arm], acts, out[arm]); !ok) return ok.error();
    }
    return out;
  }

 private:
  Expected<DeviceBuffer> upload(const void* data, std::size_t bytes) {
    const Driver* drv = drv_;
    DeviceBuffer b{0, bytes};
    BP_CU(drv->cuMemAlloc(&b.ptr, std::max<std::size_t>(bytes, 1)));
    allocations_.push_back(b.ptr);
    if (data != nullptr && bytes != 0) BP_CU(drv->cuMemcpyHtoD(b.ptr, data, bytes));
    return b;
  }

  // Every tensor of the arm in its own device buffer; weights uploaded (joined as prepared).
  Expected<Ok> allocate(std::size_t arm) {
    ArmState& st = arms_[arm];
    for (const auto& [name, shape] : prepared_[arm].shapes) {
      const op::InputSpec* in = spec_.input(name);
      if (in != nullptr && in->role == op::InputRole::kWeight) continue;  // uploaded per stage, below
      auto b = upload(nullptr, shape.rows * shape.cols * sizeof(std::uint16_t));
      if (!b) return b.error();
      st.tensors[name] = *b;
      if (in != nullptr) st.activations.push_back(name);
    }
    for (const op::PreparedStage& ps : prepared_[arm].stages) {
      for (const std::string& o : ps.stage->outputs) st.written.push_back(o);
      if (ps.weight() == nullptr) continue;
      const op::HostTensor& w = *ps.weight();
      const std::string key = fmt::format("#weight{}", &ps - prepared_[arm].stages.data());
      auto main = w.dtype == op::DType::kF16 ? upload(w.f16.data(), w.f16.size() * 2) : upload(w.codes.data(), w.codes.size());
      if (!main) return main.error();
      st.tensors[key] = *main;
      if (w.dtype == op::DType::kMxfp4) {
        auto scales = upload(w.scales.data(), w.scales.size());
        if (!scales) return scales.error();
        st.tensors[key + ".scales"] = *scales;
      }
    }
    return Ok{};
  }

  abi::OperatorParams params(std::size_t arm, const op::PreparedStage& ps) const {
    const ArmState& st = arms_[arm];
    abi::OperatorParams p;
    auto ptr = [&](const std::string& name) { return reinterpret_cast<const void*>(st.tensors.at(name).ptr); };
    p.a = ptr(ps.stage->a);
    p.m = ps.m;
    p.k = ps.k;
    if (ps.stage->op == op::OpKind::kSwiglu) {
      p.b = ptr(ps.stage->b);
      p.n = ps.k;
      p.out[0] = reinterpret_cast<void*>(st.tensors.at(ps.stage->outputs[0]).ptr);
      return p;
    }
    const std::string key = fmt::format("#weight{}", &ps - prepared_[arm].stages.data());
    p.weight = ptr(key);
    if (ps.stage->op == op::OpKind::kMxfp4Gemm) {
      p.scales = ptr(key + ".scales");
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
      p.out[b] = reinterpret_cast<void*>(st.tensors.at(ps.stage->outputs[b]).ptr);
    }
    return p;
  }

  // Allocates, uploads, and captures the arm's stages into its graph.
  Expected<Ok> prepare(std::size_t arm) {
    const Driver* drv = drv_;
    ArmState& st = arms_[arm];
    st.prepared = &prepared_[arm];
    if (auto ok = allocate(arm); !ok) return ok;
    BP_CU(drv->cuStreamCreate(&st.stream, CU_STREAM_NON_BLOCKING));
    BP_CU(drv->cuStreamBeginCapture(st.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    // Fault injection for the GPU tests (tests/gpu/ab_cuda.py): BITPROOF_AB_FAULT=skip-last-stage leaves
    // arm B's last launch out of its graph, so its outputs keep the poison and must be caught.
    const char* fault = std::getenv("BITPROOF_AB_FAULT");
    const bool skip_last = arm == 1 && fault != nullptr && std::string_view(fault) == "skip-last-stage";
    for (const op::PreparedStage& ps : prepared_[arm].stages) {
      if (skip_last && &ps == &prepared_[arm].stages.back()) continue;
      abi::OperatorParams p = params(arm, ps);
      void* args[] = {&p};
      const CUfunction f = ps.stage->op == op::OpKind::kGemv ? gemv_ : ps.stage->op == op::OpKind::kMxfp4Gemm ? gemm_ : swiglu_;
      const std::uint64_t threads = ps.stage->op == op::OpKind::kSwiglu ? p.m * p.k : p.n;
      const auto grid = static_cast<unsigned>((threads + abi::kOperatorThreads - 1) / abi::kOperatorThreads);
      const CUresult rc = drv->cuLaunchKernel(f, grid, 1, 1, abi::kOperatorThreads, 1, 1, 0, st.stream, args, nullptr);
      if (rc != CUDA_SUCCESS) {
        CUgraph broken = nullptr;
        drv->cuStreamEndCapture(st.stream, &broken);
        if (broken != nullptr) drv->cuGraphDestroy(broken);
        return cuda::failure(*drv, rc, "cuLaunchKernel (captured)", __FILE__, __LINE__);
      }
    }
    CUgraph graph = nullptr;
    BP_CU(drv->cuStreamEndCapture(st.stream, &graph));
    const CUresult rc = drv->cuGraphInstantiateWithFlags(&st.graph, graph, 0);
    drv->cuGraphDestroy(graph);
    BP_CU(rc);
    return Ok{};
  }

  Expected<Ok> replay(ArmState& st, const op::Activations& acts, op::ArmOutputs& out) {
    const Driver* drv = drv_;
    for (const std::string& name : st.activations) {
      const auto& words = acts.at(name).f16;
      BP_CU(drv->cuMemcpyHtoDAsync(st.tensors.at(name).ptr, words.data(), words.size() * 2, st.stream));
    }
    for (const std::string& name : st.written) {
      const DeviceBuffer& b = st.tensors.at(name);
      BP_CU(drv->cuMemsetD8Async(b.ptr, 0xFF, b.bytes, st.stream));
    }
    BP_CU(drv->cuGraphLaunch(st.graph, st.stream));
    for (const std::string& name : st.written) {
      const DeviceBuffer& b = st.tensors.at(name);
      auto& words = out[name];
      words.resize(b.bytes / 2);
      BP_CU(drv->cuMemcpyDtoHAsync(words.data(), b.ptr, b.bytes, st.stream));
    }
    BP_CU(drv->cuStreamSynchronize(st.stream));
    return Ok{};
  }

  void release() {
    if (drv_ == nullptr) return;
    for (ArmState& st : arms_) {
      if (st.graph != nullptr) drv_->cuGraphExecDestroy(st.graph);
      if (st.stream != nullptr) drv_->cuStreamDestroy(st.stream);
    }
    for (CUdeviceptr p : allocations_) drv_->cuMemFree(p);
    if (module_ != nullptr) drv_->cuModuleUnload(module_);
  }

  const op::AbSpec& spec_;
  const op::Weights& weights_;
  const Driver* drv_ = nullptr;
  cuda::DeviceContext dev_;
  CUmodule module_ = nullptr;
  CUfunction gemv_ = nullptr, gemm_ = nullptr, swiglu_ = nullptr;
  std::array<op::PreparedArm, 2> prepared_;
  std::array<ArmState, 2> arms_;
  std::vector<CUdeviceptr> allocations_;
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
