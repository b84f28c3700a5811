// The CUDA backend's host side: loads the embedded kernel images (the fatbins
// of kernels/sweep.cu, as is and with --use_fast_math) with cuModuleLoadData,
// checks that they were built from this registry, and runs a spec:
//
//   small domains (<= kFullDigestLimit cases): bp_eval_hw copies every case's
//     bits back; the engine's sweep_range then compares them with the soft
//     model case by case on all CPU cores, and checks the claims and the
//     digest on the hardware bits.
//   large domains: bp_sweep_hw checks the claims on the device and returns per
//     chunk only the chunk sums and failing counts. On the blocks ModelBlocks
//     picks, bp_sweep_check runs them again: the same sweep, its words demanded
//     equal to bp_sweep_hw's, with each staged output (the bits the chunk sums
//     add) checked against the soft model compiled for the device; per chunk
//     the differing cases and the first of them. The
//     first `keep` failing cases are found by re-running just their chunks
//     with bp_eval_hw and comparing on the CPU.
//   --use_fast_math: the same claim check with the fast-math image; reported
//     per claim in `info`, never in `result`.
//   user recipes: the spec's own image (src/backend/cuda_user.hpp: NVRTC and
//     nvJitLink, cached), the same kernels with the user's code linked in.
//     Their bits are compared with the CPU worker's (the host header) on every
//     case the CPU tabulates: the model check of a user recipe.
#include "backend/backend.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "backend/cuda_driver.hpp"
#include "backend/cuda_user.hpp"
#include "format/diff_kind.hpp"
#include "backend/model_blocks.hpp"
#include "backend/sweep_abi.hpp"
#include "backend/vendor_paths.hpp"
#include "hash/digest.hpp"
#include "user/process.hpp"
#include "user/user_recipes.hpp"

namespace bitproof::kernel_images {
extern const unsigned char* const kDefault;
extern const std::size_t kDefaultSize;
extern const unsigned char* const kFastMath;
extern const std::size_t kFastMathSize;
extern const unsigned char* const kUserLto[3];  // by kernel slot count 2, 4, 8
extern const std::size_t kUserLtoSize[3];
extern const char kArchitectures[];
extern const char kNvccVersion[];
}  // namespace bitproof::kernel_images

namespace bitproof {
namespace {

static_assert(abi::kMaxInputs == kMaxArity, "the kernels' domain holds every input a recipe takes");

using cuda::Driver;

std::uint64_t registry_hash() {
  std::uint64_t h = abi::kFnvBasis;
  for (const RecipeEntry& r : all_recipes()) {
    h = abi::fnv1a(h, r.card->name.data(), r.card->name.size());
    h = abi::fnv1a(h, "\n", 1);
  }
  return h;
}

// Device memory, freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ != 0) drv_->cuMemFree(ptr_);
  }
  Expected<Ok> allocate(const Driver* drv, std::size_t bytes) {
    drv_ = drv;
    BP_CU(drv->cuMemAlloc(&ptr_, std::max<std::size_t>(bytes, 4)));
    return Ok{};
  }
  [[nodiscard]] CUdeviceptr get() const { return ptr_; }

 private:
  const Driver* drv_ = nullptr;
  CUdeviceptr ptr_ = 0;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct Module {
  CUmodule handle = nullptr;
  std::string sha256;
  std::size_t bytes = 0;
};

// Launch-time view of a spec: its recipes padded to a kernel's slot count,
// its `equal` claims as pair masks, its input tables on the device.
struct Plan {
  const Module* module = nullptr;  // the catalogue's image, or the spec's own (user recipes)
  Json user_info;                  // how the spec's image was made (user recipes)
  int slots = 2;  // 2, 4 or 8
  abi::Domain domain{};
  abi::Recipes recipes{};
  abi::Claims claims{};
  abi::KindBits kind{};
  DeviceBuffer tables[abi::kMaxInputs];
};

// Pinned host memory (cuMemHostAlloc), freed with the object.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() {
    if (ptr_ != nullptr) drv_->cuMemFreeHost(ptr_);
  }
  Expected<Ok> allocate(const Driver* drv, std::size_t bytes) {
    drv_ = drv;
    BP_CU(drv->cuMemHostAlloc(&ptr_, std::max<std::size_t>(bytes, 4), 0));
    return Ok{};
  }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  const Driver* drv_ = nullptr;
  void* ptr_ = nullptr;
};

// A stream of its own (blocking: the legacy default stream's launches, the
// sampled model checks, still wait for it), synchronized and destroyed with
// the object so that nothing queued outlives the buffers declared before it.
class Stream {
 public:
  explicit Stream(const Driver* drv) : drv_(drv) {}
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (stream_ == nullptr) return;
    drv_->cuStreamSynchronize(stream_);
    drv_->cuStreamDestroy(stream_);
  }
  Expected<Ok> create() {
    const Driver* drv = drv_;
    BP_CU(drv->cuStreamCreate(&stream_, CU_STREAM_DEFAULT));
    return Ok{};
  }
  [[nodiscard]] CUstream get() const { return stream_; }

 private:
  const Driver* drv_;
  CUstream stream_ = nullptr;
};

// One batch of the pipelined claim sweep: its device words, their pinned host
// copy, and events that time the kernel and mark the copy done.
struct PipeSlot {
  explicit PipeSlot(const Driver* d) : drv(d) {}
  PipeSlot(const PipeSlot&) = delete;
  PipeSlot& operator=(const PipeSlot&) = delete;
  ~PipeSlot() {
    for (CUevent e : {start, stop, copied}) {
      if (e != nullptr) drv->cuEventDestroy(e);
    }
  }
  Expected<Ok> open(std::uint64_t max_chunks) {
    if (auto ok = sums.allocate(drv, max_chunks * abi::kSumWords * 4); !ok) return ok;
    if (auto ok = kinds.allocate(drv, abi::kMaxClaims * abi::kKinds * 8); !ok) return ok;
    if (auto ok = host_sums.allocate(drv, max_chunks * abi::kSumWords * 4); !ok) return ok;
    if (auto ok = host_kinds.allocate(drv, abi::kMaxClaims * abi::kKinds * 8); !ok) return ok;
    for (CUevent* e : {&start, &stop, &copied}) BP_CU(drv->cuEventCreate(e, CU_EVENT_DEFAULT));
    return Ok{};
  }
  const Driver* drv;
  DeviceBuffer sums, kinds;
  HostBuffer host_sums, host_kinds;
  CUevent start = nullptr, stop = nullptr, copied = nullptr;
  std::uint64_t chunks = 0;
};

class CudaBackend : public Backend {
 public:
  [[nodiscard]] std::string name() const override { return "cuda"; }
  [[nodiscard]] Json describe() const override {
    Json d{{"device", device_info_}, {"label", label_}};
    if (!last_sweep_.is_null()) d["sweep"] = last_sweep_;
    return d;
  }

  static Expected<std::unique_ptr<CudaBackend>> open(int ordinal = 0) {
    const auto start = std::chrono::steady_clock::now();
    auto loaded = cuda::driver();
    if (!loaded) return loaded.error();
    auto backend = std::make_unique<CudaBackend>();
    backend->drv_ = *loaded;
    backend->startup_["driver_s"] = seconds_since(start);
    if (auto ok = backend->init(ordinal); !ok) return ok.error();
    return backend;
  }

  CudaBackend() = default;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;
  ~CudaBackend() override {
    if (drv_ == nullptr) return;
    for (Module* m : {&default_, &fast_math_}) {
      if (m->handle != nullptr) drv_->cuModuleUnload(m->handle);
    }
    for (auto& [key, m] : user_modules_) {
      if (m.handle != nullptr) drv_->cuModuleUnload(m.handle);
    }
    if (context_ != nullptr) drv_->cuDevicePrimaryCtxRelease(device_);
  }

  [[nodiscard]] Expected<BackendRun> prove(const Spec& spec, const BackendOptions& options) override;
  [[nodiscard]] Expected<SweepPart> sweep_part(const Spec& spec, const BackendOptions& options, std::uint64_t begin,
                                               std::uint64_t end) override;

 private:
  Expected<Ok> init(int ordinal);
  Expected<Ok> load_module(Module& m, const unsigned char* image, std::size_t size);
  Expected<Ok> plan(const Spec& spec, Plan& p);
  // The spec's own image, linked for its recipes (the plan's slots), made the
  // plan's module: found in the cache or built (build_user_image).
  Expected<cuda::UserImage> linked_module(const user::UserRecipes& user, Plan& p);
  // The spec's own image: its user recipes linked into the sweep kernels.
  Expected<Ok> user_module(const Spec& spec, Plan& p);
  // Catalogue recipes on a large domain: the image linked for the spec's
  // recipes alone when options.specialize asks for it (BackendOptions).
  // `kernels` says which kernels run, and why.
  Expected<Ok> specialize(const Spec& spec, const BackendOptions& options, Plan& p, Json& kernels);
  // User recipes on a large domain: their device bits against the CPU tables.
  Expected<Ok> compare_user_tables(const Spec& spec, const EngineOptions& engine, const Plan& p, std::uint64_t begin,
                                   std::uint64_t end, SweepPart& part);
  Expected<CUfunction> function(const Module& m, const std::string& name);
  Expected<float> launch(CUfunction f, unsigned grid, void* params, std::size_t size);
  // Every recipe's bits for cases [begin, begin + n), case-major.
  Expected<std::vector<std::uint32_t>> eval(const Module& m, const Plan& p, std::uint64_t begin, std::uint64_t n);
  Expected<Ok> prove_small(const Spec& spec, const BackendOptions& options, const Plan& p, BackendRun& run);
  Expected<Ok> prove_large(const Spec& spec, const BackendOptions& options, const Plan& p, BackendRun& run);
  struct ChunkScan {
    std::vector<std::uint32_t> words;  // abi::kSumWords per chunk
    std::vector<unsigned long long> kinds;
    std::vector<abi::ModelWords> model;  // a chunk each when the scan checked the model
    std::vector<float> ms;
  };
  // What a large sweep measured besides its part: kernel times, and the
  // fast-math image's claim counts when it ran.
  struct LargeRun {
    std::vector<float> hw_ms, model_ms, fast_ms;
    std::uint64_t cases_per_launch = 0;
    std::uint64_t checked_cases = 0;  // against the soft model (and the fast-math image when it ran)
    std::uint64_t model_stride = 0;   // ModelBlocks::stride() of the domain
    bool fast_math = false;
    std::vector<std::uint64_t> fast_failing;  // per claim
    bool fast_identical = true;               // every chunk word the same as the default image's
    // Wall seconds of the batch loop: with the kernels' times, what the device
    // did not spend in a kernel (copies, launches, the host) is attributed.
    double loop_s = 0;
    // The kernels' CUDA-event times and the loop's (report info "timing").
    [[nodiscard]] Json timing() const;
  };
  // Chunks [begin/kChunkCases, ...) of [begin, end) checked on the device (large
  // domains), one block (kBlockCases) a batch: each batch's chunk words fold
  // into its block digest as it completes, so memory stays one batch's.
  Expected<SweepPart> large_part(const Spec& spec, const EngineOptions& engine, const Plan& p, std::uint64_t begin,
                                 std::uint64_t end, int repeat, LargeRun& run);
  // One batch's claims: counts and kinds added to `part`, chunks to re-run for
  // counterexamples appended to `rerun`.
  void count_batch(const ChunkScan& hw, std::uint64_t first, std::size_t keep, SweepPart& part,
                   std::vector<std::uint64_t>& rerun) const;
  Expected<Ok> rerun_chunks(const Spec& spec, const EngineOptions& engine, const Plan& p,
                            std::vector<std::uint64_t> rerun, SweepPart& part);
  // bp_sweep_hw on chunks [first_chunk, first_chunk + chunks), `repeat` times;
  // with `check_model`, bp_sweep_check once (the same words, and the model check's).
  Expected<ChunkScan> scan(const Module& m, const Plan& p, std::uint64_t first_chunk, std::uint64_t chunks,
                           int repeat, bool check_model = false);
  // The same scan queued without waiting: clear and launch on `stream`, copy
  // back on `copies` once the kernel is done;
  // take_scan waits for it and returns what scan would have.
  Expected<Ok> queue_scan(PipeSlot& slot, CUfunction f, const Plan& p, std::uint64_t first_chunk, std::uint64_t chunks,
                          CUstream stream, CUstream copies);
  Expected<ChunkScan> take_scan(PipeSlot& slot);
  // Re-runs whole chunks on the device and checks them on the CPU (hardware table).
  Expected<SweepPart> rerun_chunk(const Spec& spec, const EngineOptions& engine, const Plan& p,
                                  const CaseEvaluator& eval, std::uint64_t chunk);

  const Driver* drv_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  // The --use_fast_math image, loaded on first use (null until then).
  Expected<const Module*> fast_math_module();

  Module default_;
  Module fast_math_;
  // Seconds the start-up took, by step (info["startup"]): the driver, the
  // context, each kernel image as it is loaded.
  Json startup_ = Json::object();
  std::map<std::string, Module> user_modules_;  // by image key
  Json device_info_;
  Json last_sweep_;  // the last on-device sweep_part's kernels and timing (describe)
  std::string label_;
  int major_ = 0;  // compute capability of the device
  int minor_ = 0;
};

Expected<Ok> CudaBackend::init(int ordinal) {
  const Driver* drv = drv_;
  auto start = std::chrono::steady_clock::now();
  auto opened = open_device(drv, "--backend cuda", ordinal);
  if (!opened) return opened.error();
  device_ = opened->device;
  context_ = opened->context;
  label_ = opened->label;
  major_ = opened->major;
  minor_ = opened->minor;
  device_info_ = opened->info;
  device_info_["nvcc"] = std::string(kernel_images::kNvccVersion);
  startup_["context_s"] = seconds_since(start);
  start = std::chrono::steady_clock::now();
  if (auto ok = load_module(default_, kernel_images::kDefault, kernel_images::kDefaultSize); !ok) return ok;
  startup_["kernel_image_s"] = seconds_since(start);
  return Ok{};
}

Expected<const Module*> CudaBackend::fast_math_module() {
  if (fast_math_.handle == nullptr) {
    const auto start = std::chrono::steady_clock::now();
    if (auto ok = load_module(fast_math_, kernel_images::kFastMath, kernel_images::kFastMathSize); !ok) return ok.error();
    startup_["fast_math_image_s"] = seconds_since(start);
  }
  return &fast_math_;
}

Expected<Ok> CudaBackend::load_module(Module& m, const unsigned char* image, std::size_t size) {
  const Driver* drv = drv_;
  Sha256 h;
  h.update(image, size);
  m.sha256 = to_hex(h.finish());
  m.bytes = size;
  const CUresult rc = drv->cuModuleLoadData(&m.handle, image);
  if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU) {
    return Error{fmt::format("--backend cuda: the kernels were built for sm_{} only, which this GPU cannot run "
                             "(rebuild with -DCMAKE_CUDA_ARCHITECTURES=...)",
                             kernel_images::kArchitectures),
                 kExitNoBackend};
  }
  BP_CU(rc);
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
  std::uint32_t version = 0;
  unsigned long long table = 0;
  BP_CU(drv->cuModuleGetGlobal(&ptr, &bytes, m.handle, "bp_abi_version"));
  BP_CU(drv->cuMemcpyDtoH(&version, ptr, sizeof version));
  BP_CU(drv->cuModuleGetGlobal(&ptr, &bytes, m.handle, "bp_recipe_table"));
  BP_CU(drv->cuMemcpyDtoH(&table, ptr, sizeof table));
  if (version != abi::kAbiVersion || table != registry_hash()) {
    return Error{fmt::format("--backend cuda: the kernel image (abi {}, recipe table {:016x}) was not built from this "
                             "program's recipes.def (abi {}, {:016x})",
                             version, table, abi::kAbiVersion, registry_hash()),
                 kExitNoBackend};
  }
  return Ok{};
}

Expected<CUfunction> CudaBackend::function(const Module& m, const std::string& name) {
  const Driver* drv = drv_;
  CUfunction f = nullptr;
  BP_CU(drv->cuModuleGetFunction(&f, m.handle, name.c_str()));
  return f;
}

Expected<float> CudaBackend::launch(CUfunction f, unsigned grid, void* params, std::size_t size) {
  const Driver* drv = drv_;
  (void)size;  // every kernel takes one struct parameter: kernelParams holds its address
  void* args[] = {params};
  CUevent start = nullptr, stop = nullptr;
  BP_CU(drv->cuEventCreate(&start, CU_EVENT_DEFAULT));
  BP_CU(drv->cuEventCreate(&stop, CU_EVENT_DEFAULT));
  BP_CU(drv->cuEventRecord(start, nullptr));
  BP_CU(drv->cuLaunchKernel(f, grid, 1, 1, abi::kThreads, 1, 1, 0, nullptr, args, nullptr));
  BP_CU(drv->cuEventRecord(stop, nullptr));
  BP_CU(drv->cuEventSynchronize(stop));
  BP_CU(drv->cuCtxSynchronize());
  float ms = 0;
  BP_CU(drv->cuEventElapsedTime(&ms, start, stop));
  BP_CU(drv->cuEventDestroy(start));
  BP_CU(drv->cuEventDestroy(stop));
  return ms;
}

Expected<Ok> CudaBackend::plan(const Spec& spec, Plan& p) {
  const Driver* drv = drv_;
  const auto recipes = spec.recipes();
  p.module = &default_;
  if (spec.user && spec.user->has_tables()) {
    return Error{fmt::format("{}: user_recipes: an output table is the bits a kernel already wrote: the cpu backend "
                             "checks it (--backend cpu)",
                             spec.path),
                 kExitNoBackend};
  }
  if (recipes.size() > static_cast<std::size_t>(abi::kMaxSlots)) {
    return Error{fmt::format("{}: the cuda backend takes at most {} recipes per spec (this one has {})", spec.path,
                             abi::kMaxSlots, recipes.size())};
  }
  p.slots = recipes.size() <= 2 ? 2 : (recipes.size() <= 4 ? 4 : 8);
  p.domain.cases = spec.case_count();
  p.domain.inputs = static_cast<std::uint32_t>(spec.inputs.size());
  if (spec.inputs.size() > static_cast<std::size_t>(abi::kMaxInputs)) {
    return Error{fmt::format("{}: the cuda backend takes at most {} inputs", spec.path, abi::kMaxInputs)};
  }
  for (std::uint32_t& n : p.domain.count) n = 1;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const InputDomain& in = spec.inputs[i];
    if (in.count() > 0xFFFFFFFFu) {
      return Error{fmt::format("{}: inputs[{}]: the cuda backend sweeps at most 2^32 - 1 codes of one input (this one "
                               "has {}); use --backend cpu",
                               spec.path, i, in.count())};
    }
    p.domain.count[i] = static_cast<std::uint32_t>(in.count());
    if (in.range) {
      p.domain.lo[i] = in.range->lo;
      continue;
    }
    if (auto ok = p.tables[i].allocate(drv, in.codes.size() * 4); !ok) return ok;
    BP_CU(drv->cuMemcpyHtoD(p.tables[i].get(), in.codes.data(), in.codes.size() * 4));
    p.domain.table[i] = p.tables[i].get();
  }
  p.recipes.slots = static_cast<std::uint32_t>(recipes.size());
  const auto all = all_recipes();
  for (int j = 0; j < abi::kMaxSlots; ++j) {
    p.recipes.index[j] = -1;
    if (j >= static_cast<int>(recipes.size())) continue;
    // A user recipe k is index catalogue size + k in the spec's image (kernels/sweep.cu).
    p.recipes.index[j] = static_cast<std::int32_t>(recipes[j]->is_user() ? all.size() + recipes[j]->user_slot
                                                                          : recipes[j] - all.data());
  }
  if (spec.user) {
    if (auto ok = user_module(spec, p); !ok) return ok;
  }
  const auto slot = [&](const RecipeEntry* r) {
    return static_cast<int>(std::find(recipes.begin(), recipes.end(), r) - recipes.begin());
  };
  p.claims.count = static_cast<std::uint32_t>(std::min<std::size_t>(spec.claims.size(), abi::kMaxClaims));
  for (std::size_t c = 0; c < p.claims.count; ++c) {
    const Claim& claim = spec.claims[c];
    p.claims.first[c] = slot(claim.recipes[0]);
    for (int k = 0; k < abi::kMaxSlots; ++k) p.claims.others[c][k] = -1;
    for (std::size_t k = 1; k < claim.recipes.size(); ++k) {
      p.claims.others[c][k - 1] = slot(claim.recipes[k]);
      p.claims.pairs[c] |= std::uint64_t{1} << (p.claims.first[c] * abi::kMaxSlots + slot(claim.recipes[k]));
    }
  }
  const KindFormat f = kind_format(spec_of(spec.output));
  p.kind = {f.sign_mask, f.exp_max, f.man_mask, f.man_bits, f.specials, f.int_zero};
  return Ok{};
}

// The virtual architecture of the user image: the newest the kernels were
// built for that this device runs (their LTO IR is for those only).
std::pair<int, int> lto_architecture(int major, int minor) {
  int best = -1;
  const std::string list = kernel_images::kArchitectures;
  for (std::size_t at = 0; at < list.size();) {
    const std::size_t end = std::min(list.find(';', at), list.size());
    const int arch = std::atoi(list.substr(at, end - at).c_str());
    if (arch <= major * 10 + minor && arch > best) best = arch;
    at = end + 1;
  }
  return best < 0 ? std::pair{major, minor} : std::pair{best / 10, best % 10};
}

Expected<cuda::UserImage> CudaBackend::linked_module(const user::UserRecipes& user, Plan& p) {
  const auto [major, minor] = lto_architecture(major_, minor_);
  const int which = p.slots == 2 ? 0 : (p.slots == 4 ? 1 : 2);
  auto image = cuda::build_user_image(
      user, {p.recipes.index, p.recipes.index + abi::kMaxSlots}, major, minor,
      {reinterpret_cast<const char*>(kernel_images::kUserLto[which]), kernel_images::kUserLtoSize[which]});
  if (!image) return image.error();
  auto [it, fresh] = user_modules_.try_emplace(image->key);
  if (fresh) {
    auto bytes = reinterpret_cast<const unsigned char*>(image->cubin.data());
    if (auto ok = load_module(it->second, bytes, image->cubin.size()); !ok) {
      user_modules_.erase(it);
      return ok.error();
    }
  }
  p.module = &it->second;
  return image;
}

Expected<Ok> CudaBackend::user_module(const Spec& spec, Plan& p) {
  const user::UserRecipes& user = *spec.user;
  auto image = linked_module(user, p);
  if (!image) return image.error();
  const auto [major, minor] = lto_architecture(major_, minor_);
  const std::string missing = user.cpu_witness_missing(spec.inputs);
  p.user_info = Json{{"compiled_with", image->toolkit},
                     {"architecture", fmt::format("compute_{}{} (LTO) linked for sm_{}{}", major, minor, major_, minor_)},
                     {"options", image->options},
                     {"fmad", user.fmad},
                     {"image_key", image->key},
                     {"cached", image->cached},
                     {"seconds", image->seconds},
                     {"cache_key_covers", image->sources_note},
                     {"cpu_witness", missing.empty() ? std::string("the CPU worker's bits (host header), every case")
                                                     : "missing: " + missing},
                     {"fast_math", "not run for user recipes (their image is built once, without --use_fast_math)"}};
  return Ok{};
}

Expected<Ok> CudaBackend::specialize(const Spec& spec, const BackendOptions& options, Plan& p, Json& kernels) {
  using S = BackendOptions::Specialize;
  if (spec.user) {
    kernels = Json{{"kernels", "linked for the spec (user recipes)"}};
    return Ok{};
  }
  if (spec.case_count() <= kFullDigestLimit) {
    kernels = Json{{"kernels", "generic"}, {"why", "copy-back domain (at most 2^24 cases): no claim sweep to specialize"}};
    return Ok{};
  }
  if (options.specialize == S::kOff ||
      (options.specialize == S::kAuto && spec.case_count() < kSpecializeCases)) {
    kernels = Json{{"kernels", "generic"},
                   {"why", options.specialize == S::kOff ? "--specialize off"
                                                          : "--specialize auto: below 2^40 cases the link costs more "
                                                            "than it saves"}};
    return Ok{};
  }
  user::UserRecipes none;  // no user recipe: the link keeps the spec's catalogue recipes alone
  none.spec_path = spec.path;
  auto image = linked_module(none, p);
  if (!image) {
    if (options.specialize == S::kOn) return image.error();
    kernels = Json{{"kernels", "generic"}, {"why", "could not specialize: " + image.error().message}};
    return Ok{};
  }
  kernels = Json{{"kernels", "specialized: the sweep kernels linked for this spec's recipes alone"},
                 {"compiled_with", image->toolkit},
                 {"image_key", image->key},
                 {"cached", image->cached},
                 {"seconds", image->seconds}};
  return Ok{};
}

Expected<Ok> CudaBackend::compare_user_tables(const Spec& spec, const EngineOptions& engine, const Plan& p,
                                              std::uint64_t begin, std::uint64_t end, SweepPart& part) {
  const CaseEvaluator evaluator(spec);
  const std::size_t slots = p.recipes.slots;
  std::vector<std::size_t> witnessed;
  for (std::size_t r = 0; r < slots; ++r) {
    if (evaluator.recipes()[r]->is_user() && evaluator.witnessed(r)) witnessed.push_back(r);
  }
  if (witnessed.empty()) return Ok{};
  constexpr std::uint64_t kBatch = std::uint64_t{1} << 22;
  std::vector<std::uint32_t> codes(spec.inputs.size()), soft(slots);
  for (std::uint64_t at = begin; at < end; at += kBatch) {
    const std::uint64_t n = std::min(kBatch, end - at);
    auto hw = eval(*p.module, p, at, n);
    if (!hw) return hw.error();
    for (std::uint64_t k = 0; k < n; ++k) {
      evaluator.codes_of(at + k, codes.data());
      evaluator.soft_outputs(codes.data(), soft.data());
      for (const std::size_t r : witnessed) {
        const std::uint32_t bits = (*hw)[k * slots + r];
        if (bits == soft[r]) continue;
        ++part.model_disagreement_count;
        if (part.model_disagreements.size() < engine.keep) {
          part.model_disagreements.push_back({at + k, codes, evaluator.recipes()[r], soft[r], soft[r], bits});
        }
      }
    }
  }
  part.model_compared += (end - begin) * witnessed.size();
  std::sort(part.model_disagreements.begin(), part.model_disagreements.end(),
            [](const ModelDisagreement& a, const ModelDisagreement& b) { return a.case_index < b.case_index; });
  if (part.model_disagreements.size() > engine.keep) part.model_disagreements.resize(engine.keep);
  return Ok{};
}

Expected<std::vector<std::uint32_t>> CudaBackend::eval(const Module& m, const Plan& p, std::uint64_t begin,
                                                       std::uint64_t n) {
  const Driver* drv = drv_;
  constexpr std::uint64_t kBatch = std::uint64_t{1} << 22;
  const std::size_t slots = p.recipes.slots;
  std::vector<std::uint32_t> out(n * slots);
  DeviceBuffer buffer;
  if (auto ok = buffer.allocate(drv, std::min(n, kBatch) * slots * 4); !ok) return ok.error();
  auto kernel = function(m, "bp_eval_hw");
  if (!kernel) return kernel.error();
  for (std::uint64_t done = 0; done < n; done += kBatch) {
    const std::uint64_t count = std::min(kBatch, n - done);
    abi::EvalParams params{p.domain, p.recipes, begin + done, count, buffer.get()};
    const auto grid =
        static_cast<unsigned>(std::min<std::uint64_t>((count + abi::kThreads - 1) / abi::kThreads, 65535));
    if (auto ms = launch(*kernel, grid, &params, sizeof params); !ms) return ms.error();
    BP_CU(drv->cuMemcpyDtoH(out.data() + done * slots, buffer.get(), count * slots * 4));
  }
  return out;
}

Expected<CudaBackend::ChunkScan> CudaBackend::scan(const Module& m, const Plan& p, std::uint64_t first_chunk,
                                                   std::uint64_t chunks, int repeat, bool check_model) {
  const Driver* drv = drv_;
  ChunkScan out;
  DeviceBuffer sums, kinds, model;
  if (auto ok = sums.allocate(drv, chunks * abi::kSumWords * 4); !ok) return ok.error();
  if (auto ok = kinds.allocate(drv, abi::kMaxClaims * abi::kKinds * 8); !ok) return ok.error();
  if (check_model) {
    if (auto ok = model.allocate(drv, chunks * sizeof(abi::ModelWords)); !ok) return ok.error();
    repeat = 1;
  }
  auto f = function(m, fmt::format("{}_{}", check_model ? "bp_sweep_check" : "bp_sweep_hw", p.slots));
  if (!f) return f.error();
  for (int r = 0; r < std::max(repeat, 1); ++r) {
    BP_CU(drv->cuMemsetD8(sums.get(), 0, chunks * abi::kSumWords * 4));
    BP_CU(drv->cuMemsetD8(kinds.get(), 0, abi::kMaxClaims * abi::kKinds * 8));
    abi::SweepParams params{p.domain, p.recipes, p.claims,   p.kind,     first_chunk,
                            chunks,   sums.get(), kinds.get(), model.get()};
    auto ms = launch(*f, static_cast<unsigned>(chunks), &params, sizeof params);
    if (!ms) return ms.error();
    out.ms.push_back(*ms);
  }
  out.words.resize(chunks * abi::kSumWords);
  out.kinds.resize(abi::kMaxClaims * abi::kKinds);
  BP_CU(drv->cuMemcpyDtoH(out.words.data(), sums.get(), out.words.size() * 4));
  BP_CU(drv->cuMemcpyDtoH(out.kinds.data(), kinds.get(), out.kinds.size() * 8));
  if (check_model) {
    out.model.resize(chunks);
    BP_CU(drv->cuMemcpyDtoH(out.model.data(), model.get(), chunks * sizeof(abi::ModelWords)));
  }
  return out;
}

Expected<Ok> CudaBackend::queue_scan(PipeSlot& slot, CUfunction f, const Plan& p, std::uint64_t first_chunk,
                                     std::uint64_t chunks, CUstream stream, CUstream copies) {
  const Driver* drv = drv_;
  const std::size_t sum_bytes = chunks * abi::kSumWords * 4;
  constexpr std::size_t kKindBytes = abi::kMaxClaims * abi::kKinds * 8;
  BP_CU(drv->cuMemsetD8Async(slot.sums.get(), 0, sum_bytes, stream));
  BP_CU(drv->cuMemsetD8Async(slot.kinds.get(), 0, kKindBytes, stream));
  abi::SweepParams params{p.domain, p.recipes,       p.claims,        p.kind, first_chunk,
                          chunks,   slot.sums.get(), slot.kinds.get(), 0};
  void* args[] = {&params};
  BP_CU(drv->cuEventRecord(slot.start, stream));
  BP_CU(drv->cuLaunchKernel(f, static_cast<unsigned>(chunks), 1, 1, abi::kThreads, 1, 1, 0, stream, args, nullptr));
  BP_CU(drv->cuEventRecord(slot.stop, stream));
  BP_CU(drv->cuStreamWaitEvent(copies, slot.stop, 0));
  BP_CU(drv->cuMemcpyDtoHAsync(slot.host_sums.as<void>(), slot.sums.get(), sum_bytes, copies));
  BP_CU(drv->cuMemcpyDtoHAsync(slot.host_kinds.as<void>(), slot.kinds.get(), kKindBytes, copies));
  BP_CU(drv->cuEventRecord(slot.copied, copies));
  slot.chunks = chunks;
  return Ok{};
}

Expected<CudaBackend::ChunkScan> CudaBackend::take_scan(PipeSlot& slot) {
  const Driver* drv = drv_;
  BP_CU(drv->cuEventSynchronize(slot.copied));
  float ms = 0;
  BP_CU(drv->cuEventElapsedTime(&ms, slot.start, slot.stop));
  ChunkScan out;
  out.ms.push_back(ms);
  const auto* words = slot.host_sums.as<const std::uint32_t>();
  out.words.assign(words, words + slot.chunks * abi::kSumWords);
  const auto* kinds = slot.host_kinds.as<const unsigned long long>();
  out.kinds.assign(kinds, kinds + abi::kMaxClaims * abi::kKinds);
  return out;
}

Expected<SweepPart> CudaBackend::rerun_chunk(const Spec& spec, const EngineOptions& engine, const Plan& p,
                                             const CaseEvaluator& eval, std::uint64_t chunk) {
  const std::uint64_t begin = chunk * kChunkCases;
  const std::uint64_t end = std::min(spec.case_count(), begin + kChunkCases);
  auto table = this->eval(*p.module, p, begin, end - begin);
  if (!table) return table.error();
  return sweep_range(eval, spec, engine, begin, end, table->data());
}

double total_seconds(const std::vector<float>& ms) {
  double total = 0;
  for (float m : ms) total += m;
  return total / 1000.0;
}

Json timing_json(const std::vector<float>& ms, std::uint64_t cases) {
  std::vector<float> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? 0.0 : sorted[sorted.size() / 2];
  const double best = sorted.empty() ? 0.0 : sorted.front();
  return Json{{"launches", ms.size()},
              {"median_ms", median},
              {"min_ms", best},
              {"total_s", total_seconds(ms)},
              {"cases_per_second", median > 0 ? static_cast<double>(cases) / (median / 1000.0) : 0.0}};
}

Json CudaBackend::LargeRun::timing() const {
  const double kernels_s = total_seconds(hw_ms) + total_seconds(model_ms) + total_seconds(fast_ms);
  return Json{{"sweep", timing_json(hw_ms, cases_per_launch)},
              {"model", timing_json(model_ms, cases_per_launch)},
              {"loop_s", loop_s},
              {"outside_kernels_s", std::max(0.0, loop_s - kernels_s)}};
}

// A hardware table of cases [begin, end) checked case by case on the CPU.
SweepPart checked_table(const Spec& spec, const EngineOptions& engine, const std::vector<std::uint32_t>& table,
                        std::size_t slots, std::uint64_t begin, std::uint64_t end) {
  const CaseEvaluator evaluator(spec);
  return sweep_parts(
      spec, engine,
      [&](std::uint64_t b, std::uint64_t e) {
        return sweep_range(evaluator, spec, engine, b, e, table.data() + (b - begin) * slots);
      },
      begin, end);
}

// Claim counts and model comparison of a part covering the whole domain.
ProofResult merged(const Spec& spec, const EngineOptions& engine, SweepPart part) {
  std::vector<SweepPart> whole;
  whole.push_back(std::move(part));
  return merge_parts(spec, engine, std::move(whole));
}

// The proof result of such a part: with the sampled oracle witness added
// above the full-witness limit, as run_sweep does.
ProofResult whole_result(const Spec& spec, const EngineOptions& engine, SweepPart part) {
  ProofResult result = merged(spec, engine, std::move(part));
  if (result.witness_mode == WitnessMode::kSampled) add_sampled_witness(spec, engine, result);
  return result;
}

Expected<Ok> CudaBackend::prove_small(const Spec& spec, const BackendOptions& options, const Plan& p, BackendRun& run) {
  EngineOptions engine = options.engine;
  engine.threads = resolve_threads(engine.threads);
  const std::uint64_t cases = spec.case_count();
  const std::size_t slots = p.recipes.slots;
  auto table = eval(*p.module, p, 0, cases);
  if (!table) return table.error();
  run.result = whole_result(spec, engine, checked_table(spec, engine, *table, slots, 0, cases));
  run.info["mode"] = "copy-back: every case's bits compared with the soft model on the CPU";
  if (!options.fast_math || spec.user) return Ok{};
  engine.progress = nullptr;
  auto fast_module = fast_math_module();
  if (!fast_module) return fast_module.error();
  auto fast = eval(**fast_module, p, 0, cases);
  if (!fast) return fast.error();
  const ProofResult fm = merged(spec, engine, checked_table(spec, engine, *fast, slots, 0, cases));
  std::uint64_t changed = 0;
  for (std::size_t i = 0; i < table->size(); ++i) changed += (*table)[i] != (*fast)[i] ? 1 : 0;
  Json claims = Json::array();
  for (const ClaimResult& c : fm.claims) {
    claims.push_back({{"holds", c.holds()}, {"holding", c.holding}, {"failing", c.cases - c.holding}});
  }
  run.info["fast_math"] = Json{{"kernel_image_sha256", fast_math_.sha256},
                               {"claims", claims},
                               {"evaluations_changed", changed},
                               {"model_disagreements", fm.model_disagreement_count}};
  return Ok{};
}

// Engine chunk-sum words (2·recipes + claims per chunk) from the kernel's layout.
std::vector<std::uint32_t> engine_words(const std::vector<std::uint32_t>& words, std::size_t recipes,
                                        std::size_t claims) {
  const std::size_t chunks = words.size() / abi::kSumWords;
  std::vector<std::uint32_t> out;
  out.reserve(chunks * (2 * recipes + claims));
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::uint32_t* w = words.data() + k * abi::kSumWords;
    out.insert(out.end(), w, w + 2 * recipes);
    out.insert(out.end(), w + 2 * abi::kMaxSlots, w + 2 * abi::kMaxSlots + claims);
  }
  return out;
}

void CudaBackend::count_batch(const ChunkScan& hw, std::uint64_t first, std::size_t keep, SweepPart& part,
                              std::vector<std::uint64_t>& rerun) const {
  const std::uint64_t chunks = hw.words.size() / abi::kSumWords;
  for (std::size_t c = 0; c < part.claims.size(); ++c) {
    ClaimResult& cr = part.claims[c];
    std::uint64_t failing = cr.cases - cr.holding;  // so far, before this batch
    for (std::uint64_t k = 0; k < chunks; ++k) {
      const std::uint32_t n = hw.words[k * abi::kSumWords + 2 * abi::kMaxSlots + c];
      if (n != 0 && failing < keep) rerun.push_back(first + k);
      failing += n;
      cr.holding -= n;
    }
    for (int kind = 1; kind < abi::kKinds; ++kind) {
      const unsigned long long n = hw.kinds[c * abi::kKinds + kind];
      if (n != 0) cr.by_kind[std::string(diff_kind_name(static_cast<DiffKind>(kind)))] += n;
    }
  }
}


Expected<Ok> CudaBackend::rerun_chunks(const Spec& spec, const EngineOptions& engine, const Plan& p,
                                       std::vector<std::uint64_t> rerun, SweepPart& part) {
  const CaseEvaluator evaluator(spec);
  std::sort(rerun.begin(), rerun.end());
  rerun.erase(std::unique(rerun.begin(), rerun.end()), rerun.end());
  for (std::uint64_t k : rerun) {
    auto again = rerun_chunk(spec, engine, p, evaluator, k);
    if (!again) return again.error();
    for (std::size_t c = 0; c < part.claims.size(); ++c) {
      for (Counterexample& cx : again->claims[c].counterexamples) {
        if (part.claims[c].counterexamples.size() < engine.keep)
          part.claims[c].counterexamples.push_back(std::move(cx));
      }
    }
  }
  return Ok{};
}

Expected<SweepPart> CudaBackend::large_part(const Spec& spec, const EngineOptions& engine, const Plan& p,
                                            std::uint64_t begin, std::uint64_t end, int repeat, LargeRun& run) {
  if (spec.claims.size() > static_cast<std::size_t>(abi::kMaxClaims)) {
    return Error{
        fmt::format("{}: the cuda backend checks at most {} claims on the device", spec.path, abi::kMaxClaims)};
  }
  constexpr std::uint64_t kBatchChunks = kBlockCases / kChunkCases;
  // The soft model and the fast-math image on the blocks ModelBlocks picks (all up to
  // 2^36 cases; above, sampled and edge blocks: on every one of 2^48 cases the soft
  // model would take hours).
  const ModelBlocks model_blocks(spec);
  const CaseEvaluator evaluator(spec);
  run.model_stride = model_blocks.stride();
  const std::uint64_t first = begin / kChunkCases;
  const std::uint64_t chunks = (end - begin + kChunkCases - 1) / kChunkCases;
  const std::size_t recipes = p.recipes.slots;
  const std::size_t claims = spec.claims.size();
  SweepPart part;
  part.begin = begin;
  part.end = end;
  part.claims.resize(claims);
  for (ClaimResult& cr : part.claims) cr.cases = cr.holding = end - begin;
  run.cases_per_launch = std::min(end - begin, kBlockCases);
  run.fast_failing.assign(claims, 0);
  const auto all = spec.recipes();
  const auto catalogue_slots = static_cast<std::uint64_t>(
      std::count_if(all.begin(), all.end(), [](const RecipeEntry* r) { return !r->is_user(); }));
  std::vector<std::uint64_t> rerun;
  // Each batch's words fold into its block digest on another thread while the
  // device runs the next batch; parts are appended in batch order.
  std::future<SweepPart> folding;
  const auto append_folded = [&] {
    if (!folding.valid()) return;
    SweepPart piece = folding.get();
    part.chunk_sums.insert(part.chunk_sums.end(), piece.chunk_sums.begin(), piece.chunk_sums.end());
    part.block_digests.insert(part.block_digests.end(), piece.block_digests.begin(), piece.block_digests.end());
    part.kept_chunk_sums.merge(piece.kept_chunk_sums);
  };
  // The claim sweep runs one batch ahead of the host (two slots on a stream),
  // except when timing repeats are asked for (each launch then runs alone).
  const bool pipelined = repeat <= 1;
  PipeSlot slots[2] = {PipeSlot(drv_), PipeSlot(drv_)};
  // The words are copied back on a stream of their own, after the kernel's stop
  // event, so that the next batch's kernel does not wait for the copy (6 MB a
  // 2^32-case block). Over all 2^48 FP16 triples on an H200 host, the time
  // outside the kernels (timing's outside_kernels_s) fell from ~21 s to ~5 s.
  Stream stream(drv_);  // after the slots: destroyed (synchronized) first
  Stream copies(drv_);
  auto sweep = function(*p.module, fmt::format("bp_sweep_hw_{}", p.slots));
  if (!sweep) return sweep.error();
  const auto queue = [&](std::uint64_t batch, PipeSlot& slot) {
    return queue_scan(slot, *sweep, p, batch, std::min(kBatchChunks, first + chunks - batch), stream.get(),
                      copies.get());
  };
  if (pipelined) {
    for (PipeSlot& slot : slots) {
      if (auto ok = slot.open(std::min(kBatchChunks, chunks)); !ok) return ok.error();
    }
    if (auto ok = stream.create(); !ok) return ok.error();
    if (auto ok = copies.create(); !ok) return ok.error();
    if (auto ok = queue(first, slots[0]); !ok) return ok.error();
  }
  int current = 0;
  const auto loop_start = std::chrono::steady_clock::now();
  for (std::uint64_t batch = first; batch < first + chunks; batch += kBatchChunks, current ^= 1) {
    const std::uint64_t n = std::min(kBatchChunks, first + chunks - batch);
    const std::uint64_t batch_begin = batch * kChunkCases;
    const std::uint64_t batch_end = std::min(end, (batch + n) * kChunkCases);
    if (pipelined && batch + n < first + chunks) {
      if (auto ok = queue(batch + n, slots[current ^ 1]); !ok) return ok.error();
    }
    auto hw = pipelined ? take_scan(slots[current]) : scan(*p.module, p, batch, n, repeat);
    if (!hw) return hw.error();
    const bool checked = model_blocks.checked(batch / kBatchChunks);
    // Model: the claim sweep again with its model check, every case of the batch;
    // its words must be the claim kernel's.
    ChunkScan model;
    if (checked) {
      auto scanned = scan(*p.module, p, batch, n, 1, true);
      if (!scanned) return scanned.error();
      model = std::move(*scanned);
      if (model.words != hw->words) {
        return Error{fmt::format("the model-checking sweep's chunk sums for cases {}..{} differ from the claim "
                                 "sweep's: the two kernels computed other bits",
                                 batch_begin, batch_end)};
      }
      if (auto ok = count_model_words(spec, evaluator, model.model, batch, engine.keep, part); !ok) {
        return ok.error();
      }
      part.model_compared += (batch_end - batch_begin) * catalogue_slots;
      run.checked_cases += batch_end - batch_begin;
    }
    count_batch(*hw, batch, engine.keep, part, rerun);
    if (run.fast_math && checked) {
      auto fast_module = fast_math_module();
      if (!fast_module) return fast_module.error();
      auto fast = scan(**fast_module, p, batch, n, 1);
      if (!fast) return fast.error();
      for (std::size_t c = 0; c < claims; ++c) {
        for (std::uint64_t k = 0; k < n; ++k) run.fast_failing[c] += fast->words[k * abi::kSumWords + 2 * abi::kMaxSlots + c];
      }
      run.fast_identical = run.fast_identical && fast->words == hw->words;
      run.fast_ms.insert(run.fast_ms.end(), fast->ms.begin(), fast->ms.end());
    }
    run.hw_ms.insert(run.hw_ms.end(), hw->ms.begin(), hw->ms.end());
    run.model_ms.insert(run.model_ms.end(), model.ms.begin(), model.ms.end());
    append_folded();
    folding = std::async(std::launch::async, [&spec, &engine, words = std::move(hw->words), batch_begin, batch_end,
                                              recipes, claims] {
      SweepPart piece;
      piece.begin = batch_begin;
      piece.end = batch_end;
      piece.chunk_sums = engine_words(words, recipes, claims);
      fold_blocks(spec, piece, engine.kept_chunks);
      return piece;
    });
    if (engine.progress) engine.progress(batch_end - begin, end - begin);
  }
  append_folded();
  run.loop_s += seconds_since(loop_start);
  if (auto ok = rerun_chunks(spec, engine, p, std::move(rerun), part); !ok) return ok.error();
  if (spec.user) {
    if (auto ok = compare_user_tables(spec, engine, p, begin, end, part); !ok) return ok.error();
  }
  return part;
}

Expected<Ok> CudaBackend::prove_large(const Spec& spec, const BackendOptions& options, const Plan& p, BackendRun& run) {
  EngineOptions engine = options.engine;
  engine.threads = resolve_threads(engine.threads);
  LargeRun large;
  large.fast_math = options.fast_math && !spec.user;
  auto part = large_part(spec, engine, p, 0, spec.case_count(), options.repeat, large);
  if (!part) return part.error();
  ProofResult& r = run.result;
  r = whole_result(spec, engine, std::move(*part));
  run.info["mode"] = large.checked_cases == r.cases
                        ? "on-device: claims and hardware-vs-model compared on the GPU; chunks re-run for the first cases"
                        : fmt::format("on-device: claims on every case; hardware-vs-model (and --use_fast_math) on {} "
                                      "of {} cases: the first 2^32-case block, one in {} and the blocks of edge "
                                      "codes (src/backend/model_blocks.hpp); chunks re-run for the first cases",
                                      large.checked_cases, r.cases, large.model_stride);
  run.info["model_cases"] = large.checked_cases;
  run.info["timing"] = large.timing();
  if (!large.fast_math) return Ok{};
  Json fm_claims = Json::array();
  for (std::uint64_t failing : large.fast_failing) {
    fm_claims.push_back({{"holds", failing == 0},
                         {"cases", large.checked_cases},
                         {"holding", large.checked_cases - failing},
                         {"failing", failing}});
  }
  run.info["fast_math"] = Json{{"kernel_image_sha256", fast_math_.sha256},
                               {"claims", fm_claims},
                               {"bits_identical", large.fast_identical},
                               {"timing", timing_json(large.fast_ms, large.cases_per_launch)}};
  return Ok{};
}

// A spec with user functions: its device work (launches, waits, the checks
// between them) bounded by the worker's limit over `cases` (--user-timeout;
// UserRecipes::worker_time_limit). A kernel of the user's that never returns
// cannot be stopped nor waited out (every later driver call, teardown included,
// would wait for it): at the limit the process ends with one line (exit 2).
void bound_user_kernels(const Spec& spec, std::uint64_t cases, std::optional<user::Deadline>& deadline) {
  if (!spec.user || spec.user->function_count() == 0) return;
  const double limit = spec.user->worker_time_limit(cases);
  deadline.emplace(limit,
                   Error{user::worker_timeout_message(*spec.user, cases, limit, " on the GPU (--backend cuda)")});
}

Expected<BackendRun> CudaBackend::prove(const Spec& spec, const BackendOptions& options) {
  const Driver* drv = drv_;
  BP_CU(drv->cuCtxSetCurrent(context_));
  if (spec.user) spec.user->gpu_runs = true;  // the GPU runs user recipes the CPU cannot
  if (auto ok = check_sweepable(spec, true); !ok) return ok.error();
  Plan p;
  if (auto ok = plan(spec, p); !ok) return ok.error();
  BackendRun run{"cuda",
                 fmt::format("CUDA kernels on {} ({}), hardware bits checked against the soft model",
                             device_info_["name"].get<std::string>(), label_),
                 ProofResult{}};
  run.label = label_;
  run.info["device"] = device_info_;
  run.info["kernel_image"] = Json{{"sha256", p.module->sha256},
                                  {"bytes", p.module->bytes},
                                  {"architectures", std::string(kernel_images::kArchitectures)},
                                  {"loaded_with", "cuModuleLoadData"}};
  Json paths = vendor_conversion_paths(spec, kernel_images::kArchitectures, major_, minor_);
  if (!paths.empty()) run.info["vendor_conversion_paths"] = std::move(paths);
  if (spec.user) run.info["user_recipes"] = p.user_info;
  const auto start = std::chrono::steady_clock::now();
  if (auto ok = specialize(spec, options, p, run.info["kernels"]); !ok) return ok.error();
  std::optional<user::Deadline> deadline;
  bound_user_kernels(spec, spec.case_count(), deadline);
  auto ok =
      spec.case_count() <= kFullDigestLimit ? prove_small(spec, options, p, run) : prove_large(spec, options, p, run);
  if (!ok) return ok.error();
  run.info["seconds"] = seconds_since(start);
  run.info["startup"] = startup_;
  return run;
}

Expected<SweepPart> CudaBackend::sweep_part(const Spec& spec, const BackendOptions& options, std::uint64_t begin,
                                            std::uint64_t end) {
  const Driver* drv = drv_;
  BP_CU(drv->cuCtxSetCurrent(context_));
  if (spec.user) spec.user->gpu_runs = true;
  if (auto ok = check_sweepable(spec, true); !ok) return ok.error();
  Plan p;
  if (auto ok = plan(spec, p); !ok) return ok.error();
  EngineOptions engine = options.engine;
  engine.threads = resolve_threads(engine.threads);
  std::optional<user::Deadline> deadline;
  bound_user_kernels(spec, end - begin, deadline);
  if (spec.case_count() > kFullDigestLimit) {
    Json kernels;
    if (auto ok = specialize(spec, options, p, kernels); !ok) return ok.error();
    LargeRun large;
    auto part = large_part(spec, engine, p, begin, end, 1, large);
    // What describe() adds to a shard report: the kernels and their CUDA-event times.
    last_sweep_ = Json{{"kernels", kernels}, {"model_cases", large.checked_cases}, {"timing", large.timing()}};
    return part;
  }
  auto table = eval(*p.module, p, begin, end - begin);
  if (!table) return table.error();
  return checked_table(spec, engine, *table, p.recipes.slots, begin, end);
}

// Several GPUs of one host (--devices): a large domain's blocks (chunks, up
// to 2^32 cases) are split into one contiguous range per device, each swept on
// its own thread, and the parts joined in case order: the result is the one a
// single GPU gives. Copy-back domains (2^24 cases at most) run on the first.
class MultiCudaBackend : public Backend {
 public:
  explicit MultiCudaBackend(std::vector<std::unique_ptr<CudaBackend>> devices) : devices_(std::move(devices)) {}
  [[nodiscard]] std::string name() const override { return "cuda"; }
  [[nodiscard]] Json describe() const override {
    Json devices = Json::array();
    for (const auto& d : devices_) devices.push_back(d->describe());
    return Json{{"devices", devices}};
  }

  [[nodiscard]] Expected<BackendRun> prove(const Spec& spec, const BackendOptions& options) override {
    if (spec.case_count() <= kFullDigestLimit) return devices_.front()->prove(spec, options);
    EngineOptions engine = options.engine;
    engine.threads = resolve_threads(engine.threads);
    const auto start = std::chrono::steady_clock::now();
    auto part = sweep_part(spec, options, 0, spec.case_count());
    if (!part) return part.error();
    BackendRun run{"cuda", fmt::format("CUDA kernels on {} GPUs, hardware bits checked against the soft model",
                                       devices_.size()),
                   whole_result(spec, engine, std::move(*part))};
    run.label = fmt::format("cuda x{}", devices_.size());
    run.info["devices"] = devices_.size();
    run.info["mode"] = "on-device, one contiguous range of blocks per GPU, joined in case order (--use_fast_math "
                       "image not run with several devices)";
    run.info["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return run;
  }

  [[nodiscard]] Expected<SweepPart> sweep_part(const Spec& spec, const BackendOptions& options, std::uint64_t begin,
                                               std::uint64_t end) override {
    if (spec.case_count() <= kFullDigestLimit) return devices_.front()->sweep_part(spec, options, begin, end);
    const auto ranges = split_ranges(begin, end, devices_.size(), range_unit(spec.case_count()));
    std::vector<Expected<SweepPart>> parts(ranges.size(), Error{"not swept"});
    std::vector<std::uint64_t> done(ranges.size(), 0);
    std::mutex progress_mutex;
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      threads.emplace_back([&, k] {
        BackendOptions mine = options;
        if (options.engine.progress) {
          mine.engine.progress = [&, k](std::uint64_t now, std::uint64_t) {
            const std::lock_guard<std::mutex> lock(progress_mutex);
            done[k] = now;
            std::uint64_t all = 0;
            for (std::uint64_t d : done) all += d;
            options.engine.progress(all, end - begin);
          };
        }
        parts[k] = devices_[k]->sweep_part(spec, mine, ranges[k].first, ranges[k].second);
      });
    }
    for (std::thread& t : threads) t.join();
    std::vector<SweepPart> joined;
    for (auto& p : parts) {
      if (!p) return p.error();
      joined.push_back(std::move(*p));
    }
    return join_parts(options.engine, std::move(joined));
  }

 private:
  std::vector<std::unique_ptr<CudaBackend>> devices_;
};

}  // namespace

bool cuda_backend_built() { return true; }

Expected<int> cuda_device_count() {
  auto loaded = cuda::driver();
  if (!loaded) return loaded.error();
  return cuda::device_count(*loaded, "--devices");
}

Expected<std::unique_ptr<Backend>> make_cuda_backend(const std::vector<int>& devices) {
  if (devices.size() <= 1) {
    auto b = CudaBackend::open(devices.empty() ? 0 : devices.front());
    if (!b) return b.error();
    return std::unique_ptr<Backend>(std::move(*b));
  }
  std::vector<std::unique_ptr<CudaBackend>> opened;
  for (int d : devices) {
    auto b = CudaBackend::open(d);
    if (!b) return b.error();
    opened.push_back(std::move(*b));
  }
  return std::unique_ptr<Backend>(std::make_unique<MultiCudaBackend>(std::move(opened)));
}

}  // namespace bitproof

#else

namespace bitproof {

bool cuda_backend_built() { return false; }

Expected<int> cuda_device_count() {
  return Error{"--devices: no CUDA backend here (this bitproof was built without it, or found no NVIDIA driver)", kExitNoBackend};
}

Expected<std::unique_ptr<Backend>> make_cuda_backend(const std::vector<int>&) {
  return Error{"--backend cuda: this bitproof was built without the CUDA backend", kExitNoBackend};
}

}  // namespace bitproof

#endif
