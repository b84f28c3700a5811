#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace bitproof {

unsigned resolve_threads(unsigned threads) {
  if (threads != 0) return threads;
#if defined(__linux__)
  // The CPUs this process may run on (taskset, a container's cpuset), not all
  // the machine has: more threads than those only take turns.
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
    return static_cast<unsigned>(CPU_COUNT(&allowed));
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& body) {
  const unsigned workers = static_cast<unsigned>(std::min<std::size_t>(threads, n));
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers);
  // A thread that cannot be started (memory or a process limit) leaves the work to the others,
  // or to this thread: never a std::terminate from a joinable thread left behind.
  try {
    for (unsigned t = 0; t < workers; ++t) pool.emplace_back(work);
  } catch (const std::system_error&) {
  }
  if (pool.empty()) work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace bitproof
