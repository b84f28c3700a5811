// run_process (src/user/process.hpp): a child that outlives its limit is killed
// with its whole process group and reaped; what a child leaves behind is killed
// when it ends; a child that ends in time is untouched. A Deadline that passes
// ends the process with its one line; one that ends first does nothing.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "user/process.hpp"

using bitproof::Error;
using bitproof::user::Deadline;
using bitproof::user::run_process;

namespace {

// Whether process `pid` runs, now and for the next two seconds (SIGKILL takes
// effect a moment after it is sent; a zombie waiting for its reaper runs no more).
bool running(const std::string& pid) {
  for (int tries = 0; tries < 200; ++tries) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string id, name, state;
    if (!(stat >> id >> name >> state) || state == "Z" || state == "X") return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The first line of `text`, without its line break.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What a forked child running `body` (then _exit(0)) ends with: its status
// (128 + signal when killed), what it wrote to stderr, and the seconds it took.
// Deadlines are made in the child alone: the watchdog thread is per process.
struct Ended {
  int status = -1;
  std::string err;
  double seconds = 0;
};
template <class Body>
Ended in_child(Body body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    body();
    _exit(0);
  }
  close(fds[1]);
  Ended out;
  char buffer[512];
  for (ssize_t got = 0; (got = read(fds[0], buffer, sizeof buffer)) > 0;) out.err.append(buffer, got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.seconds = seconds_since(start);
  return out;
}

}  // namespace

TEST_SUITE("process") {
  TEST_CASE("a Deadline that passes ends the process: its one line, its exit code, nothing unwound") {
    const Ended e = in_child([] {
      const Deadline d(0.3, Error{"k.json: kernel k_spin did not return within the 0.3 s limit", 2});
      std::this_thread::sleep_for(std::chrono::seconds(5));  // the kernel that never returns
    });
    CHECK(e.status == 2);
    CHECK(e.err == "bitproof: error: k.json: kernel k_spin did not return within the 0.3 s limit\n");
    CHECK(e.seconds < 4);
  }

  TEST_CASE("a Deadline that ends first does nothing (negative control)") {
    const Ended e = in_child([] {
      { const Deadline d(0.3, Error{"never said", 2}); }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    });
    CHECK(e.status == 0);
    CHECK(e.err.empty());
  }

  TEST_CASE("deadlines of several scopes and threads: each is kept, whichever ends first") {
    const Ended e = in_child([] {
      const Deadline outer(0.5, Error{"outer", 2});
      std::thread([] { const Deadline other(60, Error{"other thread", 3}); }).join();
      { const Deadline inner(60, Error{"inner", 2}); }
      std::this_thread::sleep_for(std::chrono::seconds(5));
    });
    CHECK(e.status == 2);
    CHECK(e.err == "bitproof: error: outer\n");
    CHECK(e.seconds < 4);
  }

  TEST_CASE("an abandoned process that does not end is killed by its reaper") {
    const Ended e = in_child([] {
      bitproof::user::start_exit_reaper(0.3);
      std::this_thread::sleep_for(std::chrono::seconds(5));  // an exit that waits for a kernel
    });
    CHECK(e.status == 128 + SIGKILL);
    CHECK(e.seconds < 3);
  }

  TEST_CASE("a reaper leaves a process that ends in time alone, and holds none of its pipes") {
    const Ended e = in_child([] {
      bitproof::user::start_exit_reaper(3);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      _exit(2);
    });
    CHECK(e.status == 2);
    CHECK(e.seconds < 2);  // stderr's pipe closed at the exit: the reaper holds no copy
  }

  TEST_CASE("a child that ends in time: its output and status, not timed out") {
    auto r = run_process({"sh", "-c", "cat; echo err >&2; exit 3"}, "in\n", {}, 10);
    REQUIRE(r);
    CHECK_FALSE(r->timed_out);
    CHECK(r->status == 3);
    CHECK(r->out == "in\n");
    CHECK(r->err == "err\n");
  }

  TEST_CASE("a child past its limit is killed with what it started, and reaped") {
    const auto start = std::chrono::steady_clock::now();
    // The shell starts a grandchild that holds the pipes too, then spins itself.
    auto r = run_process({"sh", "-c", "sleep 60 & echo $!; while :; do :; done"}, "", {}, 0.5);
    REQUIRE(r);
    CHECK(r->timed_out);
    CHECK(r->status == 128 + SIGKILL);
    CHECK(seconds_since(start) < 10);
    const std::string grandchild = first_line(r->out);
    REQUIRE_FALSE(grandchild.empty());
    CHECK_FALSE(running(grandchild));
  }

  TEST_CASE("a child that closes its pipes and runs on is still bounded") {
    const auto start = std::chrono::steady_clock::now();
    auto r = run_process({"sh", "-c", "exec >/dev/null 2>&1; sleep 60"}, "", {}, 0.5);
    REQUIRE(r);
    CHECK(r->timed_out);
    CHECK(seconds_since(start) < 10);
  }

  TEST_CASE("what a child leaves behind when it ends in time is killed") {
    auto r = run_process({"sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"}, "", {}, 10);
    REQUIRE(r);
    CHECK_FALSE(r->timed_out);
    CHECK(r->status == 0);
    const std::string left = first_line(r->out);
    REQUIRE_FALSE(left.empty());
    CHECK_FALSE(running(left));
  }
}
