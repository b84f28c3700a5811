// The audit: fast histograms (8-, 16- and 32-bit codes) equal a plain count;
// audits of generated checkpoints (every layout) equal what the generator
// wrote and an independent reading of the files; sharded and single-file
// checkpoints agree; specials are counted in each format's terms; the
// summary speaks the format's words and the turbomind view's exponents are
// the recipe's own, flagged where they leave FP16's range.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "arith/soft_arith.hpp"
#include "audit/audit.hpp"
#include "audit/scale_transform.hpp"
#include "audit/synth.hpp"
#include "st_builder.hpp"

namespace bitproof::audit {
namespace {

using testing::TempDir;

constexpr detail::HistogramIsa kIsas[] = {detail::HistogramIsa::kPortable, detail::HistogramIsa::kAvx2,
                                           detail::HistogramIsa::kAvx512};

Histogram plain_count(const std::vector<unsigned char>& bytes, std::size_t begin, std::size_t end) {
  Histogram h{};
  for (std::size_t i = begin; i < end; ++i) ++h[bytes[i]];
  return h;
}

// Little-endian codes of `width` bytes, counted in a std::map.
CodeCounts plain_codes(const std::vector<unsigned char>& bytes, std::size_t begin, std::size_t end, unsigned width) {
  std::map<std::uint32_t, std::uint64_t> m;
  for (std::size_t i = begin; i + width <= end; i += width) {
    std::uint32_t c = 0;
    for (unsigned b = 0; b < width; ++b) c |= std::uint32_t{bytes[i + b]} << (8 * b);
    ++m[c];
  }
  return {m.begin(), m.end()};
}

// Reads every scale tensor of a file without the audit's reader: std::ifstream,
// plain nlohmann parsing, code counting in a loop. Scale tensors here: F8_E8M0,
// F8_E4M3, F16 and F32 named *scale* (the widths written out by hand).
std::map<std::string, CodeCounts> independent_scales(const std::filesystem::path& file) {
  const std::map<std::string, unsigned> widths = {{"F8_E8M0", 1}, {"F8_E4M3", 1}, {"F16", 2}, {"F32", 4}};
  const std::vector<unsigned char> bytes = testing::read_bytes(file);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[static_cast<std::size_t>(i)];
  const auto header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  std::map<std::string, CodeCounts> out;
  for (const auto& [name, v] : header.items()) {
    if (name == "__metadata__" || !widths.contains(v["dtype"])) continue;
    if (v["dtype"] != "F8_E8M0" && name.substr(name.rfind('.') + 1).find("scale") == std::string::npos) continue;
    const std::size_t b = 8 + n + v["data_offsets"][0].get<std::size_t>();
    const std::size_t e = 8 + n + v["data_offsets"][1].get<std::size_t>();
    out[name] = plain_codes(bytes, b, e, widths.at(v["dtype"]));
  }
  return out;
}

SynthOptions small(const std::string& dir) {
  SynthOptions o;
  o.out_dir = dir;
  o.layers = 3;
  o.experts = 2;
  o.rows = 5;
  o.cols = 96;
  o.seed = 42;
  return o;
}

// A small checkpoint of `layout` under `dir`, its scales in the layout's own range, `nan_bytes` NaN codes.
SynthOptions in_layout(const TempDir& dir, SynthLayout layout, std::uint64_t nan_bytes) {
  SynthOptions o = small(dir / std::string(synth_layout(layout).name));
  o.layout = layout;
  o.rows = 16;
  o.cols = 256;
  o.scale_lo = synth_layout(layout).scale_lo;
  o.scale_hi = synth_layout(layout).scale_hi;
  o.nan_bytes = nan_bytes;
  return o;
}

AuditResult audit_of(const std::string& path, unsigned threads = 2, Selection selection = {},
                     std::vector<const ScaleView*> views = {}) {
  auto ck = checkpoint::open_checkpoint(path);
  REQUIRE_MESSAGE(ck.ok(), (ck.ok() ? "" : ck.error().message));
  auto r = run_audit(*ck, {selection, threads, views});
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

std::map<std::string, CodeCounts> histograms_of(const AuditResult& r) {
  std::map<std::string, CodeCounts> out;
  for (const TensorAudit& t : r.tensors) out[t.name] = t.histogram.pairs();
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// A one-file checkpoint of tensors given as (name, dtype, codes of that dtype's width).
struct Coded {
  std::string name;
  std::string dtype;
  unsigned width;
  std::vector<std::uint32_t> codes;
};
void write_coded(const std::filesystem::path& file, const std::vector<Coded>& tensors) {
  std::string header = "{";
  std::vector<unsigned char> data;
  for (const Coded& t : tensors) {
    const std::size_t begin = data.size();
    for (std::uint32_t c : t.codes) {
      for (unsigned b = 0; b < t.width; ++b) data.push_back(static_cast<unsigned char>(c >> (8 * b)));
    }
    header += fmt::format(R"({}"{}":{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})", header.size() > 1 ? "," : "",
                          t.name, t.dtype, t.codes.size(), begin, data.size());
  }
  testing::write_bytes(file, testing::st_bytes(header + "}", data));
}

}  // namespace

TEST_SUITE("audit") {
  TEST_CASE("the fast histogram equals a plain count at every length and alignment") {
    std::vector<unsigned char> bytes(5000);
    std::uint64_t x = 88172645463325252ull;
    for (auto& b : bytes) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b = static_cast<unsigned char>(x % 7 == 0 ? 0xFF : x);
    }
    for (std::size_t begin : {0, 1, 3, 7, 8, 13}) {
      for (std::size_t len : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4000}) {
        Histogram fast{};
        add_histogram(std::span(bytes).subspan(begin, len), fast);
        CHECK(fast == plain_count(bytes, begin, begin + len));
      }
    }
    // Runs of one value (the common case for scale bytes).
    std::vector<unsigned char> same(100003, 121);
    Histogram h{};
    add_histogram(same, h);
    CHECK(h[121] == 100003);
    // Negative control: the comparison notices a single changed byte.
    Histogram before{};
    add_histogram(bytes, before);
    bytes[4321] ^= 1;
    CHECK(before != plain_count(bytes, 0, bytes.size()));
  }

  TEST_CASE("narrow spans (the vector path), windows at the top of the byte range, long runs: exact counts") {
    MESSAGE("narrow-span paths: AVX2 " << detail::isa_available(detail::HistogramIsa::kAvx2) << ", AVX-512BW "
                                        << detail::isa_available(detail::HistogramIsa::kAvx512));
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    std::vector<unsigned char> bytes(140000);
    int compared = 0;
    for (unsigned span : {1u, 2u, 8u, 9u, 13u, 16u, 17u, 31u, 32u, 33u, 200u}) {
      for (unsigned lo : {0u, 114u, 224u, 240u, 250u, 256u - span}) {
        if (lo + span > 256) continue;
        for (auto& b : bytes) {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          b = static_cast<unsigned char>(lo + x % span);
        }
        for (std::size_t len : {0, 31, 32, 33, 63, 64, 65, 8159, 8160, 8161, 16319, 16320, 16321, 131072 + 77}) {
          const Histogram plain = plain_count(bytes, 0, len);
          for (const auto isa : kIsas) {
            if (!detail::isa_available(isa)) continue;
            Histogram counted{};
            detail::add_histogram_with(std::span(bytes).first(len), counted, isa);
            CHECK_MESSAGE(counted == plain, "isa " << static_cast<int>(isa) << " span " << span << " lo " << lo);
          }
          Histogram best{};
          add_histogram(std::span(bytes).first(len), best);
          CHECK(best == plain);
          ++compared;
        }
      }
    }
    CHECK(compared == 686);  // 49 (span, lo) pairs x 14 lengths
  }

  TEST_CASE("blocks counted in the previous block's windows: a stray byte, a shifted or widened span, exact counts") {
    // Four blocks of 2^17 bytes: 114..126, the same with one stray byte (0x00
    // in the middle, then 0xFF in the tail), a span shifted up by 40, a wide one.
    constexpr std::size_t kBlock = std::size_t{1} << 17;
    std::vector<unsigned char> bytes(4 * kBlock + 45);
    std::uint64_t x = 0x243F6A8885A308D3ull;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const std::size_t block = i / kBlock;
      const unsigned span = block == 3 ? 200 : 13;
      const unsigned lo = block == 2 ? 154 : 114;
      bytes[i] = static_cast<unsigned char>(lo + x % span);
    }
    for (std::size_t stray : {kBlock + 5000, kBlock + kBlock - 3, 4 * kBlock + 40}) {
      std::vector<unsigned char> with = bytes;
      with[stray] = stray % 2 ? 0x00 : 0xFF;
      for (std::size_t len : {2 * kBlock, 4 * kBlock + 45}) {
        for (const auto isa : kIsas) {
          if (!detail::isa_available(isa)) continue;
          Histogram counted{};
          detail::add_histogram_with(std::span(with).first(len), counted, isa);
          CHECK_MESSAGE(counted == plain_count(with, 0, len),
                        "isa " << static_cast<int>(isa) << ", stray byte at " << stray << ", length " << len);
        }
      }
    }
  }

  TEST_CASE("16-bit codes: every path equals a plain count; narrow, wide, shifted blocks; a stray code") {
    MESSAGE("16-bit paths: AVX2 " << detail::isa_available(detail::HistogramIsa::kAvx2) << ", AVX-512BW "
                                   << detail::isa_available(detail::HistogramIsa::kAvx512));
    // Blocks of 2^16 bytes (2^15 codes): narrow spans (the vector compares), a
    // span shifted by 5000, a wide one (the scalar loop), windows at 0xFFFF.
    constexpr std::size_t kCodes = std::size_t{1} << 15;
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    int compared = 0;
    for (unsigned span : {1u, 13u, 16u, 17u, 31u, 32u, 33u, 3000u, 65536u}) {
      for (unsigned lo : {0u, 0x1C00u, 65536u - span}) {
        std::vector<unsigned char> bytes(2 * (4 * kCodes + 45));
        for (std::size_t i = 0; i + 2 <= bytes.size(); i += 2) {
          x ^= x << 13, x ^= x >> 7, x ^= x << 17;
          const std::size_t block = i / (2 * kCodes);
          const unsigned base = block == 2 && lo + span + 5000 <= 65536 ? lo + 5000 : lo;
          const unsigned code = base + static_cast<unsigned>(x % span);
          bytes[i] = static_cast<unsigned char>(code);
          bytes[i + 1] = static_cast<unsigned char>(code >> 8);
        }
        bytes[2 * (kCodes + 77)] ^= 0x40;  // a stray code in the second block
        for (std::size_t len : {std::size_t{0}, std::size_t{2}, std::size_t{62}, std::size_t{64}, std::size_t{66},
                                2 * kCodes, bytes.size()}) {
          const CodeCounts plain = plain_codes(bytes, 0, len, 2);
          for (const auto isa : kIsas) {
            if (!detail::isa_available(isa)) continue;
            CodeCounts counted;
            detail::count_codes16_with(std::span(bytes).first(len), counted, isa);
            CHECK_MESSAGE(counted == plain, "isa " << static_cast<int>(isa) << " span " << span << " lo " << lo
                                                   << " length " << len);
          }
          CodeCounts best;
          count_codes(std::span(bytes).first(len), 16, best);
          CHECK(best == plain);
          ++compared;
        }
      }
    }
    CHECK(compared == 9 * 3 * 7);
    // Negative control: the comparison notices one changed code.
    std::vector<unsigned char> bytes(4000, 0x3C);
    CodeCounts before;
    count_codes(bytes, 16, before);
    bytes[2001] = 0x3D;
    CHECK(before != plain_codes(bytes, 0, bytes.size(), 2));
  }

  TEST_CASE("32-bit codes and merged counts: equal to a plain count") {
    std::vector<unsigned char> bytes(4 * 1001);
    std::uint64_t x = 7;
    for (std::size_t i = 0; i < bytes.size(); i += 4) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const std::uint32_t code = i % 12 == 0 ? 0x3A000000u : static_cast<std::uint32_t>(x % 5) << 30;
      for (unsigned b = 0; b < 4; ++b) bytes[i + b] = static_cast<unsigned char>(code >> (8 * b));
    }
    CodeCounts counted;
    count_codes(std::span(bytes).first(2000), 32, counted);
    count_codes(std::span(bytes).subspan(2000), 32, counted);  // merged into the first count
    CHECK(counted == plain_codes(bytes, 0, bytes.size(), 4));
    CodeCounts eight;
    count_codes(bytes, 8, eight);
    CHECK(eight == plain_codes(bytes, 0, bytes.size(), 1));
    CHECK(eight != counted);  // negative control: the widths are read differently
  }

  TEST_CASE("layer numbers come from layers.L. in the name") {
    CHECK(layer_of("layers.12.ffn.experts.3.w1.scale") == 12u);
    CHECK(layer_of("model.layers.0.mlp.down_proj.weight_scale") == 0u);
    CHECK(layer_of("mtp.0.ffn.experts.0.w1.scale") == std::nullopt);
    CHECK(layer_of("sublayers.3.x") == std::nullopt);
    CHECK(layer_of("layers.x.3.y") == std::nullopt);
    CHECK(layer_of("layers.7") == std::nullopt);
    CHECK(layer_of("a.layers.b.layers.4.c") == 4u);
  }

  TEST_CASE("the adjusted and folded exponents are the ones the recipes use, for every byte") {
    // Folded multiplies raw by the half with exponent field folded_exponent(s): checked
    // extensionally over every element code and every scale byte.
    int compared = 0;
    for (std::uint32_t s = 0; s < 256; ++s) {
      CHECK(adjusted_exponent(s) == turbomind::adjust_scale(s));
      for (std::uint32_t x = 0; x < 16; ++x) {
        const auto via_audit =
            SoftArith::hmul(turbomind::raw_bits(x), turbomind::half_from_exponent_field(folded_exponent(s)));
        CHECK(turbomind::Folded::eval<SoftArith>(x, s) == via_audit);
        ++compared;
      }
    }
    CHECK(compared == 4096);
    // Negative control: the fold+13 control recipe differs from the audit's folded exponent.
    CHECK(turbomind::FoldOffBy<13>::eval<SoftArith>(0b0010, 120) !=
          SoftArith::hmul(turbomind::raw_bits(0b0010), turbomind::half_from_exponent_field(folded_exponent(120))));
  }

  TEST_CASE("audit histograms equal the generator's record and an independent reading of the file") {
    TempDir dir;
    SynthOptions o = small(dir / "ck");
    o.nan_bytes = 4;
    auto written = synthesize_checkpoint(o);
    REQUIRE(written.ok());
    const AuditResult r = audit_of(o.out_dir);
    REQUIRE(r.tensors.size() == 3 * 2 * 3);
    const auto audited = histograms_of(r);
    const std::map<std::string, CodeCounts> recorded(written->scales.begin(), written->scales.end());
    CHECK(audited == recorded);
    CHECK(audited == independent_scales(std::filesystem::path(o.out_dir) / "model.safetensors"));
    std::uint64_t nan = 0;
    for (const TensorAudit& t : r.tensors) nan += stats_of(t.format, t.histogram).nan;
    CHECK(nan == 4);
    for (const TensorAudit& t : r.tensors) {
      CHECK(t.bytes == 5 * 96 / 32);
      CHECK(t.dtype == checkpoint::DType::kF8E8M0);
      CHECK(t.format == FormatId::ue8m0);
      REQUIRE(t.layer.has_value());
    }
    // Negative control: one byte changed in the file makes the audit differ from the record.
    const auto file = std::filesystem::path(o.out_dir) / "model.safetensors";
    auto bytes = testing::read_bytes(file);
    bytes[bytes.size() - 2 * 96 - 3] ^= 0x01;  // inside the last expert's w3 scale, before norm.weight
    testing::write_bytes(file, bytes);
    CHECK(histograms_of(audit_of(o.out_dir)) != recorded);
  }

  TEST_CASE("the nvfp4 and gptq layouts: every scale tensor audited in its format, equal to the record") {
    TempDir dir;
    for (const SynthLayout layout : {SynthLayout::kNvfp4, SynthLayout::kGptq}) {
      const SynthOptions o = in_layout(dir, layout, 3);
      auto written = synthesize_checkpoint(o);
      REQUIRE_MESSAGE(written.ok(), (written.ok() ? "" : written.error().message));
      Selection selection;
      if (layout == SynthLayout::kNvfp4) selection = *make_selection("", "", "ue4m3");
      const AuditResult r = audit_of(o.out_dir, 2, selection);
      const auto audited = histograms_of(r);
      CHECK(audited == std::map<std::string, CodeCounts>(written->scales.begin(), written->scales.end()));
      CHECK(audited == independent_scales(std::filesystem::path(o.out_dir) / "model.safetensors"));
      std::map<FormatId, std::size_t> formats;
      std::uint64_t nan = 0;
      for (const TensorAudit& t : r.tensors) {
        ++formats[t.format];
        nan += stats_of(t.format, t.histogram).nan;
      }
      if (layout == SynthLayout::kNvfp4) {
        CHECK(formats == std::map<FormatId, std::size_t>{{FormatId::ue4m3, 18}, {FormatId::fp32, 18}});
        CHECK(r.tensors[1].name == "layers.0.ffn.experts.0.w1.weight_scale_2");
        CHECK(r.tensors[1].histogram == CodeCounts{{0x3A000000, 1}});
      } else {
        CHECK(formats == std::map<FormatId, std::size_t>{{FormatId::fp16, 18}});
        CHECK(r.tensors[0].shape == std::vector<std::uint64_t>{2, 16});  // [cols / 128, rows]
      }
      CHECK(nan == 3);  // E4M3 NaN 0x7F and FP16 NaN 0x7E00 counted as NaN
    }
  }

  TEST_CASE("one thread and two threads, one file and three shards: the same histograms") {
    TempDir dir;
    SynthOptions one = small(dir / "one");
    SynthOptions three = small(dir / "three");
    three.shards = 3;
    REQUIRE(synthesize_checkpoint(one).ok());
    auto sharded = synthesize_checkpoint(three);
    REQUIRE(sharded.ok());
    CHECK(sharded->files.size() == 4);
    CHECK(std::filesystem::exists(dir.path() / "three" / "model.safetensors.index.json"));
    const auto a = histograms_of(audit_of(one.out_dir, 1));
    CHECK(a == histograms_of(audit_of(one.out_dir, 2)));
    CHECK(a == histograms_of(audit_of(three.out_dir, 2)));
    CHECK(a == histograms_of(audit_of(dir / "three/model.safetensors.index.json", 2)));
    // The same seed writes the same bytes; another seed does not.
    SynthOptions again = small(dir / "again");
    REQUIRE(synthesize_checkpoint(again).ok());
    CHECK(testing::read_bytes(dir.path() / "one/model.safetensors") ==
          testing::read_bytes(dir.path() / "again/model.safetensors"));
    SynthOptions other = small(dir / "other");
    other.seed = 43;
    REQUIRE(synthesize_checkpoint(other).ok());
    CHECK(a != histograms_of(audit_of(other.out_dir)));
  }

  TEST_CASE("the summary line speaks the format's words; NaN visible; views only when asked for") {
    TempDir dir;
    SynthOptions o = small(dir / "ck");
    REQUIRE(synthesize_checkpoint(o).ok());
    CHECK(joined(summary_lines(audit_of(o.out_dir))) ==
          "18 ue8m0 scale tensors (F8_E8M0), 270 codes: 114–126 (0.0001220703125 … 0.5); 0 NaN (0xFF)\n");
    SynthOptions n = small(dir / "nan");
    n.nan_bytes = 3;
    n.scale_lo = 100;
    n.scale_hi = 140;
    REQUIRE(synthesize_checkpoint(n).ok());
    const AuditResult r = audit_of(n.out_dir, 2, {}, {scale_view_by_name("turbomind")});
    // The flags counted by hand from the histograms: adjust_scale clamps bytes below 112 and above
    // 142 (byte + 15 - 127 outside 0..30); the folded field min(byte - 112, 30) + 14 passes 30 from 129.
    std::uint64_t clamped = 0, past = 0;
    for (const TensorAudit& t : r.tensors) {
      for (const auto& [code, count] : t.histogram) {
        if (code == 0xFF) continue;
        clamped += (code < 112 || code > 142) ? count : 0;
        past += code >= 129 ? count : 0;
      }
    }
    REQUIRE(clamped > 0);
    REQUIRE(past > 0);
    CHECK(joined(summary_lines(r)) ==
          "18 ue8m0 scale tensors (F8_E8M0), 270 codes: 100–140 (7.450580596923828e-09 … 8192); 3 NaN (0xFF) in 3 "
          "tensors\n"
          "turbomind view (ue8m0): adjusted half exponents 0–28, folded exponents 14–42; FLAGGED: " +
              std::to_string(clamped) +
              " codes clamped by adjust_scale (byte < 112: the FP16 scale becomes 0; > 142: held at 2^15) (bytes 100, "
              "101, 102, 103, …); FLAGGED: " +
              std::to_string(past) +
              " codes folded exponent past FP16's 30 (31: Inf/NaN, 32+: into the sign bit) (bytes 129, 130, 131, 132, "
              "…)\n");
    const Json j = audit_result_json(r);
    CHECK(j["formats"][0]["min"] == 100);
    CHECK(j["formats"][0]["max"] == 255);  // NaN codes count in the observed codes
    CHECK(j["formats"][0]["finite_max"] == 140);
    CHECK(j["formats"][0]["specials"] == Json{{"nan", 3}});
    CHECK(j["layers"].size() == 3);
    CHECK(j["tensors"][0]["name"] == "layers.0.ffn.experts.0.w1.scale");
    CHECK(j["tensors"][0]["specials"]["nan"] == 1);
    CHECK(j["views"][0]["steps"][1]["flagged"] > 0);
    // Without --view, no view: the summary is the format's alone.
    CHECK(summary_lines(audit_of(n.out_dir)).size() == 1);
  }

  TEST_CASE("the report text written without JSON values is the JSON report's own dump, byte for byte") {
    // The environment's time is the one part two calls may differ in.
    const auto same_time = [](std::string text) {
      const std::size_t at = text.find("\"time_utc\":\"");
      REQUIRE(at != std::string::npos);
      const std::size_t end = text.find('"', at + 12);
      REQUIRE(end != std::string::npos);
      return text.substr(0, at + 12) + "T" + text.substr(end);
    };
    const Json run{{"threads", 2}, {"seconds", 0.25}};
    TempDir dir;
    std::vector<AuditResult> audits;
    for (const SynthLayout layout : {SynthLayout::kDsv4, SynthLayout::kNvfp4, SynthLayout::kGptq}) {
      const SynthOptions o = in_layout(dir, layout, 2);
      REQUIRE(synthesize_checkpoint(o).ok());
      const bool dsv4 = layout == SynthLayout::kDsv4;
      audits.push_back(audit_of(o.out_dir, 2, {},
                                dsv4 ? std::vector{scale_view_by_name("turbomind")} : std::vector<const ScaleView*>{}));
    }
    // Names JSON must escape, a tensor with no codes, a window of counts past a byte.
    const std::string header = R"({"a\"b\\c.scale":{"dtype":"F16","shape":[3],"data_offsets":[0,6]},)"
                               R"("μ.\u0001.scale":{"dtype":"F16","shape":[0],"data_offsets":[6,6]},)"
                               R"("layers.7.wide.scale":{"dtype":"F8_E4M3","shape":[600],"data_offsets":[6,606]}})";
    std::vector<unsigned char> data = {0x00, 0x3C, 0x00, 0x7E, 0x00, 0x3C};
    for (int i = 0; i < 600; ++i) data.push_back(static_cast<unsigned char>(i < 300 ? 0x38 : i % 7));
    testing::write_bytes(dir.path() / "odd.safetensors", testing::st_bytes(header, data));
    audits.push_back(audit_of(dir / "odd.safetensors"));
    REQUIRE(audits.back().tensors.size() == 3);
    for (const AuditResult& r : audits) {
      const std::string expected = audit_report(r, run).dump();
      CHECK(same_time(audit_report_text(r, run)) == same_time(expected));
      // Negative control: a report one count off is a different text.
      AuditResult off = r;
      off.tensors.back().histogram.merge(CompactCounts(CodeCounts{{1, 1}}));
      CHECK(same_time(audit_report_text(off, run)) != same_time(expected));
    }
  }

  TEST_CASE("a folded exponent of 32 is flagged; one inside FP16's range is not (negative control)") {
    TempDir dir;
    write_coded(dir.path() / "a.safetensors", {{"x.scale", "F8_E8M0", 1, {114, 130}}});
    write_coded(dir.path() / "b.safetensors", {{"x.scale", "F8_E8M0", 1, {114, 128}}});
    const std::vector<const ScaleView*> views = {scale_view_by_name("turbomind")};
    const auto a = summary_lines(audit_of(dir / "a.safetensors", 1, {}, views));
    const auto b = summary_lines(audit_of(dir / "b.safetensors", 1, {}, views));
    REQUIRE(a.size() == 2);
    REQUIRE(b.size() == 2);
    CHECK(a[1] == "turbomind view (ue8m0): adjusted half exponents 2–18, folded exponents 16–32; FLAGGED: 1 codes "
                  "folded exponent past FP16's 30 (31: Inf/NaN, 32+: into the sign bit) (bytes 130)");
    CHECK(b[1] == "turbomind view (ue8m0): adjusted half exponents 2–16, folded exponents 16–30; none flagged");
    // The view reads the catalogue's transform: byte 130 is the folded recipe's +0 x Inf... case.
    CHECK(folded_exponent(130) == 32);
    CHECK(make_views({"nothing"}).error().message == "--view: nothing: no such view (views: turbomind)");
  }

  TEST_CASE("specials are counted apart and named, in each format's terms") {
    TempDir dir;
    write_coded(dir.path() / "f.safetensors",
                {{"a.scale", "F8_E4M3", 1, {0x38, 0x7F, 0xFF, 0x00, 0x80, 0x01, 0xB8}},
                 {"b.scales", "F16", 2, {0x3C00, 0x7C00, 0xFC00, 0x7E00, 0x0000, 0x8000, 0x0001, 0xBC00}},
                 {"c.weight_scale_2", "F32", 4, {0x3A000000, 0x7FC00000, 0x00000001, 0x3A000000}},
                 {"d.scale", "BF16", 2, {0x3F80, 0x7FC0}},
                 {"e.weight", "F16", 2, {0x7E00}}});
    const AuditResult r = audit_of(dir / "f.safetensors");
    REQUIRE(r.tensors.size() == 4);  // e.weight is not named *scale*
    const CodeStats e4m3 = stats_of(FormatId::e4m3, r.tensors[0].histogram);
    CHECK(e4m3.nan == 2);  // 0x7F and 0xFF: E4M3's NaN is S.1111.111
    CHECK(e4m3.zero == 2);
    CHECK(e4m3.subnormal == 1);
    CHECK(e4m3.negative == 2);  // -0 and -1
    const CodeStats fp16 = stats_of(FormatId::fp16, r.tensors[1].histogram);
    CHECK(fp16 == CodeStats{8, 0x0000, 0xFC00, 0x0000, 0xBC00, 1, 2, 2, 1, 3, 0});
    const CodeStats fp32 = stats_of(FormatId::fp32, r.tensors[2].histogram);
    CHECK(fp32.nan == 1);
    CHECK(fp32.subnormal == 1);
    CHECK(r.tensors[2].histogram == CodeCounts{{0x00000001, 1}, {0x3A000000, 2}, {0x7FC00000, 1}});
    const std::string text = joined(summary_lines(r));
    CHECK(text.find("1 e4m3 scale tensors (F8_E4M3), 7 codes: 0–184 (0 … -1); 2 NaN in 1 tensors, 2 zero, 1 subnormal, "
                    "2 negative\n") != std::string::npos);
    CHECK(text.find("1 fp16 scale tensors (F16), 8 codes: 0x0000–0xBC00 (0 … -1); 1 NaN in 1 tensors, 2 Inf, 2 zero, "
                    "1 subnormal, 3 negative\n") != std::string::npos);
    CHECK(text.find("1 bf16 scale tensors (BF16), 2 codes") != std::string::npos);
    CHECK(text.find("1 fp32 scale tensors (F32), 4 codes: 0x00000001–0x3A000000") != std::string::npos);
    // Read as UE4M3 (NVFP4 block scales), a byte with the sign bit set is no code, 0x7F still NaN.
    const AuditResult u = audit_of(dir / "f.safetensors", 2, *make_selection("F8_E4M3", "", "ue4m3"));
    const CodeStats ue4m3 = stats_of(FormatId::ue4m3, u.tensors[0].histogram);
    CHECK(ue4m3.not_a_code == 3);
    CHECK(ue4m3.nan == 1);
    CHECK(ue4m3.negative == 0);
    CHECK(joined(summary_lines(u)).find("3 not ue4m3 codes") != std::string::npos);
    // Negative control: the same bytes read as E4M3 have no non-codes.
    CHECK(e4m3.not_a_code == 0);
  }

  TEST_CASE("selection: every scale dtype by default, --dtype, --format, names containing scale, --select") {
    TempDir dir;
    SynthOptions o = small(dir / "ck");
    REQUIRE(synthesize_checkpoint(o).ok());
    auto ck = checkpoint::open_checkpoint(o.out_dir);
    REQUIRE(ck.ok());
    auto only_layer1 = make_selection("", "^layers\\.1\\.");
    REQUIRE(only_layer1.ok());
    auto r = run_audit(*ck, {*only_layer1, 2});
    REQUIRE(r.ok());
    CHECK(r->tensors.size() == 6);
    CHECK(make_selection("F16", "").ok());  // FP16 group scales
    auto f16 = run_audit(*ck, {*make_selection("F16", ""), 2});  // the F16 tensors are named *norm.weight
    REQUIRE_FALSE(f16.ok());
    CHECK(f16.error().message.find("no scale tensor") != std::string::npos);
    CHECK(make_selection("I8", "").error().message ==
          "--dtype: I8: not a scale format dtype (scale dtypes: F8_E8M0, U8, F8_E4M3, F16, BF16, F32)");
    CHECK(make_selection("Q8", "").error().message == "--dtype: Q8: unknown dtype");
    CHECK(make_selection("", "(").error().message.find("--select") == 0);
    CHECK(make_selection("", "", "ue4m3")->format_of(checkpoint::DType::kF8E4M3) == FormatId::ue4m3);
    CHECK(make_selection("", "")->format_of(checkpoint::DType::kF8E4M3) == FormatId::e4m3);
    CHECK(make_selection("", "", "e2m1").error().message ==
          "--format: e2m1: not a scale format (scale formats: ue8m0, e4m3, ue4m3, fp16, bf16, fp32)");
    CHECK(make_selection("", "", "e4m3,ue4m3").error().message == "--format: e4m3 and ue4m3 both read F8_E4M3: give one");
    CHECK(named_like_scales(checkpoint::DType::kF16, "model.layers.0.mlp.down_proj.scales"));
    CHECK(named_like_scales(checkpoint::DType::kF32, "x.weight_scale_2"));
    CHECK_FALSE(named_like_scales(checkpoint::DType::kF16, "scale.x.weight"));
    CHECK(named_like_scales(checkpoint::DType::kF8E8M0, "anything"));
  }

  TEST_CASE("the generator refuses impossible options") {
    TempDir dir;
    SynthOptions o = small(dir / "ck");
    o.cols = 100;
    CHECK_FALSE(synthesize_checkpoint(o).ok());
    o = small(dir / "ck");
    o.shards = 4;
    CHECK_FALSE(synthesize_checkpoint(o).ok());
    o = small(dir / "ck");
    o.nan_bytes = 1000;
    CHECK_FALSE(synthesize_checkpoint(o).ok());
    o = small(dir / "ck");
    o.scale_lo = 130;
    o.scale_hi = 120;
    CHECK_FALSE(synthesize_checkpoint(o).ok());
    o = small(dir / "ck");
    o.scale_hi = 256;  // past the F8_E8M0 codes
    CHECK_FALSE(synthesize_checkpoint(o).ok());
    o = small(dir / "ck");
    o.layout = SynthLayout::kGptq;
    o.scale_lo = 0x1C00;
    o.scale_hi = 0x2400;
    o.rows = 8;
    CHECK(synthesize_checkpoint(o).error().message ==
          "synth-checkpoint: --cols: 96 is not a positive multiple of 128 (layout gptq)");
    o.cols = 128;
    o.rows = 5;
    CHECK(synthesize_checkpoint(o).error().message == "synth-checkpoint: --rows: 5 is not a multiple of 8 (layout gptq)");
    o.rows = 8;
    o.out_dir = dir / "gptq";
    REQUIRE(synthesize_checkpoint(o).ok());  // control: the same with good shapes
    CHECK(synth_layout("nvfp4")->id == SynthLayout::kNvfp4);
    CHECK(synth_layout("mxfp9") == nullptr);
    o = small(dir / "ck");
    REQUIRE(synthesize_checkpoint(o).ok());
    CHECK_FALSE(synthesize_checkpoint(o).ok());  // not an empty directory any more
  }
}

}  // namespace bitproof::audit
