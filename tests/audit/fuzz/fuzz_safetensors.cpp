// libFuzzer target: the safetensors reader on arbitrary bytes. The first byte
// picks the parser: even -> a whole .safetensors file (length prefix, header
// JSON, tiling rules); odd -> the rest as strict JSON (index files, reports)
// and as a header's or an index's text, where the plain readers, whenever they
// take the text, must give what the full parsers give (differential).
// Either must return a value or an error, never crash, hang or leak; an error
// must be one line naming the file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "checkpoint/safetensors.hpp"
#include "strict_json.hpp"

namespace {

void require_one_line(const bitproof::Error& e) {
  if (e.message.find('\n') != std::string::npos || e.message.rfind("fuzz.safetensors: ", 0) != 0) std::abort();
}

bool same_tensor(const bitproof::checkpoint::TensorInfo& a, const bitproof::checkpoint::TensorInfo& b) {
  return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.begin == b.begin && a.end == b.end;
}

// Aborts when a plain reader (header, index) takes `text` and its full
// parser refuses it or reads it otherwise.
void compare_readers(std::string_view text) {
  namespace detail = bitproof::checkpoint::detail;
  if (const auto plain = detail::read_plain_header(text)) {
    const auto full = detail::read_header_json(text, "fuzz.safetensors");
    if (!full || plain->metadata != full->metadata ||
        !std::equal(plain->tensors.begin(), plain->tensors.end(), full->tensors.begin(), full->tensors.end(),
                    same_tensor)) {
      std::abort();
    }
  }
  if (const auto plain = detail::read_plain_index(text)) {
    const auto full = detail::read_index_json(text, "fuzz.safetensors");
    if (!full || *plain != *full) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const unsigned char> rest(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    auto header = bitproof::checkpoint::parse_safetensors(rest, "fuzz.safetensors");
    if (!header) {
      require_one_line(header.error());
      return 0;
    }
    // A parsed header's tensors must tile the buffer inside the input.
    std::uint64_t covered = 0;
    for (const auto& t : header->tensors) {
      if (t.begin != covered || t.end < t.begin) std::abort();
      covered = t.end;
    }
    if (header->data_start() + covered != rest.size()) std::abort();
  } else {
    const std::string_view text(reinterpret_cast<const char*>(rest.data()), rest.size());
    auto json = bitproof::parse_json_strict(text, "fuzz.safetensors", "index");
    if (!json) require_one_line(json.error());
    compare_readers(text);
  }
  return 0;
}
