#include "backend/cuda_operator.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "backend/cuda_driver.hpp"
#include "backend/cuda_operator_arm.hpp"
#include "backend/operator_abi.hpp"
#include "hash/digest.hpp"
#include "recipes/registry.hpp"
#include "strict_json.hpp"
#include "user/process.hpp"

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

bool is_kernel_fault(CUresult rc) {
  switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT: return true;
    default: return false;
  }
}

std::string fault_text(const Driver& drv, CUresult rc) {
  const char* name = "CUDA_ERROR_?";
  const char* text = "unknown error";
  drv.cuGetErrorName(rc, &name);
  drv.cuGetErrorString(rc, &text);
  return fmt::format("{} ({})", name, text);
}

// ---- DeviceArm ----

DeviceArm::~DeviceArm() {
  if (graph_ != nullptr) drv_->cuGraphExecDestroy(graph_);
  if (stream_ != nullptr) drv_->cuStreamDestroy(stream_);
  for (CUdeviceptr p : allocations_) drv_->cuMemFree(p);
}

std::string DeviceArm::label() const {
  return fmt::format("{}: arms[{}] ({})", spec_.path, arm_, spec_.arms[arm_].name);
}

Expected<DeviceArm::Buffer> DeviceArm::upload(const void* data, std::size_t bytes) {
  const Driver* drv = drv_;
  Buffer b{0, bytes};
  BP_CU(drv->cuMemAlloc(&b.ptr, std::max<std::size_t>(bytes, 1)));
  allocations_.push_back(b.ptr);
  if (data != nullptr && bytes != 0) BP_CU(drv->cuMemcpyHtoD(b.ptr, data, bytes));
  return b;
}

Expected<Ok> DeviceArm::create_stream() {
  const Driver* drv = drv_;
  BP_CU(drv->cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  return Ok{};
}

Expected<Ok> DeviceArm::checked_launch(double wait_limit_s) {
  const Driver* drv = drv_;
  if (auto ok = launch(); !ok) return ok;
  const user::Deadline deadline(wait_limit_s, Error{fmt::format("{}: did not return on the GPU within the {:g} s limit "
                                                                "(--user-timeout SECONDS sets it)",
                                                                label(), wait_limit_s)});
  BP_CU(drv->cuStreamSynchronize(stream_));
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

Expected<Ok> DeviceArm::capture(bool skip_last) {
  auto exec = capture_graph(drv_, stream_, [&] { return launch(skip_last); });
  if (!exec) return exec.error();
  graph_ = *exec;
  return Ok{};
}

// ---- DeviceOperatorArm ----

DeviceOperatorArm::DeviceOperatorArm(const Driver* drv, const op::AbSpec& spec, std::size_t arm,
                                     const op::Weights& weights, OperatorKernels kernels)
    : DeviceArm(drv, spec, arm), prepared_(op::prepare_arm(spec, arm, weights)), kernels_(kernels) {}

std::string DeviceOperatorArm::weight_key(const op::PreparedStage& ps) const {
  return fmt::format("#weight{}", &ps - prepared_.stages.data());
}

Expected<Ok> DeviceOperatorArm::allocate() {
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
  return create_stream();
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

Expected<Ok> DeviceOperatorArm::write_activations(const op::Activations& acts) {
  const Driver* drv = drv_;
  for (const std::string& name : activations_) {
    const auto& words = acts.at(name).f16;
    BP_CU(drv->cuMemcpyHtoDAsync(tensors_.at(name).ptr, words.data(), words.size() * 2, stream_));
  }
  return Ok{};
}

// ---- DeviceKernelArm ----

namespace {

std::string_view part_name(op::TensorPart part) {
  return part == op::TensorPart::kCodes ? "codes" : part == op::TensorPart::kScales ? "scales" : "whole";
}

// The bytes of `t` an argument passes: an f16 tensor whole, an mxfp4 tensor's codes or its scales.
std::span<const std::uint8_t> part_bytes(const op::HostTensor& t, op::TensorPart part) {
  if (part == op::TensorPart::kCodes) return t.codes;
  if (part == op::TensorPart::kScales) return t.scales;
  return {reinterpret_cast<const std::uint8_t*>(t.f16.data()), t.f16.size() * sizeof(std::uint16_t)};
}

// The size of `in`'s part, or 0 where the part does not fit its dtype.
std::uint64_t part_size(const op::InputSpec& in, op::TensorPart part) {
  const std::uint64_t elements = in.rows * in.cols;
  if (in.dtype == op::DType::kF16) return part == op::TensorPart::kWhole ? 2 * elements : 0;
  if (part == op::TensorPart::kCodes) return elements / 2;
  return part == op::TensorPart::kScales ? elements / op::kMxBlock : 0;
}

// An argument's parameter size in bytes: pointers and 64-bit scalars 8, the rest 4.
std::size_t arg_size(op::LaunchArg::Kind kind) {
  using K = op::LaunchArg::Kind;
  return kind == K::kU32 || kind == K::kI32 || kind == K::kF32 ? 4 : 8;
}

}  // namespace

DeviceKernelArm::DeviceKernelArm(const Driver* drv, const op::AbSpec& spec, std::size_t arm, const op::Weights& weights,
                                 const std::vector<op::KernelModule>& modules)
    : DeviceArm(drv, spec, arm), weights_(weights), modules_(modules) {}

DeviceKernelArm::~DeviceKernelArm() {
  if (graph_ != nullptr) drv_->cuGraphExecDestroy(graph_);  // before the modules its kernels live in
  graph_ = nullptr;
  for (CUmodule m : loaded_) drv_->cuModuleUnload(m);
}

std::string DeviceKernelArm::stage_field(std::size_t s) const {
  return fmt::format("{}: arms[{}].stages[{}] (arm {}, kernel {})", spec_.path, arm_, s, spec_.arms[arm_].name,
                     spec_.arms[arm_].stages[s].launch->kernel);
}

std::string DeviceKernelArm::kernel_names() const {
  std::string names;
  for (const op::Stage& st : spec_.arms[arm_].stages) names += (names.empty() ? "" : ", ") + st.launch->kernel;
  return names;
}

Expected<Ok> DeviceKernelArm::load_modules() {
  const Driver* drv = drv_;
  for (const op::KernelModule& m : modules_) {
    std::string log(16384, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size()))};
    CUmodule module = nullptr;
    const CUresult rc = drv->cuModuleLoadDataEx(&module, m.ptx.c_str(), 2, options, values);
    if (rc == CUDA_ERROR_INVALID_PTX || rc == CUDA_ERROR_INVALID_IMAGE || rc == CUDA_ERROR_NO_BINARY_FOR_GPU) {
      log.resize(std::strlen(log.c_str()));
      return Error{fmt::format("{}: kernels: {}: the driver's JIT refused its PTX: {}", spec_.path, printable(m.file),
                               printable(log.substr(0, 400)))};
    }
    BP_CU(rc);
    loaded_.push_back(module);
    digests_.emplace_back(m.file, sha256_hex(m.ptx));
  }
  return Ok{};
}

Expected<CUfunction> DeviceKernelArm::find_kernel(std::size_t s) {
  const Driver* drv = drv_;
  const std::string& name = spec_.arms[arm_].stages[s].launch->kernel;
  CUfunction found = nullptr;
  std::vector<std::string> in;
  for (std::size_t m = 0; m < loaded_.size(); ++m) {
    CUfunction f = nullptr;
    const CUresult rc = drv->cuModuleGetFunction(&f, loaded_[m], name.c_str());
    if (rc == CUDA_ERROR_NOT_FOUND) continue;
    BP_CU(rc);
    found = f;
    in.push_back(modules_[m].file);
  }
  if (in.size() != 1) {
    return Error{fmt::format("{}.kernel: {}", stage_field(s),
                             in.empty() ? "no such kernel (an .entry) in the spec's modules"
                                        : fmt::format("found in {} modules ({}): it must be in one", in.size(),
                                                      printable(in[0] + ", " + in[1])))};
  }
  return found;
}

Expected<Ok> DeviceKernelArm::check_params(std::size_t s, CUfunction f) {
  const Driver* drv = drv_;
  const auto& args = spec_.arms[arm_].stages[s].launch->args;
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    const CUresult rc = drv->cuFuncGetParamInfo(f, i, &offset, &size);
    if (rc == CUDA_ERROR_INVALID_VALUE) break;  // past the last parameter
    BP_CU(rc);
    sizes.push_back(size);
  }
  if (sizes.size() != args.size()) {
    return Error{fmt::format("{}.args: the kernel takes {} parameters; the stage passes {}", stage_field(s),
                             sizes.size(), args.size())};
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (sizes[i] != arg_size(args[i].kind)) {
      return Error{fmt::format("{}.args[{}]: the kernel's parameter {} is {} bytes; this argument passes {}",
                               stage_field(s), i, i, sizes[i], arg_size(args[i].kind))};
    }
  }
  return Ok{};
}

Expected<std::string> DeviceKernelArm::bind_input(const std::string& field, const std::vector<std::string>& names,
                                                  op::TensorPart part) {
  std::string key = names.size() == 1 ? names[0] : "#joined";
  for (std::size_t i = 0; names.size() > 1 && i < names.size(); ++i) key += (i ? "," : ":") + names[i];
  if (part != op::TensorPart::kWhole) key += fmt::format("#{}", part_name(part));
  if (tensors_.contains(key)) return key;
  std::uint64_t bytes = 0;
  for (const std::string& name : names) {
    const op::InputSpec* in = spec_.input(name);
    if (in == nullptr)
      return Error{fmt::format("{}: \"{}\" is neither an input nor an output the arm wrote", field, printable(name))};
    const std::uint64_t size = part_size(*in, part);
    if (size == 0) {
      return Error{fmt::format("{}: \"{}\" is {}: it has no part \"{}\"", field, printable(name),
                               op::dtype_name(in->dtype), part_name(part))};
    }
    if (in->role == op::InputRole::kActivation) activations_.push_back({key, name, bytes});
    bytes += size;
  }
  auto buffer = guarded(key, bytes);
  if (!buffer) return buffer.error();
  tensors_[key] = *buffer;
  const Driver* drv = drv_;
  std::size_t offset = 0;
  for (const std::string& name : names) {
    const op::InputSpec* in = spec_.input(name);
    if (in->role == op::InputRole::kWeight) {
      const auto bytes_of = part_bytes(weights_.tensors.at(name), part);
      BP_CU(drv->cuMemcpyHtoD(buffer->ptr + offset, bytes_of.data(), bytes_of.size()));
    }
    offset += part_size(*in, part);
  }
  return key;
}

Expected<DeviceArm::Buffer> DeviceKernelArm::guarded(const std::string& name, std::size_t bytes) {
  const Driver* drv = drv_;
  CUdeviceptr base = 0;
  BP_CU(drv->cuMemAlloc(&base, bytes + 2 * kGuardBytes));
  allocations_.push_back(base);
  BP_CU(drv->cuMemsetD8(base, kGuardByte, kGuardBytes));
  BP_CU(drv->cuMemsetD8(base + kGuardBytes + bytes, kGuardByte, kGuardBytes));
  guarded_.push_back({name, base + kGuardBytes, bytes});
  return Buffer{base + kGuardBytes, bytes};
}

Expected<Ok> DeviceKernelArm::check_guards(std::uint64_t case_index) const {
  const Driver* drv = drv_;
  std::vector<std::uint8_t> before(kGuardBytes), after(kGuardBytes);
  for (const Guarded& g : guarded_) {
    BP_CU(drv->cuMemcpyDtoH(before.data(), g.ptr - kGuardBytes, kGuardBytes));
    BP_CU(drv->cuMemcpyDtoH(after.data(), g.ptr + g.bytes, kGuardBytes));
    const auto changed = [](const std::vector<std::uint8_t>& v) {
      return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](std::uint8_t b) { return b != kGuardByte; }));
    };
    const std::size_t n_before = changed(before), n_after = changed(after);
    if (n_before + n_after == 0) continue;
    // The nearest changed byte to the buffer: the last one before it, else the first after it.
    const auto last_before = std::find_if(before.rbegin(), before.rend(), [](std::uint8_t b) { return b != kGuardByte; });
    const auto first_after = std::find_if(after.begin(), after.end(), [](std::uint8_t b) { return b != kGuardByte; });
    const std::string where =
        n_before != 0 ? fmt::format("{} byte(s) before its start", last_before - before.rbegin() + 1)
                      : fmt::format("byte {} past its end", first_after - after.begin());
    return Error{fmt::format("{}: case {}: a kernel wrote outside buffer \"{}\" ({} bytes): {} changed of the {} KiB "
                             "guard on each side, the nearest {} (kernels {}; --backend cpu names the thread and "
                             "PTX line of an access outside a buffer)",
                             label(), case_index, g.name, g.bytes, n_before + n_after, kGuardBytes >> 10, where,
                             kernel_names())};
  }
  return Ok{};
}

Expected<std::string> DeviceKernelArm::bind(std::size_t s, std::size_t a) {
  const op::LaunchArg& arg = spec_.arms[arm_].stages[s].launch->args[a];
  const std::string field = fmt::format("{}.args[{}]", stage_field(s), a);
  if (arg.kind == op::LaunchArg::Kind::kOutput) {
    const std::string& name = arg.tensors.at(0);
    const auto decl = std::find_if(spec_.output_decls.begin(), spec_.output_decls.end(),
                                   [&](const op::OutputDecl& d) { return d.name == name; });
    if (decl == spec_.output_decls.end())
      return Error{fmt::format("{}: no output \"{}\" declared", field, printable(name))};
    if (std::find(written_.begin(), written_.end(), name) == written_.end()) written_.push_back(name);
    if (tensors_.contains(name)) return name;
    auto buffer = guarded(name, decl->rows * decl->cols * sizeof(std::uint16_t));
    if (!buffer) return buffer.error();
    tensors_[name] = *buffer;
    return name;
  }
  // A tensor an earlier stage of the arm wrote: its output buffer.
  if (arg.kind == op::LaunchArg::Kind::kTensor && arg.part == op::TensorPart::kWhole &&
      tensors_.contains(arg.tensors.at(0)) &&
      std::find(written_.begin(), written_.end(), arg.tensors[0]) != written_.end()) {
    return arg.tensors[0];
  }
  return bind_input(field, arg.tensors, arg.part);
}

Expected<Ok> DeviceKernelArm::allocate() {
  const Driver* drv = drv_;
  if (auto ok = load_modules(); !ok) return ok;
  const auto& stages = spec_.arms[arm_].stages;
  stages_.resize(stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s) {
    Stage& st = stages_[s];
    st.launch = &*stages[s].launch;
    auto f = find_kernel(s);
    if (!f) return f.error();
    st.function = *f;
    if (auto ok = check_params(s, st.function); !ok) return ok;
    if (st.launch->shared_bytes > 48 * 1024) {
      const CUresult rc = drv->cuFuncSetAttribute(st.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                  static_cast<int>(st.launch->shared_bytes));
      if (rc != CUDA_SUCCESS) {
        return Error{fmt::format("{}.shared_bytes: {} bytes of dynamic shared memory: the device refuses them ({})",
                                 stage_field(s), st.launch->shared_bytes,
                                 failure(*drv, rc, "cuFuncSetAttribute", __FILE__, __LINE__).message)};
      }
    }
    for (std::size_t a = 0; a < st.launch->args.size(); ++a) {
      const op::LaunchArg& arg = st.launch->args[a];
      const bool tensor = arg.kind == op::LaunchArg::Kind::kTensor || arg.kind == op::LaunchArg::Kind::kJoined ||
                          arg.kind == op::LaunchArg::Kind::kOutput;
      if (!tensor) {
        st.values.push_back(arg.bits);
        continue;
      }
      auto key = bind(s, a);
      if (!key) return key.error();
      st.values.push_back(tensors_.at(*key).ptr);
    }
    for (std::uint64_t& v : st.values) st.params.push_back(&v);
  }
  return create_stream();
}

Expected<Ok> DeviceKernelArm::launch_stage(std::size_t s) {
  const Driver* drv = drv_;
  Stage& st = stages_[s];
  const op::KernelLaunch& l = *st.launch;
  const CUresult rc = drv->cuLaunchKernel(st.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                          l.block[2], l.shared_bytes, stream_, st.params.data(), nullptr);
  if (rc == CUDA_SUCCESS) return Ok{};
  return Error{fmt::format("{}: the launch failed: {}", stage_field(s),
                           failure(*drv, rc, "cuLaunchKernel", __FILE__, __LINE__).message)};
}

Expected<Ok> DeviceKernelArm::launch(bool skip_last) {
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    if (skip_last && s + 1 == stages_.size()) continue;
    if (auto ok = launch_stage(s); !ok) return ok;
  }
  return Ok{};
}

Expected<Ok> DeviceKernelArm::checked_launch(double wait_limit_s) {
  const Driver* drv = drv_;
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    if (auto ok = launch_stage(s); !ok) return ok;
    CUresult rc = CUDA_SUCCESS;
    {
      const user::Deadline deadline(wait_limit_s,
                                    Error{fmt::format("{}: did not return on the GPU within the {:g} s limit "
                                                      "(--user-timeout SECONDS sets it)",
                                                      stage_field(s), wait_limit_s)});
      rc = drv->cuStreamSynchronize(stream_);
    }
    if (rc == CUDA_SUCCESS) continue;
    if (is_kernel_fault(rc))
      return Error{fmt::format("{}: faulted on the GPU: {}", stage_field(s), fault_text(*drv, rc))};
    BP_CU(rc);
  }
  return Ok{};
}

Expected<Ok> DeviceKernelArm::write_activations(const op::Activations& acts) {
  const Driver* drv = drv_;
  for (const ActivationCopy& c : activations_) {
    const auto bytes = part_bytes(acts.at(c.input), op::TensorPart::kWhole);
    BP_CU(drv->cuMemcpyHtoDAsync(tensors_.at(c.buffer).ptr + c.offset, bytes.data(), bytes.size(), stream_));
  }
  return Ok{};
}

// ---- the arm's form ----

bool is_kernel_arm(const op::AbSpec& spec, std::size_t arm) {
  const auto& stages = spec.arms[arm].stages;
  return std::any_of(stages.begin(), stages.end(), [](const op::Stage& s) { return s.launch.has_value(); });
}

Expected<std::unique_ptr<DeviceArm>> make_device_arm(const Driver* drv, const op::AbSpec& spec, std::size_t arm,
                                                     const op::Weights& weights, OperatorKernels kernels,
                                                     const std::vector<op::KernelModule>& modules) {
  const auto& stages = spec.arms[arm].stages;
  if (!is_kernel_arm(spec, arm))
    return std::unique_ptr<DeviceArm>(std::make_unique<DeviceOperatorArm>(drv, spec, arm, weights, kernels));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    if (!stages[s].launch) {
      return Error{
          fmt::format("{}: arms[{}].stages[{}]: a built-in operator in an arm of kernels: on the GPU an arm "
                      "is all kernels or all built-in operators (put the operator in the other arm)",
                      spec.path, arm, s)};
    }
  }
  return std::unique_ptr<DeviceArm>(std::make_unique<DeviceKernelArm>(drv, spec, arm, weights, modules));
}

}  // namespace cuda

namespace {

using cuda::DeviceArm;
using cuda::Driver;

class CudaAbRunner final : public op::ArmRunner {
 public:
  CudaAbRunner(const op::AbSpec& spec, const op::Weights& weights, const CudaAbOptions& options)
      : spec_(spec), weights_(weights), options_(options) {}
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
    info = Json{{"device", dev_.info},
                {"image_sha256", image_sha256},
                {"graphs", options_.graph ? "one CUDA Graph per arm"
                                          : "off (--graph off): each case's launches enqueued one by one on the "
                                            "arm's stream"},
                {"poison", "0xFF bytes in every written buffer before every replay; a kernel arm's case whose outputs may follow them runs again under 0x00 bytes, and an element that changes is an error (never written, or computed from the buffer)"}};
    static const std::vector<op::KernelModule> kNone;
    const std::vector<op::KernelModule>& modules = options_.modules != nullptr ? *options_.modules : kNone;
    // Fault injection for the GPU tests (tests/gpu/ab_cuda.py): BITPROOF_AB_FAULT=skip-last-stage leaves
    // arm B's last launch out of its graph, so its outputs keep the poison and must be caught.
    const char* fault = std::getenv("BITPROOF_AB_FAULT");
    for (std::size_t arm = 0; arm < 2; ++arm) {
      skip_last_[arm] = arm == 1 && fault != nullptr && std::string_view(fault) == "skip-last-stage";
      auto made = cuda::make_device_arm(drv_, spec_, arm, weights_, kernels_, modules);
      if (!made) return made.error();
      arms_[arm] = std::move(*made);
      if (auto ok = prepare(arm); !ok) return ok;
    }
    for (std::size_t arm = 0; arm < 2; ++arm) {
      const auto* k = dynamic_cast<const cuda::DeviceKernelArm*>(arms_[arm].get());
      if (k == nullptr) continue;
      Json mods = Json::array();
      for (std::size_t m = 0; m < modules.size(); ++m) {
        mods.push_back({{"file", k->module_digests()[m].first},
                        {"ptx_sha256", k->module_digests()[m].second},
                        {"options", modules[m].options}});
      }
      info["kernel_modules"] = mods;
      info["jit"] = "each kernel arm's own CUmodules: the PTX compiled for this device by the driver's JIT";
      break;
    }
    return Ok{};
  }

  [[nodiscard]] std::string name() const override { return dev_.label; }

  Expected<std::array<op::ArmOutputs, 2>> run_case(std::uint64_t c, const op::Activations& acts) override {
    std::array<op::ArmOutputs, 2> out;
    for (std::size_t arm = 0; arm < 2; ++arm) {
      if (!cuda::is_kernel_arm(spec_, arm)) {
        if (auto ok = replay(arm, c, acts, 0xFF, out[arm]); !ok) return ok.error();
        continue;
      }
      // A user's kernel may leave an output element unwritten: the executor's two-fill check.
      auto checked = op::run_two_fill(spec_, arm, [&](std::uint8_t fill) -> Expected<op::ArmOutputs> {
        op::ArmOutputs words;
        if (auto ok = replay(arm, c, acts, fill, words); !ok) return ok.error();
        return words;
      });
      if (!checked) return checked.error();
      out[arm] = std::move(*checked);
    }
    return out;
  }

 private:
  // A kernel arm is run once stage by stage (case 0's activations, each stage
  // waited for) before it is captured: a kernel that faults is named with its
  // stage, which a graph's replay cannot say.
  Expected<Ok> prepare(std::size_t arm) {
    DeviceArm& a = *arms_[arm];
    if (auto ok = a.allocate(); !ok) return ok;
    if (cuda::is_kernel_arm(spec_, arm)) {
      if (auto ok = a.write_activations(op::make_activations(spec_, 0)); !ok) return ok;
      if (auto ok = a.checked_launch(options_.wait_timeout_s); !ok) return ok;
    }
    if (!options_.graph) return Ok{};
    return a.capture(skip_last_[arm]);
  }

  // A driver error after the arm's work was enqueued: a kernel's fault is the
  // user's (exit 2, the arm, the case and its kernels named), anything else the backend's.
  Error replay_error(std::size_t arm, std::uint64_t c, CUresult rc, const char* call, int line) const {
    if (!cuda::is_kernel_fault(rc)) return cuda::failure(*drv_, rc, call, __FILE__, line);
    return Error{fmt::format("{}: case {} (seed {}): a kernel faulted on the GPU (kernels {}): {}", arms_[arm]->label(),
                             c, op::ab_case_seed(spec_.seed, c), arms_[arm]->kernel_names(),
                             cuda::fault_text(*drv_, rc))};
  }

  // One case of one arm: every buffer it writes filled with `fill` bytes, its graph (or its
  // launches) run, the buffers read back.
  Expected<Ok> replay(std::size_t arm_index, std::uint64_t c, const op::Activations& acts, std::uint8_t fill,
                      op::ArmOutputs& out) {
    const Driver* drv = drv_;
    DeviceArm& arm = *arms_[arm_index];
#define BP_CU_CASE(call)                                                              \
  do {                                                                                \
    const CUresult rc_ = (call);                                                      \
    if (rc_ != CUDA_SUCCESS) return replay_error(arm_index, c, rc_, #call, __LINE__); \
  } while (0)
    if (auto ok = arm.write_activations(acts); !ok) return ok;
    for (const std::string& name : arm.written()) {
      const auto& b = arm.tensor(name);
      BP_CU_CASE(drv->cuMemsetD8Async(b.ptr, fill, b.bytes, arm.stream()));
    }
    if (options_.graph) {
      BP_CU_CASE(drv->cuGraphLaunch(arm.graph(), arm.stream()));
    } else if (auto ok = arm.launch(skip_last_[arm_index]); !ok) {
      return ok;
    }
    for (const std::string& name : arm.written()) {
      const auto& b = arm.tensor(name);
      auto& words = out[name];
      words.resize(b.bytes / 2);
      BP_CU_CASE(drv->cuMemcpyDtoHAsync(words.data(), b.ptr, b.bytes, arm.stream()));
    }
    CUresult rc = CUDA_SUCCESS;
    {
      std::optional<user::Deadline> deadline;
      if (cuda::is_kernel_arm(spec_, arm_index)) {
        deadline.emplace(options_.wait_timeout_s,
                         Error{fmt::format("{}: case {}: did not return on the GPU within the {:g} s limit "
                                           "(--user-timeout SECONDS sets it)",
                                           arm.label(), c, options_.wait_timeout_s)});
      }
      rc = drv->cuStreamSynchronize(arm.stream());
    }
    BP_CU_CASE(rc);
#undef BP_CU_CASE
    if (const auto* k = dynamic_cast<const cuda::DeviceKernelArm*>(&arm)) return k->check_guards(c);
    return Ok{};
  }

  const op::AbSpec& spec_;
  const op::Weights& weights_;
  CudaAbOptions options_;
  const Driver* drv_ = nullptr;
  cuda::DeviceContext dev_;
  cuda::OperatorKernels kernels_;
  std::array<std::unique_ptr<DeviceArm>, 2> arms_;
  std::array<bool, 2> skip_last_{};
};

}  // namespace

Expected<std::unique_ptr<op::ArmRunner>> make_cuda_ab_runner(const op::AbSpec& spec, const op::Weights& weights,
                                                             Json& info, const CudaAbOptions& options) {
  auto runner = std::make_unique<CudaAbRunner>(spec, weights, options);
  if (auto ok = runner->init(info); !ok) return ok.error();
  return std::unique_ptr<op::ArmRunner>(std::move(runner));
}

}  // namespace bitproof

#else

namespace bitproof {

Expected<std::unique_ptr<op::ArmRunner>> make_cuda_ab_runner(const op::AbSpec&, const op::Weights&, Json&,
                                                             const CudaAbOptions&) {
  return Error{"ab --backend cuda: this bitproof was built without the CUDA backend", kExitNoBackend};
}

}  // namespace bitproof

#endif
