// bitproof's command line: subcommands only. Everything they do lives in the
// libraries, which return errors; src/cli alone prints and picks exit codes
// (0 holds, 1 refuted, 2 bad input, 3 backend missing).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <initializer_list>
#include <string_view>

#include "backend/backend.hpp"
#include "cli/cli.hpp"
#include "cli/cuda_twin.hpp"

int main(int argc, char** argv) {
  namespace cli = bitproof::cli;
  cli::remember_arguments(argc, argv);
  CLI::App app{"bitproof: exhaustive, bit-for-bit proofs about low-precision GPU arithmetic"};
  app.set_version_flag("--version",
                       fmt::format("bitproof {} (git {}; backends built in: {})", bitproof::tool_version(),
                                   bitproof::tool_git_commit(), bitproof::cuda_backend_built() ? "cpu, cuda" : "cpu"));
  app.require_subcommand(1);

  // Building every subcommand's options costs more than a 208-case proof, so
  // when the first argument names a command only its group is built; anything
  // else (--help, a typo) builds them all, so help and errors list every command.
  using Registrar = void (*)(CLI::App&, cli::Commands&);
  struct Group {
    std::initializer_list<std::string_view> names;
    Registrar add;
  };
  const Group groups[] = {{{"prove"}, cli::add_prove_command},
                          {{"domain"}, cli::add_domain_command},
                          {{"formats", "recipes"}, cli::add_catalogue_commands},
                          {{"report"}, cli::add_report_commands},
                          {{"audit", "admit", "synth-checkpoint"}, cli::add_audit_commands},
                          {{"spec"}, cli::add_spec_commands},
                          {{"ab"}, cli::add_ab_command}};
  const std::string_view first = argc > 1 ? argv[1] : "";
  const Group* only = nullptr;
  for (const Group& g : groups) {
    for (std::string_view name : g.names) only = name == first ? &g : only;
  }
  cli::Commands commands;
  for (const Group& g : groups) {
    if (only == nullptr || only == &g) g.add(app, commands);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "bitproof: error: %s (see bitproof --help)\n", e.what());
    return bitproof::kExitBadInput;
  }
  for (const cli::Command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return bitproof::kExitBadInput;
}
