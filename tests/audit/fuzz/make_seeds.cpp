// Writes the fuzz seed corpus into DIR: small checkpoints from the generator
// (single file and sharded, with NaN bytes), their index file, and a few
// hand-made edge cases, each prefixed by the selector byte fuzz_safetensors reads.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "audit/synth.hpp"

namespace fs = std::filesystem;

namespace {

void write_seed(const fs::path& dir, const std::string& name, char selector, const std::string& body) {
  std::ofstream out(dir / name, std::ios::binary);
  out.put(selector);
  out << body;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string with_length(const std::string& header) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_safetensors_seeds DIR\n";
    return 2;
  }
  const fs::path dir(argv[1]);
  fs::create_directories(dir);
  const fs::path work = dir / "synth.tmp";
  fs::remove_all(work);
  bitproof::audit::SynthOptions o;
  o.layers = 2, o.experts = 1, o.rows = 4, o.cols = 32, o.weights = true;
  for (std::uint32_t shards : {1u, 2u}) {
    o.out_dir = (work / std::to_string(shards)).string();
    o.shards = shards;
    o.nan_bytes = shards == 2 ? 1 : 0;
    auto r = bitproof::audit::synthesize_checkpoint(o);
    if (!r) {
      std::cerr << r.error().message << "\n";
      return 1;
    }
    for (const std::string& f : r->files) {
      const fs::path p(f);
      const bool index = p.extension() == ".json";
      const std::string bytes = slurp(p);
      write_seed(dir, std::to_string(shards) + "-" + p.filename().string(), index ? '\x01' : '\x00', bytes);
      if (index || bytes.size() < 8) continue;
      // The header's text alone, for the readers' comparison (odd selector).
      std::uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
      if (n <= bytes.size() - 8)
        write_seed(dir, std::to_string(shards) + "-" + p.filename().string() + ".header", '\x01', bytes.substr(8, n));
    }
  }
  fs::remove_all(work);
  write_seed(dir, "empty.safetensors", '\x00', with_length("{}      "));
  write_seed(dir, "metadata.safetensors", '\x00', with_length("{\"__metadata__\":{\"format\":\"pt\"}}"));
  write_seed(dir, "f4.safetensors", '\x00',
             with_length("{\"x\":{\"dtype\":\"F4\",\"shape\":[2,2],\"data_offsets\":[0,2]}}") + std::string(2, '\x11'));
  write_seed(dir, "duplicate.json", '\x01', "{\"a\":{\"b\":1,\"b\":2}}");
  // Regressions found by fuzzing: numbers past double's range (nlohmann's out_of_range).
  write_seed(dir, "overflow.json", '\x01', "[326E666666]");
  write_seed(dir, "overflow.safetensors", '\x00',
             with_length("{\"x\":{\"dtype\":\"U8\",\"shape\":[1E999],\"data_offsets\":[0,1]}}"));
  return 0;
}
