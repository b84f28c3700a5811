#include "operator/ab_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "json_fields.hpp"
#include "operator/kernel_parse.hpp"
#include "splitmix.hpp"
#include "strict_json.hpp"

namespace bitproof::op {
namespace {

using fields::only_keys;
using fields::string_field;
using fields::unsigned_value;
using fields::valid_name;
using fields::Where;
using nlohmann::json;

std::string type_of(const json& j) { return j.type_name(); }

Expected<json> member(const Where& w, const json& object, const std::string& parent, const std::string& key) {
  if (!object.contains(key)) return w.at(fields::join(parent, key), "missing");
  return object.at(key);
}

Expected<std::string> name_field(const Where& w, const json& object, const std::string& parent,
                                 const std::string& key) {
  auto name = string_field(w, object, parent, key, true);
  if (!name) return name.error();
  if (!valid_name(*name))
    return w.at(fields::join(parent, key), "expected lower-case letters, digits, '.', '_' or '-'");
  return name;
}

Expected<std::uint64_t> positive(const Where& w, const json& v, const std::string& field) {
  auto n = unsigned_value(w, v, field);
  if (!n) return n.error();
  if (*n == 0) return w.at(field, "must be at least 1");
  return n;
}

Expected<std::vector<std::string>> names_field(const Where& w, const json& object, const std::string& parent,
                                               const std::string& key) {
  auto list = member(w, object, parent, key);
  if (!list) return list.error();
  const std::string field = fields::join(parent, key);
  if (!list->is_array() || list->empty()) return w.at(field, "expected a non-empty array of names");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json& v = (*list)[i];
    const std::string item = fmt::format("{}[{}]", field, i);
    if (!v.is_string() || !valid_name(v.get<std::string>()))
      return w.at(item, "expected a name: lower-case letters, digits, '.', '_' or '-'");
    if (std::find(names.begin(), names.end(), v.get<std::string>()) != names.end())
      return w.at(item, fmt::format("\"{}\" listed twice", v.get<std::string>()));
    names.push_back(v.get<std::string>());
  }
  return names;
}

Expected<ValueSpec> parse_values(const Where& w, const json& v, const std::string& field) {
  ValueSpec values;
  if (v.is_string() && v.get<std::string>() == "finite") {
    values.finite_codes = true;
    return values;
  }
  if (!v.is_object() || v.size() != 1 || !v.contains("uniform"))
    return w.at(field, "expected {\"uniform\": [lo, hi]} or \"finite\"");
  const json& r = v.at("uniform");
  if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
    return w.at(field + ".uniform", "expected [lo, hi], two numbers");
  values.lo = r[0].get<double>();
  values.hi = r[1].get<double>();
  if (!(values.lo < values.hi) || values.lo < -65504.0 || values.hi > 65504.0)
    return w.at(field + ".uniform", fmt::format("expected lo < hi within FP16's ±65504, found [{}, {}]", values.lo,
                                                values.hi));
  return values;
}

Expected<CodeRange> byte_range(const Where& w, const json& v, const std::string& field) {
  if (!v.is_array() || v.size() != 2) return w.at(field, "expected [lo, hi]");
  auto lo = unsigned_value(w, v[0], field + "[0]");
  if (!lo) return lo.error();
  auto hi = unsigned_value(w, v[1], field + "[1]");
  if (!hi) return hi.error();
  for (auto [code, index] : {std::pair{*lo, 0}, std::pair{*hi, 1}}) {
    if (code > 254)
      return w.at(fmt::format("{}[{}]", field, index),
                  fmt::format("scale byte {} is outside ue8m0's finite codes 0..254 (255 is NaN)", code));
  }
  if (*lo > *hi) return w.at(field, fmt::format("reversed interval [{}, {}]", *lo, *hi));
  return CodeRange{static_cast<std::uint32_t>(*lo), static_cast<std::uint32_t>(*hi)};
}

Expected<Ok> parse_shape(const Where& w, const json& v, const std::string& field, InputSpec& in) {
  if (!v.is_array() || v.empty() || v.size() > 2) return w.at(field, "expected [cols] or [rows, cols]");
  std::uint64_t dims[2] = {1, 0};
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto n = positive(w, v[i], fmt::format("{}[{}]", field, i));
    if (!n) return n.error();
    dims[2 - v.size() + i] = *n;
  }
  in.rows = dims[0];
  in.cols = dims[1];
  if (in.rows > kMaxTensorElements / in.cols)
    return w.at(field, fmt::format("{} x {} elements: more than the 2^31 bitproof holds per tensor", in.rows, in.cols));
  if (in.dtype == DType::kMxfp4 && in.cols % kMxBlock != 0)
    return w.at(field, fmt::format("an mxfp4 tensor's columns must be a multiple of 32 (one scale each), found {}",
                                   in.cols));
  return Ok{};
}

Expected<InputSpec> parse_input(const Where& w, const json& v, const std::string& field) {
  if (!v.is_object()) return w.at(field, "expected an object, found " + type_of(v));
  if (auto ok = only_keys(w, v, field, {"name", "role", "dtype", "shape", "values", "scales", "tensor"}); !ok)
    return ok.error();
  InputSpec in;
  auto name = name_field(w, v, field, "name");
  if (!name) return name.error();
  in.name = *name;
  auto role = string_field(w, v, field, "role", true);
  if (!role) return role.error();
  if (*role != "activation" && *role != "weight")
    return w.at(field + ".role", fmt::format("unknown role \"{}\" (activation, weight)", *role));
  in.role = *role == "activation" ? InputRole::kActivation : InputRole::kWeight;
  auto dtype = string_field(w, v, field, "dtype", true);
  if (!dtype) return dtype.error();
  if (*dtype != "f16" && *dtype != "mxfp4")
    return w.at(field + ".dtype", fmt::format("unknown dtype \"{}\" (f16, mxfp4)", *dtype));
  in.dtype = *dtype == "f16" ? DType::kF16 : DType::kMxfp4;
  if (in.dtype == DType::kMxfp4 && in.role == InputRole::kActivation)
    return w.at(field + ".role", "an mxfp4 input is a weight; activations are f16");
  auto shape = member(w, v, field, "shape");
  if (!shape) return shape.error();
  if (auto ok = parse_shape(w, *shape, field + ".shape", in); !ok) return ok.error();
  auto tensor = string_field(w, v, field, "tensor", false);
  if (!tensor) return tensor.error();
  in.tensor = *tensor;
  if (!in.tensor.empty() && in.role == InputRole::kActivation)
    return w.at(field + ".tensor", "activations change every case: only weights come from a checkpoint");
  const bool synthetic = in.tensor.empty();
  if (v.contains("values")) {
    if (in.dtype != DType::kF16 || !synthetic)
      return w.at(field + ".values", "only a synthetic f16 input takes values");
    auto values = parse_values(w, v.at("values"), field + ".values");
    if (!values) return values.error();
    in.values = *values;
  }
  if (v.contains("scales")) {
    if (in.dtype != DType::kMxfp4 || !synthetic)
      return w.at(field + ".scales", "only a synthetic mxfp4 input takes scales");
    const json& s = v.at("scales");
    if (!s.is_object() || s.size() != 1 || !s.contains("range"))
      return w.at(field + ".scales", "expected {\"range\": [lo, hi]}");
    auto range = byte_range(w, s.at("range"), field + ".scales.range");
    if (!range) return range.error();
    in.scales = *range;
  } else if (in.dtype == DType::kMxfp4 && synthetic) {
    return w.at(field + ".scales", "missing: a synthetic mxfp4 input needs its scale interval (or a \"tensor\")");
  }
  return in;
}

Expected<FoldOrder> order_field(const Where& w, const json& v, const std::string& field) {
  auto order = string_field(w, v, field, "order", false);
  if (!order) return order.error();
  if (order->empty() || *order == "forward") return FoldOrder::kForward;
  if (*order == "reverse") return FoldOrder::kReverse;
  return w.at(field + ".order", fmt::format("unknown order \"{}\" (forward, reverse)", *order));
}

Expected<Ok> parse_matmul_fields(const Where& w, const json& v, const std::string& field, Stage& st) {
  auto a = name_field(w, v, field, st.op == OpKind::kGemv ? "x" : "a");
  if (!a) return a.error();
  st.a = *a;
  auto weights = names_field(w, v, field, "weights");
  if (!weights) return weights.error();
  if (weights->size() > kMaxJoined)
    return w.at(field + ".weights", fmt::format("at most {} weights joined in one stage", kMaxJoined));
  st.weights = *weights;
  auto order = order_field(w, v, field);
  if (!order) return order.error();
  st.order = *order;
  return Ok{};
}

Expected<Ok> parse_gemm_fields(const Where& w, const json& v, const std::string& field, Stage& st) {
  auto dequant = string_field(w, v, field, "dequant", true);
  if (!dequant) return dequant.error();
  st.dequant = recipe_by_name(*dequant);
  if (st.dequant == nullptr) return w.at(field + ".dequant", fmt::format("unknown recipe \"{}\"", *dequant));
  if (!is_mxfp4_dequant(*st.dequant))
    return w.at(field + ".dequant",
                fmt::format("recipe \"{}\" is not an e2m1 × ue8m0 → fp16 dequant (bitproof recipes lists them)",
                            *dequant));
  if (v.contains("split_k")) {
    auto split = positive(w, v.at("split_k"), field + ".split_k");
    if (!split) return split.error();
    st.split_k = *split;
  }
  return Ok{};
}

Expected<Stage> parse_stage(const Where& w, const json& v, const std::string& field) {
  if (!v.is_object()) return w.at(field, "expected an object, found " + type_of(v));
  Stage st;
  if (v.contains("kernel")) {
    auto launch = kernel_parse::stage(w, v, field);
    if (!launch) return launch.error();
    st.launch = std::move(*launch);
    return st;
  }
  auto op = string_field(w, v, field, "op", true);
  if (!op) return op.error();
  if (*op == "fp16_gemv") {
    st.op = OpKind::kGemv;
    if (auto ok = only_keys(w, v, field, {"op", "x", "weights", "outputs", "block_k", "order"}); !ok) return ok.error();
    if (auto ok = parse_matmul_fields(w, v, field, st); !ok) return ok.error();
    if (v.contains("block_k")) {
      auto block = positive(w, v.at("block_k"), field + ".block_k");
      if (!block) return block.error();
      st.block_k = *block;
    }
  } else if (*op == "mxfp4_gemm") {
    st.op = OpKind::kMxfp4Gemm;
    if (auto ok = only_keys(w, v, field, {"op", "a", "weights", "outputs", "dequant", "split_k", "order"}); !ok)
      return ok.error();
    if (auto ok = parse_matmul_fields(w, v, field, st); !ok) return ok.error();
    if (auto ok = parse_gemm_fields(w, v, field, st); !ok) return ok.error();
  } else if (*op == "swiglu") {
    st.op = OpKind::kSwiglu;
    if (auto ok = only_keys(w, v, field, {"op", "gate", "up", "outputs"}); !ok) return ok.error();
    auto gate = name_field(w, v, field, "gate");
    if (!gate) return gate.error();
    auto up = name_field(w, v, field, "up");
    if (!up) return up.error();
    st.a = *gate;
    st.b = *up;
  } else {
    return w.at(field + ".op", fmt::format("unknown operator \"{}\" (fp16_gemv, mxfp4_gemm, swiglu)", *op));
  }
  auto outputs = names_field(w, v, field, "outputs");
  if (!outputs) return outputs.error();
  st.outputs = *outputs;
  const std::size_t want = st.op == OpKind::kSwiglu ? 1 : st.weights.size();
  if (st.outputs.size() != want)
    return w.at(field + ".outputs", fmt::format("expected {} output name(s), one per {}, found {}", want,
                                                st.op == OpKind::kSwiglu ? "stage" : "weight", st.outputs.size()));
  return st;
}

// Shape inference: every name an arm reads exists with the dtype and shape its
// stage needs; every name it writes is new.
class ArmChecker {
 public:
  ArmChecker(const Where& w, const AbSpec& spec) : w_(w), spec_(spec) {
    for (const InputSpec& in : spec.inputs) shapes_[in.name] = {in.dtype, in.rows, in.cols};
  }

  Expected<Ok> stage(const Stage& st, const std::string& field) {
    if (st.launch) return kernel(*st.launch, field);
    if (st.op == OpKind::kSwiglu) return swiglu(st, field);
    auto a = read(st.a, field + (st.op == OpKind::kGemv ? ".x" : ".a"), DType::kF16);
    if (!a) return a.error();
    if (st.op == OpKind::kGemv && a->rows != 1)
      return w_.at(field + ".x", fmt::format("fp16_gemv takes one row (M = 1); \"{}\" has {}", st.a, a->rows));
    if (st.op == OpKind::kMxfp4Gemm && a->rows > kMaxGemmRows)
      return w_.at(field + ".a", fmt::format("mxfp4_gemm takes M = 1..{} rows; \"{}\" has {}", kMaxGemmRows, st.a,
                                             a->rows));
    const std::uint64_t k = a->cols;
    if (auto ok = reduction(st, field, k); !ok) return ok.error();
    const DType wtype = st.op == OpKind::kGemv ? DType::kF16 : DType::kMxfp4;
    for (std::size_t i = 0; i < st.weights.size(); ++i) {
      const std::string wf = fmt::format("{}.weights[{}]", field, i);
      auto wt = read(st.weights[i], wf, wtype);
      if (!wt) return wt.error();
      if (wt->cols != k)
        return w_.at(wf, fmt::format("\"{}\" has {} columns, the activation \"{}\" {}: K must agree", st.weights[i],
                                     wt->cols, st.a, k));
      if (auto ok = write(st.outputs[i], fmt::format("{}.outputs[{}]", field, i), {DType::kF16, a->rows, wt->rows}); !ok)
        return ok.error();
    }
    return Ok{};
  }

  [[nodiscard]] std::vector<std::pair<std::string, TensorShape>> all() const {
    return {shapes_.begin(), shapes_.end()};
  }
  [[nodiscard]] const std::map<std::string, TensorShape>& shapes() const { return shapes_; }

  Expected<Ok> reduction(const Stage& st, const std::string& field, std::uint64_t k) {
    if (st.op == OpKind::kGemv && k % st.block_k != 0)
      return w_.at(field + ".block_k", fmt::format("{} does not divide K = {}", st.block_k, k));
    if (st.op == OpKind::kMxfp4Gemm && (k / kMxBlock) % st.split_k != 0)
      return w_.at(field + ".split_k",
                   fmt::format("{} slices cannot split K = {} into whole 32-column scale blocks", st.split_k, k));
    return Ok{};
  }

  Expected<Ok> swiglu(const Stage& st, const std::string& field) {
    auto g = read(st.a, field + ".gate", DType::kF16);
    if (!g) return g.error();
    auto u = read(st.b, field + ".up", DType::kF16);
    if (!u) return u.error();
    if (g->rows != u->rows || g->cols != u->cols)
      return w_.at(field + ".up", fmt::format("\"{}\" is {}x{}, the gate \"{}\" {}x{}: they must agree", st.b, u->rows,
                                              u->cols, st.a, g->rows, g->cols));
    return write(st.outputs[0], field + ".outputs[0]", *g);
  }

  Expected<TensorShape> read(const std::string& name, const std::string& field, DType want) {
    const auto it = shapes_.find(name);
    if (it == shapes_.end())
      return w_.at(field, fmt::format("\"{}\" is neither an input nor an output of an earlier stage", name));
    if (it->second.dtype != want)
      return w_.at(field, fmt::format("\"{}\" is {}, this operand takes {}", name, dtype_name(it->second.dtype),
                                      dtype_name(want)));
    return it->second;
  }

  Expected<Ok> write(const std::string& name, const std::string& field, TensorShape shape) {
    if (shapes_.contains(name))
      return w_.at(field, fmt::format("\"{}\" already names an input or an earlier output", name));
    if (const OutputDecl* d = spec_.output_decl(name)) {
      if (d->dtype != OutputType::kF16 || d->rows != shape.rows || d->cols != shape.cols)
        return w_.at(field, fmt::format("\"{}\" is declared {} {}x{} in outputs; this stage writes f16 {}x{}", name,
                                        d->dtype == OutputType::kF16 ? "f16" : "bf16", d->rows, d->cols, shape.rows,
                                        shape.cols));
    }
    shapes_[name] = shape;
    return Ok{};
  }

  // A kernel stage: every tensor it reads exists (an input, or an output an earlier stage
  // of this arm wrote), joined inputs agree in dtype and columns, mxfp4 tensors pass one
  // part, and every output it writes is declared.
  Expected<Ok> kernel(const KernelLaunch& l, const std::string& field) {
    for (std::size_t i = 0; i < l.args.size(); ++i) {
      const LaunchArg& a = l.args[i];
      const std::string af = fmt::format("{}.args[{}]", field, i);
      switch (a.kind) {
        case LaunchArg::Kind::kTensor:
          if (auto ok = kernel_read(a, af + ".tensor"); !ok) return ok.error();
          break;
        case LaunchArg::Kind::kJoined:
          if (auto ok = kernel_joined(a, af + ".joined"); !ok) return ok.error();
          break;
        case LaunchArg::Kind::kOutput:
          if (auto ok = kernel_write(a.tensors[0], af + ".output"); !ok) return ok.error();
          break;
        default: break;
      }
    }
    return Ok{};
  }

 private:
  Expected<Ok> part_fits(const LaunchArg& a, DType dtype, const std::string& name, const std::string& field) {
    if (dtype == DType::kMxfp4 && a.part == TensorPart::kWhole)
      return w_.at(field, fmt::format("\"{}\" is mxfp4: pass its \"part\": \"codes\" and \"scales\" as two arguments",
                                      name));
    if (dtype != DType::kMxfp4 && a.part != TensorPart::kWhole)
      return w_.at(field, fmt::format("\"{}\" is {}: only an mxfp4 tensor has parts", name, dtype_name(dtype)));
    return Ok{};
  }

  Expected<Ok> kernel_read(const LaunchArg& a, const std::string& field) {
    const std::string& name = a.tensors[0];
    const auto it = shapes_.find(name);
    if (it == shapes_.end()) {
      if (spec_.output_decl(name) != nullptr)
        return w_.at(field, fmt::format("\"{}\" is read before a stage of this arm writes it", name));
      return w_.at(field, fmt::format("\"{}\" is neither an input nor a declared output", name));
    }
    return part_fits(a, it->second.dtype, name, field);
  }

  Expected<Ok> kernel_joined(const LaunchArg& a, const std::string& field) {
    const InputSpec* first = nullptr;
    for (std::size_t j = 0; j < a.tensors.size(); ++j) {
      const std::string item = fmt::format("{}[{}]", field, j);
      const InputSpec* in = spec_.input(a.tensors[j]);
      if (in == nullptr) return w_.at(item, fmt::format("\"{}\" is not an input (only inputs are joined)", a.tensors[j]));
      if (first == nullptr) {
        first = in;
        if (auto ok = part_fits(a, in->dtype, in->name, item); !ok) return ok.error();
      } else if (in->dtype != first->dtype || in->cols != first->cols) {
        return w_.at(item, fmt::format("\"{}\" is {} with {} columns, \"{}\" {} with {}: joined tensors share dtype "
                                       "and columns",
                                       in->name, dtype_name(in->dtype), in->cols, first->name,
                                       dtype_name(first->dtype), first->cols));
      }
    }
    return Ok{};
  }

  Expected<Ok> kernel_write(const std::string& name, const std::string& field) {
    const OutputDecl* d = spec_.output_decl(name);
    if (d == nullptr) {
      if (spec_.input(name) != nullptr) return w_.at(field, fmt::format("\"{}\" is an input: kernels write outputs", name));
      return w_.at(field, fmt::format("\"{}\" is not declared in outputs ({{\"name\", \"dtype\", \"shape\"}})", name));
    }
    shapes_[name] = {DType::kF16, d->rows, d->cols};  // 16-bit words (f16 or bf16): a stage may write it again
    return Ok{};
  }

  const Where& w_;
  const AbSpec& spec_;
  std::map<std::string, TensorShape> shapes_;
};

Expected<Arm> parse_arm(const Where& w, const json& v, const std::string& field) {
  if (!v.is_object()) return w.at(field, "expected an object, found " + type_of(v));
  if (auto ok = only_keys(w, v, field, {"name", "stages"}); !ok) return ok.error();
  Arm arm;
  auto name = name_field(w, v, field, "name");
  if (!name) return name.error();
  arm.name = *name;
  auto stages = member(w, v, field, "stages");
  if (!stages) return stages.error();
  if (!stages->is_array() || stages->empty()) return w.at(field + ".stages", "expected a non-empty array of stages");
  for (std::size_t i = 0; i < stages->size(); ++i) {
    auto st = parse_stage(w, (*stages)[i], fmt::format("{}.stages[{}]", field, i));
    if (!st) return st.error();
    arm.stages.push_back(std::move(*st));
  }
  return arm;
}

Expected<ElementProofRef> parse_element_proof(const Where& w, const json& v, const std::string& field,
                                              const std::string& spec_dir) {
  if (!v.is_object()) return w.at(field, "expected an object, found " + type_of(v));
  if (auto ok = only_keys(w, v, field, {"spec", "claim", "scales"}); !ok) return ok.error();
  ElementProofRef ref;
  auto spec = string_field(w, v, field, "spec", true);
  if (!spec) return spec.error();
  if (spec->empty()) return w.at(field + ".spec", "empty path");
  ref.spec = *spec;
  ref.path = (std::filesystem::path(spec_dir) / *spec).lexically_normal().string();
  if (v.contains("claim")) {
    auto claim = unsigned_value(w, v.at("claim"), field + ".claim");
    if (!claim) return claim.error();
    ref.claim = *claim;
  }
  auto scales = member(w, v, field, "scales");
  if (!scales) return scales.error();
  auto range = byte_range(w, *scales, field + ".scales");
  if (!range) return range.error();
  ref.scales = *range;
  return ref;
}

Expected<Ok> parse_header(const Where& w, const json& root, AbSpec& spec) {
  if (!root.is_object()) return w.at("(top level)", "expected a JSON object, found " + type_of(root));
  if (auto ok = only_keys(w, root, "",
                          {"bitproof_ab", "name", "title", "source", "seed", "cases", "checkpoint", "inputs", "kernels",
                           "arms", "outputs", "element_proofs", "expect"});
      !ok)
    return ok.error();
  if (!root.contains("bitproof_ab")) return w.at("bitproof_ab", "missing (this file is not a bitproof A/B spec)");
  if (auto ok = fields::version_value(w, root.at("bitproof_ab"), "bitproof_ab", kAbSpecVersion); !ok) return ok.error();
  auto name = name_field(w, root, "", "name");
  if (!name) return name.error();
  spec.name = *name;
  for (auto [key, out] : {std::pair{"title", &spec.title}, std::pair{"source", &spec.source}}) {
    auto text = string_field(w, root, "", key, false);
    if (!text) return text.error();
    if (!fields::printable_text(*text)) return w.at(key, "a control character (a line break, a tab, ...): write one line");
    *out = *text;
  }
  if (root.contains("seed")) {
    auto seed = unsigned_value(w, root.at("seed"), "seed");
    if (!seed) return seed.error();
    spec.seed = *seed;
  }
  if (root.contains("cases")) {
    auto cases = positive(w, root.at("cases"), "cases");
    if (!cases) return cases.error();
    if (*cases > 1'000'000) return w.at("cases", fmt::format("{} cases: at most 1000000", *cases));
    spec.cases = *cases;
  }
  auto expect = string_field(w, root, "", "expect", false);
  if (!expect) return expect.error();
  if (!expect->empty() && *expect != "equal" && *expect != "differ")
    return w.at("expect", fmt::format("unknown expectation \"{}\" (equal, differ)", *expect));
  spec.expect_differ = *expect == "differ";
  return Ok{};
}

Expected<Ok> parse_inputs(const Where& w, const json& root, AbSpec& spec) {
  auto inputs = member(w, root, "", "inputs");
  if (!inputs) return inputs.error();
  if (!inputs->is_array() || inputs->empty()) return w.at("inputs", "expected a non-empty array of inputs");
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    auto in = parse_input(w, (*inputs)[i], fmt::format("inputs[{}]", i));
    if (!in) return in.error();
    if (spec.input(in->name) != nullptr) return w.at(fmt::format("inputs[{}].name", i), "name used twice");
    spec.inputs.push_back(std::move(*in));
  }
  return Ok{};
}

// "outputs": names (tensors built-in stages write) or declarations {"name", "dtype", "shape"}
// (tensors kernel stages write), in the order they are compared.
Expected<Ok> parse_outputs(const Where& w, const json& root, AbSpec& spec) {
  auto list = member(w, root, "", "outputs");
  if (!list) return list.error();
  if (!list->is_array() || list->empty()) return w.at("outputs", "expected a non-empty array of names or declarations");
  for (std::size_t o = 0; o < list->size(); ++o) {
    const json& v = (*list)[o];
    const std::string field = fmt::format("outputs[{}]", o);
    std::string name;
    if (v.is_object()) {
      auto decl = kernel_parse::output_decl(w, v, field);
      if (!decl) return decl.error();
      name = decl->name;
      spec.output_decls.push_back(std::move(*decl));
    } else if (v.is_string() && valid_name(v.get<std::string>())) {
      name = v.get<std::string>();
    } else {
      return w.at(field, "expected a name (lower-case letters, digits, '.', '_' or '-') or {\"name\", \"dtype\", \"shape\"}");
    }
    if (std::find(spec.outputs.begin(), spec.outputs.end(), name) != spec.outputs.end())
      return w.at(field, fmt::format("\"{}\" listed twice", name));
    if (spec.input(name) != nullptr) return w.at(field, fmt::format("\"{}\" is an input, not an output", name));
    spec.outputs.push_back(name);
  }
  return Ok{};
}

// "kernels" is there exactly when a stage launches a kernel; an arm's stages are all kernel
// launches or all built-in operators.
Expected<Ok> check_kernel_stages(const Where& w, const json& root, AbSpec& spec) {
  std::string first_launch;
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& stages = spec.arms[i].stages;
    for (std::size_t s = 0; s < stages.size(); ++s) {
      if (stages[s].launch.has_value() != stages[0].launch.has_value())
        return w.at(fmt::format("arms[{}].stages[{}]", i, s),
                    "an arm's stages are all kernel launches or all built-in operators (mixing them in one arm is "
                    "not supported; the other arm may be built-in)");
      if (stages[s].launch && first_launch.empty()) first_launch = fmt::format("arms[{}].stages[{}]", i, s);
    }
  }
  if (!root.contains("kernels")) {
    if (!first_launch.empty()) return w.at("kernels", fmt::format("missing: {} launches a kernel", first_launch));
    return Ok{};
  }
  if (first_launch.empty()) return w.at("kernels", "no stage launches a kernel");
  auto k = kernel_parse::sources(w, root.at("kernels"), std::filesystem::path(spec.path).parent_path().string());
  if (!k) return k.error();
  spec.kernels = std::move(*k);
  return Ok{};
}

Expected<Ok> parse_arms(const Where& w, const json& root, AbSpec& spec) {
  if (auto ok = parse_outputs(w, root, spec); !ok) return ok.error();
  auto arms = member(w, root, "", "arms");
  if (!arms) return arms.error();
  if (!arms->is_array() || arms->size() != 2) return w.at("arms", "expected exactly two arms (A and B)");
  std::array<std::map<std::string, TensorShape>, 2> shapes;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::string field = fmt::format("arms[{}]", i);
    auto arm = parse_arm(w, (*arms)[i], field);
    if (!arm) return arm.error();
    ArmChecker check(w, spec);
    for (std::size_t s = 0; s < arm->stages.size(); ++s) {
      if (auto ok = check.stage(arm->stages[s], fmt::format("{}.stages[{}]", field, s)); !ok) return ok.error();
    }
    shapes[i] = check.shapes();
    spec.arms[i] = std::move(*arm);
  }
  if (spec.arms[0].name == spec.arms[1].name) return w.at("arms[1].name", "both arms have the same name");
  if (auto ok = check_kernel_stages(w, root, spec); !ok) return ok.error();
  for (std::size_t o = 0; o < spec.outputs.size(); ++o) {
    const std::string& name = spec.outputs[o];
    const std::string field = fmt::format("outputs[{}]", o);
    for (std::size_t i = 0; i < 2; ++i) {
      if (!shapes[i].contains(name))
        return w.at(field, fmt::format("arm \"{}\" does not compute \"{}\"", spec.arms[i].name, name));
    }
    const TensorShape& a = shapes[0].at(name);
    const TensorShape& b = shapes[1].at(name);
    if (a.rows != b.rows || a.cols != b.cols)
      return w.at(field, fmt::format("\"{}\" is {}x{} in arm \"{}\" and {}x{} in arm \"{}\"", name, a.rows, a.cols,
                                     spec.arms[0].name, b.rows, b.cols, spec.arms[1].name));
  }
  return Ok{};
}

Expected<Ok> parse_element_proofs(const Where& w, const json& root, AbSpec& spec) {
  if (!root.contains("element_proofs")) return Ok{};
  const json& list = root.at("element_proofs");
  if (!list.is_array()) return w.at("element_proofs", "expected an array, found " + type_of(list));
  const std::string dir = std::filesystem::path(spec.path).parent_path().string();
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto ref = parse_element_proof(w, list[i], fmt::format("element_proofs[{}]", i), dir);
    if (!ref) return ref.error();
    spec.element_proofs.push_back(std::move(*ref));
  }
  return Ok{};
}

}  // namespace

const InputSpec* AbSpec::input(const std::string& name) const {
  for (const InputSpec& in : inputs) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

const OutputDecl* AbSpec::output_decl(const std::string& name) const {
  for (const OutputDecl& d : output_decls) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

bool AbSpec::has_kernel_stages() const { return kernels.has_value(); }

bool AbSpec::uses_checkpoint() const {
  return std::any_of(inputs.begin(), inputs.end(), [](const InputSpec& in) { return !in.tensor.empty(); });
}

std::vector<std::pair<std::string, TensorShape>> AbSpec::tensors_of(std::size_t arm) const {
  const Where w{path};
  ArmChecker check(w, *this);
  for (const Stage& st : arms[arm].stages) (void)check.stage(st, "");  // checked when parsed
  return check.all();
}

namespace {

std::uint64_t tensor_bytes(DType dtype, std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t elements = rows * cols;  // at most kMaxTensorElements (2^31): no overflow below
  return dtype == DType::kF16 ? 2 * elements : elements / 2 + elements / kMxBlock;
}

}  // namespace

std::uint64_t AbSpec::host_bytes() const {
  std::uint64_t bytes = 0;
  for (const InputSpec& in : inputs) bytes += tensor_bytes(in.dtype, in.rows, in.cols);
  for (std::size_t arm = 0; arm < arms.size(); ++arm) {
    for (const auto& [name, shape] : tensors_of(arm)) {
      if (input(name) == nullptr) bytes += tensor_bytes(shape.dtype, shape.rows, shape.cols);
    }
    for (const Stage& st : arms[arm].stages) {
      // A kernel arm's buffers are copies of its inputs (the executor's memory): joined or not.
      for (const LaunchArg& a : st.launch ? st.launch->args : std::vector<LaunchArg>{}) {
        if (a.kind != LaunchArg::Kind::kJoined && a.kind != LaunchArg::Kind::kTensor) continue;
        for (const std::string& t : a.tensors) {
          if (const InputSpec* in = input(t)) bytes += tensor_bytes(in->dtype, in->rows, in->cols);
        }
      }
      if (st.weights.size() < 2) continue;
      for (const std::string& w : st.weights) {
        if (const InputSpec* in = input(w)) bytes += tensor_bytes(in->dtype, in->rows, in->cols);
      }
    }
  }
  return bytes;
}

Expected<AbSpec> parse_ab_spec(const std::string& text, const std::string& path) {
  const Where w{path};
  auto parsed = parse_json_strict(text, path, "");
  if (!parsed) return parsed.error();
  const json& root = *parsed;
  AbSpec spec;
  spec.path = path;
  if (auto ok = parse_header(w, root, spec); !ok) return ok.error();
  auto checkpoint = string_field(w, root, "", "checkpoint", false);
  if (!checkpoint) return checkpoint.error();
  spec.checkpoint = *checkpoint;
  if (!spec.checkpoint.empty())
    spec.checkpoint_path =
        (std::filesystem::path(path).parent_path() / spec.checkpoint).lexically_normal().string();
  if (auto ok = parse_inputs(w, root, spec); !ok) return ok.error();
  if (auto ok = parse_arms(w, root, spec); !ok) return ok.error();
  if (auto ok = parse_element_proofs(w, root, spec); !ok) return ok.error();
  return spec;
}

Expected<AbSpec> load_ab_spec(const std::string& path) {
  auto text = read_input_file(path, "the A/B spec file", kMaxSpecBytes);
  if (!text) return text.error();
  auto spec = parse_ab_spec(*text, path);
  if (spec) return spec;
  // Another kind of bitproof file: what it is and which commands take it.
  if (const std::string other = other_file_kind(*text, {"bitproof_ab"}); !other.empty()) {
    return Error{fmt::format("{}: not an A/B spec (\"bitproof_ab\"): it is {}", path, other)};
  }
  return spec;
}

namespace {

nlohmann::ordered_json input_json(const InputSpec& in) {
  nlohmann::ordered_json j;
  j["name"] = in.name;
  j["role"] = in.role == InputRole::kActivation ? "activation" : "weight";
  j["dtype"] = dtype_name(in.dtype);
  j["shape"] = {in.rows, in.cols};
  if (!in.tensor.empty()) {
    j["tensor"] = in.tensor;
  } else if (in.dtype == DType::kMxfp4) {
    j["scales"] = {{"range", {in.scales.lo, in.scales.hi}}};
  } else if (in.values.finite_codes) {
    j["values"] = "finite";
  } else {
    j["values"] = {{"uniform", {in.values.lo, in.values.hi}}};
  }
  return j;
}

nlohmann::ordered_json stage_json(const Stage& st) {
  if (st.launch) return kernel_parse::stage_json(*st.launch);
  nlohmann::ordered_json j;
  j["op"] = op_name(st.op);
  if (st.op == OpKind::kSwiglu) {
    j["gate"] = st.a;
    j["up"] = st.b;
  } else {
    j[st.op == OpKind::kGemv ? "x" : "a"] = st.a;
    j["weights"] = st.weights;
  }
  j["outputs"] = st.outputs;
  if (st.op == OpKind::kGemv) j["block_k"] = st.block_k;
  if (st.op == OpKind::kMxfp4Gemm) {
    j["dequant"] = st.dequant->card->name;
    j["split_k"] = st.split_k;
  }
  if (st.op != OpKind::kSwiglu) j["order"] = order_name(st.order);
  return j;
}

}  // namespace

nlohmann::ordered_json ab_spec_to_json(const AbSpec& spec) {
  nlohmann::ordered_json j;
  j["bitproof_ab"] = kAbSpecVersion;
  j["name"] = spec.name;
  if (!spec.title.empty()) j["title"] = spec.title;
  if (!spec.source.empty()) j["source"] = spec.source;
  j["seed"] = spec.seed;
  j["cases"] = spec.cases;
  if (!spec.checkpoint.empty()) j["checkpoint"] = spec.checkpoint;
  j["inputs"] = nlohmann::ordered_json::array();
  for (const InputSpec& in : spec.inputs) j["inputs"].push_back(input_json(in));
  if (spec.kernels) j["kernels"] = kernel_parse::sources_json(*spec.kernels);
  j["arms"] = nlohmann::ordered_json::array();
  for (const Arm& arm : spec.arms) {
    nlohmann::ordered_json a;
    a["name"] = arm.name;
    a["stages"] = nlohmann::ordered_json::array();
    for (const Stage& st : arm.stages) a["stages"].push_back(stage_json(st));
    j["arms"].push_back(a);
  }
  j["outputs"] = nlohmann::ordered_json::array();
  for (const std::string& name : spec.outputs) {
    const OutputDecl* d = spec.output_decl(name);
    j["outputs"].push_back(d != nullptr ? kernel_parse::output_decl_json(*d) : nlohmann::ordered_json(name));
  }
  if (!spec.element_proofs.empty()) {
    j["element_proofs"] = nlohmann::ordered_json::array();
    for (const ElementProofRef& ref : spec.element_proofs)
      j["element_proofs"].push_back({{"spec", ref.spec}, {"claim", ref.claim}, {"scales", {ref.scales.lo, ref.scales.hi}}});
  }
  j["expect"] = spec.expect_differ ? "differ" : "equal";
  return j;
}

std::string_view op_name(OpKind op) {
  switch (op) {
    case OpKind::kGemv: return "fp16_gemv";
    case OpKind::kMxfp4Gemm: return "mxfp4_gemm";
    case OpKind::kSwiglu: return "swiglu";
  }
  return "?";
}

std::string_view dtype_name(DType dtype) { return dtype == DType::kF16 ? "f16" : "mxfp4"; }

std::string_view order_name(FoldOrder order) { return order == FoldOrder::kForward ? "forward" : "reverse"; }

bool is_mxfp4_dequant(const RecipeEntry& recipe) {
  const RecipeCard& c = *recipe.card;
  return !recipe.is_user() && c.arity == 2 && c.inputs[0] == FormatId::e2m1 && c.inputs[1] == FormatId::ue8m0 &&
         c.output == FormatId::fp16;
}

std::uint64_t ab_case_seed(std::uint64_t spec_seed, std::uint64_t case_index) {
  return splitmix64(spec_seed + case_index * kSplitMixGamma);  // word case_index + 1 of the stream
}

}  // namespace bitproof::op
