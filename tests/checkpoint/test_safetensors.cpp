// The safetensors reader: good files parse to what was written; every rule of
// the format refuses a file that breaks it, with one line naming file and tensor.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

#include "checkpoint/safetensors.hpp"
#include "../audit/st_builder.hpp"
#include "strict_json.hpp"
#include "support.hpp"

namespace bitproof::checkpoint {
namespace {

using audit::testing::st_bytes;
using audit::testing::zeros;

std::string t(const std::string& name, const std::string& dtype, const std::string& shape, std::uint64_t b,
              std::uint64_t e) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
         std::to_string(b) + "," + std::to_string(e) + "]}";
}

Expected<Header> parse(const std::vector<unsigned char>& bytes) { return parse_safetensors(bytes, "f.safetensors"); }

// The error of parsing, which must fail; checks the one-line "f.safetensors: <field>: ..." shape.
std::string error_of(const std::vector<unsigned char>& bytes) {
  auto h = parse(bytes);
  REQUIRE_FALSE(h.ok());
  const std::string& m = h.error().message;
  CHECK(h.error().exit_code == kExitBadInput);
  CHECK(m.find('\n') == std::string::npos);
  CHECK(m.rfind("f.safetensors: ", 0) == 0);
  return m;
}

using test::contains;

}  // namespace

TEST_SUITE("checkpoint") {
  TEST_CASE("a good file parses to its tensors, sorted by offsets, and its metadata") {
    const std::string header = "{\"__metadata__\":{\"format\":\"pt\"}," + t("b", "F8_E8M0", "[2,2]", 6, 10) + "," +
                               t("a", "BF16", "[3]", 0, 6) + "," + t("empty", "F32", "[0,4]", 10, 10) + "}";
    auto h = parse(st_bytes(header, zeros(10)));
    REQUIRE(h.ok());
    REQUIRE(h->tensors.size() == 3);
    CHECK(h->tensors[0].name == "a");
    CHECK(h->tensors[1].name == "b");
    CHECK(h->tensors[1].dtype == DType::kF8E8M0);
    CHECK(h->tensors[1].shape == std::vector<std::uint64_t>{2, 2});
    CHECK(h->tensors[2].bytes() == 0);
    CHECK(h->data_start() == 8 + header.size());
    REQUIRE(h->metadata.size() == 1);
    CHECK(h->metadata[0] == std::pair<std::string, std::string>{"format", "pt"});
  }

  TEST_CASE("an empty header with an empty buffer is a valid file; trailing header spaces are allowed") {
    CHECK(parse(st_bytes("{}      ", {})).ok());
    CHECK(error_of(st_bytes("{}", zeros(1))).find("data buffer") != std::string::npos);
  }

  TEST_CASE("dtype sizes: sub-byte dtypes need a whole number of bytes") {
    CHECK(dtype_bits(DType::kF4) == 4);
    CHECK(dtype_bits(DType::kF6E2M3) == 6);
    CHECK(dtype_bits(DType::kF8E8M0) == 8);
    CHECK(dtype_bits(DType::kBF16) == 16);
    CHECK(dtype_bits(DType::kC64) == 64);
    for (const DTypeInfo& d : all_dtypes()) CHECK(dtype_from_name(d.name) == d.id);
    CHECK(parse(st_bytes("{" + t("x", "F4", "[4]", 0, 2) + "}", zeros(2))).ok());
    CHECK(parse(st_bytes("{" + t("x", "F6_E3M2", "[4]", 0, 3) + "}", zeros(3))).ok());
    CHECK(contains(error_of(st_bytes("{" + t("x", "F4", "[3]", 0, 2) + "}", zeros(2))),
                   "x: shape x dtype bits is not a whole number of bytes"));
  }

  TEST_CASE("truncated file") {
    CHECK(contains(error_of({1, 2, 3}), "f.safetensors: header: truncated file: 3 bytes"));
    CHECK(contains(error_of({}), "truncated file: 0 bytes"));
  }

  TEST_CASE("header length past the end of the file") {
    CHECK(
        contains(error_of(st_bytes("{}", {}, 1000)), "header: header length 1000 past the end of the file (10 bytes)"));
    CHECK(contains(error_of(st_bytes("{}", {}, kMaxHeaderBytes)), "past the end"));
  }

  TEST_CASE("header over the limit") {
    CHECK(
        contains(error_of(st_bytes("{}", {}, kMaxHeaderBytes + 1)), "header: header length 100000001 over the limit"));
    CHECK(contains(error_of(st_bytes("{}", {}, UINT64_MAX - 1)), "over the limit"));
  }

  TEST_CASE("invalid JSON and non-object JSON") {
    CHECK(contains(error_of(st_bytes("{\"a\":", {})), "f.safetensors: header: invalid JSON"));
    CHECK(contains(error_of(st_bytes("", {})), "header: invalid JSON"));
    CHECK(contains(error_of(st_bytes("{\"a\":1}\xff", {})), "header: invalid JSON"));
    CHECK(contains(error_of(st_bytes("{\"\xc3\x28\":1}", {})), "header: invalid JSON"));  // ill-formed UTF-8
    CHECK(contains(error_of(st_bytes("[1,2]", {})), "header: must be a JSON object, found array"));
    // Found by the fuzzer: a number too large for a double is nlohmann's out_of_range, not a parse_error.
    CHECK(contains(error_of(st_bytes("{\"x\":[326E666666]}", {})), "header: invalid JSON: number overflow"));
    CHECK(contains(error_of(st_bytes("{\"__metadata__\":{\"k\":1E999}}", {})), "header: invalid JSON"));
    CHECK(contains(error_of(st_bytes("\"str\"", {})), "found string"));
    CHECK(contains(error_of(st_bytes("{\"x\":[]}", {})), "x: tensor entry must be an object, found array"));
    CHECK(contains(error_of(st_bytes("{\"__metadata__\":{\"k\":1}}", {})), "__metadata__: \"k\" must be a string"));
    CHECK(contains(error_of(st_bytes("{\"__metadata__\":[]}", {})), "__metadata__: must be an object"));
  }

  TEST_CASE("malformed tensor entries name the tensor") {
    CHECK(contains(error_of(st_bytes("{\"x\":{\"dtype\":\"U8\",\"shape\":[1]}}", zeros(1))),
                   "x: missing \"data_offsets\""));
    CHECK(contains(
        error_of(st_bytes("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"extra\":1}}", zeros(1))),
        "x: unknown key \"extra\""));
    CHECK(contains(error_of(st_bytes("{" + t("x", "U8", "[-1]", 0, 1) + "}", zeros(1))),
                   "x: shape must hold non-negative integers"));
    CHECK(contains(error_of(st_bytes("{" + t("x", "U8", "[1.5]", 0, 1) + "}", zeros(1))),
                   "x: shape must hold non-negative integers"));
    CHECK(contains(error_of(st_bytes("{" + t("x", "U8", "3", 0, 1) + "}", zeros(1))), "x: shape must be an array"));
    CHECK(contains(error_of(st_bytes("{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]}}", zeros(1))),
                   "x: data_offsets must be [begin, end]"));
    CHECK(contains(error_of(st_bytes("{" + t("x", "U8", "[0]", 4, 2) + "}", zeros(4))),
                   "x: data_offsets [4, 2] end before they begin"));
    CHECK(contains(error_of(st_bytes("{\"x\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,1]}}", zeros(1))),
                   "x: dtype must be a string"));
  }

  TEST_CASE("offsets out of bounds") {
    CHECK(contains(error_of(st_bytes("{" + t("w", "U8", "[8]", 0, 8) + "}", zeros(4))),
                   "f.safetensors: w: data_offsets [0, 8] out of bounds: the data buffer has 4 bytes"));
    CHECK(contains(error_of(st_bytes("{" + t("w", "U8", "[1]", UINT64_MAX - 1, UINT64_MAX) + "}", zeros(4))),
                   "w: data_offsets"));
  }

  TEST_CASE("overlapping tensors, holes, a first tensor not at 0, trailing bytes") {
    CHECK(contains(
        error_of(st_bytes("{" + t("a", "U8", "[8]", 0, 8) + "," + t("b", "U8", "[8]", 4, 12) + "}", zeros(12))),
        "b: data_offsets [4, 12] overlap tensor a ending at 8"));
    CHECK(contains(
        error_of(st_bytes("{" + t("a", "U8", "[4]", 0, 4) + "," + t("b", "U8", "[4]", 8, 12) + "}", zeros(12))),
        "b: data_offsets [8, 12] leave a hole of 4 bytes after tensor a"));
    CHECK(contains(error_of(st_bytes("{" + t("a", "U8", "[4]", 4, 8) + "}", zeros(8))),
                   "a: data_offsets [4, 8] leave a hole of 4 bytes at the start of the buffer"));
    CHECK(contains(error_of(st_bytes("{" + t("a", "U8", "[4]", 0, 4) + "}", zeros(8))),
                   "a: the tensors end at 4 but the data buffer has 8 bytes (4 trailing bytes)"));
    // Two tensors on the same bytes overlap even when they are the same size.
    CHECK(
        contains(error_of(st_bytes("{" + t("a", "U8", "[4]", 0, 4) + "," + t("b", "U8", "[4]", 0, 4) + "}", zeros(4))),
                 "overlap tensor"));
  }

  TEST_CASE("size not matching dtype x shape") {
    CHECK(contains(error_of(st_bytes("{" + t("n", "F16", "[3]", 0, 4) + "}", zeros(4))),
                   "n: data_offsets [0, 4] hold 4 bytes, but shape and dtype F16 need 6"));
    CHECK(contains(error_of(st_bytes("{" + t("n", "F64", "[4294967296,4294967296]", 0, 8) + "}", zeros(8))),
                   "n: shape overflows"));
  }

  TEST_CASE("unknown dtype") {
    CHECK(contains(error_of(st_bytes("{" + t("q", "F7", "[1]", 0, 1) + "}", zeros(1))), "q: unknown dtype \"F7\""));
    CHECK(contains(error_of(st_bytes("{" + t("q", "f16", "[1]", 0, 2) + "}", zeros(2))), "unknown dtype \"f16\""));
  }

  TEST_CASE("duplicate tensor names and duplicate keys") {
    const std::string a = t("dup", "U8", "[2]", 0, 2);
    CHECK(contains(error_of(st_bytes("{" + a + "," + a + "}", zeros(2))), "f.safetensors: dup: key given twice in one JSON object"));
    CHECK(contains(error_of(st_bytes("{\"x\":{\"dtype\":\"U8\",\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
                                     zeros(1))),
                   "x.dtype: key given twice"));
    CHECK(contains(error_of(st_bytes("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", {})),
                   "__metadata__.k: key given twice"));
  }

  TEST_CASE("names in messages are made printable: one line, no control bytes") {
    const std::string m =
        error_of(st_bytes("{\"bad\\nname\":{\"dtype\":\"Q\",\"shape\":[1],\"data_offsets\":[0,1]}}", zeros(1)));
    CHECK(contains(m, "bad\\x0Aname: unknown dtype"));
    CHECK(printable("a\x01\xff") == "a\\x01\\xFF");
  }

  TEST_CASE("robustness: every truncation and many byte flips of a good file fail cleanly or parse") {
    const std::string header = "{" + t("a", "U8", "[4]", 0, 4) + "," + t("b", "F8_E8M0", "[2,2]", 4, 8) + "}";
    const auto good = st_bytes(header, zeros(8));
    REQUIRE(parse(good).ok());
    int failures = 0;
    for (std::size_t n = 0; n < good.size(); ++n) {
      failures += !parse(std::vector<unsigned char>(good.begin(), good.begin() + static_cast<long>(n))).ok();
    }
    CHECK(failures == static_cast<int>(good.size()));  // every proper prefix is refused
    for (std::size_t i = 0; i < good.size(); ++i) {
      for (const unsigned char v : {0x00, 0x22, 0x7B, 0xFF}) {
        auto bytes = good;
        bytes[i] = v;
        auto h = parse(bytes);
        if (!h) CHECK(h.error().message.find('\n') == std::string::npos);
      }
    }
  }

  // The plain reader against the full parser: where the plain one gives a
  // header, the full one must give the same (it never refuses: a refusal is
  // always the full parser's, with its message).
  std::string header_text(const Header& h) {
    std::string out = "metadata";
    for (const auto& [k, v] : h.metadata) out += " " + k + "=" + v;
    for (const TensorInfo& t : h.tensors) {
      out += fmt::format(" | {} {} [{}] {}..{}", t.name, dtype_name(t.dtype), fmt::join(t.shape, ","), t.begin, t.end);
    }
    return out;
  }

  // 1 when plain(text) took `text`; a failed CHECK when full(text) refuses it
  // or reads it otherwise (compared as shown(value)).
  template <class Plain, class Full, class Shown>
  int compare_readers(const std::string& text, Plain plain, Full full, Shown shown) {
    const auto taken = plain(text);
    if (!taken) return 0;
    const auto parsed = full(text);
    if (!parsed) {
      FAIL_CHECK("plain reader took a text the full parser refuses: " << printable(text)
                                                                      << "\n  full: " << parsed.error().message);
    } else if (shown(*taken) != shown(*parsed)) {
      FAIL_CHECK("readers differ on " << printable(text) << "\n  plain: " << shown(*taken)
                                      << "\n  full:  " << shown(*parsed));
    }
    return 1;
  }

  int plain_taken(const std::string& text) {
    return compare_readers(
        text, detail::read_plain_header,
        [](std::string_view t) { return detail::read_header_json(t, "f.safetensors"); }, header_text);
  }

  const std::vector<std::string> kPlainHeaders = {
      "{}",
      " {\n\t\"__metadata__\" : {\"format\":\"pt\", \"a\":\"\"} ,\r\n" + t("w.2", "F16", "[2, 3]", 12, 24) + "," +
          t("w.1", "U8", "[12]", 0, 12) + "}  ",
      "{" + t("s", "F32", "[]", 0, 4) + "," + t("z", "I8", "[0]", 4, 4) + "," + t("", "F4", "[4]", 4, 6) + "}",
      "{" + t("big", "U8", "[18446744073709551615]", 0, 18446744073709551615ull) + "}",
      "{\"x\":{\"shape\":[1,2],\"data_offsets\":[0,4],\"dtype\":\"BF16\"},\"__metadata__\":{}}",
  };

  // Each good text taken (and read alike), each other one left to the full parser.
  template <class Taken, class Plain>
  void check_taken_and_left(const std::vector<std::string>& goods, const std::vector<std::string>& others, Taken taken,
                            Plain plain) {
    for (const std::string& text : goods) {
      CAPTURE(text);
      CHECK(taken(text) == 1);
    }
    for (const std::string& text : others) {
      CAPTURE(printable(text));
      CHECK_FALSE(plain(text).has_value());
    }
  }

  TEST_CASE("plain header reader: takes the common shape, exactly as the full parser reads it") {
    // The others: shapes it leaves to the full parser (which refuses some and reads others).
    check_taken_and_left(
        kPlainHeaders,
        std::vector<std::string>{
            "{\"a\\u0062\":{}}", std::string("{\"x\":1}"), std::string("[]"), "{" + t("x", "U8", "[01]", 0, 1) + "}",
            "{" + t("x", "U8", "[1.0]", 0, 1) + "}", "{" + t("x", "U8", "[1e0]", 0, 1) + "}",
            "{" + t("x", "U8", "[2]", 0, 1) + "}", "{" + t("x", "U8", "[18446744073709551616]", 0, 1) + "}",
            "{" + t("x", "U9", "[1]", 0, 1) + "}", "{" + t("x", "U8", "[1]", 1, 0) + "}",
            "{" + t("x", "U8", "[1]", 0, 1) + "," + t("x", "U8", "[1]", 1, 2) + "}",
            "{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}", "{\"__metadata__\":{},\"__metadata__\":{}}",
            "{\"x\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
            "{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"k\":1}}", "{} x", "\xef\xbb\xbf{}",
            "{\"caf\xc3\xa9\":{}}"},
        plain_taken, detail::read_plain_header);
  }

  // Every one-byte change of each good text (a byte replaced by one of
  // `bytes`, one inserted, one deleted) given to taken(text), which says 1
  // when the plain reader took it (and checks it); the comparison must run on many.
  template <class Taken>
  void check_one_byte_changes(const std::vector<std::string>& goods, const std::string& bytes, Taken taken) {
    int took = 0;
    int tried = 0;
    for (const std::string& good : goods) {
      for (std::size_t i = 0; i < good.size(); ++i) {
        for (const char c : bytes) {
          std::string changed = good;
          changed[i] = c;
          took += taken(changed) + taken(good.substr(0, i) + c + good.substr(i));
          tried += 2;
        }
        took += taken(good.substr(0, i) + good.substr(i + 1));
        ++tried;
      }
    }
    MESSAGE(took, " of ", tried, " changed texts taken by the plain reader");
    CHECK(took > tried / 20);
  }

  TEST_CASE("plain header reader: every one-byte change of good headers is taken alike or left to the full parser") {
    check_one_byte_changes(kPlainHeaders, std::string("\"\\{}[],: 019-.eEaUF_") + '\0' + "\x7f\xc3", plain_taken);
  }

  // The same comparison for index files' weight maps.
  std::string entries_text(const std::vector<std::pair<std::string, std::string>>& entries) {
    std::string out;
    for (const auto& [tensor, shard] : entries) out += " " + tensor + "->" + shard;
    return out;
  }

  int plain_index_taken(const std::string& text) {
    return compare_readers(
        text, detail::read_plain_index, [](std::string_view t) { return detail::read_index_json(t, "i.json"); },
        entries_text);
  }

  const std::vector<std::string> kPlainIndexes = {
      "{\"metadata\":{\"total_size\":1082400768},\"weight_map\":{\"b.w\":\"m-2.safetensors\",\"a.w\":\"m-1."
      "safetensors\"}}",
      " {\n \"weight_map\" : { } , \"x\" : [ true , false , null , [ ] , { \"k\" : [ 0 , \"v\" ] } ] }\n",
      "{\"weight_map\":{\"\":\"\"},\"metadata\":{\"a\":{\"b\":{\"c\":[[[1]]]}}}}",
  };

  TEST_CASE("plain index reader: takes the common shape, exactly as the full parser reads it") {
    check_taken_and_left(
        kPlainIndexes,
        std::vector<std::string>{"{}", "{\"weight_map\":[]}", "{\"weight_map\":{\"a\":1}}",
                                 "{\"weight_map\":{\"a\":\"s\",\"a\":\"t\"}}", "{\"weight_map\":{},\"weight_map\":{}}",
                                 "{\"weight_map\":{},\"m\":{\"k\":1,\"k\":1}}", "{\"weight_map\":{},\"m\":1.5}",
                                 "{\"weight_map\":{},\"m\":-1}", "{\"weight_map\":{},\"m\":tru}",
                                 "{\"weight_map\":{\"a\":\"s\"}", "{\"weight_map\":{\"a\":\"s\" \"b\":\"t\"}}",
                                 "{\"weight_map\":{},\"m\":" + std::string(100, '[') + std::string(100, ']') + "}"},
        plain_index_taken, detail::read_plain_index);
  }

  TEST_CASE("plain index reader: every one-byte change of good indexes is taken alike or left to the full parser") {
    check_one_byte_changes(kPlainIndexes, std::string("\"\\{}[],: 019-.eEatnul") + '\0' + "\x7f\xc3",
                           plain_index_taken);
  }

  TEST_CASE("PageOffsetBuffer: each read's room sits at the file offset's place in a page, inside the buffer") {
    constexpr std::size_t kCapacity = 3 * PageOffsetBuffer::kPage + 40;
    PageOffsetBuffer buffer(kCapacity);
    const std::span<unsigned char> first = buffer.room_for(0, 1);
    int misplaced = 0;
    for (std::uint64_t offset : {0ull, 1ull, 16ull, 31ull, 4095ull, 4096ull, 4097ull, 12345ull, (1ull << 40) + 8}) {
      for (std::size_t bytes : {std::size_t{1}, std::size_t{4096}, kCapacity}) {
        const std::span<unsigned char> room = buffer.room_for(offset, bytes);
        const auto address = reinterpret_cast<std::uintptr_t>(room.data());
        if (address % PageOffsetBuffer::kPage != offset % PageOffsetBuffer::kPage) {
          ++misplaced;
          MESSAGE("offset ", offset, ": room at page offset ", address % PageOffsetBuffer::kPage);
        }
        CHECK(room.size() == bytes);
        room.front() = 1;  // inside the storage: ASan sees any write past it
        room.back() = 1;
        CHECK(room.data() >= first.data() - offset % PageOffsetBuffer::kPage);
      }
    }
    CHECK(misplaced == 0);
  }
}

}  // namespace bitproof::checkpoint
