#include "timing/isolate.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace bitproof::timing {
namespace {

class IsolatedArm final : public TimedArm {
 public:
  IsolatedArm(pid_t pid, std::FILE* to, std::FILE* from, std::string name)
      : pid_(pid), to_(to), from_(from), name_(std::move(name)) {}
  ~IsolatedArm() override {
    std::fputs("quit\n", to_);
    std::fclose(to_);
    std::fclose(from_);
    int status = 0;
    waitpid(pid_, &status, 0);
  }

  Expected<Warmup> prepare(bool settle) override {
    auto words = ask(fmt::format("prepare {}", settle ? 1 : 0), "warm", 3);
    if (!words) return words.error();
    Warmup w;
    w.replays = std::atoi((*words)[0].c_str());
    w.settled = (*words)[1] == "1";
    w.last_median_us = std::strtod((*words)[2].c_str(), nullptr);
    return w;
  }

  Expected<Timed> sample(bool flush_l2) override {
    auto words = ask(fmt::format("sample {}", flush_l2 ? 1 : 0), "time", 2);
    if (!words) return words.error();
    return Timed{std::strtod((*words)[0].c_str(), nullptr), std::strtod((*words)[1].c_str(), nullptr)};
  }

  [[nodiscard]] std::string name() const override { return name_; }

 private:
  // Sends `request`, reads one answer line: `count` words after `tag`, or the child's error.
  Expected<std::vector<std::string>> ask(const std::string& request, const char* tag, std::size_t count) {
    if (std::fprintf(to_, "%s\n", request.c_str()) < 0 || std::fflush(to_) != 0) return lost();
    char line[4096];
    if (std::fgets(line, sizeof line, from_) == nullptr) return lost();
    std::string text(line);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    std::istringstream in(text);
    std::string head;
    in >> head;
    if (head == "error") {
      int code = kExitBadInput;
      in >> code;
      std::string message;
      std::getline(in >> std::ws, message);
      return Error{message, code};
    }
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (head != tag || words.size() != count) {
      return Error{fmt::format("time --isolate: arm {}: the child answered \"{}\" to \"{}\"", name_, text, request),
                   kExitNoBackend};
    }
    return words;
  }

  Error lost() const {
    return Error{fmt::format("time --isolate: arm {}: the child process ended (see its message above)", name_),
                 kExitNoBackend};
  }

  pid_t pid_;
  std::FILE* to_;
  std::FILE* from_;
  std::string name_;
};

}  // namespace

Expected<std::unique_ptr<TimedArm>> spawn_isolated_arm(const std::vector<std::string>& argv, const std::string& name) {
  int to_child[2], from_child[2];
  if (pipe(to_child) != 0) return Error{fmt::format("time --isolate: pipe: {}", std::strerror(errno)), kExitNoBackend};
  if (pipe(from_child) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    return Error{fmt::format("time --isolate: pipe: {}", std::strerror(errno)), kExitNoBackend};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(to_child[0]);
  close(from_child[1]);
  if (rc != 0) {
    close(to_child[1]);
    close(from_child[0]);
    return Error{fmt::format("time --isolate: cannot start {}: {}", argv[0], std::strerror(rc)), kExitNoBackend};
  }
  signal(SIGPIPE, SIG_IGN);  // a child that died is reported by the next read, not by a signal
  return std::unique_ptr<TimedArm>(
      std::make_unique<IsolatedArm>(pid, fdopen(to_child[1], "w"), fdopen(from_child[0], "r"), name));
}

int serve_arm(TimedArm& arm, std::FILE* in, std::FILE* out) {
  char line[256];
  while (std::fgets(line, sizeof line, in) != nullptr) {
    const std::string request(line);
    const bool flag = request.find(" 1") != std::string::npos;
    std::string answer;
    if (request.rfind("prepare", 0) == 0) {
      auto w = arm.prepare(flag);
      answer = w ? fmt::format("warm {} {} {}", w->replays, w->settled ? 1 : 0, w->last_median_us)
                 : fmt::format("error {} {}", w.error().exit_code, w.error().message);
    } else if (request.rfind("sample", 0) == 0) {
      auto t = arm.sample(flag);
      answer = t ? fmt::format("time {} {}", t->us, t->clock_mhz)
                 : fmt::format("error {} {}", t.error().exit_code, t.error().message);
    } else {
      return kExitHolds;  // "quit"
    }
    for (char& c : answer) c = c == '\n' ? ' ' : c;
    std::fprintf(out, "%s\n", answer.c_str());
    std::fflush(out);
  }
  return kExitHolds;
}

}  // namespace bitproof::timing
