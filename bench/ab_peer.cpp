// The peer of bench/ab.sh: the fused auxiliary GEMV pair (N = 2048 + 512 + 64,
// K = 4096, block-K 1024, partials added forward) written plainly with the
// CPU's own float FMA (std::fma, -ffp-contract=off), 64 cases × 2 arms on every
// core: what the soft model's A/B run costs against hardware floats. Not a
// witness (no bits are compared): a speed reference only.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

int main() {
  const int n = 2624, k = 4096, block = 1024, cases = 64, arms = 2;
  std::vector<float> w(std::size_t{n} * k), x(k), y(n);
  std::uint64_t s = 1;
  auto next = [&] { s = s * 6364136223846793005ull + 1442695040888963407ull; return static_cast<float>(s >> 40) / 16777216.0f - 0.5f; };
  for (float& v : w) v = next();
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double checksum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < cases * arms; ++c) {
    for (float& v : x) v = next();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int row = static_cast<int>(t); row < n; row += static_cast<int>(threads)) {
          float sum = 0;
          for (int b = 0; b < k / block; ++b) {
            float acc = 0;
            for (int i = b * block; i < (b + 1) * block; ++i) acc = std::fma(x[i], w[static_cast<std::size_t>(row) * k + i], acc);
            sum = b == 0 ? acc : sum + acc;
          }
          y[row] = sum;
        }
      });
    }
    for (auto& th : pool) th.join();
    checksum += y[c % n];
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("peer (hardware float FMA, %u threads): %d cases x %d arms in %.3f s (checksum %.3f)\n", threads, cases,
              arms, seconds, checksum);
}
