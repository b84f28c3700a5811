// _bitproof: the Python face's C++ half (issue 49). The package python/bitproof wraps it; a
// user never imports it directly. The top room beside src/cli: it calls the library rooms as
// the commands do and never prints or exits. Every library Error becomes the Python exception
// _bitproof.Failure(message, exit_code), which the package turns into bitproof.BadInput
// (exit 2), bitproof.BackendMissing (exit 3) or bitproof.Error. Results cross as the reports'
// JSON text (the engine's counts and decoded values, exactly as the CLI writes them).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "audit/admission.hpp"
#include "backend/backend.hpp"
#include "bindings.hpp"
#include "format/format.hpp"
#include "output_files.hpp"
#include "parallel.hpp"
#include "proof/spec.hpp"
#include "report/kind.hpp"
#include "report/read.hpp"
#include "report/render.hpp"
#include "report/report.hpp"
#include "strict_json.hpp"
#include "user/table.hpp"
#include "user/user_recipes.hpp"
#include "version.hpp"

namespace bitproof::python {
namespace {

// The cpu backend's most cases (as `bitproof prove`: 2^40 is days on a CPU).
constexpr std::uint64_t kMostCpuCases = std::uint64_t{1} << 40;

// The backends `backend` names, as `bitproof prove --backend` picks them: "all" takes CUDA
// only where it can run, "cuda" without it is exit 3; output tables run on the CPU alone.
std::vector<std::unique_ptr<Backend>> select_backends(const std::string& which, Spec& spec) {
  if (which != "cpu" && which != "cuda" && which != "all")
    raise({"backend: expected \"cpu\", \"cuda\" or \"all\", got \"" + which + "\""});
  std::vector<std::unique_ptr<Backend>> backends;
  const bool cpu_can = spec.case_count() <= kMostCpuCases;
  if (which == "cpu" && !cpu_can) raise({spec.name + ": more cases than the 2^40 the cpu backend sweeps"});
  if (which != "cuda" && cpu_can) backends.push_back(make_cpu_backend());
  if (which == "cpu") return backends;
  auto cuda = make_cuda_backend();
  if (cuda) {
    backends.push_back(std::move(*cuda));
  } else if (which == "cuda") {
    raise(cuda.error());
  }
  if (backends.empty()) raise({spec.name + ": more cases than the cpu backend sweeps and no CUDA device"});
  if (spec.user && backends.size() > 1) {
    if (spec.user->has_tables()) {
      backends.pop_back();  // data, not code: nothing for a GPU to run
    } else {
      spec.user->gpu_runs = true;
    }
  }
  return backends;
}

// The outputs asked for, checked against the spec (an input) and reserved before any work.
OutputFiles open_outputs(const std::vector<std::string>& reads, const std::string& report, const std::string& markdown,
                         const std::string& junit) {
  OutputFiles files;
  for (const std::string& path : reads) files.add_input(path);
  for (const auto& [path, flag] : {std::pair{report, "report"}, {markdown, "markdown"}, {junit, "junit"}}) {
    if (!path.empty()) take(files.add(flag, path));
  }
  return files;
}

// Proves a loaded spec as `bitproof prove` does, writing the outputs asked for; `reads`: the
// files no output may be written over (the spec, its tables).
std::tuple<int, std::string> prove_loaded(Spec& spec, const std::vector<std::string>& reads, const std::string& backend,
                                          const std::string& report, const std::string& markdown,
                                          const std::string& junit, std::size_t keep, unsigned threads) {
  auto backends = select_backends(backend, spec);
  OutputFiles files = open_outputs(reads, report, markdown, junit);
  BackendOptions options;
  options.engine.keep = keep;
  options.engine.threads = threads;
  std::vector<BackendRun> runs;
  {
    py::gil_scoped_release unlocked;  // the sweep runs without Python
    for (const auto& b : backends) {
      auto run = b->prove(spec, options);
      if (!run) raise(run.error());
      runs.push_back(std::move(*run));
    }
  }
  const Agreement agree = agreement(spec, runs, keep);
  Json json = proof_report(spec, runs, keep);
  json["environment"]["command"] = "python: bitproof (" + reads.front() + ", backend " + backend + ")";
  if (!report.empty()) files.set(report, json.dump(2) + "\n");
  if (!markdown.empty()) files.set(markdown, render_markdown(json));
  if (!junit.empty()) files.set(junit, render_junit(json));
  if (!files.empty()) take(files.commit());
  const bool passes = runs.front().result.passes(spec) && agree.holds();
  return {passes ? kExitHolds : kExitRefuted, json.dump()};
}

}  // namespace

std::tuple<int, std::string> prove(const std::string& spec_path, const std::string& backend, const std::string& report,
                                   const std::string& markdown, const std::string& junit, std::size_t keep,
                                   unsigned threads) {
  Spec spec = take(load_spec(spec_path));
  return prove_loaded(spec, {spec_path}, backend, report, markdown, junit, keep, threads);
}

std::tuple<std::vector<std::tuple<std::string, std::string, int>>, py::bytes, std::vector<std::string>> spec_cases(
    const std::string& spec_path) {
  const Spec spec = take(load_spec(spec_path));
  const std::uint64_t cases = spec.case_count();
  if (cases > user::kMaxTableWords)
    raise({fmt::format("{}: inputs: {} cases; an output table holds at most 2^26", spec_path, cases)});
  std::vector<std::tuple<std::string, std::string, int>> columns;
  for (const InputDomain& in : spec.inputs)
    columns.emplace_back(in.name, std::string(spec_of(in.format).name), user::storage_bytes(in.format));
  // Input i's code of case n, input by input (the first input fastest, as `bitproof spec cases`).
  std::string out;
  std::uint64_t stride = 1;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const int width = std::get<2>(columns[i]);
    for (std::uint64_t n = 0; n < cases; ++n) {
      const std::uint32_t code = spec.inputs[i].code((n / stride) % spec.inputs[i].count());
      for (int b = 0; b < width; ++b) out += static_cast<char>((code >> (8 * b)) & 0xFF);
    }
    stride *= spec.inputs[i].count();
  }
  std::vector<std::string> tables;  // the recipes that read an output table
  if (spec.user) {
    for (const user::UserRecipe& r : spec.user->recipes)
      if (!r.table.empty()) tables.push_back(r.name);
  }
  return {columns, py::bytes(out), tables};
}

std::tuple<int, std::string> prove_tables(const std::string& spec_path,
                                          const std::map<std::string, std::string>& tables, const std::string& backend,
                                          const std::string& report, std::size_t keep, unsigned threads) {
  Spec spec = take(load_spec(spec_path));
  std::vector<std::string> reads{spec_path};
  std::size_t given = 0;
  if (!spec.user)
    raise({fmt::format("{}: recipes: no recipe of this spec reads an output table (\"table\")", spec_path)});
  for (user::UserRecipe& r : spec.user->recipes) {
    if (r.table.empty()) continue;
    const auto it = tables.find(r.name);
    if (it == tables.end())
      raise({fmt::format("{}: recipes: {}: the function gave no table for it", spec_path, r.name)});
    r.table = it->second;                      // relative to the spec's directory, as a spec names a table
    r.table_format = user::TableFormat::kNpy;  // the default for a .npy name: not written back
    r.table_format_given = false;
    r.source =
        fmt::format("table {} ({})", r.table, user::table_format_name(r.table_format));  // as the parser makes it
    r.card.summary = r.source;
    r.card.source = r.source;
    reads.push_back((std::filesystem::path(spec.user->base_dir) / it->second).string());
    ++given;
  }
  if (given == 0)
    raise({fmt::format("{}: recipes: no recipe of this spec reads an output table (\"table\")", spec_path)});
  if (given != tables.size())
    raise({fmt::format("{}: recipes: a table was given for a recipe the spec has not", spec_path)});
  return prove_loaded(spec, reads, backend, report, "", "", keep, threads);
}

std::tuple<bool, std::string, std::vector<std::string>> verify(const std::string& path, const std::string& spec_dir) {
  const std::string text = take(read_input_file(path, "the report", kMaxReportBytes));
  Json report = take(parse_report(text, path));
  const ReportKind* kind = report_kind_of(report);
  if (kind != nullptr && !kind->refused_alone.empty()) raise({path + ": kind: " + std::string(kind->refused_alone)});
  if (kind == nullptr || !kind->verify) {
    raise({path + ": kind: bitproof.verify cannot verify an " + report["kind"].get<std::string>() +
           " report (bitproof report verify can)"});
  }
  Verification v = take(kind->verify(report, path, {spec_dir, audit::read_audited_scales}));
  return {v.passes, v.headline, v.notes};
}

}  // namespace bitproof::python

PYBIND11_MODULE(_bitproof, m) {
  namespace py = pybind11;
  m.doc() = "bitproof's engine (import the bitproof package, not this module)";
  static py::exception<bitproof::python::Failure> failure(m, "Failure");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const bitproof::python::Failure& f) {
      py::object args = py::make_tuple(f.error.message, f.error.exit_code);
      PyErr_SetObject(failure.ptr(), args.ptr());
    }
  });
  m.attr("version") = bitproof::tool_version();
  m.def("prove", &bitproof::python::prove, py::arg("spec"), py::arg("backend"), py::arg("report"), py::arg("markdown"),
        py::arg("junit"), py::arg("keep"), py::arg("threads"),
        "prove every claim of a spec; returns (exit code, report JSON text)");
  m.def("verify", &bitproof::python::verify, py::arg("report"), py::arg("spec_dir"),
        "re-derive a report's result; returns (passes, headline, notes)");
  m.def("spec_cases", &bitproof::python::spec_cases, py::arg("spec"),
        "every case's input codes: ([(name, format, bytes)], the codes input by input, little-endian, the table "
        "recipes)");
  m.def("prove_tables", &bitproof::python::prove_tables, py::arg("spec"), py::arg("tables"), py::arg("backend"),
        py::arg("report"), py::arg("keep"), py::arg("threads"),
        "prove a spec whose table recipes read the given .npy files; returns (exit code, report JSON text)");
  m.def("compare", &bitproof::python::compare, py::arg("a"), py::arg("b"), py::arg("name_a"), py::arg("name_b"),
        py::arg("keep"), "compare two arrays bit for bit; returns the comparison as JSON text");
  m.def("ab", &bitproof::python::callable_ab, py::arg("a"), py::arg("b"), py::arg("spec"), py::arg("keep"),
        py::arg("poison"), "run two callables on an A/B spec's inputs; returns the result as JSON text");
  m.def("layout", &bitproof::python::callable_layout, py::arg("spec"),
        "every tensor an arm gets: [(key, dtype, rows, cols, is_output)]");
  m.def("inputs", &bitproof::python::callable_inputs, py::arg("spec"), py::arg("case"),
        "the host arrays of one case: the weights and that case's activations");
  m.def("device_ab", &bitproof::python::device_ab, py::arg("arms"), py::arg("spec"), py::arg("keep"),
        "run two arms whose tensors cross by DLPack; returns (result JSON, device JSON)");
  m.def("time", &bitproof::python::time_arms, py::arg("new_arm"), py::arg("names"), py::arg("options"),
        py::arg("report"), py::arg("markdown"), "the timing gate on two prepared arms; returns (passes, report JSON)");
  m.def("time_lines", &bitproof::python::time_lines, py::arg("report"), "a time report's summary lines");
  m.def("check_claim", &bitproof::python::check_claim, py::arg("claim"), py::arg("names"),
        "a timing claim checked against the arms' names");
  m.def("ptx_stage", &bitproof::python::ptx_stage, py::arg("ptx"), py::arg("launch"), py::arg("ptx_path"),
        py::arg("stage_path"), "a Triton kernel's PTX and launch as a kernel-arm stage; returns the result JSON");
}
