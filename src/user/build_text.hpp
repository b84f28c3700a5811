// The texts a user-recipe build writes and reads back, as pure functions (each
// fuzzed: tests/user/fuzz/fuzz_build_text.cpp): the ABI binding generated into
// the host worker and the NVRTC unit and the compiler's refusal of it, the
// compiler's dependency rule (-M) and include search list (-v), the cache
// manifest, and the fields the GPU path's compile child reads and answers. None of them trusts its input: a text that
// is not what the writer writes is an error or nothing, never a guess.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error.hpp"

namespace bitproof::user {

// ---- the ABI: std::uint32_t f(std::uint32_t code...), exactly ----

// The declarations the bindings of slots 0..slots-1 use, at namespace scope;
// `device` is "" (host) or "__device__ " (NVRTC). Needs <cstdint> before it;
// uses nothing of <type_traits>.
[[nodiscard]] std::string abi_prelude(std::string_view device, int slots);
// An expression calling `function` of recipe `slot` with `args` ("c0, c1"),
// through a pointer of exactly the ABI's type for `arity` codes: the compiler
// picks the overload of that type (target-typed overload resolution) and
// refuses any other, naming the function's type in its error.
[[nodiscard]] std::string abi_call(int slot, int arity, std::string_view function, std::string_view args);

// What a compiler log says of the ABI: recipe `slot` has no function of the
// ABI's type; `type` is the type it has (as the compiler spells it, "R(A...)"),
// empty where the name is an overload set without that type.
struct AbiRefusal {
  int slot = -1;
  std::string type;
};
// `call_lines`: each slot's call's line in the generated source named `source`.
[[nodiscard]] std::optional<AbiRefusal> abi_refusal(std::string_view log, std::string_view source,
                                                    const std::vector<std::pair<long, int>>& call_lines);

// ---- the compiler's own lists ----

// The prerequisites of the make rule for `target` that `-M -MT target` wrote:
// line continuations joined, GCC's and Clang's escapes undone (`\ `, `\#`,
// `$$`). An error where the text is not one rule for `target`.
[[nodiscard]] Expected<std::vector<std::string>> parse_make_rule(std::string_view text, std::string_view target);
// The directories of `#include <...>` in a compiler's `-v` report (GCC's and
// Clang's wording), in its order; empty where the report has no such list.
[[nodiscard]] std::vector<std::string> parse_search_dirs(std::string_view verbose);

// ---- the cache manifest (src/user/build.cpp: direct mode) ----

// How a dependency is checked: a user's file by its content's SHA-256; the
// compiler's and bitproof's own headers by their stat signature.
enum class DepKind { kUser, kTool, kSystem };
struct ManifestDep {
  DepKind kind = DepKind::kUser;
  std::string check;  // 64 hex digits
  std::string path;   // absolute, one line
  bool operator==(const ManifestDep&) const = default;
};
struct Manifest {
  std::string compiler;  // the compiler's --version line
  std::string key;       // the full key: the worker's directory in the cache
  std::string worker;    // the SHA-256 of the worker bitproof built (its file name)
  std::vector<ManifestDep> deps;
  bool operator==(const Manifest&) const = default;
};
[[nodiscard]] std::string manifest_text(const Manifest& m);
// The manifest `manifest_text` wrote, or what is wrong with the text.
[[nodiscard]] Expected<Manifest> parse_manifest(std::string_view text);
[[nodiscard]] bool sha256_hex_text(std::string_view s);  // 64 lower-case hex digits

// ---- fields on a pipe (the GPU path's compile child: src/backend/cuda_user.cpp) ----

// Each field as its length (8 bytes, little-endian) and its bytes.
[[nodiscard]] std::string fields_text(const std::vector<std::string_view>& fields);
// The fields of a whole text fields_text wrote (views into `text`); nullopt
// where it is not one (a length past the end, bytes left over).
[[nodiscard]] std::optional<std::vector<std::string_view>> parse_fields(std::string_view text);

}  // namespace bitproof::user
