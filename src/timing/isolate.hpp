// --isolate: each arm prepared and run in a fresh process of its own (its own
// CUDA context, module loading, allocator and caches), driven by the parent over
// pipes one request at a time, so the parent's protocol (blocks, flushes, clock
// checks) is the same as in one process. The child is this program run as
// `<argv> --serve-arm N`; serve_arm() is its side.
//
// Requests, one line each: "prepare 0|1" (settle or not), "sample 0|1" (flush or
// not). Answers: "warm <replays> <settled 0|1> <last median us>",
// "time <us> <clock MHz>", or "error <exit code> <message>".
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"
#include "timing/session.hpp"

namespace bitproof::timing {

// Starts `argv` (argv[0] a path) and returns the arm it serves; `name` labels errors.
[[nodiscard]] Expected<std::unique_ptr<TimedArm>> spawn_isolated_arm(const std::vector<std::string>& argv,
                                                                     const std::string& name);

// Answers requests from `in` on `out` with `arm` until end of input; returns the exit code.
int serve_arm(TimedArm& arm, std::FILE* in, std::FILE* out);

}  // namespace bitproof::timing
