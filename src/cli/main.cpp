// bitproof's command line: subcommands only. Everything they do lives in the
// libraries, which return errors; src/cli alone prints and picks exit codes
// (0 holds, 1 refuted, 2 bad input, 3 backend missing).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/cli.hpp"

#ifndef BITPROOF_GIT_COMMIT
#define BITPROOF_GIT_COMMIT "unknown"
#endif

int main(int argc, char** argv) {
  namespace cli = bitproof::cli;
  CLI::App app{"bitproof: exhaustive, bit-for-bit proofs about low-precision GPU arithmetic"};
  app.set_version_flag("--version", fmt::format("bitproof {} (git {})", bitproof::tool_version(), BITPROOF_GIT_COMMIT));
  app.require_subcommand(1);

  cli::Commands commands;
  cli::add_prove_command(app, commands);
  cli::add_domain_command(app, commands);
  cli::add_catalogue_commands(app, commands);
  cli::add_report_commands(app, commands);
  cli::add_audit_commands(app, commands);

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
