// How much memory a command may plan to hold: a plan that needs more (an A/B
// spec's tensors) is refused with one line before anything is allocated,
// instead of ending in std::bad_alloc half-way.
#pragma once

#include <cstdint>
#include <string>

#include "error.hpp"

namespace bitproof {

struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string source;  // where the number comes from, for messages: "MemAvailable in /proc/meminfo", "ulimit -v" ...
};

// $BITPROOF_MEMORY_LIMIT when set (bytes, or a number with K, M, G or T:
// powers of 1024), else the least of: MemAvailable in /proc/meminfo, the
// address-space and data limits (ulimit -v, ulimit -d) less what this process
// maps already, and its cgroup's memory.max less memory.current. A malformed
// $BITPROOF_MEMORY_LIMIT is an error naming it.
[[nodiscard]] Expected<MemoryLimit> memory_limit();

// "1.5 GB" (powers of 1000, as the messages print sizes).
[[nodiscard]] std::string bytes_text(std::uint64_t bytes);

// One line when `needed` bytes for `what` exceed memory_limit(): "WHAT: 6.8 GB of memory
// needed, but ulimit -v allows 3.9 GB (BITPROOF_MEMORY_LIMIT=BYTES sets the limit)".
[[nodiscard]] Expected<Ok> check_memory(std::uint64_t needed, const std::string& what);

}  // namespace bitproof
