// bitproof.ab on a device: two Python callables whose tensors the package made (torch CUDA
// tensors for device="cuda"), seen here through DLPack. The engine writes every input (each
// arm its own copies: weights once, the activations of every case), poisons every output
// before every call, calls the arm (python/bitproof: the callable, or the replay of the CUDA
// Graph it captured in `prepare`), reads the outputs back and compares them (op::run_ab, as
// ab.cpp on the CPU). Copies and fills are synchronous: the context is synchronized around
// every call, so the arm's own streams (a graph's side stream) are done before a word is read.
//
// An arm's adapter (python/bitproof/__init__.py, _DeviceArm): `tensors` (a dict: every input key
// of layout(), every output name), `prepare()` (once, after case 0's inputs and the poison are
// written; captures the graph) and `call()` (one run of the arm on what the tensors hold).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backend/cuda_memory.hpp"
#include "bindings.hpp"
#include "callable_spec.hpp"
#include "dlpack.hpp"
#include "operator/run.hpp"

namespace bitproof::python {

ImportedTensor import_tensor(const py::object& object, const std::string& field, std::uint8_t code, std::uint8_t bits,
                             std::int64_t rows, std::int64_t cols) {
  if (!py::hasattr(object, "__dlpack__"))
    raise({fmt::format("{}: expected a tensor with __dlpack__ (torch, NumPy >= 1.22, CuPy, JAX), got {}", field,
                       std::string(py::str(py::type::of(object).attr("__name__"))))});
  ImportedTensor t;
  t.owner = object;
  try {
    t.capsule = object.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    raise({fmt::format("{}: __dlpack__() raised {}", field, std::string(py::str(e.value())))});
  }
  const dlpack::Tensor* tensor = nullptr;
  if (PyCapsule_IsValid(t.capsule.ptr(), "dltensor") != 0) {
    tensor = &static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(t.capsule.ptr(), "dltensor"))->dl_tensor;
  } else if (PyCapsule_IsValid(t.capsule.ptr(), "dltensor_versioned") != 0) {
    auto* v = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(t.capsule.ptr(), "dltensor_versioned"));
    if (v->major != 1)
      raise({fmt::format("{}: DLPack version {}.{}: this module reads 1.x", field, v->major, v->minor)});
    tensor = &v->dl_tensor;
  } else {
    raise({field + ": __dlpack__() gave no \"dltensor\" capsule"});
  }
  const dlpack::Tensor& d = *tensor;
  t.device_type = d.device.device_type;
  t.device_id = d.device.device_id;
  if (t.device_type != dlpack::kCPU && t.device_type != dlpack::kCUDA)
    raise({fmt::format("{}: DLPack device type {}: expected the CPU (1) or a CUDA device (2)", field, t.device_type)});
  t.code = d.dtype.code;
  t.bits = d.dtype.bits;
  if (d.dtype.code != code || d.dtype.bits != bits || d.dtype.lanes != 1)
    raise({fmt::format("{}: dtype: DLPack code {} bits {} lanes {}, expected code {} bits {} ({})", field, d.dtype.code,
                       d.dtype.bits, d.dtype.lanes, code, bits, bits == 16 ? "float16" : "uint8")});
  t.shape.assign(d.shape, d.shape + d.ndim);
  if (t.shape != std::vector<std::int64_t>{rows, cols})
    raise({fmt::format("{}: shape ({}): expected ({}, {})", field, fmt::join(t.shape, ", "), rows, cols)});
  if (d.strides != nullptr) {
    std::int64_t stride = 1;
    for (std::int32_t i = d.ndim; i-- > 0;) {
      if (d.shape[i] > 1 && d.strides[i] != stride)
        raise(
            {fmt::format("{}: not C-contiguous (strides {})", field, fmt::join(d.strides, d.strides + d.ndim, ", "))});
      stride *= d.shape[i];
    }
  }
  t.address = reinterpret_cast<std::uintptr_t>(d.data) + d.byte_offset;
  t.bytes = static_cast<std::size_t>(rows * cols) * bits / 8;
  return t;
}

namespace {

using nlohmann::json;

constexpr std::uint8_t kPoisonByte = 0xFF;  // every FP16 word 0xFFFF: a NaN

// One part of an input as the arm's tensors hold it: f16 whole, or an mxfp4 weight's codes and scales.
struct Part {
  std::string key;
  std::uint8_t code, bits;
  std::uint64_t rows, cols;
  const void* data;
  std::size_t bytes;
};

std::vector<Part> parts_of(const std::string& name, const op::HostTensor& t) {
  if (t.dtype == op::DType::kF16) return {{name, dlpack::kFloat, 16, t.rows, t.cols, t.f16.data(), t.f16.size() * 2}};
  return {{name, dlpack::kUInt, 8, t.rows, t.cols / 2, t.codes.data(), t.codes.size()},
          {name + ".scale", dlpack::kUInt, 8, t.rows, t.cols / 32, t.scales.data(), t.scales.size()}};
}

// The parts' keys, types and shapes of a declared input (no bytes).
std::vector<Part> shapes_of(const op::InputSpec& in) {
  if (in.dtype == op::DType::kF16) return {{in.name, dlpack::kFloat, 16, in.rows, in.cols, nullptr, 0}};
  return {{in.name, dlpack::kUInt, 8, in.rows, in.cols / 2, nullptr, 0},
          {in.name + ".scale", dlpack::kUInt, 8, in.rows, in.cols / 32, nullptr, 0}};
}

// Host (kDLCPU: memcpy) or device (DeviceMemory) bytes, one kind for the whole run.
class Memory {
 public:
  explicit Memory(std::unique_ptr<DeviceMemory> device) : device_(std::move(device)) {}
  Expected<Ok> write(std::uintptr_t dst, const void* src, std::size_t n) {
    if (device_) return device_->to_device(dst, src, n);
    std::memcpy(reinterpret_cast<void*>(dst), src, n);
    return Ok{};
  }
  Expected<Ok> read(void* dst, std::uintptr_t src, std::size_t n) {
    if (device_) return device_->to_host(dst, src, n);
    std::memcpy(dst, reinterpret_cast<const void*>(src), n);
    return Ok{};
  }
  Expected<Ok> fill(std::uintptr_t dst, std::uint8_t byte, std::size_t n) {
    if (device_) return device_->fill(dst, byte, n);
    std::memset(reinterpret_cast<void*>(dst), byte, n);
    return Ok{};
  }
  Expected<Ok> sync() { return device_ ? device_->synchronize() : Ok{}; }
  [[nodiscard]] std::string description() const { return device_ ? device_->description() : "{}"; }

 private:
  std::unique_ptr<DeviceMemory> device_;
};

struct DeviceArm {
  std::string name;
  py::object adapter;
  std::map<std::string, ImportedTensor> inputs;  // by part key
  std::vector<ImportedTensor> outputs;           // in the spec's order
};

class DeviceRunner final : public op::ArmRunner {
 public:
  DeviceRunner(const CallableSpec& spec, const op::Weights& weights) : spec_(spec), weights_(weights) {}
  [[nodiscard]] std::string name() const override { return "python " + device_label_; }
  [[nodiscard]] std::string device_description() const { return memory_->description(); }

  // Imports both arms' tensors, writes their weights and prepares them (case 0's inputs, poison).
  void init(const std::array<std::pair<std::string, py::object>, 2>& arms) {
    int device_type = 0, device_id = 0;
    for (std::size_t a = 0; a < 2; ++a) {
      arms_[a] = {arms[a].first, arms[a].second, {}, {}};
      const py::dict tensors = arms[a].second.attr("tensors");
      const std::string field = fmt::format("bitproof.ab: arm {} (\"{}\"): tensors", a == 0 ? "a" : "b", arms[a].first);
      const auto take_view = [&](const std::string& key, std::uint8_t code, std::uint8_t bits, std::uint64_t rows,
                                 std::uint64_t cols) {
        if (!tensors.contains(key)) raise({fmt::format("{}: no tensor \"{}\"", field, key)});
        ImportedTensor t = import_tensor(tensors[py::str(key)], fmt::format("{}[\"{}\"]", field, key), code, bits,
                                         static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols));
        if (device_type == 0) std::tie(device_type, device_id) = std::pair{t.device_type, t.device_id};
        if (t.device_type != device_type || t.device_id != device_id)
          raise({fmt::format("{}[\"{}\"]: on DLPack device ({}, {}), the first tensor on ({}, {}): one device", field,
                             key, t.device_type, t.device_id, device_type, device_id)});
        return t;
      };
      for (std::size_t i = 0; i < spec_.real_inputs; ++i) {
        for (const Part& p : shapes_of(spec_.ab.inputs[i]))
          arms_[a].inputs.emplace(p.key, take_view(p.key, p.code, p.bits, p.rows, p.cols));
      }
      for (const auto& [name, shape] : spec_.outputs)
        arms_[a].outputs.push_back(take_view(name, dlpack::kFloat, 16, shape.first, shape.second));
    }
    if (device_type == dlpack::kCUDA) {
      memory_.emplace(take(open_device_memory(device_id, "bitproof.ab")));
      device_label_ = fmt::format("cuda:{}", device_id);
    } else {
      memory_.emplace(nullptr);
      device_label_ = "cpu (DLPack)";
    }
    const op::Activations first = op::make_activations(spec_.ab, 0);
    for (std::size_t a = 0; a < 2; ++a) {
      for (std::size_t i = 0; i < spec_.real_inputs; ++i) {  // the weights: written once, each arm its own
        const op::InputSpec& in = spec_.ab.inputs[i];
        if (in.role != op::InputRole::kWeight) continue;
        for (const Part& p : parts_of(in.name, weights_.tensors.at(in.name)))
          take(memory_->write(arms_[a].inputs.at(p.key).address, p.data, p.bytes));
      }
      take(write_activations(a, first));
      take(fill_outputs(a, kPoisonByte));
      take(memory_->sync());
      if (auto ok = call(
              a, "prepare",
              fmt::format("bitproof.ab: arm {} (\"{}\"), prepare (graph capture)", a == 0 ? "a" : "b", arms_[a].name));
          !ok)
        raise(ok.error());
      take(memory_->sync());
    }
  }

  Expected<std::array<op::ArmOutputs, 2>> run_case(std::uint64_t c, const op::Activations& acts) override {
    std::array<op::ArmOutputs, 2> out;
    for (std::size_t a = 0; a < 2; ++a) {
      auto written = run_arm(a, c, acts, kPoisonByte);
      if (!written) return written.error();
      if (op::may_follow_fill(*written, [](const std::string&) { return false; })) {
        auto again = run_arm(a, c, acts, 0x00);  // 0xFFFF or a NaN: written, never written, or read from the poison
        if (!again) return again.error();
        if (auto same = no_fill_follower(spec_, where(a, c), *written, *again); !same) return same.error();
      }
      out[a] = std::move(*written);
    }
    return out;
  }

  // After the run: every arm's weights still hold what was written once before case 0.
  Expected<Ok> check_weights() {
    for (std::size_t a = 0; a < 2; ++a) {
      for (std::size_t i = 0; i < spec_.real_inputs; ++i) {
        const op::InputSpec& in = spec_.ab.inputs[i];
        if (in.role != op::InputRole::kWeight) continue;
        for (const Part& p : parts_of(in.name, weights_.tensors.at(in.name))) {
          auto same = unchanged(a, p);
          if (!same) return same.error();
          if (!*same)
            return Error{
                fmt::format("bitproof.ab: arm {} (\"{}\"): the callable changed the weight \"{}\" (found after "
                            "the last case: weights are written once; inputs are read-only)",
                            a == 0 ? "a" : "b", arms_[a].name, p.key)};
        }
      }
    }
    return Ok{};
  }

 private:
  std::string where(std::size_t a, std::uint64_t c) const { return arm_where(spec_, a, arms_[a].name, c); }

  Expected<Ok> write_activations(std::size_t a, const op::Activations& acts) {
    for (const auto& [name, t] : acts) {
      for (const Part& p : parts_of(name, t)) {
        if (auto ok = memory_->write(arms_[a].inputs.at(p.key).address, p.data, p.bytes); !ok) return ok;
      }
    }
    return Ok{};
  }

  Expected<Ok> fill_outputs(std::size_t a, std::uint8_t byte) {
    for (const ImportedTensor& o : arms_[a].outputs) {
      if (auto ok = memory_->fill(o.address, byte, o.bytes); !ok) return ok;
    }
    return Ok{};
  }

  // Whether the arm's tensor of part `p` holds p's bytes.
  Expected<bool> unchanged(std::size_t a, const Part& p) {
    std::string now(p.bytes, '\0');
    if (auto ok = memory_->read(now.data(), arms_[a].inputs.at(p.key).address, p.bytes); !ok) return ok.error();
    return std::memcmp(now.data(), p.data, p.bytes) == 0;
  }

  // adapter.<method>(); a Python exception is the arm's error (exit 2; the package chains it).
  Expected<Ok> call(std::size_t a, const char* method, const std::string& where_text) {
    try {
      arms_[a].adapter.attr(method)();
    } catch (py::error_already_set& e) {
      std::string what = py::str(e.value());
      what = what.substr(0, what.find('\n'));
      return Error{fmt::format("{}: the callable raised {}: {}", where_text,
                               std::string(py::str(e.type().attr("__name__"))), what)};
    }
    return Ok{};
  }

  Expected<op::ArmOutputs> run_arm(std::size_t a, std::uint64_t c, const op::Activations& acts, std::uint8_t fill) {
    if (auto ok = write_activations(a, acts); !ok) return ok.error();
    if (auto ok = fill_outputs(a, fill); !ok) return ok.error();
    if (auto ok = memory_->sync(); !ok) return ok.error();
    if (auto ok = call(a, "call", where(a, c)); !ok) return ok.error();
    if (auto ok = memory_->sync(); !ok) return ok.error();
    op::ArmOutputs written;
    for (std::size_t o = 0; o < spec_.outputs.size(); ++o) {
      const ImportedTensor& t = arms_[a].outputs[o];
      std::vector<std::uint16_t> words(t.bytes / 2);
      if (auto ok = memory_->read(words.data(), t.address, t.bytes); !ok) return ok.error();
      const std::string& name = spec_.outputs[o].first;
      if (fill == kPoisonByte && std::all_of(words.begin(), words.end(), [](std::uint16_t w) { return w == 0xFFFF; })) {
        return Error{fmt::format("{}: output \"{}\" still holds the poison (0xFFFF) in every element: the arm wrote "
                                 "nothing into it (write into outputs[\"{}\"], do not rebind it)",
                                 where(a, c), name, name),
                     kExitRefuted};
      }
      written[name] = std::move(words);
    }
    for (const auto& [name, t] : acts) {
      for (const Part& p : parts_of(name, t)) {
        auto same = unchanged(a, p);
        if (!same) return same.error();
        if (!*same)
          return Error{
              fmt::format("{}: the callable changed the input \"{}\" (inputs are read-only; write only outputs)",
                          where(a, c), p.key)};
      }
    }
    return written;
  }

  const CallableSpec& spec_;
  const op::Weights& weights_;
  std::array<DeviceArm, 2> arms_;
  std::optional<Memory> memory_;
  std::string device_label_;
};

}  // namespace

std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, bool>> callable_layout(
    const std::string& spec_json) {
  const CallableSpec spec = spec_of(spec_json);
  std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, bool>> out;
  for (std::size_t i = 0; i < spec.real_inputs; ++i) {
    for (const Part& p : shapes_of(spec.ab.inputs[i]))
      out.emplace_back(p.key, p.bits == 16 ? "float16" : "uint8", p.rows, p.cols, false);
  }
  for (const auto& [name, shape] : spec.outputs) out.emplace_back(name, "float16", shape.first, shape.second, true);
  return out;
}

py::dict callable_inputs(const std::string& spec_json, std::uint64_t case_index) {
  const CallableSpec spec = spec_of(spec_json);
  const op::Weights weights = take(op::load_weights(spec.ab, spec.ab.checkpoint_path));
  const op::Activations acts = op::make_activations(spec.ab, case_index);
  py::dict inputs;
  std::vector<std::pair<py::array, std::string>> unused;
  for (std::size_t i = 0; i < spec.real_inputs; ++i) {
    const op::InputSpec& in = spec.ab.inputs[i];
    add_input(inputs, unused, in.role == op::InputRole::kWeight ? weights.tensors.at(in.name) : acts.at(in.name),
              in.name);
  }
  return inputs;
}

std::tuple<std::string, std::string> device_ab(const std::array<std::pair<std::string, py::object>, 2>& arms,
                                               const std::string& spec_json, std::size_t keep) {
  const CallableSpec spec = spec_of(spec_json);
  const op::Weights weights = take(op::load_weights(spec.ab, spec.ab.checkpoint_path));
  DeviceRunner runner(spec, weights);
  runner.init(arms);
  op::AbResult r = take(op::run_ab(spec.ab, {&runner}, keep));
  take(runner.check_weights());
  return {result_json(spec, r, weights), runner.device_description()};
}

}  // namespace bitproof::python
