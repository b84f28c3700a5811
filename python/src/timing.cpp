// bitproof.time: the timing gate (src/timing, docs/timing.md) on two arms the Python package
// prepares and enqueues. The protocol is `bitproof time`'s, unchanged: each arm prepared and
// warmed on its own (timing::run_session, warm_until_settled), counterbalanced blocks, one sample
// = the arm's work queued behind the blocking kernel on the arm's stream, timed with CUDA events,
// the L2 flushed before it, the SM clock probed after it (backend/cuda_timing.cpp's ExternalArm).
// Statistics, verdict, claim and report are the same code as the command's (report/time_report).
//
// The package's new_arm(i) returns (stream, prepare, enqueue) for a fresh instance of arm i
// (0: A, 1: B; the calibration's A' is a third): `stream` a CUstream of device 0's primary
// context (torch.cuda.Stream().cuda_stream), prepare() makes the arm's own copies of the inputs
// and captures its graph, enqueue() puts one replay on `stream` without waiting.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "backend/cuda_timing.hpp"
#include "bindings.hpp"
#include "output_files.hpp"
#include "report/render.hpp"
#include "report/time_report.hpp"
#include "timing/verdict.hpp"

namespace bitproof::python {
namespace {

using nlohmann::json;

Error bad(const std::string& key, const std::string& what) { return {"bitproof.time: " + key + ": " + what}; }

double number(const json& o, const char* key, double lo, double hi) {
  const json& v = o.at(key);
  if (!v.is_number() || !(v.get<double>() > lo) || !(v.get<double>() <= hi))
    raise(bad(key, fmt::format("expected a number in ({}, {}]", lo, hi)));
  return v.get<double>();
}

std::size_t count(const json& o, const char* key, std::size_t lo, std::size_t hi) {
  const json& v = o.at(key);
  if (!v.is_number_unsigned() || v.get<std::size_t>() < lo || v.get<std::size_t>() > hi)
    raise(bad(key, fmt::format("expected a whole number in [{}, {}]", lo, hi)));
  return v.get<std::size_t>();
}

std::string choice(const json& o, const char* key, std::initializer_list<const char*> allowed) {
  const json& v = o.at(key);
  for (const char* a : allowed)
    if (v.is_string() && v.get<std::string>() == a) return a;
  raise(bad(key, fmt::format("expected one of \"{}\"", fmt::join(allowed, "\", \""))));
}

// The protocol as `bitproof time` builds it from its flags (cli/cmd_time.cpp: protocol_of).
TimeProtocol protocol_of(const json& o) {
  for (const char* key : {"cache", "order", "min_samples", "max_samples", "noise", "min_time", "timeout", "same_within",
                          "seed", "calibrate", "user_timeout"})
    if (!o.contains(key)) raise(bad(key, "missing"));
  TimeProtocol p;
  timing::SessionOptions& s = p.session;
  s.protocol = timing::Protocol::kCounterbalanced;
  s.order =
      choice(o, "order", {"abba", "random"}) == "random" ? timing::BlockOrder::kRandom : timing::BlockOrder::kAbba;
  s.flush_l2 = choice(o, "cache", {"cold", "hot"}) == "cold";
  s.min_samples = count(o, "min_samples", 4, 1000000);
  s.max_samples = std::max(count(o, "max_samples", 4, 1000000), s.min_samples);
  s.noise_target = number(o, "noise", 0, 100) / 100;
  s.timeout_s = number(o, "timeout", 0.01, 3600);
  s.min_time_s = std::min(number(o, "min_time", -1e-9, 3600), s.timeout_s);
  if (!o.at("seed").is_number_unsigned()) raise(bad("seed", "expected a whole number >= 0"));
  s.seed = o.at("seed").get<std::uint64_t>();
  p.verdict.same_within = number(o, "same_within", 0, 50) / 100;
  p.verdict.seed = s.seed;
  return p;
}

// A Python callable as an Expected-returning step; its exception becomes the arm's error.
std::function<Expected<Ok>()> step(py::object fn, std::string where) {
  return [fn = std::move(fn), where = std::move(where)]() -> Expected<Ok> {
    try {
      fn();
    } catch (py::error_already_set& e) {
      std::string what = py::str(e.value());
      what = what.substr(0, what.find('\n'));
      return Error{
          fmt::format("{}: the callable raised {}: {}", where, std::string(py::str(e.type().attr("__name__"))), what)};
    }
    return Ok{};
  };
}

// "--claim ..." said as this function's keyword.
timing::Claim claim_of(const std::string& text, const std::array<std::string, 2>& names) {
  auto claim = timing::parse_claim(text, names);
  if (!claim) {
    std::string m = claim.error().message;
    if (m.rfind("--claim ", 0) == 0) m = m.substr(8);
    raise(bad("claim", m));
  }
  return *claim;
}

using Arms = std::array<std::unique_ptr<timing::TimedArm>, 2>;

// Arms A and B (`calibration`: A twice), each a fresh instance from new_arm.
Arms make_arms(TimingBackend& backend, const py::object& new_arm, const std::array<std::string, 2>& names,
               double user_timeout, bool calibration) {
  Arms arms;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::size_t which = calibration ? 0 : i;
    const std::string where = fmt::format("bitproof.time: arm {} (\"{}\")", which == 0 ? "a" : "b", names[which]);
    py::tuple made = new_arm(which);
    if (made.size() != 3) raise({where + ": new_arm gave no (stream, prepare, enqueue)"});
    ExternalArm arm;
    arm.name = names[which];
    arm.what = where;
    arm.stream = made[0].cast<std::uintptr_t>();
    arm.prepare = step(made[1], where + ", prepare");
    arm.enqueue = step(made[2], where);
    arm.wait_timeout_s = user_timeout;
    arms[i] = take(backend.external_arm(std::move(arm)));
  }
  return arms;
}

}  // namespace

std::tuple<bool, std::string> time_arms(const py::object& new_arm, const std::array<std::string, 2>& names,
                                        const std::string& options_json, const std::string& report,
                                        const std::string& markdown) {
  const json o = json::parse(options_json, nullptr, false);
  if (o.is_discarded() || !o.is_object() || !o.contains("spec") || !o.at("spec").is_object() ||
      !o.at("spec").contains("name"))
    raise({"bitproof.time: the options are not a JSON object with the run's spec"});
  TimeProtocol p = protocol_of(o);
  timing::TimeSpec spec;
  spec.name = o.at("spec").at("name").get<std::string>();
  spec.arms[0].name = names[0];
  spec.arms[1].name = names[1];
  spec.json = nlohmann::ordered_json::parse(o.at("spec").dump());
  TimeRun run;
  if (o.contains("claim") && o.at("claim").is_string()) run.claim = claim_of(o.at("claim").get<std::string>(), names);
  OutputFiles files;
  for (const auto& [path, flag] : {std::pair{report, "report"}, {markdown, "markdown"}})
    if (!path.empty()) take(files.add(flag, path));
  auto backend = take(open_cuda_timing());
  p.session.reference_clock_mhz = backend->reference_clock_mhz();
  const double user_timeout = number(o, "user_timeout", 0, 86400);
  {
    Arms arms = make_arms(*backend, new_arm, names, user_timeout, false);
    run.session = take(timing::run_session(*arms[0], *arms[1], p.session));
  }
  if (o.at("calibrate").is_boolean() && o.at("calibrate").get<bool>()) {
    Arms arms = make_arms(*backend, new_arm, names, user_timeout, true);
    run.calibration = take(timing::run_session(*arms[0], *arms[1], p.session));
  }
  Json info = backend->info();
  info["arms"] =
      "Python callables (bitproof.time): each its own inputs and stream, enqueued behind the blocking kernel";
  Json json_report = time_report(spec, p, run, info);
  json_report["environment"]["command"] = "python: bitproof.time (" + spec.name + ")";
  const bool passes = time_report_passes(json_report);
  if (!report.empty()) files.set(report, json_report.dump(2) + "\n");
  if (!markdown.empty()) files.set(markdown, render_markdown(json_report));
  if (!report.empty() || !markdown.empty()) take(files.commit());
  return {passes, json_report.dump()};
}

std::vector<std::string> time_lines(const std::string& report_json) {
  return time_summary_lines(Json::parse(report_json));
}

void check_claim(const std::string& claim, const std::array<std::string, 2>& names) { claim_of(claim, names); }

}  // namespace bitproof::python
