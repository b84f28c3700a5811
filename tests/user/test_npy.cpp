// The .npy header reader (src/user/npy.hpp) and output tables (src/user/table.hpp).
// Every refusal is paired with the nearest accepted input (a negative control:
// the check must not refuse everything), and truncation is tried at every byte.
#include <doctest/doctest.h>

#include <string>

#include "user/npy.hpp"
#include "user/table.hpp"

namespace bitproof {
namespace {

// A .npy file with `dict` as its header (padded to 64 bytes with spaces and a
// newline, as numpy writes it) and `data` after it; version `major`.0.
std::string npy_file(const std::string& dict, const std::string& data = {}, int major = 1) {
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  const std::size_t unpadded = 6 + 2 + len_bytes + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t b = 0; b < len_bytes; ++b) out += static_cast<char>((header.size() >> (8 * b)) & 0xFF);
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

// `n` little-endian words of `bytes` bytes: word k is k * 3 (mod 2^16) unless given.
std::string words(std::uint64_t n, int bytes, std::uint64_t value_at_1 = 3) {
  std::string out;
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::uint64_t v = k == 1 ? value_at_1 : (k * 3) & 0xFFFF;
    for (int b = 0; b < bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
  }
  return out;
}

std::string error_of(const std::string& file) {
  auto h = npy::parse_file(file);
  return h ? std::string() : h.error().message;
}

}  // namespace

TEST_SUITE("npy") {
  TEST_CASE("a header as numpy writes it is read: version, dtype, order, shape, data offset") {
    for (int major : {1, 2, 3}) {
      const std::string file = npy_file(dict("<u2", "(208,)"), words(208, 2), major);
      auto h = npy::parse_file(file);
      REQUIRE_MESSAGE(h.ok(), (h.ok() ? "" : h.error().message));
      CHECK(h->major == major);
      CHECK(h->descr == "<u2");
      CHECK(h->kind == npy::Kind::kUnsigned);
      CHECK(h->item_bytes == 2);
      CHECK_FALSE(h->fortran_order);
      CHECK(h->shape == std::vector<std::uint64_t>{208});
      CHECK(h->data_offset % 64 == 0);
      CHECK(h->data_offset + 416 == file.size());
    }
  }

  TEST_CASE("make_header writes what parse_header reads back, 64-byte aligned") {
    for (const auto& shape : {std::vector<std::uint64_t>{}, {0}, {7}, {16384, 2}, {3, 4, 5}}) {
      for (const char* descr : {"|u1", "<u2", "<u4"}) {
        const std::string header = npy::make_header(descr, shape);
        CHECK(header.size() % 64 == 0);
        auto h = npy::parse_header(header);
        REQUIRE_MESSAGE(h.ok(), (h.ok() ? "" : h.error().message));
        CHECK(h->descr == descr);
        CHECK(h->shape == shape);
        CHECK(h->data_offset == header.size());
      }
    }
  }

  TEST_CASE("key order, quotes, spaces and the trailing comma are free; the keys and values are not") {
    for (const std::string& d : {std::string("{'shape': (4,), 'fortran_order': False, 'descr': '<u2'}"),
                                 std::string("{\"descr\": \"<u2\", \"fortran_order\": False, \"shape\": (4, )}"),
                                 std::string("{  'descr'  :  '<u2' ,'fortran_order':False,'shape':(4,),}")}) {
      CHECK_MESSAGE(error_of(npy_file(d, words(4, 2))).empty(), d);
    }
  }

  TEST_CASE("a wrong magic is refused at each of its six bytes") {
    const std::string good = npy_file(dict("<u2", "(4,)"), words(4, 2));
    REQUIRE(error_of(good).empty());
    for (std::size_t i = 0; i < 6; ++i) {
      for (int delta : {1, 0x20, 0x80}) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ delta);
        CHECK_MESSAGE(error_of(bad).find("not a .npy file") != std::string::npos, i, " ", delta);
      }
    }
  }

  TEST_CASE("only versions 1.0, 2.0 and 3.0 are read") {
    int accepted = 0;
    for (int major = 0; major < 256; ++major) {
      for (int minor : {0, 1, 255}) {
        std::string file = npy_file(dict("<u2", "(4,)"), words(4, 2), major >= 1 && major <= 3 ? major : 2);
        file[6] = static_cast<char>(major);
        file[7] = static_cast<char>(minor);
        const std::string e = error_of(file);
        const bool ok = (major >= 1 && major <= 3) && minor == 0;
        CHECK_MESSAGE(e.empty() == ok, major, ".", minor, ": ", e);
        accepted += e.empty() ? 1 : 0;
        if (!ok) CHECK(e.find("version") != std::string::npos);
      }
    }
    CHECK(accepted == 3);
  }

  TEST_CASE("every bad header field is refused with what is wrong") {
    struct Row {
      std::string dict;
      const char* says;
    };
    const Row rows[] = {
        {"{'fortran_order': False, 'shape': (4,)}", "key 'descr' missing"},
        {"{'descr': '<u2', 'shape': (4,)}", "key 'fortran_order' missing"},
        {"{'descr': '<u2', 'fortran_order': False}", "key 'shape' missing"},
        {"{'descr': '<u2', 'fortran_order': False, 'shape': (4,), 'extra': 1}", "unknown key 'extra'"},
        {"{'descr': '<u2', 'descr': '<u2', 'fortran_order': False, 'shape': (4,)}", "key 'descr' given twice"},
        {dict(">u2", "(4,)"), "big-endian"},
        {dict("=u2", "(4,)"), "byte order must be '<'"},
        {dict("|u2", "(4,)"), "'|' (no byte order) for a multi-byte item"},
        {dict("<u3", "(4,)"), "item size other than"},
        {dict("<c8", "(4,)"), "not an integer or float dtype"},
        {dict("<b1", "(4,)"), "not an integer or float dtype"},
        {dict("<U2", "(4,)"), "not an integer or float dtype"},
        {dict("<f1", "(4,)"), "not a float dtype numpy has"},
        {dict("u2", "(4,)"), "not a dtype bitproof reads"},
        {dict("<u16", "(4,)"), "not a dtype bitproof reads"},
        {"{'descr': [('a', '<u2')], 'fortran_order': False, 'shape': (4,)}", "structured dtype"},
        {"{'descr': 2, 'fortran_order': False, 'shape': (4,)}", "expected a quoted string"},
        {"{'descr': '<u\\x32', 'fortran_order': False, 'shape': (4,)}", "without escapes"},
        {"{'descr': '<u2, 'fortran_order': False, 'shape': (4,)}", "not a dtype bitproof reads"},
        {"{'descr' '<u2', 'fortran_order': False, 'shape': (4,)}", "expected ':'"},
        {dict("<u2", "(4,)", "true"), "expected True or False"},
        {dict("<u2", "(4,)", "1"), "expected True or False"},
        {dict("<u2", "(4,)", "None"), "expected True or False"},
        {dict("<u2", "(4)"), "is an integer, not a tuple"},
        {dict("<u2", "[4]"), "shape is a tuple"},
        {dict("<u2", "(-4,)"), "a non-negative integer"},
        {dict("<u2", "(4.0,)"), "expected ',' or ')'"},
        {dict("<u2", "(04,)"), "leading zero"},
        {dict("<u2", "(4,,)"), "a non-negative integer"},
        {dict("<u2", "(18446744073709551616,)"), "past 2^64"},
        {dict("<u2", "(4294967296, 4294967296)"), "more elements than 64 bits count"},
        {"'descr': '<u2', 'fortran_order': False, 'shape': (4,)}", "expected '{'"},
        {"{'descr': '<u2', 'fortran_order': False, 'shape': (4,)", "expected ',' or '}'"},
        {"{'descr': '<u2' 'fortran_order': False, 'shape': (4,)}", "expected ',' or '}'"},
        {"{'descr': '<u2', 'fortran_order': False, 'shape': (4,)} x", "one '\\n' at the end"},
        {"{'descr': '<u2',\t'fortran_order': False, 'shape': (4,)}", "not printable ASCII"},
        {"{'descr': '<u2', 'fortran_order': False, 'shape': (4,)}\xc3\xa9", "not printable ASCII"},
    };
    for (const Row& row : rows) {
      const std::string e = error_of(npy_file(row.dict, words(4, 2)));
      CHECK_MESSAGE(e.find(row.says) != std::string::npos, row.dict, " -> \"", e, "\" (wanted: ", row.says, ")");
    }
  }

  TEST_CASE("a header must end in one newline, with nothing but spaces before it") {
    std::string file = npy_file(dict("<u2", "(4,)"));
    auto h = npy::parse_header(file);
    REQUIRE(h.ok());
    file[h->data_offset - 1] = ' ';  // the newline, as a space
    CHECK(error_of(file + words(4, 2)).find("one '\\n' at the end") != std::string::npos);
  }

  TEST_CASE("a header length past the file or past the limit is refused") {
    std::string file = npy_file(dict("<u2", "(4,)"), words(4, 2));
    std::string longer = file;
    longer[8] = static_cast<char>(0xFF);
    longer[9] = static_cast<char>(0x7F);
    CHECK(error_of(longer).find("truncated") != std::string::npos);
    std::string huge = npy_file(dict("<u2", "(4,)"), words(4, 2), 2);
    huge[11] = 0x01;  // 2^24 + ...
    CHECK(error_of(huge).find("bitproof reads at most") != std::string::npos);
  }

  TEST_CASE("truncated at every byte offset, and one byte too many: refused") {
    for (int major : {1, 2, 3}) {
      const std::string file = npy_file(dict("<u2", "(8,)"), words(8, 2), major);
      REQUIRE(error_of(file).empty());
      for (std::size_t n = 0; n < file.size(); ++n) {
        const std::string e = error_of(file.substr(0, n));
        CHECK_MESSAGE(!e.empty(), "a prefix of ", n, " bytes was accepted");
      }
      CHECK(error_of(file + "x").find("trailing bytes") != std::string::npos);
      CHECK(error_of(file + std::string(2, '\0')).find("trailing bytes") != std::string::npos);
      CHECK(error_of(file.substr(0, file.size() - 1)).find("(truncated)") != std::string::npos);
    }
  }
}

TEST_SUITE("npy") {
  using user::decode_table;
  using user::TableFormat;

  TEST_CASE("a table of the output's bits is read in case order") {
    auto t = decode_table(npy_file(dict("<u2", "(6,)"), words(6, 2)), TableFormat::kNpy, FormatId::fp16, 6);
    REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
    CHECK(t->words == std::vector<std::uint32_t>{0, 3, 6, 9, 12, 15});
    CHECK(t->layout == "npy <u2 (6,)");
    CHECK(t->sha256.size() == 64);
  }

  TEST_CASE("a table of another length or shape is refused, and the right one is not") {
    const auto error = [](const std::string& shape, std::uint64_t n) {
      auto t = decode_table(npy_file(dict("<u2", shape), words(n, 2)), TableFormat::kNpy, FormatId::fp16, 6);
      return t ? std::string() : t.error().message;
    };
    CHECK(error("(6,)", 6).empty());
    CHECK(error("(5,)", 5).find("the spec's domain has 6 cases") != std::string::npos);
    CHECK(error("(7,)", 7).find("the spec's domain has 6 cases") != std::string::npos);
    CHECK(error("(6, 1)", 6).find("expected (6,)") != std::string::npos);
    CHECK(error("(2, 3)", 6).find("expected (6,)") != std::string::npos);
    CHECK(error("()", 1).find("expected (6,)") != std::string::npos);
    auto fortran =
        decode_table(npy_file(dict("<u2", "(6,)", "True"), words(6, 2)), TableFormat::kNpy, FormatId::fp16, 6);
    REQUIRE_FALSE(fortran.ok());
    CHECK(fortran.error().message.find("fortran_order True") != std::string::npos);
  }

  TEST_CASE("dtypes: unsigned wide enough, signed of the storage width, the output's own float") {
    struct Row {
      const char* descr;
      int bytes;
      FormatId output;
      bool accepted;
    };
    const Row rows[] = {
        {"<u2", 2, FormatId::fp16, true},  {"<u4", 4, FormatId::fp16, true},  {"<u8", 8, FormatId::fp16, true},
        {"|u1", 1, FormatId::fp16, false}, {"<u1", 1, FormatId::e4m3, true},  {"|u1", 1, FormatId::e2m1, true},
        {"<i2", 2, FormatId::fp16, true},  {"<i2", 2, FormatId::bf16, true},  {"<i4", 4, FormatId::fp16, false},
        {"|i1", 1, FormatId::e4m3, true},  {"<i2", 2, FormatId::e4m3, false}, {"<i4", 4, FormatId::fp32, true},
        {"<f2", 2, FormatId::fp16, true},  {"<f2", 2, FormatId::bf16, false}, {"<f4", 4, FormatId::fp16, false},
        {"<f4", 4, FormatId::fp32, true},  {"<f8", 8, FormatId::fp32, false}, {"<u2", 2, FormatId::fp32, false},
    };
    for (const Row& r : rows) {
      // Values 0..15 (in every format's width), so only the dtype decides.
      std::string data;
      for (int k = 0; k < 4; ++k) {
        for (int b = 0; b < r.bytes; ++b) data += static_cast<char>(b == 0 ? k : 0);
      }
      auto t = decode_table(npy_file(dict(r.descr, "(4,)"), data), TableFormat::kNpy, r.output, 4);
      CHECK_MESSAGE(t.ok() == r.accepted, r.descr, " for ", spec_of(r.output).name, ": ",
                    (t.ok() ? "accepted" : t.error().message));
    }
  }

  TEST_CASE("a word with bits above the output's width names its case and value") {
    auto t = decode_table(npy_file(dict("<u4", "(4,)"), words(4, 4, 0x10000)), TableFormat::kNpy, FormatId::fp16, 4);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message == "case 1: value 0x10000 has bits set above fp16's 16 bits");
    auto fine = decode_table(npy_file(dict("<u4", "(4,)"), words(4, 4, 0xFFFF)), TableFormat::kNpy, FormatId::fp16, 4);
    CHECK(fine.ok());
    auto nibble = decode_table(npy_file(dict("|u1", "(4,)"), words(4, 1, 0x10)), TableFormat::kNpy, FormatId::e2m1, 4);
    REQUIRE_FALSE(nibble.ok());
    CHECK(nibble.error().message.find("case 1: value 0x10 has bits set above e2m1's 4 bits") != std::string::npos);
    auto signed_nibble =
        decode_table(npy_file(dict("|i1", "(4,)"), words(4, 1, 0xFF)), TableFormat::kNpy, FormatId::e2m1, 4);
    CHECK_FALSE(signed_nibble.ok());  // -1 is 0xFF: not an E2M1 code
    auto signed_half =
        decode_table(npy_file(dict("<i2", "(4,)"), words(4, 2, 0xFFFF)), TableFormat::kNpy, FormatId::fp16, 4);
    REQUIRE(signed_half.ok());
    CHECK(signed_half->words[1] == 0xFFFF);  // -1 as int16 is the half 0xFFFF (a NaN)
  }

  TEST_CASE("raw tables: whole words of the format's width, as many as cases") {
    auto ok = decode_table(words(6, 2), TableFormat::kRaw16, FormatId::fp16, 6);
    REQUIRE(ok.ok());
    CHECK(ok->words[5] == 15);
    CHECK(ok->layout == "raw u16");
    for (std::size_t n : {0, 1, 11, 13, 14, 24}) {
      auto bad = decode_table(std::string(n, '\0'), TableFormat::kRaw16, FormatId::fp16, 6);
      CHECK_MESSAGE(!bad.ok(), n);
    }
    CHECK(decode_table(words(6, 2), TableFormat::kRaw16, FormatId::fp16, 6).ok());
    CHECK_FALSE(decode_table(words(6, 1), TableFormat::kRaw8, FormatId::fp16, 6).ok());  // narrower than fp16
    auto wide = decode_table(words(6, 4, 0x10000), TableFormat::kRaw32, FormatId::fp16, 6);
    REQUIRE_FALSE(wide.ok());
    CHECK(wide.error().message == "case 1: value 0x10000 has bits set above fp16's 16 bits");
    CHECK(decode_table(words(6, 4), TableFormat::kRaw32, FormatId::fp16, 6).ok());
  }

  TEST_CASE("the table formats by name, and the default from the path and output") {
    CHECK(user::table_format_by_name("u16") == TableFormat::kRaw16);
    CHECK_FALSE(user::table_format_by_name("u64").has_value());
    CHECK(user::default_table_format("out.npy", FormatId::fp16) == TableFormat::kNpy);
    CHECK(user::default_table_format("out.bin", FormatId::fp16) == TableFormat::kRaw16);
    CHECK(user::default_table_format("out.bin", FormatId::e2m1) == TableFormat::kRaw8);
    CHECK(user::default_table_format("out.u32", FormatId::fp32) == TableFormat::kRaw32);
  }
}

}  // namespace bitproof
