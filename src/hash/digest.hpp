// SHA-256 (OpenSSL libcrypto) and the case-table digest.
//
// Case-table digest, version 1. The table is every case of the domain in case
// order; a case is its input codes then each recipe's output code, each a
// little-endian uint32. Cases are hashed in chunks of kChunkCases; the digest
// is SHA-256 over "bitproof-cases-v1", the case count (u64 LE), the input and
// recipe counts (u32 LE), then each chunk's SHA-256 in order. Chunks let shards
// and threads hash their slices independently and still agree on one digest.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace bitproof {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  // Ends the hash; returns the 32-byte digest.
  std::array<std::uint8_t, 32> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string to_hex(std::span<const std::uint8_t> bytes);
// Appends the low `bytes` bytes of v, least significant first (the digests' integers).
void put_le(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes);
std::string sha256_hex(const std::string& text);

inline constexpr std::uint64_t kChunkCases = 65536;

class CaseTableDigest {
 public:
  CaseTableDigest(std::uint64_t cases, std::uint32_t inputs, std::uint32_t recipes);
  // Cases must come in order, each with `inputs` codes and `recipes` outputs.
  void add(const std::uint32_t* codes, const std::uint32_t* outputs);
  std::string finish_hex();
  // Sweeps in parts (threads, shards): each part hashes its chunk-aligned slice
  // and hands over its chunk hashes (closing a partial last chunk); one digest
  // then takes every part's hashes in case order and finishes.
  std::vector<std::uint8_t> take_chunk_hashes();
  void add_chunk_hashes(const std::vector<std::uint8_t>& hashes);

 private:
  void close_chunk();
  std::uint64_t cases_;
  std::uint32_t inputs_;
  std::uint32_t recipes_;
  std::uint64_t in_chunk_ = 0;
  std::vector<std::uint8_t> buffer_;
  std::vector<std::uint8_t> chunk_hashes_;
};

}  // namespace bitproof
