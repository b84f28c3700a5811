#include "operator/host_float.hpp"

#include <fmt/format.h>

#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace bitproof {
namespace {

std::vector<std::uint32_t> edge_operands() {
  std::vector<std::uint32_t> v;
  for (std::uint32_t sign : {0u, 0x80000000u}) {
    for (std::uint32_t e : {0u, 1u, 2u, 24u, 103u, 126u, 127u, 128u, 150u, 253u, 254u, 255u}) {
      for (std::uint32_t m : {0u, 1u, 0x400000u, 0x7FFFFFu, 0x2AAAABu}) v.push_back(sign | (e << 23) | m);
    }
  }
  return v;
}

HostFloatCheck run_check() {
  HostFloatCheck c;
#if defined(__x86_64__) || defined(__i386__)
  if ((_mm_getcsr() & 0x8040u) != 0) {
    c.detail = "flush-to-zero or denormals-are-zero is set in this thread's MXCSR";
    return c;
  }
#endif
  auto differ = [&](const char* op, std::uint32_t got, std::uint32_t want, std::uint32_t a, std::uint32_t b,
                    std::uint32_t x) {
    ++c.operations;
    if (got == want || !c.detail.empty()) return;
    c.detail = fmt::format("{}({:#010x}, {:#010x}, {:#010x}): host {:#010x}, soft model {:#010x}", op, a, b, x, got, want);
  };
  const std::vector<std::uint32_t> edges = edge_operands();
  for (std::uint32_t a : edges) {
    for (std::uint32_t b : edges) {
      differ("fadd", HostFloatArith::fadd(a, b), SoftArith::fadd(a, b), a, b, 0);
      differ("fmul", HostFloatArith::fmul(a, b), SoftArith::fmul(a, b), a, b, 0);
      for (std::size_t i = 0; i < edges.size(); i += 7)
        differ("ffma", HostFloatArith::ffma(a, b, edges[i]), SoftArith::ffma(a, b, edges[i]), a, b, edges[i]);
    }
  }
  std::uint64_t s = 0x243F6A8885A308D3ull;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(s >> 32);
  };
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t a = next(), b = next(), x = next();
    differ("ffma", HostFloatArith::ffma(a, b, x), SoftArith::ffma(a, b, x), a, b, x);
    // Operands near each other's magnitude: the cancellation and rounding cases.
    const std::uint32_t near = (a & 0xFF800000u) | (x & 0x007FFFFFu);
    differ("fadd", HostFloatArith::fadd(a, near ^ 0x80000000u), SoftArith::fadd(a, near ^ 0x80000000u), a, near, 0);
  }
  c.agrees = c.detail.empty();
  return c;
}

}  // namespace

const HostFloatCheck& host_float_agrees() {
  static const HostFloatCheck check = run_check();
  return check;
}

}  // namespace bitproof
