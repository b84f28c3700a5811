#include "operator/kernel_cpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <span>
#include <thread>

#include "operator/host_float.hpp"
#include "operator/run.hpp"
#include "ptx/ptx.hpp"

namespace bitproof::op {

const KernelSet::Used* KernelSet::find(const std::string& kernel) const {
  for (const Used& u : used) {
    if (u.kernel == kernel) return &u;
  }
  return nullptr;
}

namespace {

std::string param_type(const ptx::Param& p) {
  return fmt::format("a {}-byte {}parameter{}", p.size, p.is_float ? "float (.f32) " : "",
                     p.pointer_sized ? " (.u64/.b64: a pointer or u64)" : "");
}

// The stage's args against the kernel's .param list.
Expected<Ok> check_params(const AbSpec& spec, const KernelLaunch& l, const ptx::Kernel& k, const std::string& field) {
  if (k.params.size() != l.args.size())
    return Error{fmt::format("{}: {}.args: {} arguments, but kernel {} takes {} parameters", spec.path, field,
                             l.args.size(), l.kernel, k.params.size())};
  for (std::size_t a = 0; a < l.args.size(); ++a) {
    const unsigned want = launch_arg_bytes(l.args[a]);
    const bool pointer = want == 8 && l.args[a].kind != LaunchArg::Kind::kU64;
    // A float parameter takes an f32 and nothing else takes one: the sizes agree, the meaning
    // would not ({"u32": 1065353216} for `float x` is 1.0 by accident, or 3 is 4.2e-45).
    const bool f32 = l.args[a].kind == LaunchArg::Kind::kF32;
    if (k.params[a].size != want || (pointer && !k.params[a].pointer_sized) || f32 != k.params[a].is_float)
      return Error{fmt::format("{}: {}.args[{}]: a {} ({} bytes), but kernel {}'s parameter {} ({}) is {}", spec.path,
                               field, a, launch_arg_kind_name(l.args[a].kind), want, l.kernel, a, k.params[a].name,
                               param_type(k.params[a]))};
  }
  return Ok{};
}

}  // namespace

Expected<KernelSet> parse_kernel_modules(const AbSpec& spec, const std::vector<KernelModule>& modules) {
  KernelSet set;
  for (const KernelModule& m : modules) {
    auto parsed = ptx::parse_module(m.ptx, m.file);
    if (!parsed) return Error{fmt::format("{}: kernels: {}", spec.path, parsed.error().message)};
    set.modules.push_back(std::move(*parsed));
  }
  for (std::size_t i = 0; i < 2; ++i) {
    for (std::size_t s = 0; s < spec.arms[i].stages.size(); ++s) {
      const Stage& st = spec.arms[i].stages[s];
      if (!st.launch) continue;
      const std::string field = fmt::format("arms[{}].stages[{}]", i, s);
      const KernelSet::Used* used = set.find(st.launch->kernel);
      if (used == nullptr) {
        std::vector<KernelSet::Used> found;
        for (std::size_t m = 0; m < set.modules.size(); ++m) {
          for (std::size_t k = 0; k < set.modules[m].kernels.size(); ++k) {
            if (set.modules[m].kernels[k].name == st.launch->kernel) found.push_back({st.launch->kernel, m, k});
          }
        }
        if (found.empty())
          return Error{fmt::format("{}: {}.kernel: no kernel \"{}\" in {} (an extern \"C\" __global__ function)",
                                   spec.path, field, st.launch->kernel,
                                   modules.size() == 1 ? modules[0].file : "any module")};
        if (found.size() > 1)
          return Error{fmt::format("{}: {}.kernel: \"{}\" is in {} and {}: name one module's kernel", spec.path, field,
                                   st.launch->kernel, modules[found[0].module].file, modules[found[1].module].file)};
        set.used.push_back(found[0]);
        used = &set.used.back();
      }
      if (auto ok = check_params(spec, *st.launch, set.kernel(*used), field); !ok) return ok.error();
    }
  }
  return set;
}

namespace {

// The bytes of one input as a kernel reads it: f16 words little-endian (the host's order, so
// the words are handed over as they lie, with no copy per case); an mxfp4 tensor's codes or
// scales as stored.
std::span<const std::uint8_t> tensor_bytes(const HostTensor& t, TensorPart part) {
  static_assert(std::endian::native == std::endian::little, "f16 words are handed over in the host's byte order");
  if (part == TensorPart::kCodes) return t.codes;
  if (part == TensorPart::kScales) return t.scales;
  return {reinterpret_cast<const std::uint8_t*>(t.f16.data()), t.f16.size() * 2};
}

// One kernel arm's buffers and launches. Buffers are made once; per case the activations (and
// joined buffers holding one) are written again and every output is poisoned.
class KernelArm {
 public:
  KernelArm(const AbSpec& spec, std::size_t arm, const Weights& weights, const KernelSet& set)
      : spec_(spec), arm_(arm), weights_(weights), set_(set) {
    for (const Stage& st : spec.arms[arm].stages) {
      std::vector<ptx::Arg> args;
      for (const LaunchArg& a : st.launch->args) args.push_back(arg(a));
      args_.push_back(std::move(args));
    }
  }

  // One case. Every output is poisoned with 0xFF bytes before the launches. Where an output
  // then holds 0xFFFF or a NaN (an element no stage stored, one computed from the poison, or
  // one stored so), the case runs again with 0x00 poison: an element that follows the poison was never written, or was
  // computed from the buffer's earlier contents, and either is an Error (exit 2) naming it,
  // never a value compared (two arms that both leave it would otherwise agree on the poison).
  // Inputs must read as given after the launches: a kernel that writes into one is an Error.
  Expected<ArmOutputs> run(const Activations& acts) {
    return run_two_fill(spec_, arm_, [&](std::uint8_t fill) -> Expected<ArmOutputs> {
      auto out = run_poisoned(acts, fill);
      if (!out) return out.error();
      if (auto ok = inputs_unchanged(acts); !ok) return ok.error();
      return out;
    });
  }

  [[nodiscard]] std::uint64_t warp_steps() const { return steps_; }

 private:
  Expected<ArmOutputs> run_poisoned(const Activations& acts, std::uint8_t poison) {
    for (const Fill& f : fills_) {
      if (f.case_dependent) fill(f, &acts);
    }
    for (const auto& [name, index] : outputs_)
      std::memset(memory_.bytes(index).data(), poison, memory_.bytes(index).size());
    const auto& stages = spec_.arms[arm_].stages;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      const KernelLaunch& l = *stages[s].launch;
      const ptx::Kernel& k = set_.kernel(*set_.find(l.kernel));
      ptx::LaunchConfig config;
      config.grid = {l.grid[0], l.grid[1], l.grid[2]};
      config.block = {l.block[0], l.block[1], l.block[2]};
      config.dynamic_shared = l.shared_bytes;
      auto ran = ptx::launch(set_.modules[set_.find(l.kernel)->module], k, config, args_[s], memory_);
      if (!ran)
        return Error{fmt::format("{}: arms[{}].stages[{}] ({}, arm \"{}\"): {}", spec_.path, arm_, s, l.kernel,
                                 spec_.arms[arm_].name, ran.error().message)};
      steps_ += ran->warp_steps;
    }
    ArmOutputs out;
    for (const auto& [name, index] : outputs_) {
      const auto& b = memory_.bytes(index);
      auto& words = out[name];
      words.resize(b.size() / 2);
      for (std::size_t i = 0; i < words.size(); ++i)
        words[i] = static_cast<std::uint16_t>(b[2 * i] | b[2 * i + 1] << 8);
    }
    return out;
  }

  // Every input buffer still holds the bytes it was given (a kernel that writes its weights
  // would hand the next case, and the other backend, other inputs).
  Expected<Ok> inputs_unchanged(const Activations& acts) const {
    for (const Fill& f : fills_) {
      const std::vector<std::uint8_t>& b = memory_.bytes(f.buffer);
      std::size_t at = 0;
      for (const std::string& t : f.tensors) {
        const std::span<const std::uint8_t> given = tensor_bytes(input(t, f.case_dependent ? &acts : nullptr), f.part);
        if (std::memcmp(b.data() + at, given.data(), given.size()) != 0) {
          return Error{
              fmt::format("{}: arm \"{}\" writes into its input {}{}: a kernel's inputs must read as given "
                          "(the next case, and another backend, would read other values)",
                          spec_.path, spec_.arms[arm_].name, t,
                          f.part == TensorPart::kCodes    ? " (codes)"
                          : f.part == TensorPart::kScales ? " (scales)"
                                                          : "")};
        }
        at += given.size();
      }
    }
    return Ok{};
  }

  // A buffer made from inputs: one tensor (or part), or several joined row-wise.
  struct Fill {
    std::size_t buffer = 0;
    std::vector<std::string> tensors;
    TensorPart part = TensorPart::kWhole;
    bool case_dependent = false;
  };

  const HostTensor& input(const std::string& name, const Activations* acts) const {
    if (acts != nullptr) {
      if (const auto it = acts->find(name); it != acts->end()) return it->second;
    }
    return weights_.tensors.at(name);
  }

  void fill(const Fill& f, const Activations* acts) {
    std::vector<std::uint8_t>& b = memory_.bytes(f.buffer);
    std::size_t at = 0;
    for (const std::string& t : f.tensors) {
      const std::span<const std::uint8_t> bytes = tensor_bytes(input(t, acts), f.part);
      std::memcpy(b.data() + at, bytes.data(), bytes.size());
      at += bytes.size();
    }
  }

  std::size_t input_bytes(const std::string& name, TensorPart part) const {
    const InputSpec& in = *spec_.input(name);
    const std::uint64_t n = in.rows * in.cols;
    return part == TensorPart::kCodes ? n / 2 : part == TensorPart::kScales ? n / kMxBlock : 2 * n;
  }

  ptx::Arg arg(const LaunchArg& a) {
    switch (a.kind) {
      case LaunchArg::Kind::kU32:
      case LaunchArg::Kind::kI32:
      case LaunchArg::Kind::kF32: return ptx::Arg{false, 0, a.bits, 4};
      case LaunchArg::Kind::kU64: return ptx::Arg::u64(a.bits);
      case LaunchArg::Kind::kOutput: return ptx::Arg::buf(output(a.tensors[0]));
      case LaunchArg::Kind::kTensor:
        if (spec_.input(a.tensors[0]) == nullptr) return ptx::Arg::buf(output(a.tensors[0]));  // an earlier stage's
        [[fallthrough]];
      case LaunchArg::Kind::kJoined: return ptx::Arg::buf(inputs(a.tensors, a.part));
    }
    return {};
  }

  std::size_t output(const std::string& name) {
    if (const auto it = outputs_.find(name); it != outputs_.end()) return it->second;
    const OutputDecl& d = *spec_.output_decl(name);
    const std::size_t index = memory_.add(std::vector<std::uint8_t>(d.rows * d.cols * 2, 0xFF));
    outputs_[name] = index;
    return index;
  }

  std::size_t inputs(const std::vector<std::string>& tensors, TensorPart part) {
    const auto key = std::make_pair(tensors, part);
    if (const auto it = input_buffers_.find(key); it != input_buffers_.end()) return it->second;
    Fill f;
    f.tensors = tensors;
    f.part = part;
    std::size_t bytes = 0;
    for (const std::string& t : tensors) {
      bytes += input_bytes(t, part);
      f.case_dependent |= spec_.input(t)->role == InputRole::kActivation;
    }
    f.buffer = memory_.add(std::vector<std::uint8_t>(bytes, 0));
    if (!f.case_dependent) fill(f, nullptr);
    fills_.push_back(f);
    input_buffers_[key] = f.buffer;
    return f.buffer;
  }

  const AbSpec& spec_;
  std::size_t arm_;
  const Weights& weights_;
  const KernelSet& set_;
  ptx::Memory memory_;
  std::vector<std::vector<ptx::Arg>> args_;  // per stage
  std::vector<Fill> fills_;
  std::map<std::pair<std::vector<std::string>, TensorPart>, std::size_t> input_buffers_;
  std::map<std::string, std::size_t> outputs_;  // in name order: ArmOutputs is a map
  std::uint64_t steps_ = 0;
};

class CpuKernelRunner final : public ArmRunner {
 public:
  CpuKernelRunner(const AbSpec& spec, const Weights& weights, KernelSet set, unsigned threads, CpuArith arith)
      : spec_(spec), weights_(weights), set_(std::move(set)), threads_(threads), arith_(arith) {
    for (std::size_t i = 0; i < 2; ++i) {
      if (spec.arms[i].stages[0].launch) {
        kernel_[i] = std::make_unique<KernelArm>(spec, i, weights, set_);
      } else {
        builtin_[i] = std::make_unique<PreparedArm>(prepare_arm(spec, i, weights));
      }
    }
  }
  [[nodiscard]] std::string name() const override { return "cpu"; }

  Expected<std::array<ArmOutputs, 2>> run_case(std::uint64_t, const Activations& acts) override {
    std::array<Expected<ArmOutputs>, 2> out{Error{""}, Error{""}};
    if (threads_ > 1) {
      std::thread other([&] { out[1] = run_arm(1, acts, threads_ / 2); });
      out[0] = run_arm(0, acts, threads_ - threads_ / 2);
      other.join();
    } else {
      out[0] = run_arm(0, acts, 1);
      out[1] = run_arm(1, acts, 1);
    }
    for (auto& o : out) {
      if (!o) return o.error();
    }
    return std::array<ArmOutputs, 2>{std::move(*out[0]), std::move(*out[1])};
  }

 private:
  Expected<ArmOutputs> run_arm(std::size_t i, const Activations& acts, unsigned threads) {
    if (kernel_[i]) return kernel_[i]->run(acts);
    return run_arm_cpu(*builtin_[i], weights_, acts, threads, arith_);
  }

  const AbSpec& spec_;
  const Weights& weights_;
  KernelSet set_;
  unsigned threads_;
  CpuArith arith_;
  std::array<std::unique_ptr<KernelArm>, 2> kernel_;
  std::array<std::unique_ptr<PreparedArm>, 2> builtin_;
};

}  // namespace

Expected<std::unique_ptr<ArmRunner>> make_cpu_kernel_runner(const AbSpec& spec, const Weights& weights,
                                                            const std::vector<KernelModule>& modules, unsigned threads,
                                                            CpuArith arith) {
  auto set = parse_kernel_modules(spec, modules);
  if (!set) return set.error();
  const bool builtin = !spec.arms[0].stages[0].launch || !spec.arms[1].stages[0].launch;
  if (builtin && arith == CpuArith::kHostFloat && !host_float_agrees().agrees)
    return Error{
        fmt::format("--cpu-arith host: this CPU's binary32 unit differs from the soft model ({}): use "
                    "--cpu-arith soft",
                    host_float_agrees().detail)};
  return std::unique_ptr<ArmRunner>(std::make_unique<CpuKernelRunner>(spec, weights, std::move(*set), threads, arith));
}

}  // namespace bitproof::op
