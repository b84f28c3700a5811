#include "user/process.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace bitproof::user {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int& f : fd) {
      if (f >= 0) close(f);
    }
  }
  void close_end(int end) {
    if (fd[end] >= 0) close(fd[end]);
    fd[end] = -1;
  }
};

// Feeds `input` to the child and drains its stdout and stderr, all at once (no deadlock on full pipes).
void exchange(Pipe& in, Pipe& out, Pipe& err, const std::string& input, ProcessResult& r) {
  std::size_t written = 0;
  if (input.empty()) in.close_end(1);
  std::array<char, 1 << 16> buffer{};
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    std::array<pollfd, 3> fds{};
    int n = 0;
    for (Pipe* p : {&out, &err}) {
      if (p->fd[0] >= 0) fds[n++] = {p->fd[0], POLLIN, 0};
    }
    if (in.fd[1] >= 0) fds[n++] = {in.fd[1], POLLOUT, 0};
    if (poll(fds.data(), n, -1) < 0 && errno != EINTR) break;
    for (int k = 0; k < n; ++k) {
      if (fds[k].revents == 0) continue;
      if (fds[k].fd == in.fd[1]) {
        const ssize_t w = write(in.fd[1], input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 || written == input.size()) in.close_end(1);
        continue;
      }
      Pipe& p = fds[k].fd == out.fd[0] ? out : err;
      const ssize_t got = read(p.fd[0], buffer.data(), buffer.size());
      if (got > 0) {
        (&p == &out ? r.out : r.err).append(buffer.data(), static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        p.close_end(0);
      }
    }
  }
}

}  // namespace

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const std::string& input,
                                    const std::vector<std::string>& env) {
  Pipe in, out, err;
  if (pipe(in.fd) != 0 || pipe(out.fd) != 0 || pipe(err.fd) != 0) {
    return Error{fmt::format("{}: cannot make pipes: {}", argv.front(), std::strerror(errno))};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  for (Pipe* p : {&in, &out, &err}) {
    for (int f : p->fd) posix_spawn_file_actions_addclose(&actions, f);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // A worker that exits early must not kill us with SIGPIPE while we feed it.
  signal(SIGPIPE, SIG_IGN);
  std::vector<char*> environment;
  for (const std::string& e : env) environment.push_back(const_cast<char*>(e.c_str()));
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view name(*e, std::string_view(*e).find('='));
    const bool replaced = std::any_of(env.begin(), env.end(), [&](const std::string& x) { return x.rfind(std::string(name) + "=", 0) == 0; });
    if (!replaced) environment.push_back(*e);
  }
  environment.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return Error{fmt::format("{}: cannot run it: {}", argv.front(), std::strerror(spawned))};
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  ProcessResult r;
  exchange(in, out, err, input, r);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

}  // namespace bitproof::user
