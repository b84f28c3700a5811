// The binding's functions, one file each (module.cpp registers them). Each returns a value or
// throws Failure (a library Error: message and exit code), never prints, never exits.
#pragma once
#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "error.hpp"

namespace bitproof::python {

namespace py = pybind11;

// A library Error on its way to Python as _bitproof.Failure(message, exit_code).
struct Failure {
  Error error;
};
[[noreturn]] inline void raise(Error e) { throw Failure{std::move(e)}; }
template <class T>
T take(Expected<T> value) {
  if (!value) raise(value.error());
  return std::move(*value);
}

// module.cpp: `bitproof prove` (without the printing) and `bitproof report verify`.
std::tuple<int, std::string> prove(const std::string& spec, const std::string& backend, const std::string& report,
                                   const std::string& markdown, const std::string& junit, std::size_t keep,
                                   unsigned threads);
// The spec's cases (`bitproof spec cases`) and a proof with the user's outputs as tables.
std::tuple<std::vector<std::tuple<std::string, std::string, int>>, py::bytes, std::vector<std::string>> spec_cases(
    const std::string& spec);
std::tuple<int, std::string> prove_tables(const std::string& spec, const std::map<std::string, std::string>& tables,
                                          const std::string& backend, const std::string& report, std::size_t keep,
                                          unsigned threads);
std::tuple<bool, std::string, std::vector<std::string>> verify(const std::string& report, const std::string& spec_dir);

// arrays.cpp: two arrays of one 16- or 32-bit float dtype compared bit for bit.
std::string compare(const py::object& a, const py::object& b, const std::string& name_a, const std::string& name_b,
                    std::size_t keep);

// ab.cpp: two Python callables as the arms of an A/B run (docs/python.md).
std::string callable_ab(const py::object& a, const py::object& b, const std::string& spec_json, std::size_t keep,
                        bool poison);

// device.cpp: the arms' tensors through DLPack (device="cuda": torch's), the engine's copies,
// poison and comparison. layout: every tensor an arm gets (key, "float16" | "uint8", rows, cols,
// is an output); inputs: the host arrays of case `case_index` (weights and that case's
// activations); device_ab: (the result as JSON, the device's description as JSON).
std::vector<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t, bool>> callable_layout(
    const std::string& spec_json);
py::dict callable_inputs(const std::string& spec_json, std::uint64_t case_index);
std::tuple<std::string, std::string> device_ab(const std::array<std::pair<std::string, py::object>, 2>& arms,
                                               const std::string& spec_json, std::size_t keep);

// timing.cpp: the timing gate on two arms the package prepares and enqueues (bitproof.time).
// new_arm(i) -> (stream, prepare, enqueue) makes a fresh instance of arm i (0: A, 1: B); returns
// (passes, the time report's JSON text); writes the report and Markdown where asked.
std::tuple<bool, std::string> time_arms(const py::object& new_arm, const std::array<std::string, 2>& names,
                                        const std::string& options_json, const std::string& report,
                                        const std::string& markdown);
// The summary lines of a time report (as `bitproof time` prints them); a claim checked (BadInput).
std::vector<std::string> time_lines(const std::string& report_json);
void check_claim(const std::string& claim, const std::array<std::string, 2>& names);

// ptx.cpp: a Triton kernel's PTX and launch as a kernel-arm stage (bitproof.ptx); returns the
// fragment's JSON text and writes the PTX and the fragment.
std::string ptx_stage(const std::string& ptx, const std::string& launch_json, const std::string& ptx_path,
                      const std::string& stage_path);

}  // namespace bitproof::python
