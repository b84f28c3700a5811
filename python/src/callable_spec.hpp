// What ab.cpp, device.cpp and timing.cpp share: the declarations of a run over Python
// callables (inputs as in A/B specs, FP16 outputs), the arms' host arrays and the result.
#pragma once
#include <pybind11/numpy.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "operator/ab.hpp"
#include "operator/tensors.hpp"

namespace bitproof::python {

// The arms are callables, so the A/B spec has no stages. op::run_ab takes each output's shape
// from the spec's tensors (AbSpec::tensors_of, inputs first); each output is therefore also
// declared after the real inputs as an f16 weight of its shape that no arm is given (its
// synthetic words are never read). The real inputs keep their slots, so their bits are those
// `bitproof ab` makes from the same declarations in the same order.
struct CallableSpec {
  op::AbSpec ab;  // inputs (the real ones, then the outputs' shapes), seed, cases; no stages
  std::size_t real_inputs = 0;
  std::vector<std::pair<std::string, std::pair<std::uint64_t, std::uint64_t>>> outputs;
};

// The declarations' JSON (python/bitproof/__init__.py makes it), checked: BadInput naming the field.
[[nodiscard]] CallableSpec spec_of(const std::string& text_json);

// A NumPy array of `dtype` ("float16", "uint8") and shape (rows, cols), C order.
[[nodiscard]] py::array new_array(const char* dtype, std::uint64_t rows, std::uint64_t cols);

// An input as an arm sees it: f16 as float16 (rows, cols); mxfp4 as its packed codes `name`
// (uint8, rows × cols/2, low nibble first) and `name.scale` (uint8, rows × cols/32). Each array
// and the bytes it must keep are appended to `sources`.
void add_input(py::dict& into, std::vector<std::pair<py::array, std::string>>& sources, const op::HostTensor& t,
               const std::string& name);

// "bitproof.ab: arm a ("name"), case 3 (seed 0x...)": where an arm's error happened.
[[nodiscard]] std::string arm_where(const CallableSpec& spec, std::size_t arm, const std::string& name,
                                    std::uint64_t c);

// Ok where every output element is the same after the call under the 0xFFFF poison (`first`) and
// under 0x0000 (`second`); else the first element that followed the fill, named (exit 1).
[[nodiscard]] Expected<Ok> no_fill_follower(const CallableSpec& spec, const std::string& where,
                                            const op::ArmOutputs& first, const op::ArmOutputs& second);

// The run's result as JSON: counts, per-arm digests and the first differences decoded.
[[nodiscard]] std::string result_json(const CallableSpec& spec, const op::AbResult& r, const op::Weights& weights);

}  // namespace bitproof::python
