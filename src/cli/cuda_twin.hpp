// The CUDA twin. The `bitproof` command is linked statically: it starts in
// about two thirds of the time a dynamically linked one takes (most of a
// 208-case proof's wall time is process start-up; bench/RESULTS.md), and the
// CPU backend is all a CI gate without a GPU runs. A static program cannot
// load the NVIDIA driver (libcuda.so.1 needs the dynamic C library), so the
// build also makes `bitproof-cuda`: the same commands, linked dynamically,
// with the CUDA backend. A command that wants CUDA replaces this process with
// the twin (execv, same arguments, same stdin/stdout/stderr), so its output,
// reports and exit code are the twin's.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

#include "error.hpp"

namespace bitproof::cli {

// Kept from main() for the hand-off.
void remember_arguments(int argc, char** argv);
// The remembered command line with the program named "bitproof", each argument
// quoted for a POSIX shell where it needs it: what reproduces a report.
[[nodiscard]] std::string command_line();
// Where the command ran, relative to the root of the git repository holding the
// working directory ("." at the root; a directory with .git marks a root); empty
// outside any repository. Reports record it so "Reproduce" says where to run.
[[nodiscard]] std::string repository_directory();
// Records command_line() and, inside a repository, repository_directory() in a report's environment.
void record_invocation(nlohmann::ordered_json& environment);

// When `backend` (--backend: cpu, cuda, all) wants CUDA and this binary was
// built without it, becomes the twin: for "cuda" always, for "all" only where
// an NVIDIA driver may be installed (see driver_may_be_present). Returns
// nullopt when no hand-off is due (the command then runs here), an error
// (exit 3) when the twin exists but cannot be started.
//
// The twin is `bitproof-cuda` next to this executable, or $BITPROOF_CUDA_TWIN.
// It starts with BITPROOF_CUDA_HANDED_OFF=1 and never hands off again.
[[nodiscard]] std::optional<Error> hand_off_for_cuda(std::string_view backend);

// Whether libcuda.so.1 could load here: the NVIDIA kernel driver or its
// device nodes are present (/proc/driver/nvidia, /dev/nvidiactl, WSL's
// /dev/dxg), or a libcuda.so.1 lies in $LD_LIBRARY_PATH or a standard
// library directory. False means `--backend all` stays on the CPU, as the
// twin itself would after failing to open the driver.
[[nodiscard]] bool driver_may_be_present();

}  // namespace bitproof::cli
