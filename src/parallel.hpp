// One way to spread independent work over threads, for every library that
// needs it (the proof engine's case ranges, the audit's chunks and shard
// headers).
#pragma once

#include <cstddef>
#include <functional>

namespace bitproof {

// A thread count as options give it: 0 means one per core (at least 1).
[[nodiscard]] unsigned resolve_threads(unsigned threads);

// Runs body(i) for every i in [0, n) on min(threads, n) threads, which take
// indices in increasing order; with one thread (or none) it runs inline. The
// first exception thrown by body stops further indices and is rethrown here.
void parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& body);

}  // namespace bitproof
