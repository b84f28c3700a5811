// The audit: fast histograms equal a plain count; audits of generated
// checkpoints equal what the generator wrote and an independent reading of the
// files; sharded and single-file checkpoints agree; the summary line's
// exponent ranges are the recipe's own.
#include <doctest/doctest.h>

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

// Reads every F8_E8M0 tensor of a file without the audit's reader: std::ifstream,
// plain nlohmann parsing, byte counting in a loop.
std::map<std::string, Histogram> independent_scales(const std::filesystem::path& file) {
  const std::vector<unsigned char> bytes = testing::read_bytes(file);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[static_cast<std::size_t>(i)];
  const auto header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n));
  std::map<std::string, Histogram> out;
  for (const auto& [name, v] : header.items()) {
    if (name == "__metadata__" || v["dtype"] != "F8_E8M0") continue;
    const std::size_t b = 8 + n + v["data_offsets"][0].get<std::size_t>();
    const std::size_t e = 8 + n + v["data_offsets"][1].get<std::size_t>();
    out[name] = plain_count(bytes, b, e);
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

AuditResult audit_of(const std::string& path, unsigned threads = 2) {
  auto ck = open_checkpoint(path);
  REQUIRE_MESSAGE(ck.ok(), (ck.ok() ? "" : ck.error().message));
  auto r = run_audit(*ck, {Selection{}, threads});
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

std::map<std::string, Histogram> histograms_of(const AuditResult& r) {
  std::map<std::string, Histogram> out;
  for (const TensorAudit& t : r.tensors) out[t.name] = t.histogram;
  return out;
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
    const std::map<std::string, Histogram> recorded(written->scales.begin(), written->scales.end());
    CHECK(audited == recorded);
    CHECK(audited == independent_scales(std::filesystem::path(o.out_dir) / "model.safetensors"));
    std::uint64_t nan = 0;
    for (const auto& [name, h] : audited) nan += h[0xFF];
    CHECK(nan == 4);
    for (const TensorAudit& t : r.tensors) {
      CHECK(t.bytes == 5 * 96 / 32);
      CHECK(t.dtype == DType::kF8E8M0);
      REQUIRE(t.layer.has_value());
    }
    // Negative control: one byte changed in the file makes the audit differ from the record.
    const auto file = std::filesystem::path(o.out_dir) / "model.safetensors";
    auto bytes = testing::read_bytes(file);
    const auto scales = independent_scales(file);
    bytes[bytes.size() - 2 * 96 - 3] ^= 0x01;  // inside the last expert's w3 scale, before norm.weight
    testing::write_bytes(file, bytes);
    CHECK(histograms_of(audit_of(o.out_dir)) != recorded);
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

  TEST_CASE("the summary line: the PR's ranges, NaN bytes visible") {
    TempDir dir;
    SynthOptions o = small(dir / "ck");
    REQUIRE(synthesize_checkpoint(o).ok());
    CHECK(summary_line(audit_of(o.out_dir)) ==
          "18 scale tensors, 270 bytes; raw E8M0 114–126, adjusted half exponents 2–14, folded exponents 16–28; "
          "0 NaN bytes (0xFF)");
    SynthOptions n = small(dir / "nan");
    n.nan_bytes = 3;
    n.scale_lo = 100;
    n.scale_hi = 140;
    REQUIRE(synthesize_checkpoint(n).ok());
    const AuditResult r = audit_of(n.out_dir);
    CHECK(summary_line(r) ==
          "18 scale tensors, 270 bytes; raw E8M0 100–140, adjusted half exponents 0–28, folded exponents 14–42; "
          "3 NaN bytes (0xFF) in 3 tensors");
    const Json j = audit_result_json(r);
    CHECK(j["overall"]["min"] == 100);
    CHECK(j["overall"]["max"] == 255);  // NaN bytes count in the observed interval
    CHECK(j["overall"]["finite_max"] == 140);
    CHECK(j["overall"]["nan_bytes"] == 3);
    CHECK(j["layers"].size() == 3);
    CHECK(j["tensors"][0]["name"] == "layers.0.ffn.experts.0.w1.scale");
    CHECK(j["tensors"][0]["nan_bytes"] == 1);
  }

  TEST_CASE("selection: dtype list, names ending in scale, --select, and nothing selected is an error") {
    TempDir dir;
    SynthOptions o = small(dir / "ck");
    REQUIRE(synthesize_checkpoint(o).ok());
    auto ck = open_checkpoint(o.out_dir);
    REQUIRE(ck.ok());
    auto only_layer1 = make_selection("", "^layers\\.1\\.");
    REQUIRE(only_layer1.ok());
    auto r = run_audit(*ck, {*only_layer1, 2});
    REQUIRE(r.ok());
    CHECK(r->tensors.size() == 6);
    auto i8 = make_selection("I8", "");
    REQUIRE(i8.ok());
    auto none = run_audit(*ck, {*i8, 2});  // the I8 tensors are named *weight, not *scale
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.find("no scale tensor") != std::string::npos);
    CHECK_FALSE(make_selection("F16", "").ok());
    CHECK_FALSE(make_selection("Q8", "").ok());
    CHECK_FALSE(make_selection("", "(").ok());
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
    REQUIRE(synthesize_checkpoint(o).ok());
    CHECK_FALSE(synthesize_checkpoint(o).ok());  // not an empty directory any more
  }
}

}  // namespace bitproof::audit
