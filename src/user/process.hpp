// Running a helper program (the host compiler, a user recipe's worker) and
// collecting what it prints: posix_spawn with pipes, so it works from the
// static bitproof. The child's stdin gets `input`; stdout and stderr come back
// whole. Errors starting it are values; its exit status is the caller's to judge.
//
// A wall-clock limit bounds it: the child runs in a process group of its own,
// and when the limit passes (or bitproof is interrupted: SIGINT, SIGTERM,
// SIGHUP) the whole group is killed (SIGKILL: the compiler driver's cc1plus
// too) and the child reaped. Whatever the group left behind once the child
// ends is killed as well; no process outlives the call.
#pragma once

#include <string>
#include <vector>

#include "error.hpp"

namespace bitproof::user {

struct ProcessResult {
  int status = -1;         // the exit code, or 128 + the signal that ended it
  bool timed_out = false;  // killed at the limit (status 128 + SIGKILL)
  std::string out;
  std::string err;
};

// `argv[0]` is looked up on PATH when it has no slash. `env` entries
// ("NAME=value") are added to this process's environment for the child.
// `timeout_s` > 0: the child and its group are killed after that many seconds
// (timed_out); 0: no limit.
[[nodiscard]] Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const std::string& input = {},
                                                  const std::vector<std::string>& env = {}, double timeout_s = 0);

// A wall-clock limit on work this process cannot interrupt nor unwind from: a
// GPU kernel of the user's that never returns (every later driver call, the
// destructors' and the driver's teardown at exit included, would wait for it).
// While a Deadline lives, a watchdog thread waits for it; if `seconds` pass
// first, the abandon handler runs on that thread with `error` and ends the
// process there (it must not return: nothing can be unwound). Any number may
// live at once, in any threads (one per GPU); each is kept.
class Deadline {
 public:
  Deadline(double seconds, Error error);
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
  struct State;  // when, and the error (the watchdog's)

 private:
  State* state_ = nullptr;
};

// Makes sure this process ends: a child waits `grace_seconds` for it to end and then
// kills it (SIGKILL). The watchdog starts one before the abandon handler runs, because
// ending a process whose GPU kernel never returns can itself wait for that kernel:
// on an H100 a process whose watchdog had fired (its output temporaries were gone) was
// still there after 120 s, and a SIGKILL then ended it at once (2026-12-07; a hypothesis
// the gpu.limits test checks). The child holds none of the process's files and signals
// only its own parent, through a pidfd; where pidfds are missing it signals nothing.
void start_exit_reaper(double grace_seconds);

// What ends the process when a Deadline passes. src/cli installs one that prints
// the error's line as every error is printed and calls _exit(exit_code); the
// default writes "bitproof: error: MESSAGE" to stderr and calls _exit(exit_code).
using AbandonHandler = void (*)(const Error&);
void set_abandon_handler(AbandonHandler handler);

}  // namespace bitproof::user
