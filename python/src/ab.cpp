// bitproof.ab on the CPU: two Python callables as the arms of an A/B run. The inputs come
// from A/B-spec declarations (operator/tensors.hpp: weights once, activations from every case's
// seed, the same bits as `bitproof ab`); the run, the bit-for-bit comparison and the digests
// are the engine's (op::run_ab); this file only moves words between the engine and NumPy.
//
// The spec text (made by python/bitproof/__init__.py):
//   {"name": "...", "seed": 1, "cases": 64, "checkpoint": "" or a directory,
//    "inputs": [A/B spec inputs: name, role, dtype, shape, values | scales | tensor],
//    "outputs": [{"name": "y", "shape": [rows, cols]}]}
// Every output is FP16. Each arm gets its own copy of every input; an arm that changes an
// input is refused. Every output buffer is poisoned (every word 0xFFFF, an FP16 NaN) before
// every call; an output still all poison after the call was not written (refuted, exit 1).
#include "operator/ab.hpp"

#include <fmt/format.h>
#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <numeric>

#include "bindings.hpp"
#include "callable_spec.hpp"
#include "hash/digest.hpp"
#include "operator/tensors.hpp"
#include "report/report.hpp"

namespace bitproof::python {
namespace {

using nlohmann::json;
constexpr std::uint16_t kPoison = 0xFFFF;  // an FP16 NaN no arithmetic of the arms' inputs makes by chance often

Error at(const std::string& field, const std::string& what) { return {"bitproof.ab: " + field + ": " + what}; }

std::uint64_t positive(const json& v, const std::string& field) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0) raise(at(field, "expected a whole number >= 1"));
  return v.get<std::uint64_t>();
}

// [cols] or [rows, cols], as A/B specs write shapes.
std::pair<std::uint64_t, std::uint64_t> shape_of(const json& v, const std::string& field) {
  if (!v.is_array() || v.empty() || v.size() > 2) raise(at(field, "expected [cols] or [rows, cols]"));
  std::uint64_t dims[2] = {1, 0};
  for (std::size_t i = 0; i < v.size(); ++i) dims[2 - v.size() + i] = positive(v[i], fmt::format("{}[{}]", field, i));
  if (dims[0] > op::kMaxTensorElements / dims[1]) raise(at(field, "more than the 2^31 elements bitproof holds"));
  return {dims[0], dims[1]};
}

std::string text(const json& v, const char* key, const std::string& field, bool required) {
  if (!v.contains(key)) {
    if (required) raise(at(field + "." + key, "missing"));
    return "";
  }
  if (!v.at(key).is_string() || v.at(key).get<std::string>().empty())
    raise(at(field + "." + key, "expected a non-empty string"));
  return v.at(key).get<std::string>();
}

op::ValueSpec values_of(const json& v, const std::string& field) {
  op::ValueSpec values;
  if (v.is_string() && v.get<std::string>() == "finite") {
    values.finite_codes = true;
    return values;
  }
  const json* r = v.is_object() && v.size() == 1 && v.contains("uniform") ? &v.at("uniform") : nullptr;
  if (r == nullptr || !r->is_array() || r->size() != 2 || !(*r)[0].is_number() || !(*r)[1].is_number())
    raise(at(field, "expected {\"uniform\": [lo, hi]} or \"finite\""));
  values.lo = (*r)[0].get<double>();
  values.hi = (*r)[1].get<double>();
  if (!(values.lo < values.hi) || values.lo < -65504.0 || values.hi > 65504.0)
    raise(at(field, "expected lo < hi within FP16's ±65504"));
  return values;
}

// One input declaration, with the refusals of an A/B spec's (operator/ab_spec.hpp).
op::InputSpec input_of(const json& v, const std::string& field) {
  if (!v.is_object()) raise(at(field, "expected a dict"));
  for (const auto& [key, value] : v.items()) {
    if (key != "name" && key != "role" && key != "dtype" && key != "shape" && key != "values" && key != "scales" &&
        key != "tensor")
      raise(at(field + "." + key, "unknown key (name, role, dtype, shape, values, scales, tensor)"));
  }
  op::InputSpec in;
  in.name = text(v, "name", field, true);
  const std::string role = text(v, "role", field, true);
  if (role != "activation" && role != "weight") raise(at(field + ".role", "expected \"activation\" or \"weight\""));
  in.role = role == "activation" ? op::InputRole::kActivation : op::InputRole::kWeight;
  const std::string dtype = text(v, "dtype", field, true);
  if (dtype != "f16" && dtype != "mxfp4") raise(at(field + ".dtype", "expected \"f16\" or \"mxfp4\""));
  in.dtype = dtype == "f16" ? op::DType::kF16 : op::DType::kMxfp4;
  if (in.dtype == op::DType::kMxfp4 && in.role == op::InputRole::kActivation)
    raise(at(field + ".role", "an mxfp4 input is a weight; activations are f16"));
  if (!v.contains("shape")) raise(at(field + ".shape", "missing"));
  std::tie(in.rows, in.cols) = shape_of(v.at("shape"), field + ".shape");
  if (in.dtype == op::DType::kMxfp4 && in.cols % 32 != 0)
    raise(at(field + ".shape", "an mxfp4 tensor's columns must be a multiple of 32 (one scale each)"));
  in.tensor = text(v, "tensor", field, false);
  if (!in.tensor.empty() && in.role == op::InputRole::kActivation)
    raise(at(field + ".tensor", "activations change every case: only weights come from a checkpoint"));
  if (v.contains("values")) {
    if (in.dtype != op::DType::kF16 || !in.tensor.empty())
      raise(at(field + ".values", "only a synthetic f16 input takes values"));
    in.values = values_of(v.at("values"), field + ".values");
  }
  if (v.contains("scales")) {
    const json& s = v.at("scales");
    if (in.dtype != op::DType::kMxfp4 || !in.tensor.empty())
      raise(at(field + ".scales", "only a synthetic mxfp4 input takes scales"));
    const json* r = s.is_object() && s.size() == 1 && s.contains("range") ? &s.at("range") : nullptr;
    if (r == nullptr || !r->is_array() || r->size() != 2 || !(*r)[0].is_number_unsigned() ||
        !(*r)[1].is_number_unsigned() || (*r)[0].get<std::uint64_t>() > (*r)[1].get<std::uint64_t>() ||
        (*r)[1].get<std::uint64_t>() > 255)
      raise(at(field + ".scales", "expected {\"range\": [lo, hi]}, 0 <= lo <= hi <= 255"));
    in.scales = {(*r)[0].get<std::uint32_t>(), (*r)[1].get<std::uint32_t>()};
  } else if (in.dtype == op::DType::kMxfp4 && in.tensor.empty()) {
    raise(at(field + ".scales", "missing: a synthetic mxfp4 input needs its scale range (or a \"tensor\")"));
  }
  return in;
}

}  // namespace

CallableSpec spec_of(const std::string& text_json) {
  const json v = json::parse(text_json, nullptr, false);
  if (v.is_discarded() || !v.is_object()) raise({"bitproof.ab: the declarations are not a JSON object"});
  CallableSpec s;
  s.ab.name = v.contains("name") && v.at("name").is_string() ? v.at("name").get<std::string>() : "python-ab";
  for (const char* key : {"seed", "cases", "inputs", "outputs"})
    if (!v.contains(key)) raise(at(key, "missing"));
  if (!v.at("seed").is_number_unsigned()) raise(at("seed", "expected a whole number >= 0"));
  s.ab.seed = v.at("seed").get<std::uint64_t>();
  s.ab.cases = positive(v.at("cases"), "cases");
  if (s.ab.cases > 1000000) raise(at("cases", "at most 1000000"));
  s.ab.checkpoint_path =
      v.contains("checkpoint") && v.at("checkpoint").is_string() ? v.at("checkpoint").get<std::string>() : "";
  s.ab.checkpoint = s.ab.checkpoint_path;
  const json& inputs = v.at("inputs");
  if (!inputs.is_array() || inputs.empty()) raise(at("inputs", "expected a non-empty list of declarations"));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    op::InputSpec in = input_of(inputs[i], fmt::format("inputs[{}]", i));
    if (s.ab.input(in.name) != nullptr) raise(at(fmt::format("inputs[{}].name", i), "\"" + in.name + "\" twice"));
    if (!in.tensor.empty() && s.ab.checkpoint_path.empty())
      raise(at(fmt::format("inputs[{}].tensor", i), "a checkpoint tensor needs checkpoint=DIR"));
    s.ab.inputs.push_back(std::move(in));
  }
  const json& outputs = v.at("outputs");
  if (!outputs.is_array() || outputs.empty()) raise(at("outputs", "expected a non-empty list of outputs"));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string field = fmt::format("outputs[{}]", i);
    if (!outputs[i].is_object() || !outputs[i].contains("shape")) raise(at(field, "expected {name, shape}"));
    const std::string name = text(outputs[i], "name", field, true);
    if (s.ab.input(name) != nullptr) raise(at(field + ".name", "\"" + name + "\" is an input's name"));
    for (const auto& o : s.outputs)
      if (o.first == name) raise(at(field + ".name", "\"" + name + "\" twice"));
    s.outputs.push_back({name, shape_of(outputs[i].at("shape"), field + ".shape")});
    s.ab.outputs.push_back(name);
  }
  s.real_inputs = s.ab.inputs.size();
  for (const auto& [name, shape] : s.outputs) {
    op::InputSpec carrier;
    carrier.name = name;
    carrier.rows = shape.first;
    carrier.cols = shape.second;
    s.ab.inputs.push_back(carrier);
  }
  return s;
}

// A NumPy array of `dtype` and shape (rows, cols), C order, and its words.
py::array new_array(const char* dtype, std::uint64_t rows, std::uint64_t cols) {
  // Imported on each call (sys.modules has it): a static Python object would outlive the interpreter.
  return py::module_::import("numpy").attr("empty")(py::make_tuple(rows, cols), dtype);
}

// An input as the arm sees it: f16 as float16 (rows, cols); mxfp4 as its packed codes
// `name` (uint8, rows × cols/2, low nibble first) and `name.scale` (uint8, rows × cols/32).
void add_input(py::dict& into, std::vector<std::pair<py::array, std::string>>& sources, const op::HostTensor& t,
               const std::string& name) {
  const auto put = [&](const std::string& key, const char* dtype, std::uint64_t cols, const void* data,
                       std::size_t bytes) {
    py::array a = new_array(dtype, t.rows, cols);
    std::memcpy(a.mutable_data(), data, bytes);
    into[py::str(key)] = a;
    sources.emplace_back(a, std::string(static_cast<const char*>(data), bytes));
  };
  if (t.dtype == op::DType::kF16) {
    put(name, "float16", t.cols, t.f16.data(), t.f16.size() * 2);
  } else {
    put(name, "uint8", t.cols / 2, t.codes.data(), t.codes.size());
    put(name + ".scale", "uint8", t.cols / 32, t.scales.data(), t.scales.size());
  }
}

Expected<Ok> no_fill_follower(const CallableSpec& spec, const std::string& where, const op::ArmOutputs& first,
                              const op::ArmOutputs& second) {
  const auto f = op::first_fill_follower(first, second);
  if (!f) return Ok{};
  const std::uint64_t cols = std::find_if(spec.outputs.begin(), spec.outputs.end(), [&](const auto& o) {
                               return o.first == f->output;
                             })->second.second;
  return Error{fmt::format("{}: output \"{}\"[{}][{}]{} {} (0x{:04X} under 0xFFFF poison, 0x{:04X} under 0x0000)",
                           where, f->output, f->index / cols, f->index % cols,
                           f->count > 1 ? fmt::format(" (and {} more element(s))", f->count - 1) : "",
                           f->unwritten() ? "was never written: write every element of every output"
                                          : "was computed from the output's contents before the call",
                           f->under_ff, f->under_00),
               kExitRefuted};
}

std::string arm_where(const CallableSpec& spec, std::size_t arm, const std::string& name, std::uint64_t c) {
  return fmt::format("bitproof.ab: arm {} (\"{}\"), case {} (seed {:#018x})", arm == 0 ? "a" : "b", name, c,
                     op::ab_case_seed(spec.ab.seed, c));
}

namespace {

class CallableRunner final : public op::ArmRunner {
 public:
  CallableRunner(const CallableSpec& spec, const op::Weights& weights, std::array<py::object, 2> arms, bool poison)
      : spec_(spec), weights_(weights), arms_(std::move(arms)), poison_(poison) {}
  [[nodiscard]] std::string name() const override { return "python"; }

  Expected<std::array<op::ArmOutputs, 2>> run_case(std::uint64_t c, const op::Activations& acts) override {
    std::array<op::ArmOutputs, 2> out;
    for (std::size_t arm = 0; arm < 2; ++arm) {
      auto written = run_arm(arm, c, acts, poison_ ? kPoison : std::uint16_t{0});
      if (!written) return written.error();
      if (poison_ && op::may_follow_fill(*written, [](const std::string&) { return false; })) {
        // 0xFFFF or a NaN: written so, never written, or computed from the poison. The call
        // again under 0x0000 tells them apart (a callable may so be called twice for a case).
        auto again = run_arm(arm, c, acts, 0x0000);
        if (!again) return again.error();
        if (auto same = follows_no_poison(arm, c, *written, *again); !same) return same.error();
      }
      out[arm] = std::move(*written);
    }
    return out;
  }

 private:
  std::string where(std::size_t arm, std::uint64_t c) const {
    return arm_where(spec_, arm, py::str(py::getattr(arms_[arm], "__name__", py::str("callable"))), c);
  }

  Expected<Ok> follows_no_poison(std::size_t arm, std::uint64_t c, const op::ArmOutputs& first,
                                 const op::ArmOutputs& second) const {
    return no_fill_follower(spec_, where(arm, c), first, second);
  }

  Expected<op::ArmOutputs> run_arm(std::size_t arm, std::uint64_t c, const op::Activations& acts,
                                   std::uint16_t poison) {
    py::dict inputs, outputs;
    std::vector<std::pair<py::array, std::string>> sources;  // each input and the bytes it must keep
    for (std::size_t i = 0; i < spec_.real_inputs; ++i) {
      const op::InputSpec& in = spec_.ab.inputs[i];
      const bool weight = in.role == op::InputRole::kWeight;
      add_input(inputs, sources, weight ? weights_.tensors.at(in.name) : acts.at(in.name), in.name);
    }
    std::vector<py::array> buffers;
    for (const auto& [name, shape] : spec_.outputs) {
      py::array a = new_array("float16", shape.first, shape.second);
      auto* words = static_cast<std::uint16_t*>(a.mutable_data());
      std::fill(words, words + shape.first * shape.second, poison);
      outputs[py::str(name)] = a;
      buffers.push_back(a);
    }
    try {
      arms_[arm](inputs, outputs);
    } catch (py::error_already_set& e) {
      std::string what = py::str(e.value());
      what = what.substr(0, what.find('\n'));  // one line; the exception itself is the ArmError's cause
      return Error{fmt::format("{}: the callable raised {}: {}", where(arm, c),
                               std::string(py::str(e.type().attr("__name__"))), what)};
    }
    for (const auto& [array, bytes] : sources) {
      if (std::memcmp(array.data(), bytes.data(), bytes.size()) != 0)
        return Error{
            fmt::format("{}: the callable changed an input (inputs are read-only; write only outputs)", where(arm, c))};
    }
    op::ArmOutputs written;
    for (std::size_t o = 0; o < buffers.size(); ++o) {
      const auto* words = static_cast<const std::uint16_t*>(buffers[o].data());
      const std::size_t n = static_cast<std::size_t>(buffers[o].size());
      if (poison == kPoison && std::all_of(words, words + n, [](std::uint16_t w) { return w == kPoison; })) {
        return Error{fmt::format("{}: output \"{}\" still holds the poison (0xFFFF) in every element: the callable "
                                 "wrote nothing into it (write into outputs[\"{}\"][...], do not rebind it)",
                                 where(arm, c), spec_.outputs[o].first, spec_.outputs[o].first),
                     kExitRefuted};
      }
      written[spec_.outputs[o].first].assign(words, words + n);
    }
    return written;
  }

  const CallableSpec& spec_;
  const op::Weights& weights_;
  std::array<py::object, 2> arms_;
  bool poison_;
};

json value(std::uint16_t bits) {
  return {{"bits", fmt::format("0x{:04x}", bits)}, {"decoded", describe_code(FormatId::fp16, bits)}};
}

}  // namespace

std::string result_json(const CallableSpec& spec, const op::AbResult& r, const op::Weights& weights) {
  json out{{"name", spec.ab.name},
           {"seed", spec.ab.seed},
           {"cases", r.cases},
           {"differing_cases", r.differing_cases},
           {"differing_elements", r.differing_elements},
           {"equal", r.arms_equal()},
           {"outputs", json::array()},
           {"first_differences", json::array()},
           {"checkpoint_sha256", json::object()}};
  for (std::size_t o = 0; o < r.outputs.size(); ++o) {
    const op::OutputSummary& s = r.outputs[o];
    out["outputs"].push_back({{"name", s.name},
                              {"shape", {spec.outputs[o].second.first, spec.outputs[o].second.second}},
                              {"sha256", {s.digest[0], s.digest[1]}},
                              {"differing_elements", s.differing_elements},
                              {"differing_cases", s.differing_cases}});
  }
  for (const op::Difference& d : r.first_differences) {
    out["first_differences"].push_back({{"output", d.output},
                                        {"case", d.case_index},
                                        {"case_seed", fmt::format("{:#018x}", d.case_seed)},
                                        {"index", {d.row, d.col}},
                                        {"a", value(d.a)},
                                        {"b", value(d.b)}});
  }
  for (const auto& [tensor, sha] : weights.checkpoint_digests) out["checkpoint_sha256"][tensor] = sha;
  return out.dump();
}

std::string callable_ab(const py::object& a, const py::object& b, const std::string& spec_json, std::size_t keep,
                        bool poison) {
  const CallableSpec spec = spec_of(spec_json);
  const op::Weights weights = take(op::load_weights(spec.ab, spec.ab.checkpoint_path));
  CallableRunner runner(spec, weights, {a, b}, poison);
  op::AbResult r = take(op::run_ab(spec.ab, {&runner}, keep));
  return result_json(spec, r, weights);
}

}  // namespace bitproof::python
