// libFuzzer target: report merge. The input is a JSON array of shard reports
// (the seeds are real shards of small specs); merge must return a whole report
// or a one-line error, never crash, hang or leak. Specs above 2^16 cases are
// skipped (merge sweeps chunks again: a big domain is slow, not a bug).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "proof/spec.hpp"
#include "report/render.hpp"
#include "report/shard.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using bitproof::Json;
  Json shards;
  try {
    shards = Json::parse(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const Json::exception&) {
    return 0;
  }
  if (!shards.is_array() || shards.empty() || shards.size() > 8) return 0;
  std::vector<Json> docs;
  std::vector<std::string> paths;
  for (const Json& s : shards) {
    if (!bitproof::validate_report(s, "fuzz.json")) return 0;
    if (s["kind"] != "shard") return 0;
    auto spec = bitproof::parse_spec(s["result"]["spec"].dump(), "spec");
    if (!spec || spec->case_count() > (1u << 16)) return 0;
    docs.push_back(s);
    paths.push_back("shard" + std::to_string(paths.size()) + ".json");
  }
  auto merged = bitproof::merge_shards(docs, paths);
  if (!merged) {
    if (merged.error().message.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  if (!bitproof::validate_report(*merged, "merged.json")) std::abort();  // what merge writes, it reads back
  return 0;
}
