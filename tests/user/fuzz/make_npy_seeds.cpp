// Writes seed .npy files for fuzz_npy into DIR: headers of each accepted dtype
// and a few shapes, with their data, in versions 1.0, 2.0 and 3.0.
#include <fstream>
#include <string>

#include "user/npy.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string dir = argv[1];
  int n = 0;
  for (const char* descr : {"|u1", "<u2", "<u4", "<i2", "<f2", "<f4", "<u8"}) {
    for (const auto& shape : {std::vector<std::uint64_t>{16}, {4, 4}, {}, {0}}) {
      std::string file = bitproof::npy::make_header(descr, shape);
      std::uint64_t count = 1;
      for (std::uint64_t d : shape) count *= d;
      file.append(count * static_cast<std::uint64_t>(descr[2] - '0'), '\x01');
      for (int major : {1, 2, 3}) {
        std::string v = file;
        if (major > 1) {  // the same header text after a 4-byte length (its high bytes zero)
          v[6] = static_cast<char>(major);
          v.insert(10, 2, '\0');
        }
        std::ofstream(dir + "/seed-" + std::to_string(n++) + ".npy", std::ios::binary) << v;
      }
    }
  }
  return 0;
}
