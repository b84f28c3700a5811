// libFuzzer target for the texts a user-recipe build reads back
// (src/user/build_text.cpp): the cache manifest, the compiler's dependency
// rule and search list, its ABI refusals, and the fields of the GPU path's
// compile child. Any bytes are refused with a message or read consistently: a
// manifest read is written back to the same text, a rule's files are non-empty
// words, and fields read are written back to the same text.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "user/build_text.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace bitproof::user;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto m = parse_manifest(bytes)) {
    require(manifest_text(*m) == bytes);  // one text for each manifest: nothing read that was not written
  } else {
    require(!m.error().message.empty());
  }
  if (auto deps = parse_make_rule(bytes, "t")) {
    require(!deps->empty());
    for (const std::string& d : *deps) require(!d.empty());
  }
  for (const std::string& d : parse_search_dirs(bytes)) require(!d.empty());
  if (auto r = abi_refusal(bytes, "w.cpp", {{1, 0}, {2, 1}})) require(r->slot >= 0);
  if (auto fields = parse_fields(bytes)) require(fields_text(*fields) == bytes);
  return 0;
}
