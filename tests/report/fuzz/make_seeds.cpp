// Writes the report fuzzers' seed corpora: every committed report (one file
// each) for fuzz_report, and for fuzz_merge the shard reports of small specs
// split 1, 2 and 3 ways (one JSON array per set), and for fuzz_spec every
// spec under proofs/ and tests/ (the bad ones too); fuzz_report also gets
// the audit report of a small synthetic checkpoint (one NaN scale byte).
//   make_seeds SOURCE_DIR REPORT_SEEDS MERGE_SEEDS SPEC_SEEDS
#include <filesystem>
#include <fstream>
#include <iostream>

#include "audit/audit.hpp"
#include "audit/synth.hpp"
#include "proof/engine.hpp"
#include "report/shard.hpp"

namespace fs = std::filesystem;
using namespace bitproof;

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const fs::path source = argv[1], report_seeds = argv[2], merge_seeds = argv[3], spec_seeds = argv[4];
  fs::create_directories(report_seeds);
  fs::create_directories(merge_seeds);
  fs::create_directories(spec_seeds);
  std::size_t specs = 0;
  for (const char* dir : {"proofs", "proofs/ab", "proofs/time", "tests/cli/data", "tests/gpu/specs", "examples/fused-aux-gemv"}) {
    for (const auto& entry : fs::directory_iterator(source / dir)) {
      if (entry.path().extension() != ".json") continue;
      fs::copy_file(entry.path(), spec_seeds / (std::to_string(specs++) + ".json"), fs::copy_options::overwrite_existing);
    }
  }
  for (const auto& entry : fs::directory_iterator(source / "reports")) {
    if (entry.path().extension() == ".json") fs::copy_file(entry.path(), report_seeds / entry.path().filename(), fs::copy_options::overwrite_existing);
  }
  const char* small[] = {"proofs/dsv4-mxfp4-fp16-fold.json", "tests/cli/data/refuted.json", "tests/cli/data/finding.json"};
  for (const char* name : small) {
    auto spec = load_spec((source / name).string());
    if (!spec) {
      std::cerr << spec.error().message << "\n";
      return 1;
    }
    const CaseEvaluator eval(*spec);
    EngineOptions options;
    for (std::uint64_t n = 1; n <= 3; ++n) {
      Json set = Json::array();
      for (std::uint64_t i = 0; i < n; ++i) {
        const auto [begin, end] = shard_range(spec->case_count(), {i, n});
        const SweepPart part = sweep_range(eval, *spec, options, begin, end);
        set.push_back(shard_report(*spec, part, {i, n}, options.keep, Json{{"name", "cpu"}}));
      }
      std::ofstream(merge_seeds / (fs::path(name).stem().string() + "-" + std::to_string(n) + ".json")) << set.dump();
    }
  }
  const fs::path checkpoint = report_seeds / "audit-checkpoint";
  fs::remove_all(checkpoint);
  audit::SynthOptions synth;
  synth.out_dir = checkpoint.string();
  synth.nan_bytes = 1;
  auto written = audit::synthesize_checkpoint(synth);
  auto opened = written ? checkpoint::open_checkpoint(synth.out_dir) : Expected<checkpoint::Checkpoint>(written.error());
  auto audited = opened ? audit::run_audit(*opened, {}) : Expected<audit::AuditResult>(opened.error());
  if (!audited) {
    std::cerr << audited.error().message << "\n";
    return 1;
  }
  std::ofstream(report_seeds / "audit.json") << audit::audit_report(*audited, Json{{"threads", 1}}).dump();
  fs::remove_all(checkpoint);
  return 0;
}
