// Shared pieces of the subcommands. Each subcommand lives in its own cmd_*.cpp
// and registers itself with add_<name>_command; main.cpp lists them.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "proof/engine.hpp"
#include "report/report.hpp"

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
void add_audit_commands(CLI::App& app, Commands& commands);  // audit, admit, synth-checkpoint

// Prints "bitproof: error: <message>" on stderr and returns its exit code.
int fail(const Error& e);

// Output files a command may write, checked before any work is done.
struct Outputs {
  std::string report;
  std::string markdown;
  void add_flags(CLI::App& sub);
  [[nodiscard]] std::optional<Error> check() const;
  [[nodiscard]] std::optional<Error> write(const Json& report) const;
};

void print_lines(const std::vector<std::string>& lines);
void print_witness(const Spec& spec, std::uint64_t count, const std::vector<WitnessDisagreement>& first);

}  // namespace bitproof::cli
