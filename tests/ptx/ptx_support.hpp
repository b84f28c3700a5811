// Helpers of the ptx suite: fixtures, buffers of typed values, one-call launches.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ptx/ptx.hpp"
#include "support.hpp"

namespace bitproof::test {

inline std::string ptx_fixture(const std::string& file) {
  const std::string text = read_text(std::string(BITPROOF_SOURCE_DIR "/tests/ptx/data/") + file);
  REQUIRE(!text.empty());
  return text;
}

template <class T>
std::vector<std::uint8_t> ptx_bytes_of(const std::vector<T>& v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
std::vector<T> ptx_values_of(const std::vector<std::uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// Parses `text` and launches `kernel`; the Error's message when either fails.
inline Expected<ptx::LaunchResult> run_ptx(const std::string& text, const std::string& kernel, ptx::Dim3 grid,
                                           ptx::Dim3 block, const std::vector<ptx::Arg>& args, ptx::Memory& mem,
                                           std::string name = "test.ptx") {
  auto m = ptx::parse_module(text, std::move(name));
  if (!m) return m.error();
  auto k = ptx::find_kernel(*m, kernel);
  if (!k) return k.error();
  ptx::LaunchConfig cfg;
  cfg.grid = grid, cfg.block = block, cfg.max_warp_steps = 10'000'000;
  return ptx::launch(*m, **k, cfg, args, mem);
}

// Text with every `from` replaced by `to` (the mutated fixtures of the negative controls); at
// least one occurrence is required.
inline std::string ptx_mutate(std::string text, const std::string& from, const std::string& to) {
  std::size_t at = 0, n = 0;
  while ((at = text.find(from, at)) != std::string::npos) {
    text.replace(at, from.size(), to);
    at += to.size();
    ++n;
  }
  REQUIRE(n > 0);
  return text;
}

}  // namespace bitproof::test
