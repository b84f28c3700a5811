// JSON for untrusted files (specs, reports read back, safetensors headers and
// index files, audits): like nlohmann::json::parse, but a key repeated inside
// one object is an error instead of silently keeping the last value (a
// reviewer reads the first), and a file that cannot be read says why.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"

namespace bitproof {

// Parses `text`. Errors read "<file>: <field>: <what>", where field is
// `what_field` for syntax errors ("<file>: <what>" when it is empty) and the
// enclosing top-level key for duplicates.
// With `comments`, // and /* */ comments are skipped (proof specs allow them).
[[nodiscard]] Expected<nlohmann::json> parse_json_strict(std::string_view text, const std::string& file,
                                                         const std::string& what_field, bool comments = false);

// What kind of bitproof file `text` is, read from its version key, and which commands
// take it, for the error of a command given another kind: "a proof spec
// (\"bitproof_spec\"), which prove, domain and spec check take". Empty when the
// text (comments allowed) is no JSON object or names none of `expected_keys`'
// neighbours, or when it does name one of `expected_keys` (then it is the kind asked for).
[[nodiscard]] std::string other_file_kind(std::string_view text, std::initializer_list<std::string_view> expected_keys);

// The same, keeping the keys in file order (reports: their digests are of the text as written).
[[nodiscard]] Expected<nlohmann::ordered_json> parse_ordered_json_strict(std::string_view text, const std::string& file,
                                                                         const std::string& what_field);

// Arrays of [unsigned, unsigned] pairs that a strict parse keeps out of the
// document: an audit report's histograms hold millions of pairs, each ~140
// bytes as JSON values. Every array at `place` (keys joined by ".", and "[]"
// for any item: "result.tensors[].histogram") is read into `lists`, in
// document order, and stands in the document as an empty array. An array
// there that holds anything else stops the parse with an error naming it
// ("f.json: result.tensors[3].histogram: must hold [a, b] pairs of integers from 0").
using PairList = std::vector<std::array<std::uint64_t, 2>>;
struct PairLists {
  std::string place;
  std::vector<PairList> lists;
};

// A new list at the end of `lists`, with room for as many pairs as the last
// one held (a report's histograms are alike: no doubling's copies).
inline PairList& add_pair_list(std::vector<PairList>& lists) {
  const std::size_t like_last = lists.empty() ? 0 : lists.back().size();
  PairList& list = lists.emplace_back();
  list.reserve(like_last);
  return list;
}

// parse_ordered_json_strict, with the arrays at `pairs.place` read into `pairs`.
[[nodiscard]] Expected<nlohmann::ordered_json> parse_ordered_json_strict(std::string_view text, const std::string& file,
                                                                         const std::string& what_field,
                                                                         PairLists& pairs);

// The largest files of each kind a command reads: a file above its limit is
// refused before a byte of it is read (a spec that names /dev/zero, a table
// far larger than its domain). Specs are kilobytes; an audit report of a large
// checkpoint is 86 MB and more.
inline constexpr std::uint64_t kMaxSpecBytes = std::uint64_t{16} << 20;    // proof, A/B and timing specs
inline constexpr std::uint64_t kMaxReportBytes = std::uint64_t{4} << 30;   // reports, audits, shards
inline constexpr std::uint64_t kMaxIndexBytes = std::uint64_t{256} << 20;  // a checkpoint's weight map

// The whole content of a regular file a command reads, or one line with the
// reason: the system's ("Too many levels of symbolic links", ...), "is a
// directory", "not a regular file (a FIFO)" (devices, FIFOs and sockets are
// never read: symbolic links are followed, the file is opened without
// blocking and checked before reading), or a size above `max_bytes`. `what`
// names the file's role in messages ("the spec file").
[[nodiscard]] Expected<std::string> read_input_file(const std::string& path, const std::string& what,
                                                    std::uint64_t max_bytes);

// Reads a whole (small) JSON file and parses it strictly; `what_field` as above.
[[nodiscard]] Expected<nlohmann::json> load_json_strict(const std::string& path, const std::string& what_field);

// `text` made safe for a one-line message: control and non-ASCII bytes become \xNN
// (backslashes too where such escapes appear, so they stay unambiguous).
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace bitproof
