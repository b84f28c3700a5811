#include "cli/cuda_twin.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace bitproof::cli {
namespace {

constexpr const char* kHandedOff = "BITPROOF_CUDA_HANDED_OFF";

std::vector<char*>& arguments() {
  static std::vector<char*> argv;
  return argv;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string twin_path() {
  if (const char* env = std::getenv("BITPROOF_CUDA_TWIN"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (self.parent_path() / "bitproof-cuda").string();
}

}  // namespace

void remember_arguments(int argc, char** argv) { arguments().assign(argv, argv + argc); }

std::string command_line() {
  std::string line = "bitproof";
  const std::vector<char*>& argv = arguments();
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-_./:=,@+%") == std::string::npos;
    std::string quoted = "'";
    for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += " " + (plain ? arg : quoted + "'");
  }
  return line;
}

std::string repository_directory() {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return "";
  for (std::filesystem::path dir = cwd;; dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / ".git", ec)) return cwd.lexically_relative(dir).generic_string();
    if (dir == dir.parent_path()) return "";
  }
}

void record_invocation(nlohmann::ordered_json& environment) {
  environment["command"] = command_line();
  if (const std::string dir = repository_directory(); !dir.empty()) environment["run_in"] = dir;
}

bool driver_may_be_present() {
  for (const char* node : {"/proc/driver/nvidia", "/dev/nvidiactl", "/dev/dxg"}) {
    if (exists(node)) return true;
  }
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("LD_LIBRARY_PATH"); env != nullptr) {
    std::string list = env;
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t colon = std::min(list.find(':', at), list.size());
      if (colon > at) dirs.push_back(list.substr(at, colon - at));
      at = colon + 1;
    }
  }
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib",
                          "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib", "/usr/lib/aarch64-linux-gnu"}) {
    dirs.emplace_back(dir);
  }
  for (const std::string& dir : dirs) {
    if (exists(dir + "/libcuda.so.1")) return true;
  }
  return false;
}

std::optional<Error> hand_off_for_cuda(std::string_view backend) {
  // A process started by a hand-off never hands off again (a twin without the
  // CUDA backend, e.g. BITPROOF_CUDA_TWIN naming this binary, then runs the
  // command itself instead of starting itself for ever).
  if (backend == "cpu" || cuda_backend_built() || arguments().empty() || std::getenv(kHandedOff) != nullptr) {
    return std::nullopt;
  }
  const std::string twin = twin_path();
  if (twin.empty() || ::access(twin.c_str(), X_OK) != 0) return std::nullopt;  // a CPU-only build
  if (backend == "all" && !driver_may_be_present()) return std::nullopt;
  std::vector<char*> argv = arguments();
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::setenv(kHandedOff, "1", 1);
  ::execv(twin.c_str(), argv.data());
  const int why = errno;  // execv returned: the twin did not start
  ::unsetenv(kHandedOff);
  return Error{fmt::format("--backend {}: cannot start the CUDA twin {}: {}", backend, twin, std::strerror(why)),
               kExitNoBackend};
}

}  // namespace bitproof::cli
