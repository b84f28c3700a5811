#include "timing/time_spec.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "json_fields.hpp"
#include "strict_json.hpp"

namespace bitproof::timing {
namespace {

using fields::only_keys;
using fields::string_field;
using fields::unsigned_value;
using fields::Where;
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string resolve(const std::string& spec_path, const std::string& relative) {
  return (fs::path(spec_path).parent_path() / relative).lexically_normal().string();
}

Expected<std::array<unsigned, 3>> dims(const Where& w, const json& arm, const std::string& field, const char* key,
                                       std::uint64_t max_x) {
  const std::string f = fields::join(field, key);
  if (!arm.contains(key)) return w.at(f, "missing");
  const json& v = arm.at(key);
  if (!v.is_array() || v.empty() || v.size() > 3) return w.at(f, "expected [x], [x, y] or [x, y, z]");
  std::array<unsigned, 3> out{1, 1, 1};
  const std::uint64_t max[3] = {max_x, 65535, 65535};
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto n = unsigned_value(w, v[i], fmt::format("{}[{}]", f, i));
    if (!n) return n.error();
    if (*n == 0 || *n > max[i]) return w.at(fmt::format("{}[{}]", f, i), fmt::format("must lie in 1..{}", max[i]));
    out[i] = static_cast<unsigned>(*n);
  }
  return out;
}

Expected<KernelArg> parse_arg(const Where& w, const json& v, const std::string& f, const TimeSpec& spec) {
  if (!v.is_object() || v.size() != 1) return w.at(f, "expected one of {\"buffer\": name}, {\"u32\": n}, {\"i32\": n}, {\"u64\": n}, {\"f32\": x}");
  const std::string key = v.begin().key();  // not items(): its proxy would not outlive this line
  const json& value = v.begin().value();
  KernelArg a;
  if (key == "buffer") {
    if (!value.is_string() || spec.buffer(value.get<std::string>()) == nullptr) {
      return w.at(fields::join(f, "buffer"), "names no buffer of the spec");
    }
    a.buffer = value.get<std::string>();
    return a;
  }
  if (key == "f32") {
    if (!value.is_number() || !std::isfinite(value.get<double>())) return w.at(fields::join(f, key), "expected a finite number");
    a.kind = KernelArg::Kind::kF32;
    a.bits = std::bit_cast<std::uint32_t>(value.get<float>());
    return a;
  }
  if (key == "i32") {
    if (!value.is_number_integer() || value.get<std::int64_t>() < std::numeric_limits<std::int32_t>::min() ||
        value.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
      return w.at(fields::join(f, key), "expected an integer in the int32 range");
    }
    a.kind = KernelArg::Kind::kI32;
    a.bits = static_cast<std::uint32_t>(value.get<std::int32_t>());
    return a;
  }
  if (key != "u32" && key != "u64") return w.at(f, fmt::format("unknown argument kind \"{}\" (buffer, u32, i32, u64, f32)", key));
  auto n = unsigned_value(w, value, fields::join(f, key));
  if (!n) return n.error();
  if (key == "u32" && *n > 0xFFFFFFFFu) return w.at(fields::join(f, key), "does not fit 32 bits");
  a.kind = key == "u32" ? KernelArg::Kind::kU32 : KernelArg::Kind::kU64;
  a.bits = *n;
  return a;
}

Expected<KernelArm> parse_arm(const Where& w, const json& v, const std::string& f, const TimeSpec& spec) {
  if (!v.is_object()) return w.at(f, "expected an object");
  if (auto ok = only_keys(w, v, f, {"name", "file", "kernel", "grid", "block", "shared_bytes", "args"}); !ok) return ok.error();
  KernelArm arm;
  for (auto [key, out] : {std::pair{"name", &arm.name}, std::pair{"file", &arm.file}, std::pair{"kernel", &arm.kernel}}) {
    auto s = string_field(w, v, f, key, true);
    if (!s) return s.error();
    *out = *s;
  }
  if (!fields::valid_name(arm.name)) return w.at(fields::join(f, "name"), "expected [a-z0-9._-]+");
  if (arm.kernel.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos) {
    return w.at(fields::join(f, "kernel"), "expected a C identifier (an extern \"C\" __global__ function)");
  }
  arm.file_path = resolve(spec.path, arm.file);
  std::error_code ec;
  if (!fs::is_regular_file(arm.file_path, ec)) return w.at(fields::join(f, "file"), fmt::format("no such file: {}", arm.file_path));
  auto grid = dims(w, v, f, "grid", 0x7FFFFFFF);
  if (!grid) return grid.error();
  auto block = dims(w, v, f, "block", 1024);
  if (!block) return block.error();
  if (std::uint64_t{(*block)[0]} * (*block)[1] * (*block)[2] > 1024) return w.at(fields::join(f, "block"), "more than 1024 threads");
  arm.grid = *grid;
  arm.block = *block;
  if (v.contains("shared_bytes")) {
    auto s = unsigned_value(w, v.at("shared_bytes"), fields::join(f, "shared_bytes"));
    if (!s) return s.error();
    if (*s > 227 * 1024) return w.at(fields::join(f, "shared_bytes"), "more than 227 KiB");
    arm.shared_bytes = static_cast<unsigned>(*s);
  }
  const std::string af = fields::join(f, "args");
  if (!v.contains("args") || !v.at("args").is_array()) return w.at(af, "expected an array");
  for (std::size_t i = 0; i < v.at("args").size(); ++i) {
    auto a = parse_arg(w, v.at("args")[i], fmt::format("{}[{}]", af, i), spec);
    if (!a) return a.error();
    arm.args.push_back(*a);
  }
  return arm;
}

Expected<Ok> parse_buffers(const Where& w, const json& root, TimeSpec& spec) {
  if (!root.contains("buffers") || !root.at("buffers").is_array()) return w.at("buffers", "expected an array");
  std::set<std::string> names;
  for (std::size_t i = 0; i < root.at("buffers").size(); ++i) {
    const json& b = root.at("buffers")[i];
    const std::string f = fmt::format("buffers[{}]", i);
    if (!b.is_object()) return w.at(f, "expected an object");
    if (auto ok = only_keys(w, b, f, {"name", "bytes", "fill", "seed"}); !ok) return ok.error();
    BufferSpec buf;
    auto name = string_field(w, b, f, "name", true);
    if (!name) return name.error();
    if (!fields::valid_name(*name) || !names.insert(*name).second) return w.at(fields::join(f, "name"), "expected a new name [a-z0-9._-]+");
    buf.name = *name;
    if (!b.contains("bytes")) return w.at(fields::join(f, "bytes"), "missing");
    auto bytes = unsigned_value(w, b.at("bytes"), fields::join(f, "bytes"));
    if (!bytes) return bytes.error();
    if (*bytes == 0 || *bytes > kMaxBufferBytes) return w.at(fields::join(f, "bytes"), "must lie in 1..2^34");
    buf.bytes = *bytes;
    auto fill = string_field(w, b, f, "fill", false);
    if (!fill) return fill.error();
    if (*fill != "" && *fill != "zero" && *fill != "random") return w.at(fields::join(f, "fill"), "expected \"zero\" or \"random\"");
    buf.random = *fill == "random";
    if (b.contains("seed")) {
      auto seed = unsigned_value(w, b.at("seed"), fields::join(f, "seed"));
      if (!seed) return seed.error();
      buf.seed = *seed;
    }
    spec.buffers.push_back(buf);
  }
  return Ok{};
}

nlohmann::ordered_json kernel_spec_json(const TimeSpec& spec) {
  nlohmann::ordered_json j;
  j["bitproof_time"] = kTimeSpecVersion;
  j["name"] = spec.name;
  if (!spec.title.empty()) j["title"] = spec.title;
  if (!spec.source.empty()) j["source"] = spec.source;
  j["fmad"] = spec.fmad;
  j["buffers"] = nlohmann::ordered_json::array();
  for (const BufferSpec& b : spec.buffers) {
    j["buffers"].push_back({{"name", b.name}, {"bytes", b.bytes}, {"fill", b.random ? "random" : "zero"}, {"seed", b.seed}});
  }
  j["arms"] = nlohmann::ordered_json::array();
  for (const KernelArm& a : spec.arms) {
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    for (const KernelArg& x : a.args) {
      switch (x.kind) {
        case KernelArg::Kind::kBuffer: args.push_back({{"buffer", x.buffer}}); break;
        case KernelArg::Kind::kU32: args.push_back({{"u32", x.bits}}); break;
        case KernelArg::Kind::kI32: args.push_back({{"i32", static_cast<std::int32_t>(x.bits)}}); break;
        case KernelArg::Kind::kU64: args.push_back({{"u64", x.bits}}); break;
        case KernelArg::Kind::kF32: args.push_back({{"f32", std::bit_cast<float>(static_cast<std::uint32_t>(x.bits))}}); break;
      }
    }
    j["arms"].push_back({{"name", a.name}, {"file", a.file}, {"kernel", a.kernel}, {"grid", a.grid}, {"block", a.block},
                         {"shared_bytes", a.shared_bytes}, {"args", args}});
  }
  return j;
}

Expected<TimeSpec> parse_kernel_spec(const Where& w, const json& root, const std::string& path) {
  TimeSpec spec;
  spec.path = path;
  if (auto ok = only_keys(w, root, "", {"bitproof_time", "name", "title", "source", "fmad", "include_dirs", "buffers", "arms"}); !ok) {
    return ok.error();
  }
  if (auto ok = fields::version_value(w, root.at("bitproof_time"), "bitproof_time", kTimeSpecVersion); !ok)
    return ok.error();
  for (auto [key, out, required] : {std::tuple{"name", &spec.name, true}, std::tuple{"title", &spec.title, false},
                                    std::tuple{"source", &spec.source, false}}) {
    auto s = string_field(w, root, "", key, required);
    if (!s) return s.error();
    if (!fields::printable_text(*s)) return w.at(key, "has control characters");
    *out = *s;
  }
  if (!fields::valid_name(spec.name)) return w.at("name", "expected [a-z0-9._-]+");
  if (root.contains("fmad")) {
    if (!root.at("fmad").is_boolean()) return w.at("fmad", "expected true or false");
    spec.fmad = root.at("fmad").get<bool>();
  }
  if (root.contains("include_dirs")) {
    const json& dirs = root.at("include_dirs");
    if (!dirs.is_array()) return w.at("include_dirs", "expected an array of directories");
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      if (!dirs[i].is_string()) return w.at(fmt::format("include_dirs[{}]", i), "expected a string");
      spec.include_dirs.push_back(resolve(path, dirs[i].get<std::string>()));
    }
  }
  if (auto ok = parse_buffers(w, root, spec); !ok) return ok.error();
  if (!root.contains("arms") || !root.at("arms").is_array() || root.at("arms").size() != 2) {
    return w.at("arms", "expected exactly two arms (A, then B)");
  }
  for (std::size_t i = 0; i < 2; ++i) {
    auto arm = parse_arm(w, root.at("arms")[i], fmt::format("arms[{}]", i), spec);
    if (!arm) return arm.error();
    spec.arms[i] = *arm;
  }
  if (spec.arms[0].name == spec.arms[1].name) return w.at("arms[1].name", "both arms are named \"" + spec.arms[0].name + "\"");
  spec.json = kernel_spec_json(spec);
  return spec;
}

}  // namespace

std::array<std::string, 2> TimeSpec::arm_names() const {
  if (ab) return {ab->arms[0].name, ab->arms[1].name};
  return {arms[0].name, arms[1].name};
}

const BufferSpec* TimeSpec::buffer(const std::string& name) const {
  for (const BufferSpec& b : buffers) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

Expected<TimeSpec> parse_time_spec(const std::string& text, const std::string& path) {
  const Where w{path};
  auto parsed = parse_json_strict(text, path, "");
  if (!parsed) return parsed.error();
  const json& root = *parsed;
  if (!root.is_object()) return w.at("(top level)", "expected a JSON object");
  if (root.contains("bitproof_ab")) {
    auto ab = op::parse_ab_spec(text, path);
    if (!ab) return ab.error();
    TimeSpec spec;
    spec.path = path;
    spec.name = ab->name;
    spec.title = ab->title;
    spec.source = ab->source;
    spec.json = op::ab_spec_to_json(*ab);
    spec.ab = std::move(*ab);
    return spec;
  }
  if (!root.contains("bitproof_time")) {
    return w.at("(top level)", "neither a timing spec (\"bitproof_time\") nor an A/B spec (\"bitproof_ab\")");
  }
  return parse_kernel_spec(w, root, path);
}

Expected<TimeSpec> load_time_spec(const std::string& path) {
  auto text = read_input_file(path, "the timing spec file", kMaxSpecBytes);
  if (!text) return text.error();
  auto spec = parse_time_spec(*text, path);
  if (spec) return spec;
  // Another kind of bitproof file: what it is and which commands take it.
  if (const std::string other = other_file_kind(*text, {"bitproof_time", "bitproof_ab"}); !other.empty()) {
    return Error{fmt::format(
        "{}: neither a timing spec (\"bitproof_time\") nor an A/B spec (\"bitproof_ab\"): it is {}", path, other)};
  }
  return spec;
}

}  // namespace bitproof::timing
