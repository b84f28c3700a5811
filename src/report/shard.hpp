// Shards: `prove SPEC --shard I/N` sweeps one deterministic, chunk-aligned
// (above 2^32 cases: block-aligned) slice of the domain and writes a shard
// report; `report merge` checks that a set of shards are of one spec and cover
// the domain exactly once, and rebuilds the whole report. The merged `result`
// is byte-identical to the unsharded one, whatever N: counts add up,
// counterexamples are re-derived from their case indices, and the case digest
// is rebuilt from the shards' chunk digests, chunk sums or block digests.
#pragma once

#include <string>
#include <vector>

#include "error.hpp"
#include "proof/engine.hpp"
#include "report/report.hpp"

namespace bitproof {

struct ShardId {
  std::uint64_t index;  // 0-based
  std::uint64_t count;
};

// Parses "I/N" (1 <= I <= N, as users count) into a 0-based ShardId.
[[nodiscard]] Expected<ShardId> parse_shard_flag(const std::string& text, const std::string& flag);

// Shard I of N: units [⌊I·U/N⌋, ⌊(I+1)·U/N⌋) of the domain's U units (chunks;
// 2^32-case blocks in block-sum mode, range_unit), as a case range (may be
// empty when N exceeds the unit count).
[[nodiscard]] std::pair<std::uint64_t, std::uint64_t> shard_range(std::uint64_t cases, ShardId shard);

// Block-sum mode: the chunks whose words a shard keeps beside its block digests
// (its first, its last and one picked by its index), sorted; `report merge`
// sweeps them again. Empty in the other modes and for an empty shard.
[[nodiscard]] std::vector<std::uint64_t> shard_spot_chunks(std::uint64_t cases, ShardId shard);

[[nodiscard]] Json shard_report(const Spec& spec, const SweepPart& part, ShardId shard, std::size_t keep,
                                const Json& backend_info);

// Merges shard reports (already read from `paths`) into a whole proof report.
[[nodiscard]] Expected<Json> merge_shards(const std::vector<Json>& shards, const std::vector<std::string>& paths);

}  // namespace bitproof
