// Shard reports (kind "shard", `prove SPEC --shard I/N`): the kind's row and its
// check beyond the schema. A shard is no whole report: render, verify and diff
// refuse it; `report merge` (report/shard.hpp: merge_shards) reads shards and
// writes the proof report they make.
#pragma once

#include <string>

#include "error.hpp"
#include "report/kind.hpp"

namespace bitproof {

[[nodiscard]] ReportKind shard_report_kind();

// The recorded spec is one bitproof reads, its digest its own (merge_shards checks the rest).
[[nodiscard]] Expected<Ok> check_shard_report(const Json& report, const std::string& path);

}  // namespace bitproof
