#include "hash/digest.hpp"

#include <algorithm>

// OpenSSL's low-level SHA-256 (SHA-NI / AVX2 code paths where the CPU has them).
// Not EVP: EVP_DigestInit fetches a provider and loads openssl.cnf, which was
// 44% of a 208-case proof's instructions (callgrind). The low-level calls are
// deprecated in OpenSSL 3 but kept and supported; they take no global state.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <array>

namespace bitproof {

struct Sha256::Impl {
  SHA256_CTX ctx;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) { SHA256_Init(&impl_->ctx); }

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) { SHA256_Update(&impl_->ctx, data, size); }

std::array<std::uint8_t, 32> Sha256::finish() {
  std::array<std::uint8_t, 32> out{};
  SHA256_Final(out.data(), &impl_->ctx);
  return out;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    hex += kDigits[b >> 4];
    hex += kDigits[b & 15];
  }
  return hex;
}

std::string sha256_hex(const std::string& text) {
  Sha256 h;
  h.update(text.data(), text.size());
  return to_hex(h.finish());
}

void put_le(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

CaseTableDigest::CaseTableDigest(std::uint64_t cases, std::uint32_t inputs, std::uint32_t recipes)
    : cases_(cases), inputs_(inputs), recipes_(recipes) {
  buffer_.reserve(std::min<std::uint64_t>(kChunkCases, cases) * (inputs + recipes) * 4);
}

void CaseTableDigest::add(const std::uint32_t* codes, const std::uint32_t* outputs) {
  for (std::uint32_t i = 0; i < inputs_; ++i) put_le(buffer_, codes[i], 4);
  for (std::uint32_t i = 0; i < recipes_; ++i) put_le(buffer_, outputs[i], 4);
  if (++in_chunk_ == kChunkCases) close_chunk();
}

void CaseTableDigest::close_chunk() {
  Sha256 h;
  h.update(buffer_.data(), buffer_.size());
  const auto d = h.finish();
  chunk_hashes_.insert(chunk_hashes_.end(), d.begin(), d.end());
  buffer_.clear();
  in_chunk_ = 0;
}

std::vector<std::uint8_t> CaseTableDigest::take_chunk_hashes() {
  if (in_chunk_ > 0) close_chunk();
  std::vector<std::uint8_t> out;
  out.swap(chunk_hashes_);
  return out;
}

void CaseTableDigest::add_chunk_hashes(const std::vector<std::uint8_t>& hashes) {
  if (in_chunk_ > 0) close_chunk();
  chunk_hashes_.insert(chunk_hashes_.end(), hashes.begin(), hashes.end());
}

std::string CaseTableDigest::finish_hex() {
  if (in_chunk_ > 0) close_chunk();
  std::vector<std::uint8_t> head;
  const std::string tag = "bitproof-cases-v1";
  head.assign(tag.begin(), tag.end());
  put_le(head, cases_, 8);
  put_le(head, inputs_, 4);
  put_le(head, recipes_, 4);
  Sha256 h;
  h.update(head.data(), head.size());
  h.update(chunk_hashes_.data(), chunk_hashes_.size());
  return to_hex(h.finish());
}

}  // namespace bitproof
