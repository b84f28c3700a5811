// run_process (src/user/process.hpp): a child that outlives its limit is killed
// with its whole process group and reaped; what a child leaves behind is killed
// when it ends; a child that ends in time is untouched.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "user/process.hpp"

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

}  // namespace

TEST_SUITE("process") {
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
