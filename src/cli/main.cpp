// bitproof's command line: subcommands only. Everything they do lives in the
// libraries, which return errors; src/cli alone prints and picks exit codes
// (0 holds, 1 refuted, 2 bad input, 3 backend missing).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string_view>

#include "backend/backend.hpp"
#include "cli/cli.hpp"
#include "cli/cuda_twin.hpp"
#include "strict_json.hpp"
#include "suggest.hpp"
#include "user/process.hpp"
#include "version.hpp"

namespace {

// The deepest subcommand a parse reached ("bitproof report render"), the app when none.
CLI::App* deepest(CLI::App* app) {
  for (std::vector<CLI::App*> subs = app->get_subcommands(); !subs.empty(); subs = app->get_subcommands()) {
    app = subs.front();
  }
  return app;
}

std::string path_of(const CLI::App* app) {
  return app->get_parent() == nullptr ? app->get_name() : path_of(app->get_parent()) + " " + app->get_name();
}

// "prove: " for a subcommand's messages, "" for the top level's.
std::string where(const CLI::App* app) {
  return app->get_parent() == nullptr ? "" : path_of(app).substr(path_of(app).find(' ') + 1) + ": ";
}

// The names `sub` knows: its flags ("--markdown", "-o") or its subcommands.
std::vector<std::string> known_names(const CLI::App* sub, bool flags) {
  std::vector<std::string> names;
  if (!flags) {
    for (const CLI::App* c : sub->get_subcommands({})) names.push_back(c->get_name());
    return names;
  }
  for (const CLI::Option* o : sub->get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// One line for arguments `sub` does not know: the first unknown flag (else the
// first word), what it may have meant, and where help is.
std::string unexpected(const CLI::App* sub, const std::vector<std::string>& extras) {
  std::string word = extras.front();
  for (const std::string& e : extras) {
    if (e.size() > 1 && e[0] == '-') {
      word = e.substr(0, e.find('='));
      break;
    }
  }
  const bool flag = word.size() > 1 && word[0] == '-';
  const bool command = !flag && !sub->get_subcommands({}).empty();
  const std::string what = flag ? "unknown flag" : command ? "unknown command" : "unexpected argument";
  return fmt::format("{}{} \"{}\"{}; see {} --help", where(sub), what, word,
                     bitproof::did_you_mean(word, known_names(sub, flag)), path_of(sub));
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = bitproof::cli;
  // The CUDA backend's compile child (NVRTC under a time limit) is this program again.
  if (const auto child = bitproof::run_backend_child(argc, argv)) return *child;
  // A GPU kernel past its limit: the line, then an exit that unwinds nothing (user/process.hpp, Deadline).
  bitproof::user::set_abandon_handler(cli::abandon);
  cli::remember_arguments(argc, argv);
  CLI::App app{"bitproof: exhaustive, bit-for-bit proofs about low-precision GPU arithmetic", "bitproof"};
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
                          {{"ab"}, cli::add_ab_command},
                          {{"time"}, cli::add_time_command}};
  const std::string_view first = argc > 1 ? argv[1] : "";
  const Group* only = nullptr;
  for (const Group& g : groups) {
    for (std::string_view name : g.names) only = name == first ? &g : only;
  }
  cli::Commands commands;
  for (const Group& g : groups) {
    if (only == nullptr || only == &g) g.add(app, commands);
  }
  // A first word that names no command (a typo): said so, with the nearest names.
  if (only == nullptr && !first.empty() && first[0] != '-') {
    return cli::fail({unexpected(&app, {std::string(first)})});
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    CLI::App* sub = deepest(&app);
    const std::vector<std::string> extras = sub->remaining();
    if (extras.empty()) return cli::fail({fmt::format("{}{}; see {} --help", where(sub), e.what(), path_of(sub))});
    return cli::fail({unexpected(sub, extras)});
  } catch (const CLI::ParseError& e) {
    CLI::App* sub = deepest(&app);
    // "report rendr": a word that names none of the group's commands, not a missing one.
    if (!sub->get_subcommands({}).empty() && !sub->remaining().empty()) return cli::fail({unexpected(sub, sub->remaining())});
    return cli::fail({fmt::format("{}{}; see {} --help", where(sub), e.what(), path_of(sub))});
  }
  for (const cli::Command& c : commands) {
    if (!c.app->parsed()) continue;
    // --no-user-code / BITPROOF_NO_USER_CODE: set for the whole process before the command runs.
    if (auto e = cli::apply_user_code_policy(*c.app)) return cli::fail(*e);
    // Memory that runs out is one line (exit 2), never an abort: what was asked, and that memory ran out.
    try {
      return c.run();
    } catch (const std::bad_alloc&) {
      return cli::fail({fmt::format("{}: out of memory (more than this machine or its limits give; "
                                    "docs/cli.md, \"Limits\")",
                                    bitproof::printable(cli::command_line()))});
    } catch (const std::length_error& e) {
      return cli::fail({fmt::format("{}: out of memory: a size beyond what can be allocated ({})",
                                    bitproof::printable(cli::command_line()), e.what())});
    }
  }
  return bitproof::kExitBadInput;
}
