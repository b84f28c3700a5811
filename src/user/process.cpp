#include "user/process.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

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

using Clock = std::chrono::steady_clock;

// The process groups of the children running now: an interrupted bitproof
// kills them before it ends (a child in its own group gets no SIGINT from the
// terminal, and a worker stuck in a loop would spin on after us).
constexpr std::size_t kGroupSlots = 64;
std::array<std::atomic<pid_t>, kGroupSlots> running_groups{};

extern "C" void kill_groups_and_exit(int sig) {
  for (std::atomic<pid_t>& g : running_groups) {
    const pid_t pg = g.load();
    if (pg > 0) kill(-pg, SIGKILL);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// Installs the handler for the signals that end bitproof, unless they are ignored or handled already.
void install_interrupt_handler() {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction now {};
      now.sa_handler = kill_groups_and_exit;
      sigemptyset(&now.sa_mask);
      sigaction(sig, &now, nullptr);
    }
    return true;
  }();
  (void)installed;
}

// Holds one slot of running_groups while a child runs.
class GroupSlot {
 public:
  explicit GroupSlot(pid_t group) {
    for (std::atomic<pid_t>& g : running_groups) {
      pid_t free = 0;
      if (g.compare_exchange_strong(free, group)) {
        slot_ = &g;
        return;
      }
    }
  }
  ~GroupSlot() {
    if (slot_ != nullptr) slot_->store(0);
  }
  GroupSlot(const GroupSlot&) = delete;
  GroupSlot& operator=(const GroupSlot&) = delete;

 private:
  std::atomic<pid_t>* slot_ = nullptr;
};

// Milliseconds until `deadline` for poll (-1: none), at least 0.
int poll_wait(const std::optional<Clock::time_point>& deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left + 1, 0, 1000));
}

bool passed(const std::optional<Clock::time_point>& deadline) { return deadline && Clock::now() >= *deadline; }

// Feeds `input` to the child and drains its stdout and stderr, all at once (no
// deadlock on full pipes), until both are closed or the deadline passes
// (false then).
bool exchange(Pipe& in, Pipe& out, Pipe& err, const std::string& input, ProcessResult& r,
              const std::optional<Clock::time_point>& deadline) {
  std::size_t written = 0;
  if (input.empty()) in.close_end(1);
  std::array<char, 1 << 16> buffer{};
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    if (passed(deadline)) return false;
    std::array<pollfd, 3> fds{};
    int n = 0;
    for (Pipe* p : {&out, &err}) {
      if (p->fd[0] >= 0) fds[n++] = {p->fd[0], POLLIN, 0};
    }
    if (in.fd[1] >= 0) fds[n++] = {in.fd[1], POLLOUT, 0};
    const int ready = poll(fds.data(), n, poll_wait(deadline));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
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
  return true;
}

// Waits until the child `pid` has ended, without reaping it (its process
// group stays ours while it is a zombie), or the deadline passes (false).
bool wait_for_end(pid_t pid, const std::optional<Clock::time_point>& deadline) {
  // Its pipes are closed: it is ending. Short naps first (a worker's exit is
  // microseconds away; a flat 5 ms nap cost a cached run up to 5 ms), doubling.
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    siginfo_t info{};
    const int flags = WEXITED | WNOWAIT | (deadline ? WNOHANG : 0);
    if (waitid(P_PID, static_cast<id_t>(pid), &info, flags) != 0) {
      if (errno == EINTR) continue;
      return true;  // nothing to wait for
    }
    if (info.si_pid == pid) return true;
    if (passed(deadline)) return false;
    std::this_thread::sleep_for(
        std::min<std::chrono::microseconds>(nap, std::chrono::milliseconds(poll_wait(deadline))));
    nap = std::min<std::chrono::microseconds>(nap * 2, std::chrono::milliseconds(5));
  }
}

}  // namespace

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const std::string& input,
                                    const std::vector<std::string>& env, double timeout_s) {
  const std::optional<Clock::time_point> deadline =
      timeout_s > 0
          ? std::optional(Clock::now() +
                          std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s)))
          : std::nullopt;
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
  // The child leads a new process group (its id is the child's): killing the
  // group at the limit kills what it started too.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // A worker that exits early must not kill us with SIGPIPE while we feed it.
  signal(SIGPIPE, SIG_IGN);
  install_interrupt_handler();
  std::vector<char*> environment;
  for (const std::string& e : env) environment.push_back(const_cast<char*>(e.c_str()));
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view name(*e, std::string_view(*e).find('='));
    const bool replaced = std::any_of(env.begin(), env.end(),
                                      [&](const std::string& x) { return x.rfind(std::string(name) + "=", 0) == 0; });
    if (!replaced) environment.push_back(*e);
  }
  environment.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) return Error{fmt::format("{}: cannot run it: {}", argv.front(), std::strerror(spawned))};
  const GroupSlot slot(pid);
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  ProcessResult r;
  const bool in_time = exchange(in, out, err, input, r, deadline) && wait_for_end(pid, deadline);
  // At the limit the whole group; else whatever it left behind (the child, a
  // zombie now, keeps the group's id from being reused until it is reaped).
  kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.timed_out = !in_time;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

// ---- Deadline: one watchdog thread for the process ----

namespace {

// How long an abandoned process may take to end before its reaper kills it.
constexpr double kExitGrace = 2.0;

void sleep_seconds(double seconds) {
  timespec t{static_cast<time_t>(seconds),
             static_cast<long>((seconds - static_cast<double>(static_cast<time_t>(seconds))) * 1e9)};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

// The reaper, in the child: async-signal-safe calls only (it was forked from a
// process whose other threads hold locks). It holds none of the process's files
// (so no pipe of the caller's stays open for it), waits for its parent to end,
// and kills the parent if it has not ended after `grace` seconds. The parent is
// named by a pidfd taken while it is still our parent, so no other process can
// be signalled.
[[noreturn]] void reap_parent(pid_t parent, double grace) {
  if (close_range(0, ~0U, 0) != 0) {
    for (int fd = 0; fd < 1024; ++fd) close(fd);
  }
  constexpr double kStep = 0.01;
  for (double waited = 0; waited < grace; waited += kStep) {
    if (getppid() != parent) _exit(0);  // it ended (we were handed to another parent)
    sleep_seconds(kStep);
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, parent, 0));
  if (pidfd >= 0 && getppid() == parent) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  _exit(0);
}

}  // namespace

void start_exit_reaper(double grace_seconds) {
  const pid_t parent = getpid();
  // _Fork: no atfork handler runs (a library's could wait for a lock the stuck thread holds).
  if (_Fork() == 0) reap_parent(parent, grace_seconds);
}

struct Deadline::State {
  Clock::time_point when;
  Error error;
};

namespace {

void default_abandon(const Error& e) {
  const std::string line = "bitproof: error: " + e.message + "\n";
  [[maybe_unused]] const ssize_t w = write(2, line.data(), line.size());
  _exit(e.exit_code);
}

std::atomic<AbandonHandler> abandon_handler{default_abandon};

// The watchdog: started with the first Deadline, never stopped nor destroyed
// (it may be waiting when the process exits; its state is never freed, so no
// static destructor races it). It waits for the earliest live deadline, so
// deadlines of several threads (one per GPU) are each kept.
struct Watchdog {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<const Deadline::State*> live;

  static Watchdog& get() {
    static Watchdog* const w = [] {
      auto* dog = new Watchdog;  // NOLINT: leaked on purpose (above)
      std::thread([dog] { dog->watch(); }).detach();
      return dog;
    }();
    return *w;
  }

  void watch() {
    std::unique_lock lock(mutex);
    for (;;) {
      if (live.empty()) {
        changed.wait(lock);
        continue;
      }
      const auto earliest =
          *std::min_element(live.begin(), live.end(), [](const auto* a, const auto* b) { return a->when < b->when; });
      changed.wait_until(lock, earliest->when);
      for (const Deadline::State* d : live) {
        if (Clock::now() < d->when) continue;
        start_exit_reaper(kExitGrace);
        abandon_handler.load()(d->error);
        _exit(d->error.exit_code);  // a handler that returned: end the process all the same
      }
    }
  }
};

}  // namespace

Deadline::Deadline(double seconds, Error error)
    : state_(
          new State{Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)),
                    std::move(error)}) {
  Watchdog& w = Watchdog::get();
  const std::lock_guard lock(w.mutex);
  w.live.push_back(state_);
  w.changed.notify_all();
}

Deadline::~Deadline() {
  Watchdog& w = Watchdog::get();
  {
    const std::lock_guard lock(w.mutex);
    w.live.erase(std::find(w.live.begin(), w.live.end(), state_));
    w.changed.notify_all();
  }
  delete state_;
}

void set_abandon_handler(AbandonHandler handler) {
  abandon_handler.store(handler != nullptr ? handler : default_abandon);
}

}  // namespace bitproof::user
