#include "audit/synth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "checkpoint/safetensors.hpp"
#include "splitmix.hpp"

namespace bitproof::audit {
namespace {

namespace fs = std::filesystem;

enum class Fill : std::uint8_t { kRandom, kScale, kGlobal, kOneBf16, kOneF16 };

struct Planned {
  std::string name;
  checkpoint::DType dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes;
  Fill fill;
  std::uint64_t nan_count = 0;  // kScale: NaN codes at positions [2, 2 + nan_count)
};

struct ShardPlan {
  std::string name;
  std::vector<Planned> tensors;
};

// One tensor of an expert matrix in a layout: its name suffix, dtype, fill and shape.
struct MatrixTensor {
  std::string_view suffix;
  checkpoint::DType dtype;
  Fill fill;            // kRandom: a weight (left out with weights = false)
  std::uint64_t rows_div, cols_div;  // shape [rows / rows_div, cols / cols_div] (or transposed)
  bool transposed;      // [cols / cols_div, rows / rows_div] (GPTQ stores input channels first)
  bool scalar;          // shape []: one element (a global scale)
};

struct LayoutRow {
  SynthLayoutInfo info;
  std::uint32_t nan_code;  // the scale format's NaN
  std::array<MatrixTensor, 3> tensors;
  std::size_t count;
};

constexpr MatrixTensor kNone{"", checkpoint::DType::kU8, Fill::kRandom, 1, 1, false, false};

constexpr std::array kLayouts = {
    LayoutRow{{SynthLayout::kDsv4, "dsv4", 114, 126, 32, 1},
              0xFF,
              {MatrixTensor{"weight", checkpoint::DType::kI8, Fill::kRandom, 1, 2, false, false},
               MatrixTensor{"scale", checkpoint::DType::kF8E8M0, Fill::kScale, 1, 32, false, false}, kNone},
              2},
    LayoutRow{{SynthLayout::kNvfp4, "nvfp4", 32, 120, 32, 1},
              0x7F,
              {MatrixTensor{"weight", checkpoint::DType::kU8, Fill::kRandom, 1, 2, false, false},
               MatrixTensor{"weight_scale", checkpoint::DType::kF8E4M3, Fill::kScale, 1, 16, false, false},
               MatrixTensor{"weight_scale_2", checkpoint::DType::kF32, Fill::kGlobal, 1, 1, false, true}},
              3},
    LayoutRow{{SynthLayout::kGptq, "gptq", 0x1C00, 0x2400, 128, 8},
              0x7E00,
              {MatrixTensor{"qweight", checkpoint::DType::kI32, Fill::kRandom, 1, 8, true, false},
               MatrixTensor{"qzeros", checkpoint::DType::kI32, Fill::kRandom, 8, 128, true, false},
               MatrixTensor{"scales", checkpoint::DType::kF16, Fill::kScale, 1, 128, true, false}},
              3},
};

// FP32 2^-11: the global scale the nvfp4 layout writes.
constexpr std::uint32_t kGlobalScale = 0x3A000000;

const LayoutRow& row_of(SynthLayout id) {
  for (const LayoutRow& r : kLayouts) {
    if (r.info.id == id) return r;
  }
  return kLayouts[0];
}

std::vector<std::uint64_t> shape_of(const MatrixTensor& m, const SynthOptions& o) {
  if (m.scalar) return {};
  const std::uint64_t r = o.rows / m.rows_div, c = o.cols / m.cols_div;
  return m.transposed ? std::vector<std::uint64_t>{c, r} : std::vector<std::uint64_t>{r, c};
}

// Bytes of a tensor of that shape, or nullopt past 2^64.
std::optional<std::uint64_t> bytes_of(const std::vector<std::uint64_t>& shape, checkpoint::DType dtype) {
  unsigned __int128 n = static_cast<unsigned>(checkpoint::dtype_bits(dtype));
  for (std::uint64_t d : shape) {
    n *= d;
    if (n > (static_cast<unsigned __int128>(UINT64_MAX) << 3)) return std::nullopt;
  }
  return static_cast<std::uint64_t>(n / 8);
}

bool included(const MatrixTensor& m, const SynthOptions& o) { return o.weights || m.fill != Fill::kRandom; }

// The scale tensor of a matrix (the one with Fill::kScale).
const MatrixTensor& scale_tensor(const LayoutRow& row) {
  for (std::size_t i = 0; i < row.count; ++i) {
    if (row.tensors[i].fill == Fill::kScale) return row.tensors[i];
  }
  return row.tensors[0];
}

// splitmix64: a fixed, fully specified stream.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() { return splitmix64_next(state); }
};

// The most tensors one shard may list: its header (about 100 bytes an entry)
// stays far below the format's checkpoint::kMaxHeaderBytes, and the plan small in memory.
constexpr std::uint64_t kMaxTensorsPerShard = 200'000;

// The bytes of every tensor the checkpoint will hold (headers aside), or nullopt past 2^64.
std::optional<std::uint64_t> tensor_bytes_planned(const SynthOptions& o) {
  const LayoutRow& row = row_of(o.layout);
  unsigned __int128 matrix = 0;
  for (std::size_t i = 0; i < row.count; ++i) {
    if (!included(row.tensors[i], o)) continue;
    const auto b = bytes_of(shape_of(row.tensors[i], o), row.tensors[i].dtype);
    if (!b) return std::nullopt;
    matrix += *b;
  }
  const unsigned __int128 total =
      static_cast<unsigned __int128>(o.layers) * (matrix * o.experts * 3 + static_cast<unsigned __int128>(o.cols) * 4) +
      static_cast<unsigned __int128>(o.cols) * 2;
  if (total > UINT64_MAX) return std::nullopt;
  return static_cast<std::uint64_t>(total);
}

// The nearest directory of `dir` that exists, where the free space is asked.
fs::path existing_ancestor(fs::path dir) {
  std::error_code ec;
  dir = fs::absolute(dir, ec);
  while (!dir.empty() && !fs::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir) {
    dir = dir.parent_path();
  }
  return dir;
}

// Sizes, checked before a byte is written: the checkpoint must fit in 64 bits,
// its headers inside the format's limit, and its bytes on the file system.
Expected<Ok> check_size(const SynthOptions& o) {
  const LayoutRow& row = row_of(o.layout);
  std::uint64_t per_matrix = 0;
  for (std::size_t i = 0; i < row.count; ++i) per_matrix += included(row.tensors[i], o);
  const std::uint64_t layers_per_shard = (std::uint64_t{o.layers} + o.shards - 1) / o.shards;
  const unsigned __int128 tensors = static_cast<unsigned __int128>(layers_per_shard) * (2 + std::uint64_t{o.experts} * 3 * per_matrix) + 1;
  if (tensors > kMaxTensorsPerShard) {
    return Error{fmt::format("synth-checkpoint: --experts, --layers, --shards: a shard would list more than {} tensors "
                             "(its safetensors header would pass the format's limit); use more --shards or fewer experts",
                             kMaxTensorsPerShard)};
  }
  const auto bytes = tensor_bytes_planned(o);
  if (!bytes) return Error{"synth-checkpoint: --rows, --cols: the checkpoint would hold more than 2^64 bytes"};
  std::error_code ec;
  const fs::path where = existing_ancestor(o.out_dir);
  const fs::space_info space = fs::space(where, ec);
  if (!ec && *bytes > space.available) {
    return Error{fmt::format("synth-checkpoint: the checkpoint would take {} bytes, more than the {} bytes free in {}",
                             *bytes, space.available, where.string())};
  }
  return Ok{};
}

Expected<Ok> check_options(const SynthOptions& o) {
  const LayoutRow& row = row_of(o.layout);
  if (o.layers == 0 || o.experts == 0 || o.rows == 0)
    return Error{"synth-checkpoint: --layers, --experts and --rows must be positive"};
  if (o.cols == 0 || o.cols % row.info.cols_multiple != 0) {
    return Error{fmt::format("synth-checkpoint: --cols: {} is not a positive multiple of {} (layout {})", o.cols,
                             row.info.cols_multiple, row.info.name)};
  }
  if (o.rows % row.info.rows_multiple != 0) {
    return Error{fmt::format("synth-checkpoint: --rows: {} is not a multiple of {} (layout {})", o.rows,
                             row.info.rows_multiple, row.info.name)};
  }
  const MatrixTensor& scale = scale_tensor(row);
  const std::uint64_t code_limit = std::uint64_t{1} << checkpoint::dtype_bits(scale.dtype);
  if (o.scale_lo > o.scale_hi || o.scale_hi >= code_limit) {
    return Error{fmt::format("synth-checkpoint: --scale-range: {}:{} is not an interval of {} codes (0..{})",
                             o.scale_lo, o.scale_hi, checkpoint::dtype_name(scale.dtype), code_limit - 1)};
  }
  if (o.shards == 0 || o.shards > o.layers) {
    return Error{fmt::format("synth-checkpoint: --shards: {} must be between 1 and the number of layers", o.shards)};
  }
  if (auto ok = check_size(o); !ok) return ok.error();  // every product below fits in 64 bits
  const std::uint64_t scale_tensors = std::uint64_t{o.layers} * o.experts * 3;
  const std::uint64_t scale_size = *bytes_of(shape_of(scale, o), scale.dtype) / (checkpoint::dtype_bits(scale.dtype) / 8);
  if (o.nan_bytes > 0 && (scale_size < 3 || o.nan_bytes > scale_tensors * (scale_size - 2))) {
    return Error{fmt::format(
        "synth-checkpoint: --nan-bytes: {} do not fit after the first two codes of {} scale tensors of {} codes",
        o.nan_bytes, scale_tensors, scale_size)};
  }
  return Ok{};
}

std::string shard_name(std::uint32_t i, std::uint32_t n) {
  return n == 1 ? "model.safetensors" : fmt::format("model-{:05}-of-{:05}.safetensors", i + 1, n);
}

std::vector<ShardPlan> plan(const SynthOptions& o) {
  const LayoutRow& row = row_of(o.layout);
  std::vector<ShardPlan> shards(o.shards);
  for (std::uint32_t s = 0; s < o.shards; ++s) shards[s].name = shard_name(s, o.shards);
  const std::uint64_t scale_tensors = std::uint64_t{o.layers} * o.experts * 3;
  std::uint64_t scale_index = 0;
  for (std::uint32_t l = 0; l < o.layers; ++l) {
    auto& tensors = shards[std::uint64_t{l} * o.shards / o.layers].tensors;
    const std::string layer = fmt::format("layers.{}.", l);
    tensors.push_back({layer + "attn_norm.weight", checkpoint::DType::kBF16, {o.cols}, o.cols * 2, Fill::kOneBf16});
    tensors.push_back({layer + "ffn_norm.weight", checkpoint::DType::kF16, {o.cols}, o.cols * 2, Fill::kOneF16});
    for (std::uint32_t e = 0; e < o.experts; ++e) {
      for (const char* w : {"w1", "w2", "w3"}) {
        const std::string base = fmt::format("{}ffn.experts.{}.{}.", layer, e, w);
        for (std::size_t i = 0; i < row.count; ++i) {
          const MatrixTensor& m = row.tensors[i];
          if (!included(m, o)) continue;
          const std::vector<std::uint64_t> shape = shape_of(m, o);
          Planned t{base + std::string(m.suffix), m.dtype, shape, *bytes_of(shape, m.dtype), m.fill};
          if (m.fill == Fill::kScale) {
            // NaN k goes to scale tensor k % T: this one gets the k = scale_index, scale_index + T, ...
            t.nan_count =
                o.nan_bytes > scale_index ? (o.nan_bytes - scale_index + scale_tensors - 1) / scale_tensors : 0;
            ++scale_index;
          }
          tensors.push_back(std::move(t));
        }
      }
    }
  }
  shards.back().tensors.push_back({"norm.weight", checkpoint::DType::kBF16, {o.cols}, o.cols * 2, Fill::kOneBf16});
  return shards;
}

std::string header_text(const ShardPlan& shard, const SynthOptions& o) {
  nlohmann::ordered_json h;
  h["__metadata__"] = {{"format", "pt"}, {"generator", "bitproof synth-checkpoint"}, {"seed", std::to_string(o.seed)}};
  std::uint64_t offset = 0;
  for (const Planned& t : shard.tensors) {
    h[t.name] = {{"dtype", checkpoint::dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes}}};
    offset += t.bytes;
  }
  std::string text = h.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

class Writer {
 public:
  explicit Writer(std::FILE* f) : f_(f) {}
  bool write(const void* p, std::size_t n) { return std::fwrite(p, 1, n, f_) == n; }

 private:
  std::FILE* f_;
};

constexpr std::size_t kBuffer = std::size_t{1} << 20;  // a multiple of every code width

// Counts the codes of one tensor as they are generated: dense bins for 8- and
// 16-bit codes (reused from tensor to tensor), read out ascending.
class CodeCounter {
 public:
  void add(std::uint32_t code) {  // codes of at most 16 bits
    if (code >= bins_.size()) bins_.resize(code < 256 ? 256 : 65536);
    ++bins_[code];
  }
  CodeCounts take() {
    CodeCounts out;
    for (std::size_t c = 0; c < bins_.size(); ++c) {
      if (bins_[c] != 0) out.emplace_back(static_cast<std::uint32_t>(c), bins_[c]);
    }
    std::fill(bins_.begin(), bins_.end(), 0);
    return out;
  }

 private:
  std::vector<std::uint64_t> bins_;
};

void put_code(unsigned char* at, std::uint32_t code, unsigned width) {
  for (unsigned b = 0; b < width; ++b) at[b] = static_cast<unsigned char>(code >> (8 * b));
}

// Fills `buf` with bytes [pos, pos + n) of tensor t; scale codes are counted into `counter`.
void fill(const Planned& t, const SynthOptions& o, SplitMix64& rng, std::uint64_t pos, unsigned char* buf,
          std::size_t n, CodeCounter& counter) {
  switch (t.fill) {
    case Fill::kOneBf16:
    case Fill::kOneF16: {
      const unsigned char one[2] = {t.fill == Fill::kOneBf16 ? std::uint8_t{0x80} : std::uint8_t{0x00},
                                    t.fill == Fill::kOneBf16 ? std::uint8_t{0x3F} : std::uint8_t{0x3C}};
      for (std::size_t i = 0; i < n; ++i) buf[i] = one[(pos + i) & 1];
      return;
    }
    case Fill::kRandom:
      for (std::size_t i = 0; i < n; i += 8) {
        const std::uint64_t r = rng.next();
        for (std::size_t b = 0; b < 8 && i + b < n; ++b) buf[i + b] = static_cast<unsigned char>(r >> (8 * b));
      }
      return;
    case Fill::kGlobal:  // one code throughout: counted by the caller
      for (std::size_t i = 0; i + 4 <= n; i += 4) put_code(buf + i, kGlobalScale, 4);
      return;
    case Fill::kScale: {
      const unsigned width = static_cast<unsigned>(checkpoint::dtype_bits(t.dtype) / 8);
      const std::uint64_t span = o.scale_hi - o.scale_lo + 1;
      const std::uint64_t codes = t.bytes / width;
      const std::uint32_t nan = row_of(o.layout).nan_code;
      for (std::size_t i = 0; i < n; i += 4 * width) {
        const std::uint64_t r = rng.next();
        for (std::size_t b = 0; b < 4 && i + b * width < n; ++b) {
          put_code(buf + i + b * width,
                   static_cast<std::uint32_t>(o.scale_lo + ((((r >> (16 * b)) & 0xFFFF) * span) >> 16)), width);
        }
      }
      for (std::size_t i = 0; i < n; i += width) {
        const std::uint64_t p = (pos + i) / width;
        if (p == 0 && codes >= 2) put_code(buf + i, o.scale_lo, width);
        if (p == 1) put_code(buf + i, o.scale_hi, width);
        if (p >= 2 && p < 2 + t.nan_count) put_code(buf + i, nan, width);
        std::uint32_t code = 0;
        for (unsigned b = 0; b < width; ++b) code |= std::uint32_t{buf[i + b]} << (8 * b);
        counter.add(code);
      }
      return;
    }
  }
}

Expected<std::uint64_t> write_shard(const ShardPlan& shard, const SynthOptions& o, SplitMix64& rng,
                                    const fs::path& path, SynthResult& result) {
  const std::string tmp = path.string() + ".tmp-bitproof";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!f) return Error{fmt::format("{}: file: cannot write", path.string())};
  Writer out(f.get());
  const std::string header = header_text(shard, o);
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(header.size()) >> (8 * i));
  bool ok = out.write(len, 8) && out.write(header.data(), header.size());
  std::uint64_t total = 8 + header.size();
  std::vector<unsigned char> buf(kBuffer);
  CodeCounter counter;
  for (const Planned& t : shard.tensors) {
    for (std::uint64_t pos = 0; ok && pos < t.bytes; pos += kBuffer) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBuffer, t.bytes - pos));
      fill(t, o, rng, pos, buf.data(), n, counter);
      ok = out.write(buf.data(), n);
    }
    total += t.bytes;
    if (t.fill == Fill::kScale || t.fill == Fill::kGlobal) {
      result.scale_bytes += t.bytes;
      result.scales.emplace_back(t.name, t.fill == Fill::kScale ? counter.take() : CodeCounts{{kGlobalScale, t.bytes / 4}});
    }
  }
  ok = ok && std::fflush(f.get()) == 0;
  f.reset();
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Error{fmt::format("{}: file: cannot write", path.string())};
  }
  return total;
}

Expected<Ok> write_index(const std::vector<ShardPlan>& shards, const fs::path& path, std::uint64_t tensor_bytes) {
  nlohmann::json index;
  index["metadata"] = {{"total_size", tensor_bytes}};
  index["weight_map"] = nlohmann::json::object();
  for (const ShardPlan& s : shards) {
    for (const Planned& t : s.tensors) index["weight_map"][t.name] = s.name;
  }
  const std::string tmp = path.string() + ".tmp-bitproof";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  const std::string text = index.dump(2) + "\n";
  const bool ok = f && std::fwrite(text.data(), 1, text.size(), f.get()) == text.size() && std::fflush(f.get()) == 0;
  f.reset();
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Error{fmt::format("{}: file: cannot write", path.string())};
  }
  return Ok{};
}

// Returns whether the directory was created here (and so is removed again on failure).
Expected<bool> prepare_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) return Error{fmt::format("{}: OUT_DIR: not a directory", dir.string())};
    if (!fs::is_empty(dir, ec))
      return Error{fmt::format("{}: OUT_DIR: not empty; give a new or empty directory", dir.string())};
    return false;
  }
  if (!fs::create_directories(dir, ec))
    return Error{fmt::format("{}: OUT_DIR: cannot create: {}", dir.string(), ec.message())};
  return true;
}

// Writes every file; on a failure removes those written (and a directory created for them).
Expected<SynthResult> write_checkpoint(const SynthOptions& o, const fs::path& dir);

}  // namespace

const SynthLayoutInfo* synth_layout(std::string_view name) {
  for (const LayoutRow& r : kLayouts) {
    if (r.info.name == name) return &r.info;
  }
  return nullptr;
}

const SynthLayoutInfo& synth_layout(SynthLayout id) { return row_of(id).info; }

Expected<SynthResult> synthesize_checkpoint(const SynthOptions& o) {
  if (auto ok = check_options(o); !ok) return ok.error();
  const fs::path dir(o.out_dir);
  auto created = prepare_directory(dir);
  if (!created) return created.error();
  auto result = write_checkpoint(o, dir);
  if (!result) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) fs::remove(e.path(), ec);
    if (*created) fs::remove(dir, ec);
  }
  return result;
}

namespace {

Expected<SynthResult> write_checkpoint(const SynthOptions& o, const fs::path& dir) {
  const std::vector<ShardPlan> shards = plan(o);
  SynthResult result;
  SplitMix64 rng{o.seed};
  std::uint64_t tensor_bytes = 0;
  for (const ShardPlan& s : shards) {
    const fs::path path = dir / s.name;
    auto written = write_shard(s, o, rng, path, result);
    if (!written) return written.error();
    result.total_bytes += *written;
    for (const Planned& t : s.tensors) tensor_bytes += t.bytes;
    result.files.push_back(path.string());
  }
  if (shards.size() > 1) {
    const fs::path index = dir / std::string(checkpoint::kIndexName);
    if (auto ok = write_index(shards, index, tensor_bytes); !ok) return ok.error();
    result.files.push_back(index.string());
  }
  return result;
}

}  // namespace
}  // namespace bitproof::audit
