// libFuzzer target for the .npy header reader and the output-table decoder
// (src/user/npy.cpp, table.cpp): any bytes either are refused with a message
// or are read consistently: the data fills the file exactly, a header written
// back from what was read parses to the same fields, and the table decoder
// agrees with the parse on its length and on each word's width.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "user/npy.hpp"
#include "user/table.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bitproof;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto h = npy::parse_file(bytes);
  if (!h) {
    require(!h.error().message.empty());
  } else {
    require(h->data_offset + h->elements() * static_cast<std::uint64_t>(h->item_bytes) == size);
    auto again = npy::parse_header(npy::make_header(h->descr, h->shape));
    require(again.ok() && again->descr == h->descr && again->shape == h->shape && again->kind == h->kind);
  }
  // The same bytes as a table of each output format, for the case count the header claims (or 16).
  const std::uint64_t cases = h ? h->elements() : 16;
  for (FormatId out : {FormatId::fp16, FormatId::e2m1, FormatId::fp32}) {
    for (user::TableFormat f : {user::TableFormat::kNpy, user::TableFormat::kRaw16, user::TableFormat::kRaw32}) {
      auto t = user::decode_table(bytes, f, out, cases);
      if (!t) continue;
      require(t->words.size() == cases && t->sha256.size() == 64);
      for (std::uint32_t w : t->words) require(spec_of(out).bits == 32 || (w >> spec_of(out).bits) == 0);
    }
  }
  return 0;
}
