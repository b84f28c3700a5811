#include "report/kind_shard.hpp"

#include "report/spec_report.hpp"

namespace bitproof {

Expected<Ok> check_shard_report(const Json& report, const std::string& path) {
  auto spec = read_recorded_spec(report["result"], path);
  if (!spec) return spec.error();
  return Ok{};
}

ReportKind shard_report_kind() {
  ReportKind k;
  k.name = "shard";
  k.validate = check_shard_report;
  k.refused_alone = "a shard: merge the shards first (bitproof report merge)";
  return k;
}

}  // namespace bitproof
