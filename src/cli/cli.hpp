// Shared pieces of the subcommands. Each subcommand lives in its own cmd_*.cpp
// and registers itself with add_<name>_command; main.cpp lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "output_files.hpp"
#include "proof/engine.hpp"
#include "report/kind_proof.hpp"  // check_proof_map: prove --svg checks before it proves
#include "report/report.hpp"
#include "user/user_recipes.hpp"

namespace bitproof::cli {

// A registered subcommand: its CLI11 node and what runs when it was chosen.
struct Command {
  CLI::App* app;
  std::function<int()> run;
};
using Commands = std::vector<Command>;

void add_prove_command(CLI::App& app, Commands& commands);
void add_domain_command(CLI::App& app, Commands& commands);
void add_catalogue_commands(CLI::App& app, Commands& commands);
void add_report_commands(CLI::App& app, Commands& commands);
void add_audit_commands(CLI::App& app, Commands& commands);  // audit, admit, synth-checkpoint
void add_spec_commands(CLI::App& app, Commands& commands);   // spec cases
void add_ab_command(CLI::App& app, Commands& commands);      // ab: operator A/B runs and trace proofs
void add_time_command(CLI::App& app, Commands& commands);    // time: the timing gate

// Prints "bitproof: error: <message>" on stderr and returns its exit code.
int fail(const Error& e);
// The same line, then _exit(exit code): the abandon handler of a Deadline that
// passed (a GPU kernel that did not return; user/process.hpp). Never returns.
[[noreturn]] void abandon(const Error& e);

// ---- the one vocabulary (docs/cli.md): a flag means the same in every subcommand ----
// -o, --report FILE   the JSON report (prove, domain, audit, admit, report merge)
// --markdown FILE     a Markdown rendering for a PR comment; --junit FILE, --svg FILE likewise
// --threads N         CPU worker threads, 0 (the default) = one per hardware thread, 0..4096
// --keep N            examples kept of each failure: counterexamples per claim and
//                     disagreements between implementations, 0..1000000 (default 8)
// --show N            counterexamples printed per claim on the terminal, 0..1000000 (default 3);
//                     the rest of the --keep ones are in the report, and a line says how many
// --expect H/N        exit 1 unless each claim holds on exactly H of N cases (one, or one per claim)
// --quiet, -q         print nothing but refuted claims and errors
// --select REGEX      only the tensors whose name matches (RE2)
// --no-user-code      refuse any spec that brings code to compile and run (user recipes'
//                     functions, timing kernels; output tables are data), exit 2, before
//                     anything of it is compiled; BITPROOF_NO_USER_CODE=1 sets it for every
//                     command that offers it (src/user/user_code.hpp)
inline constexpr unsigned kMaxThreads = 4096;
inline constexpr std::size_t kDefaultShow = 3;
CLI::Option* add_threads_option(CLI::App& sub, unsigned& threads);
CLI::Option* add_keep_option(CLI::App& sub, std::size_t& keep);
CLI::Option* add_show_option(CLI::App& sub, std::size_t& show);
CLI::Option* add_report_option(CLI::App& sub, std::string& path, const std::string& help);
// --no-user-code on a command that can compile and run a spec's code.
CLI::Option* add_no_user_code_flag(CLI::App& sub);
// For the command that was chosen: when it offers --no-user-code and that flag
// or BITPROOF_NO_USER_CODE=1 is given, refuses user code in this process
// (user::set_user_code_refusal). BITPROOF_NO_USER_CODE other than empty, 0 or 1 is
// bad input. Call once, after parsing, before the command runs (main.cpp).
[[nodiscard]] std::optional<Error> apply_user_code_policy(const CLI::App& sub);

// Output files a command may write: -o/--report (JSON), --markdown, --junit, --svg
// (the case map; for a proof it is drawn over the proof's own domain, the
// spec's interval of its "scale" input, or its last input when none is named so).
// Which of them a command offers, and what its JUnit XML holds (its --junit help):
// help lists only flags the command takes (an audit has no case map: no --svg).
struct OutputFlags {
  bool report = true;
  bool svg = true;
  std::string junit = "one test case per claim, and one for the backends' agreement";
};
struct Outputs {
  std::string report;
  std::string markdown;
  std::string junit;
  std::string svg;
  void add_flags(CLI::App& sub, bool with_report = true) { add_flags(sub, OutputFlags{with_report}); }
  void add_flags(CLI::App& sub, const OutputFlags& which);
  // Checks every output asked for, against each other and against `inputs` (the
  // files the command reads), and reserves them: call before any work.
  [[nodiscard]] Expected<OutputFiles> open(const std::vector<std::string>& inputs) const;
  // Whether any output file was asked for (the report JSON is built only then).
  [[nodiscard]] bool any() const { return !report.empty() || !markdown.empty() || !junit.empty() || !svg.empty(); }
  // Renders every output asked for from `report` and writes them all, or none.
  [[nodiscard]] std::optional<Error> write(OutputFiles& files, const Json& report) const;
};

// A count option's check: decimal digits only (no sign, no spaces), lo..hi;
// anything else is refused with the value quoted.
CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi);

// An option that takes a file path: an empty one is refused (exit 2).
CLI::Option* add_path_option(CLI::App& sub, const std::string& name, std::string& path, const std::string& help);

// CI-gate flags: --expect H/N (every claim's holding/total must be exactly
// that; one value for all claims or one per claim, in order; each --expect
// takes one value, so a path after it stays a path) and --quiet (print only
// refuted claims and errors).
struct Gate {
  std::vector<std::string> expect;
  bool quiet = false;
  void add_flags(CLI::App& sub);
  // Bad --expect syntax or count (exit 2), checked before any work.
  [[nodiscard]] std::optional<Error> check_syntax(std::size_t claims) const;
  // The claims whose holding/total differ from --expect, one line each.
  [[nodiscard]] std::vector<std::string> mismatches(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& counts) const;
  // The claims whose counts match --expect but that do not pass (refuted, or a finding not
  // as its spec expects), one line each: --expect checks counts, never turns a refutation
  // into a pass; a refutation one expects is the spec's to state ("expect": reviewed with
  // the spec, recorded in the report), and the line writes that "expect" out.
  [[nodiscard]] std::vector<std::string> counted_but_failing(const std::vector<Claim>& claims,
                                                             const std::vector<ClaimResult>& results,
                                                             const std::vector<bool>& passes) const;
  // Whether a claim's line is printed: always, or under --quiet only when it does not pass.
  [[nodiscard]] bool shows(bool passes) const { return !quiet || !passes; }
};

// Wall-clock limits on a spec's user code (docs/user-recipes.md, "Time limits"):
// --user-timeout SECONDS for each worker run (default: 60 s plus 10 µs per case
// and function), --compile-timeout SECONDS for each compiler run (default 120).
// At the limit the run is killed and the command fails with one line (exit 2).
struct UserLimits {
  double user_timeout = 0;  // 0: the default, scaled by the domain
  double compile_timeout = user::kDefaultCompileTimeout;
  void add_flags(CLI::App& sub);
  void apply(Spec& spec) const;
};

// The same limits on `bitproof time`'s kernel files: --compile-timeout SECONDS for
// each NVRTC compile and link (default 120), --user-timeout SECONDS for each
// wait for an arm's work on the GPU (default 60). At the limit: one line, exit 2.
void add_kernel_limit_flags(CLI::App& sub, double& wait_timeout, double& compile_timeout);

// Colour for terminals: off when stdout is not a terminal or NO_COLOR is set.
[[nodiscard]] std::string painted(const std::string& line, bool good);

void print_lines(const std::vector<std::string>& lines);
void print_witness(const Spec& spec, std::uint64_t count, const std::vector<WitnessDisagreement>& first);

}  // namespace bitproof::cli
