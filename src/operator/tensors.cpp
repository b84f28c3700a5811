#include "operator/tensors.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "arith/soft_arith.hpp"
#include "checkpoint/safetensors.hpp"
#include "memory.hpp"
#include "hash/digest.hpp"
#include "splitmix.hpp"

namespace bitproof::op {
namespace {

constexpr std::uint64_t kWeightStream = 0x5745494748547321ull;  // distinct streams for weights and activations
constexpr std::uint64_t kActivationStream = 0x4143544956415445ull;

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream, std::size_t input) {
  std::uint64_t s = seed ^ stream ^ (std::uint64_t{input} * 0xD1B54A32D192ED03ull);
  return splitmix64_next(s);
}

std::size_t input_slot(const AbSpec& spec, const InputSpec& in) { return static_cast<std::size_t>(&in - spec.inputs.data()); }

void fill_f16(HostTensor& t, const ValueSpec& values, std::uint64_t seed) {
  t.f16.resize(t.rows * t.cols);
  for (std::uint16_t& v : t.f16) v = draw_f16(values, splitmix64_next(seed));
}

void fill_mxfp4(HostTensor& t, CodeRange scales, std::uint64_t seed) {
  t.codes.resize(t.rows * t.cols / 2);
  for (std::size_t i = 0; i < t.codes.size(); i += 8) {
    const std::uint64_t r = splitmix64_next(seed);
    for (std::size_t j = 0; j < 8 && i + j < t.codes.size(); ++j) t.codes[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
  }
  t.scales.resize(t.rows * t.cols / kMxBlock);
  const std::uint64_t span = std::uint64_t{scales.hi} - scales.lo + 1;
  for (std::uint8_t& s : t.scales) s = static_cast<std::uint8_t>(scales.lo + splitmix64_next(seed) % span);
  // Both ends present, so the set the trace proof quantifies over is exactly the range.
  if (!t.scales.empty()) t.scales.front() = static_cast<std::uint8_t>(scales.lo);
  if (t.scales.size() > 1) t.scales.back() = static_cast<std::uint8_t>(scales.hi);
}

ScaleSet scale_set_of(const std::vector<std::uint8_t>& bytes, std::string origin) {
  ScaleSet set;
  for (std::uint8_t b : bytes) set.present[b] = true;
  set.origin = std::move(origin);
  return set;
}

const checkpoint::TensorInfo* find_tensor(const checkpoint::Checkpoint& ckpt, const std::string& name,
                                     const checkpoint::CheckpointFile** file) {
  for (const checkpoint::CheckpointFile& f : ckpt.files) {
    for (const checkpoint::TensorInfo& t : f.header.tensors) {
      if (t.name == name) {
        *file = &f;
        return &t;
      }
    }
  }
  return nullptr;
}

// The bytes of checkpoint tensor `name`, checked against the dtype and shape the spec expects.
Expected<std::vector<std::uint8_t>> read_tensor(const checkpoint::Checkpoint& ckpt, const AbSpec& spec,
                                                const std::string& field, const std::string& name,
                                                checkpoint::DType dtype, std::uint64_t rows, std::uint64_t cols,
                                                Weights& w) {
  const checkpoint::CheckpointFile* file = nullptr;
  const checkpoint::TensorInfo* t = find_tensor(ckpt, name, &file);
  if (t == nullptr) return Error{fmt::format("{}: {}: the checkpoint {} has no tensor \"{}\"", spec.path, field, ckpt.root, name)};
  const bool shape_ok = t->shape.size() == 2 && t->shape[0] == rows && t->shape[1] == cols;
  if (t->dtype != dtype || !shape_ok) {
    std::string shape;
    for (std::uint64_t d : t->shape) shape += fmt::format("{}{}", shape.empty() ? "" : ", ", d);
    return Error{fmt::format("{}: {}: checkpoint tensor \"{}\" is {} [{}], the spec needs {} [{}, {}]", spec.path, field,
                             name, checkpoint::dtype_name(t->dtype), shape, checkpoint::dtype_name(dtype), rows, cols)};
  }
  const auto bytes = file->tensor_bytes(*t);
  Sha256 digest;
  digest.update(bytes.data(), bytes.size());
  w.checkpoint_digests.emplace_back(name, to_hex(digest.finish()));
  return std::vector<std::uint8_t>(bytes.begin(), bytes.end());
}

Expected<HostTensor> checkpoint_input(const checkpoint::Checkpoint& ckpt, const AbSpec& spec, const InputSpec& in,
                                      const std::string& field, Weights& w) {
  HostTensor t{in.dtype, in.rows, in.cols, {}, {}, {}};
  if (in.dtype == DType::kF16) {
    auto bytes = read_tensor(ckpt, spec, field, in.tensor, checkpoint::DType::kF16, in.rows, in.cols, w);
    if (!bytes) return bytes.error();
    t.f16.resize(in.rows * in.cols);
    std::memcpy(t.f16.data(), bytes->data(), bytes->size());  // safetensors is little-endian, as is the host
    return t;
  }
  auto codes = read_tensor(ckpt, spec, field, in.tensor + ".weight", checkpoint::DType::kI8, in.rows, in.cols / 2, w);
  if (!codes) return codes.error();
  auto scales =
      read_tensor(ckpt, spec, field, in.tensor + ".scale", checkpoint::DType::kF8E8M0, in.rows, in.cols / kMxBlock, w);
  if (!scales) return scales.error();
  t.codes = std::move(*codes);
  t.scales = std::move(*scales);
  return t;
}

}  // namespace

std::uint16_t draw_f16(const ValueSpec& values, std::uint64_t r) {
  if (values.finite_codes) {
    // 2 × 31 × 1024 finite codes: sign, exponent field 0..30, mantissa.
    const std::uint64_t k = r % (2 * 31 * 1024);
    return static_cast<std::uint16_t>(((k / (31 * 1024)) << 15) | (k % (31 * 1024)));
  }
  const double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1), exact
  const float value = static_cast<float>(values.lo + (values.hi - values.lo) * u);
  return SoftArith::float2half_rn(std::bit_cast<std::uint32_t>(value));
}

bool ScaleSet::within(CodeRange r) const {
  for (std::uint32_t b = 0; b < 256; ++b) {
    if (present[b] && (b < r.lo || b > r.hi)) return false;
  }
  return true;
}

int ScaleSet::first_outside(CodeRange r) const {
  for (std::uint32_t b = 0; b < 256; ++b) {
    if (present[b] && (b < r.lo || b > r.hi)) return static_cast<int>(b);
  }
  return -1;
}

std::uint32_t ScaleSet::lo() const {
  for (std::uint32_t b = 0; b < 256; ++b) {
    if (present[b]) return b;
  }
  return 0;
}

std::uint32_t ScaleSet::hi() const {
  for (std::uint32_t b = 256; b-- > 0;) {
    if (present[b]) return b;
  }
  return 0;
}

Expected<Weights> load_weights(const AbSpec& spec, const std::string& checkpoint) {
  if (auto fits = check_memory(spec.host_bytes(), fmt::format("{}: inputs: the tensors of both arms", spec.path)); !fits)
    return fits.error();
  Weights w;
  std::optional<checkpoint::Checkpoint> ckpt;
  if (spec.uses_checkpoint()) {
    if (checkpoint.empty())
      return Error{fmt::format("{}: checkpoint: missing: an input names a checkpoint tensor (give \"checkpoint\" in the "
                               "spec or --checkpoint)",
                               spec.path)};
    auto opened = checkpoint::open_checkpoint(checkpoint);
    if (!opened) return opened.error();
    ckpt = std::move(*opened);
  }
  for (const InputSpec& in : spec.inputs) {
    if (in.role != InputRole::kWeight) continue;
    const std::string field = fmt::format("inputs[{}]", input_slot(spec, in));
    HostTensor t{in.dtype, in.rows, in.cols, {}, {}, {}};
    if (!in.tensor.empty()) {
      auto read = checkpoint_input(*ckpt, spec, in, field + ".tensor", w);
      if (!read) return read.error();
      t = std::move(*read);
    } else if (in.dtype == DType::kF16) {
      fill_f16(t, in.values, stream_seed(spec.seed, kWeightStream, input_slot(spec, in)));
    } else {
      fill_mxfp4(t, in.scales, stream_seed(spec.seed, kWeightStream, input_slot(spec, in)));
    }
    if (in.dtype == DType::kMxfp4 && !in.tensor.empty())
      w.scale_sets[in.name] = scale_set_of(t.scales, fmt::format("checkpoint tensor {}.scale", in.tensor));
    w.tensors[in.name] = std::move(t);
  }
  return w;
}

HostTensor make_activation(const AbSpec& spec, const InputSpec& in, std::uint64_t case_index) {
  HostTensor t{in.dtype, in.rows, in.cols, {}, {}, {}};
  fill_f16(t, in.values, stream_seed(ab_case_seed(spec.seed, case_index), kActivationStream, input_slot(spec, in)));
  return t;
}

}  // namespace bitproof::op
