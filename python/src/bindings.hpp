// The binding's functions, one file each (module.cpp registers them). Each returns a value or
// throws Failure (a library Error: message and exit code), never prints, never exits.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
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

}  // namespace bitproof::python
