#include "operator/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "arith/soft_arith.hpp"
#include "operator/dispatch.hpp"
#include "operator/host_float.hpp"
#include "operator/operators.hpp"
#include "operator/values.hpp"
#include "parallel.hpp"
#include "recipes/registry.hpp"

namespace bitproof::op {
namespace {

// The soft model with its two pure, hot conversions memoised: FP16 → FP32 (every
// operand of every FMA) and each dequant recipe's 16 × 256 table. Both tables are
// filled by SoftArith itself, so the bits are the soft model's; only the time changes.
template <class Ar>
struct HostBits : Bits<Ar> {
  using typename Bits<Ar>::F16;
  using typename Bits<Ar>::F32;
  using typename Bits<Ar>::Code;
  static const std::array<std::uint32_t, 65536>& widen_table() {
    static const auto table = [] {
      std::array<std::uint32_t, 65536> t{};
      for (std::uint32_t h = 0; h < 65536; ++h) t[h] = SoftArith::half2float(static_cast<std::uint16_t>(h));
      return t;
    }();
    return table;
  }
  template <class Recipe>
  static const std::array<std::uint16_t, 16 * 256>& recipe_table() {
    static const auto table = [] {
      std::array<std::uint16_t, 16 * 256> t{};
      for (std::uint32_t s = 0; s < 256; ++s) {
        for (std::uint32_t x = 0; x < 16; ++x) t[s * 16 + x] = Bits<SoftArith>::template recipe<Recipe>(x, s);
      }
      return t;
    }();
    return table;
  }
  static F32 h2f(F16 h) { return widen_table()[h]; }
  template <class Recipe>
  static F16 recipe(Code x, Code s) {
    return recipe_table<Recipe>()[s * 16 + x];
  }
};

Strided strided(const std::vector<std::uint16_t>& words, std::uint64_t cols) { return {words.data(), cols}; }

// The rows of one stage output block: element (m, n) of the joined output goes to
// output block b at (m, n - first_rows[b]).
struct Writer {
  const PreparedStage& st;
  std::vector<std::vector<std::uint16_t>*> outs;
  void put(std::uint64_t m, std::uint64_t n, std::uint16_t bits) const {
    std::size_t b = 0;
    while (n >= st.first_rows[b] + st.rows[b]) ++b;
    (*outs[b])[m * st.rows[b] + (n - st.first_rows[b])] = bits;
  }
};

template <class Ar>
struct GemmRows {
  const PreparedStage& st;
  Strided a, codes, scales;
  const Writer& out;
  std::uint64_t n_begin, n_end;
  template <class R>
  void run() const {
    HostBits<Ar> v;
    const GemmShape shape{st.k, st.stage->split_k, st.stage->order};
    std::uint16_t column[kMaxGemmRows];
    for (std::uint64_t n = n_begin; n < n_end; ++n) {
      mxfp4_column<R>(v, a, codes, scales, n, st.m, shape, column);
      for (std::uint64_t m = 0; m < st.m; ++m) out.put(m, n, column[m]);
    }
  }
};

int registry_index(const RecipeEntry* entry) { return static_cast<int>(entry - all_recipes().data()); }

// Rows of the joined weight per parallel task: small enough to balance two to many cores.
constexpr std::uint64_t kRowsPerTask = 16;

template <class Ar>
void run_matmul(const PreparedStage& st, const Strided& a, const Writer& out, unsigned threads) {
  const std::uint64_t n_total = st.weight()->rows;
  const std::uint64_t tasks = (n_total + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(tasks, threads, [&](std::size_t t) {
    const std::uint64_t begin = t * kRowsPerTask, end = std::min(n_total, begin + kRowsPerTask);
    if (st.stage->op == OpKind::kGemv) {
      HostBits<Ar> v;
      const GemvShape shape{st.k, st.stage->block_k, st.stage->order};
      const Strided w = strided(st.weight()->f16, st.k);
      for (std::uint64_t n = begin; n < end; ++n) out.put(0, n, gemv_element(v, a, w, n, shape));
      return;
    }
    GemmRows<Ar> rows{st,    a,  {st.weight()->codes.data(), st.k}, {st.weight()->scales.data(), st.k / kMxBlock}, out,
                      begin, end};
    with_dequant(registry_index(st.stage->dequant), rows);
  });
}

const std::vector<std::uint16_t>& words_of(const std::string& name, const Activations& activations,
                                           const Weights& weights, const ArmOutputs& written) {
  if (const auto it = written.find(name); it != written.end()) return it->second;
  if (const auto it = activations.find(name); it != activations.end()) return it->second.f16;
  return weights.tensors.at(name).f16;
}

}  // namespace

PreparedArm prepare_arm(const AbSpec& spec, std::size_t arm, const Weights& weights) {
  PreparedArm p;
  for (const auto& [name, shape] : spec.tensors_of(arm)) p.shapes[name] = shape;
  for (const Stage& st : spec.arms[arm].stages) {
    PreparedStage ps;
    ps.stage = &st;
    if (st.launch) {  // a kernel stage: its buffers are the kernel runner's (kernel_cpu.hpp)
      p.stages.push_back(std::move(ps));
      continue;
    }
    const TensorShape& a = p.shapes.at(st.a);
    ps.m = a.rows;
    ps.k = a.cols;
    if (st.op != OpKind::kSwiglu) {
      std::uint64_t first = 0;
      for (const std::string& w : st.weights) {
        const HostTensor& t = weights.tensors.at(w);
        ps.first_rows.push_back(first);
        ps.rows.push_back(t.rows);
        first += t.rows;
      }
      if (st.weights.size() == 1) {
        ps.single = &weights.tensors.at(st.weights[0]);
      } else {
        HostTensor& j = ps.joined;
        j.dtype = weights.tensors.at(st.weights[0]).dtype;
        j.rows = first;
        j.cols = ps.k;
        std::size_t f16 = 0, codes = 0, scales = 0;  // reserved whole: no doubling's copies at the peak
        for (const std::string& w : st.weights) {
          const HostTensor& t = weights.tensors.at(w);
          f16 += t.f16.size();
          codes += t.codes.size();
          scales += t.scales.size();
        }
        j.f16.reserve(f16);
        j.codes.reserve(codes);
        j.scales.reserve(scales);
        for (const std::string& w : st.weights) {
          const HostTensor& t = weights.tensors.at(w);
          j.f16.insert(j.f16.end(), t.f16.begin(), t.f16.end());
          j.codes.insert(j.codes.end(), t.codes.begin(), t.codes.end());
          j.scales.insert(j.scales.end(), t.scales.begin(), t.scales.end());
        }
      }
    }
    p.stages.push_back(std::move(ps));
  }
  return p;
}

Activations make_activations(const AbSpec& spec, std::uint64_t case_index) {
  Activations acts;
  for (const InputSpec& in : spec.inputs) {
    if (in.role == InputRole::kActivation) acts[in.name] = make_activation(spec, in, case_index);
  }
  return acts;
}

template <class Ar>
ArmOutputs run_arm(const PreparedArm& arm, const Weights& weights, const Activations& activations, unsigned threads) {
  ArmOutputs written;
  for (const PreparedStage& st : arm.stages) {
    Writer out{st, {}};
    for (const std::string& name : st.stage->outputs) {
      const TensorShape& s = arm.shapes.at(name);
      auto& words = written[name];
      words.assign(s.rows * s.cols, 0);
      out.outs.push_back(&words);
    }
    const Strided a = strided(words_of(st.stage->a, activations, weights, written), st.k);
    if (st.stage->op != OpKind::kSwiglu) {
      run_matmul<Ar>(st, a, out, threads);
      continue;
    }
    const Strided u = strided(words_of(st.stage->b, activations, weights, written), st.k);
    std::vector<std::uint16_t>& h = *out.outs[0];
    parallel_for(st.m, threads, [&](std::size_t m) {
      HostBits<Ar> v;
      for (std::uint64_t i = 0; i < st.k; ++i) h[m * st.k + i] = swiglu_element(v, a, u, m, i);
    });
  }
  return written;
}

ArmOutputs run_arm_cpu(const PreparedArm& arm, const Weights& weights, const Activations& activations, unsigned threads,
                       CpuArith arith) {
  return arith == CpuArith::kSoft ? run_arm<SoftArith>(arm, weights, activations, threads)
                                  : run_arm<HostFloatArith>(arm, weights, activations, threads);
}

bool may_follow_fill(const ArmOutputs& outputs, const std::function<bool(const std::string&)>& is_bf16) {
  return std::any_of(outputs.begin(), outputs.end(), [&](const auto& o) {
    const std::uint16_t exponent = is_bf16(o.first) ? 0x7F80 : 0x7C00;
    return std::any_of(o.second.begin(), o.second.end(), [exponent](std::uint16_t w) {
      return w == 0xFFFF || ((w & exponent) == exponent && (w & ~exponent & 0x7FFF) != 0);
    });
  });
}

std::optional<FillFollower> first_fill_follower(const ArmOutputs& under_ff, const ArmOutputs& under_00) {
  for (const auto& [name, a] : under_ff) {
    const std::vector<std::uint16_t>& b = under_00.at(name);
    FillFollower f{name};
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] == b[i]) continue;
      if (f.count++ == 0) f.index = i, f.under_ff = a[i], f.under_00 = b[i];
    }
    if (f.count != 0) return f;
  }
  return std::nullopt;
}

Expected<ArmOutputs> run_two_fill(const AbSpec& spec, std::size_t arm,
                                  const std::function<Expected<ArmOutputs>(std::uint8_t)>& run) {
  auto first = run(0xFF);
  if (!first) return first.error();
  const auto is_bf16 = [&](const std::string& o) { return spec.output_decl(o)->dtype == OutputType::kBf16; };
  if (!may_follow_fill(*first, is_bf16)) return first;
  auto second = run(0x00);
  if (!second) return second.error();
  const auto f = first_fill_follower(*first, *second);
  if (!f) return first;
  const OutputDecl& d = *spec.output_decl(f->output);
  return Error{fmt::format("{}: arm \"{}\" {} {}[{}][{}]{}{} (0x{:04X} under 0xFF poison, 0x{:04X} under 0x00)",
                           spec.path, spec.arms[arm].name, f->unwritten() ? "never writes" : "computes", f->output,
                           f->index / d.cols, f->index % d.cols,
                           f->count > 1 ? fmt::format(" (and {} more element(s))", f->count - 1) : "",
                           f->unwritten() ? ": no stage stores it, so it would be compared as the poison"
                                          : " from the output buffer's contents before the launch",
                           f->under_ff, f->under_00)};
}

}  // namespace bitproof::op
