// bitproof_count16_bound FILE...: what bounds the 16-bit audit on this CPU.
//
// A histogram of 2,049 distinct 16-bit codes (the fp16-scales checkpoint of
// bench/audit.sh: GPTQ FP16 group scales uniform in 0x1C00..0x2400) writes
// once a code; nothing else counts it exactly. So an audit of B bytes
// (B/2 codes) on C cores takes at least
//   (B / copy rate + B/2 / store rate) / C
// where the copy rate is the kernel's copy out of the page cache (what `cat`
// does, on one core) and the store rate that of one 32-bit store a code to
// the code's bin. Against `cat` (B / copy rate) that caps the audit's
// bandwidth at
//   C / (1 + copy rate / (2 * store rate))   times cat's.
// Measured here, one core, the best of 5 runs each (a bound is what the core
// allows when nothing shares it; on a VM a busy SMT sibling on the host
// halves the store rate, run to run):
//   copy    pread of the FILEs (warm) in 256 KiB pieces, at the file offset's
//           place in a page (as the audit reads), and 16 bytes past it;
//   store   one store a code, no load: the floor of any count that stores once a code;
//   count   the audit's own counter (CodeCounter, 16-bit codes) on the same
//           pieces, hot in L2: the range pass and the two-lane count.
// Prints one line each and the bound for 1 and 2 cores; the FILEs should be a
// warm checkpoint (bench/audit.sh's fp16-scales, KEEP=1).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "audit/histogram.hpp"
#include "checkpoint/safetensors.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kPiece = std::size_t{1} << 18;  // the audit's kReadBytes
constexpr int kRuns = 5;
constexpr int kPiecesARun = 4096;  // 1 GiB of codes a run

template <class F>
double best_seconds(F&& run) {
  double best = 0;
  for (int r = 0; r < kRuns; ++r) {
    const auto start = Clock::now();
    run();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    best = r == 0 ? s : std::min(best, s);
  }
  return best;
}

// Bytes a second of the kernel's copy out of the page cache, or 0 when a file
// cannot be read; `shift`: the destination that many bytes past the source's
// place in a page (0: as the audit reads).
double copy_rate(int files, char** paths, std::uint64_t shift) {
  bitproof::checkpoint::PageOffsetBuffer buffer(kPiece);
  std::uint64_t bytes = 0;
  bool failed = false;
  const double s = best_seconds([&] {
    bytes = 0;
    for (int f = 0; f < files; ++f) {
      const int fd = ::open(paths[f], O_RDONLY);
      if (fd < 0) {
        failed = true;
        return;
      }
      for (std::uint64_t off = 0;;) {
        const std::span<unsigned char> room = buffer.room_for(off + shift, kPiece);
        const ssize_t n = ::pread(fd, room.data(), room.size(), static_cast<off_t>(off));
        if (n <= 0) break;
        off += static_cast<std::uint64_t>(n);
        bytes += static_cast<std::uint64_t>(n);
      }
      ::close(fd);
    }
  });
  return failed ? 0 : static_cast<double>(bytes) / s;
}

// One store a code to its bin, four codes a 64-bit load: the codes of
// `piece`, kPiecesARun times.
__attribute__((noinline)) void store_each(std::span<const unsigned char> piece, std::uint32_t* bins) {
  for (int r = 0; r < kPiecesARun; ++r) {
    for (std::size_t i = 0; i + 8 <= piece.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, piece.data() + i, 8);
      bins[w & 0xFFFF] = 1;
      bins[(w >> 16) & 0xFFFF] = 1;
      bins[(w >> 32) & 0xFFFF] = 1;
      bins[w >> 48] = 1;
    }
    asm volatile("" ::: "memory");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint16_t> codes(kPiece / 2);
  std::mt19937 random(1);
  for (std::uint16_t& c : codes) c = static_cast<std::uint16_t>(0x1C00 + random() % 2049);
  const double codes_a_run = static_cast<double>(codes.size()) * kPiecesARun;

  const std::span<const unsigned char> piece(reinterpret_cast<const unsigned char*>(codes.data()), kPiece);
  std::vector<std::uint32_t> bins(std::size_t{1} << 16);
  const double store = codes_a_run / best_seconds([&] { store_each(piece, bins.data()); });

  bitproof::audit::CodeCounter counter(16);
  bitproof::audit::CodeCounts out;
  const auto count_all = [&] {
    for (int r = 0; r < kPiecesARun; ++r) counter.add(piece);
    counter.take(out);
  };
  const double count = codes_a_run / best_seconds(count_all);
  const std::uint64_t counted = [&] {
    std::uint64_t n = 0;
    for (const auto& [code, k] : out) n += k;
    return n;
  }();
  if (counted != static_cast<std::uint64_t>(codes_a_run) * kRuns) {
    std::fprintf(stderr, "count: %llu codes counted, %.0f given\n", static_cast<unsigned long long>(counted),
                 codes_a_run * kRuns);
    return 1;
  }
  fmt::print("store: {:.2f} G codes/s (one store a code, one core)\n", store / 1e9);
  fmt::print("count: {:.2f} G codes/s (bitproof's CodeCounter, one core; {:.2f}x the store floor's time)\n",
             count / 1e9, store / count);
  if (argc < 2) return 0;
  const double copy = copy_rate(argc - 1, argv + 1, 0);
  const double shifted = copy_rate(argc - 1, argv + 1, 16);
  if (copy == 0 || shifted == 0) {
    std::fprintf(stderr, "cannot read the files\n");
    return 1;
  }
  fmt::print(
      "copy:  {:.2f} GB/s (pread out of the page cache, one core; {:.2f} GB/s with the destination 16 bytes\n"
      "       past the source's place in a page: 4K aliasing, which the audit's PageOffsetBuffer avoids)\n",
      copy / 1e9, shifted / 1e9);
  for (const double cores : {1.0, 2.0}) {
    const double floor = cores / (1 + copy / (2 * store));
    const double ours = cores / (1 + copy / (2 * count));
    fmt::print(
        "bound on {:.0f} core(s): audit bandwidth <= {:.2f}x cat's at the store floor, {:.2f}x at this count rate\n",
        cores, floor, ours);
  }
  return 0;
}
