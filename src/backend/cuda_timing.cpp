#include "backend/cuda_timing.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include <fmt/format.h>

#include <atomic>
#include <cstring>

#include "backend/cuda_driver.hpp"
#include "backend/cuda_operator_arm.hpp"
#include "backend/cuda_user.hpp"
#include "operator/run.hpp"
#include "splitmix.hpp"
#include "user/process.hpp"

namespace bitproof {
namespace kernel_images {
extern const unsigned char* const kTiming;
}  // namespace kernel_images

namespace {

using cuda::Driver;

// What every arm of the process shares: the context, the helper kernels, the
// flush buffer and the mapped words the helpers use.
struct Shared {
  const Driver* drv = nullptr;
  cuda::DeviceContext dev;
  CUmodule helpers = nullptr;
  CUfunction block = nullptr;
  CUfunction clock = nullptr;
  CUdeviceptr flush = 0;
  std::size_t flush_bytes = 0;
  std::uint32_t flush_value = 0;
  void* mapped = nullptr;                  // [0] flag, [1] timed out (u32); then the probe's 2 × u64
  CUdeviceptr mapped_dev = 0;
  cuda::OperatorKernels shared_ops;        // the naive protocol's one operator image
  std::map<std::string, CUmodule> shared_kernels;  // the naive protocol's one module per kernel file
  double max_clock_mhz = 0;
  Json info;

  volatile std::uint32_t* flag() const { return static_cast<volatile std::uint32_t*>(mapped); }
  const volatile std::uint64_t* probe() const {
    return reinterpret_cast<const volatile std::uint64_t*>(static_cast<char*>(mapped) + 8);
  }
};

// The sampling protocol of one arm on the device; subclasses load, launch and capture it.
class DeviceTimedArm : public timing::TimedArm {
 public:
  // `what` names the arm in the line said when its work does not end within `wait_limit_s`.
  DeviceTimedArm(Shared& shared, std::string name, std::string what, double wait_limit_s)
      : sh_(shared), name_(std::move(name)), what_(std::move(what)), wait_limit_s_(wait_limit_s) {}
  ~DeviceTimedArm() override {
    if (start_ != nullptr) sh_.drv->cuEventDestroy(start_);
    if (stop_ != nullptr) sh_.drv->cuEventDestroy(stop_);
  }

  Expected<timing::Warmup> prepare(bool settle) override {
    const Driver* drv = sh_.drv;
    if (auto ok = load(); !ok) return ok.error();
    BP_CU(drv->cuEventCreate(&start_, CU_EVENT_DEFAULT));
    BP_CU(drv->cuEventCreate(&stop_, CU_EVENT_DEFAULT));
    timing::Warmup eager;
    if (settle) {
      auto w = timing::warm_until_settled([&]() -> Expected<double> { return timed([&] { return launch(); }); });
      if (!w) return w.error();
      eager = *w;
    }
    if (auto ok = capture(); !ok) return ok.error();
    if (!settle) return eager;
    auto w = timing::warm_until_settled([&]() -> Expected<double> { return timed([&] { return replay(); }); });
    if (!w) return w.error();
    w->replays += eager.replays;
    w->settled = w->settled && eager.settled;
    return *w;
  }

  Expected<timing::Timed> sample(bool flush_l2) override {
    const Driver* drv = sh_.drv;
    const CUstream s = stream();
    sh_.flag()[0] = 0;
    sh_.flag()[1] = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    CUdeviceptr flag = sh_.mapped_dev, timed_out = sh_.mapped_dev + 4, probe = sh_.mapped_dev + 8;
    void* block_args[] = {&flag, &timed_out};
    BP_CU(drv->cuLaunchKernel(sh_.block, 1, 1, 1, 1, 1, 1, 0, s, block_args, nullptr));
    if (flush_l2) BP_CU(drv->cuMemsetD32Async(sh_.flush, ++sh_.flush_value, sh_.flush_bytes / 4, s));
    BP_CU(drv->cuEventRecord(start_, s));
    if (auto ok = replay(); !ok) return ok.error();
    BP_CU(drv->cuEventRecord(stop_, s));
    void* clock_args[] = {&probe};
    BP_CU(drv->cuLaunchKernel(sh_.clock, 1, 1, 1, 1, 1, 1, 0, s, clock_args, nullptr));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    sh_.flag()[0] = 1;
    {
      const user::Deadline deadline = wait_deadline();
      BP_CU(drv->cuStreamSynchronize(s));
    }
    if (sh_.flag()[1] != 0) {
      return Error{fmt::format("time: {}: the blocking kernel waited 2 s for the host (the device is shared or stalled)",
                               name_),
                   kExitNoBackend};
    }
    float ms = 0;
    BP_CU(drv->cuEventElapsedTime(&ms, start_, stop_));
    const double cycles = static_cast<double>(sh_.probe()[0]), ns = static_cast<double>(sh_.probe()[1]);
    return timing::Timed{1000.0 * ms, ns > 0 ? 1000.0 * cycles / ns : 0};
  }

  [[nodiscard]] std::string name() const override { return name_; }

 protected:
  virtual Expected<Ok> load() = 0;     // module, buffers and stream
  virtual Expected<Ok> launch() = 0;   // the arm's launches on its stream
  virtual Expected<Ok> capture() = 0;  // the same captured into the arm's graph
  [[nodiscard]] virtual CUstream stream() const = 0;
  [[nodiscard]] virtual CUgraphExec graph() const = 0;

  // One replay of the arm's graph (an external arm: its caller's enqueue).
  virtual Expected<Ok> replay() {
    const Driver* drv = sh_.drv;
    BP_CU(drv->cuGraphLaunch(graph(), stream()));
    return Ok{};
  }

  // Microseconds between events around what `work` enqueues.
  template <class Work>
  Expected<double> timed(Work work) {
    const Driver* drv = sh_.drv;
    BP_CU(drv->cuEventRecord(start_, stream()));
    if (auto ok = work(); !ok) return ok.error();
    BP_CU(drv->cuEventRecord(stop_, stream()));
    {
      const user::Deadline deadline = wait_deadline();
      BP_CU(drv->cuEventSynchronize(stop_));
    }
    float ms = 0;
    BP_CU(drv->cuEventElapsedTime(&ms, start_, stop_));
    return 1000.0 * ms;
  }

  // A wait for the arm's work: a kernel that never returns cannot be stopped nor
  // waited out (every later driver call would wait too), so at the limit the
  // process ends with one line (user::Deadline).
  [[nodiscard]] user::Deadline wait_deadline() const {
    return user::Deadline(wait_limit_s_, Error{fmt::format("{}: did not return on the GPU within the {:g} s limit "
                                                           "(--user-timeout SECONDS sets it)",
                                                           what_, wait_limit_s_)});
  }

  Shared& sh_;
  std::string name_;
  std::string what_;
  double wait_limit_s_;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
};

// An A/B spec's arm: built-in operators (the operator image: its own, or the
// shared one) or the user's kernels (the spec's modules, its own), with its
// weights and graph.
class AbTimedArm final : public DeviceTimedArm {
 public:
  AbTimedArm(Shared& sh, const timing::TimeSpec& spec, const op::Weights& weights, std::size_t arm, bool shared)
      : DeviceTimedArm(sh, spec.ab->arms[arm].name,
                       fmt::format("{}: arms[{}] ({})", spec.ab->path, arm, spec.ab->arms[arm].name),
                       spec.wait_timeout_s),
        spec_(*spec.ab),
        modules_(spec.ab_modules),
        weights_(weights),
        arm_(arm),
        shared_(shared) {}
  ~AbTimedArm() override {
    device_.reset();
    if (own_.module != nullptr) sh_.drv->cuModuleUnload(own_.module);
  }

 protected:
  Expected<Ok> load() override {
    const bool kernels = cuda::is_kernel_arm(spec_, arm_);
    if (!kernels && shared_ && sh_.shared_ops.module == nullptr) {
      auto k = cuda::load_operator_kernels(sh_.drv);
      if (!k) return k.error();
      sh_.shared_ops = *k;
    }
    if (!kernels && !shared_) {
      auto k = cuda::load_operator_kernels(sh_.drv);
      if (!k) return k.error();
      own_ = *k;
    }
    auto made = cuda::make_device_arm(sh_.drv, spec_, arm_, weights_, shared_ ? sh_.shared_ops : own_, modules_);
    if (!made) return made.error();
    device_ = std::move(*made);
    if (auto ok = device_->allocate(); !ok) return ok;
    if (auto ok = device_->write_activations(op::make_activations(spec_, 0)); !ok) return ok;
    // A kernel arm runs once stage by stage first: a kernel that faults is named with its stage.
    return kernels ? device_->checked_launch(wait_limit_s_) : Ok{};
  }
  Expected<Ok> launch() override { return device_->launch(); }
  Expected<Ok> capture() override { return device_->capture(); }
  [[nodiscard]] CUstream stream() const override { return device_->stream(); }
  [[nodiscard]] CUgraphExec graph() const override { return device_->graph(); }

 private:
  const op::AbSpec& spec_;
  const std::vector<op::KernelModule>& modules_;
  const op::Weights& weights_;
  std::size_t arm_;
  bool shared_;
  cuda::OperatorKernels own_;
  std::unique_ptr<cuda::DeviceArm> device_;
};

// A timing spec's kernel arm: its source compiled by NVRTC, its own buffers, one launch captured.
class KernelTimedArm final : public DeviceTimedArm {
 public:
  KernelTimedArm(Shared& sh, const timing::TimeSpec& spec, std::size_t arm, bool shared)
      : DeviceTimedArm(sh, spec.arms[arm].name,
                       fmt::format("{}: arms[{}] ({}): kernel {} of {}", spec.path, arm, spec.arms[arm].name,
                                   spec.arms[arm].kernel, spec.arms[arm].file),
                       spec.wait_timeout_s),
        spec_(spec),
        arm_(spec.arms[arm]),
        index_(arm),
        shared_(shared) {}
  ~KernelTimedArm() override {
    const Driver* drv = sh_.drv;
    if (graph_ != nullptr) drv->cuGraphExecDestroy(graph_);
    if (stream_ != nullptr) drv->cuStreamDestroy(stream_);
    for (const auto& [name, ptr] : buffers_) drv->cuMemFree(ptr);
    if (module_ != nullptr && !shared_) drv->cuModuleUnload(module_);
  }

 protected:
  Expected<Ok> load() override {
    const Driver* drv = sh_.drv;
    const std::string field = fmt::format("{}: arms[{}]", spec_.path, index_);
    if (auto found = sh_.shared_kernels.find(arm_.file_path); shared_ && found != sh_.shared_kernels.end()) {
      module_ = found->second;
    } else {
      auto cubin = cuda::compile_kernel_file(arm_.file_path, spec_.include_dirs, spec_.fmad, sh_.dev.major,
                                             sh_.dev.minor, field + ".file", spec_.compile_timeout_s);
      if (!cubin) return cubin.error();
      BP_CU(drv->cuModuleLoadData(&module_, cubin->cubin.data()));
      if (shared_) sh_.shared_kernels[arm_.file_path] = module_;
    }
    if (drv->cuModuleGetFunction(&function_, module_, arm_.kernel.c_str()) != CUDA_SUCCESS) {
      return Error{fmt::format("{}.kernel: no kernel \"{}\" in {} (an extern \"C\" __global__ function)", field,
                               arm_.kernel, arm_.file)};
    }
    if (arm_.shared_bytes > 48 * 1024) {
      BP_CU(drv->cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(arm_.shared_bytes)));
    }
    for (const timing::BufferSpec& b : spec_.buffers) {
      CUdeviceptr ptr = 0;
      BP_CU(drv->cuMemAlloc(&ptr, b.bytes));
      buffers_[b.name] = ptr;
      if (!b.random) {
        BP_CU(drv->cuMemsetD8(ptr, 0, b.bytes));
        continue;
      }
      std::vector<std::uint64_t> words((b.bytes + 7) / 8);
      std::uint64_t state = b.seed;
      for (auto& w : words) w = splitmix64_next(state);
      BP_CU(drv->cuMemcpyHtoD(ptr, words.data(), b.bytes));
    }
    for (const timing::KernelArg& a : arm_.args) {
      values_.push_back(a.kind == timing::KernelArg::Kind::kBuffer ? buffers_.at(a.buffer) : a.bits);
    }
    for (std::uint64_t& v : values_) params_.push_back(&v);  // little-endian: a u32 reads the low word
    BP_CU(drv->cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    return Ok{};
  }

  Expected<Ok> launch() override {
    const Driver* drv = sh_.drv;
    BP_CU(drv->cuLaunchKernel(function_, arm_.grid[0], arm_.grid[1], arm_.grid[2], arm_.block[0], arm_.block[1],
                              arm_.block[2], arm_.shared_bytes, stream_, params_.data(), nullptr));
    return Ok{};
  }

  Expected<Ok> capture() override {
    auto exec = cuda::capture_graph(sh_.drv, stream_, [&] { return launch(); });
    if (!exec) return exec.error();
    graph_ = *exec;
    return Ok{};
  }
  [[nodiscard]] CUstream stream() const override { return stream_; }
  [[nodiscard]] CUgraphExec graph() const override { return graph_; }

 private:
  const timing::TimeSpec& spec_;
  const timing::KernelArm& arm_;
  std::size_t index_;
  bool shared_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  CUstream stream_ = nullptr;
  CUgraphExec graph_ = nullptr;
  std::map<std::string, CUdeviceptr> buffers_;
  std::vector<std::uint64_t> values_;  // one 8-byte slot per kernel argument
  std::vector<void*> params_;
};

// An arm whose work its caller enqueues on the caller's stream (the Python face: a callable,
// or the replay of the graph it captured). Loading is the caller's `prepare`; there is no
// graph of bitproof's to capture, so the eager warm-up and the replay warm-up both call `enqueue`.
class ExternalTimedArm final : public DeviceTimedArm {
 public:
  ExternalTimedArm(Shared& sh, ExternalArm arm)
      : DeviceTimedArm(sh, arm.name, arm.what, arm.wait_timeout_s), arm_(std::move(arm)) {}

 protected:
  Expected<Ok> load() override { return arm_.prepare(); }
  Expected<Ok> launch() override { return arm_.enqueue(); }
  Expected<Ok> capture() override { return Ok{}; }
  Expected<Ok> replay() override { return arm_.enqueue(); }
  [[nodiscard]] CUstream stream() const override { return reinterpret_cast<CUstream>(arm_.stream); }
  [[nodiscard]] CUgraphExec graph() const override { return nullptr; }

 private:
  ExternalArm arm_;
};

class CudaTiming final : public TimingBackend {
 public:
  ~CudaTiming() override {
    const Driver* drv = sh_.drv;
    if (drv == nullptr) return;
    if (sh_.shared_ops.module != nullptr) drv->cuModuleUnload(sh_.shared_ops.module);
    for (const auto& [file, module] : sh_.shared_kernels) drv->cuModuleUnload(module);
    if (sh_.flush != 0) drv->cuMemFree(sh_.flush);
    if (sh_.mapped != nullptr) drv->cuMemFreeHost(sh_.mapped);
    if (sh_.helpers != nullptr) drv->cuModuleUnload(sh_.helpers);
  }

  Expected<Ok> init() {
    auto loaded = cuda::driver();
    if (!loaded) return loaded.error();
    sh_.drv = *loaded;
    const Driver* drv = sh_.drv;
    auto dev = cuda::open_first_device(drv, "time");
    if (!dev) return dev.error();
    sh_.dev = std::move(*dev);
    BP_CU(drv->cuModuleLoadData(&sh_.helpers, kernel_images::kTiming));
    BP_CU(drv->cuModuleGetFunction(&sh_.block, sh_.helpers, "bp_time_block"));
    BP_CU(drv->cuModuleGetFunction(&sh_.clock, sh_.helpers, "bp_time_clock"));
    int l2 = 0, clock_khz = 0, memory_khz = 0;
    BP_CU(drv->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, sh_.dev.device));
    BP_CU(drv->cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, sh_.dev.device));
    BP_CU(drv->cuDeviceGetAttribute(&memory_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, sh_.dev.device));
    sh_.flush_bytes = 2 * static_cast<std::size_t>(l2);
    BP_CU(drv->cuMemAlloc(&sh_.flush, sh_.flush_bytes));
    BP_CU(drv->cuMemHostAlloc(&sh_.mapped, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    std::memset(sh_.mapped, 0, 64);
    BP_CU(drv->cuMemHostGetDevicePointer(&sh_.mapped_dev, sh_.mapped, 0));
    sh_.max_clock_mhz = clock_khz / 1000.0;
    sh_.info = Json{{"device", sh_.dev.info},
                    {"sm_clock_max_mhz", sh_.max_clock_mhz},
                    {"memory_clock_max_mhz", memory_khz / 1000.0},
                    {"l2_bytes", l2},
                    {"l2_flush_bytes", sh_.flush_bytes},
                    {"timer", "CUDA events around one graph replay, queued behind a blocking kernel"},
                    {"clock", "clock64 cycles over a 50 us globaltimer interval on one SM, right after each sample"}};
    return Ok{};
  }

  [[nodiscard]] const Json& info() const override { return sh_.info; }
  [[nodiscard]] double reference_clock_mhz() const override { return sh_.max_clock_mhz; }

  Expected<std::unique_ptr<timing::TimedArm>> arm(const timing::TimeSpec& spec, const op::Weights* weights,
                                                  std::size_t arm, bool shared_module) override {
    if (spec.ab) {
      return std::unique_ptr<timing::TimedArm>(std::make_unique<AbTimedArm>(sh_, spec, *weights, arm, shared_module));
    }
    return std::unique_ptr<timing::TimedArm>(std::make_unique<KernelTimedArm>(sh_, spec, arm, shared_module));
  }

  Expected<std::unique_ptr<timing::TimedArm>> external_arm(ExternalArm arm) override {
    return std::unique_ptr<timing::TimedArm>(std::make_unique<ExternalTimedArm>(sh_, std::move(arm)));
  }

 private:
  Shared sh_;
};

}  // namespace

Expected<std::unique_ptr<TimingBackend>> open_cuda_timing() {
  auto t = std::make_unique<CudaTiming>();
  if (auto ok = t->init(); !ok) return ok.error();
  return std::unique_ptr<TimingBackend>(std::move(t));
}

}  // namespace bitproof

#else

namespace bitproof {

Expected<std::unique_ptr<TimingBackend>> open_cuda_timing() {
  return Error{"time: this bitproof was built without the CUDA backend (timing needs a GPU)", kExitNoBackend};
}

}  // namespace bitproof

#endif
