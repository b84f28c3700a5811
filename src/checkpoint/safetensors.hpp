// A strict safetensors reader. A file is
//   8 bytes   N, little-endian u64: the header length
//   N bytes   JSON object: tensor name -> {"dtype", "shape", "data_offsets": [begin, end]},
//             plus an optional "__metadata__" object of string -> string
//   the rest  the data buffer; offsets are relative to its first byte
// and every rule of the format is enforced: N at most kMaxHeaderBytes and inside
// the file; the header a JSON object without duplicate keys; known dtypes;
// end - begin = product(shape) x dtype bits / 8 (a whole number of bytes); the
// tensors, sorted by offsets, tile the buffer exactly (first at 0, no overlap,
// no hole, last ending at the end of the file). Errors name the file and the
// tensor: "<file>: <tensor or field>: <what>".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error.hpp"

namespace bitproof::checkpoint {

// The reference implementation's limit on N.
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

enum class DType : std::uint8_t {
  kBool,
  kF4,
  kF6E2M3,
  kF6E3M2,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kF8E4M3Fnuz,
  kF8E5M2Fnuz,
  kF8E8M0,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kC64,
  kF64,
  kI64,
  kU64,
};

struct DTypeInfo {
  DType id;
  std::string_view name;  // as spelled in headers
  int bits;               // per element
};

[[nodiscard]] std::span<const DTypeInfo> all_dtypes();
[[nodiscard]] std::optional<DType> dtype_from_name(std::string_view name);
[[nodiscard]] std::string_view dtype_name(DType dtype);
[[nodiscard]] int dtype_bits(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;  // data_offsets, relative to the data buffer
  std::uint64_t end = 0;
  [[nodiscard]] std::uint64_t bytes() const { return end - begin; }
};

struct Header {
  std::uint64_t header_bytes = 0;                             // N
  std::vector<TensorInfo> tensors;                            // sorted by data_offsets
  std::vector<std::pair<std::string, std::string>> metadata;  // "__metadata__", sorted by key
  [[nodiscard]] std::uint64_t data_start() const { return 8 + header_bytes; }
};

// Parses and validates a whole file given as bytes; `file` names it in errors.
[[nodiscard]] Expected<Header> parse_safetensors(std::span<const unsigned char> file_bytes, const std::string& file);

namespace detail {
// The two readers of a header's JSON text (without the tiling check), which
// parse_safetensors tries in turn (src/checkpoint/safetensors.cpp, "plain readers"): the plain one takes a header in its
// common shape straight from the text, or gives up (nullopt) on anything else and never refuses; the full one parses
// any JSON strictly and names what is wrong. Where the plain one gives a header, the full one gives the same.
[[nodiscard]] std::optional<Header> read_plain_header(std::string_view text);
[[nodiscard]] Expected<Header> read_header_json(std::string_view text, const std::string& file);
// The same pair for an index file's text: its weight map's (tensor, shard)
// entries, sorted by tensor (the shard names not yet checked as paths).
[[nodiscard]] std::optional<std::vector<std::pair<std::string, std::string>>> read_plain_index(std::string_view text);
[[nodiscard]] Expected<std::vector<std::pair<std::string, std::string>>> read_index_json(std::string_view text,
                                                                                         const std::string& file);
}  // namespace detail

// A read-only memory map of a whole file (empty files map to no bytes), for
// its header; the file stays open for read_at.
class MappedFile {
 public:
  [[nodiscard]] static Expected<MappedFile> open(const std::string& path);
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
  [[nodiscard]] std::span<const unsigned char> bytes() const { return {data_, size_}; }
  // Reads out.size() bytes at `offset` with pread (thread-safe). The audit
  // reads tensor data this way, into per-thread buffers that stay in L2: on a
  // virtual machine, reading page-cache pages through the map costs a nested
  // page walk every 4 KiB (0.5 s of user time a GB, against 0.03 s this way:
  // bench/RESULTS.md). Fails with the system's reason.
  [[nodiscard]] Expected<Ok> read_at(std::uint64_t offset, std::span<unsigned char> out) const;

 private:
  void release();
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
};

// Room for read_at whose address has the file offset's position in a 4 KiB
// page. The kernel's copy out of the page cache runs about 4x slower when its
// destination lies 1 to 31 bytes past the source modulo 4 KiB (its loads wait
// on its own stores: 4K aliasing; 2.3 against 10 GB/s on a Zen 3 VM,
// bench/RESULTS.md), and a heap buffer's page offset is whatever malloc gave:
// then every tensor of a shard whose data starts at an unlucky offset is
// copied slowly.
class PageOffsetBuffer {
 public:
  static constexpr std::size_t kPage = 4096;
  // `capacity`: the most bytes one read takes.
  explicit PageOffsetBuffer(std::size_t capacity) : storage_(capacity + 2 * kPage) {}
  // `bytes` (at most the capacity) of room at an address congruent to `offset` modulo kPage.
  [[nodiscard]] std::span<unsigned char> room_for(std::uint64_t offset, std::size_t bytes);

 private:
  std::vector<unsigned char> storage_;
};

struct CheckpointFile {
  std::string path;  // as opened, for messages
  std::string name;  // relative to the checkpoint root, for reports
  MappedFile map;
  Header header;
  [[nodiscard]] std::span<const unsigned char> tensor_bytes(const TensorInfo& t) const {
    return map.bytes().subspan(header.data_start() + t.begin, t.bytes());
  }
  // Where tensor t's data starts in the file.
  [[nodiscard]] std::uint64_t tensor_offset(const TensorInfo& t) const { return header.data_start() + t.begin; }
};

struct Checkpoint {
  std::string root;                  // the path given
  std::optional<std::string> index;  // the index file's name, when sharded
  std::vector<CheckpointFile> files;
};

inline constexpr std::string_view kIndexName = "model.safetensors.index.json";

// Opens a checkpoint: a .safetensors file; an index .json file; or a directory
// holding model.safetensors.index.json (or exactly one *.safetensors.index.json),
// else every *.safetensors in it. With an index, every shard it names must exist,
// every tensor must be in the shard it names, and every tensor of a shard must be
// in the weight map. A tensor name may appear only once across all files.
[[nodiscard]] Expected<Checkpoint> open_checkpoint(const std::string& path);

}  // namespace bitproof::checkpoint
