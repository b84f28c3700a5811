// Running a helper program (the host compiler, a user recipe's worker) and
// collecting what it prints: posix_spawn with pipes, so it works from the
// static bitproof. The child's stdin gets `input`; stdout and stderr come back
// whole. Errors starting it are values; its exit status is the caller's to judge.
#pragma once

#include <string>
#include <vector>

#include "error.hpp"

namespace bitproof::user {

struct ProcessResult {
  int status = -1;  // the exit code, or 128 + the signal that ended it
  std::string out;
  std::string err;
};

// `argv[0]` is looked up on PATH when it has no slash. `env` entries
// ("NAME=value") are added to this process's environment for the child.
[[nodiscard]] Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const std::string& input = {},
                                                  const std::vector<std::string>& env = {});

}  // namespace bitproof::user
