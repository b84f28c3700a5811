#include "operator/kernel_parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <tuple>

namespace bitproof::op {

unsigned launch_arg_bytes(const LaunchArg& arg) {
  switch (arg.kind) {
    case LaunchArg::Kind::kU32:
    case LaunchArg::Kind::kI32:
    case LaunchArg::Kind::kF32: return 4;
    default: return 8;  // pointers and u64
  }
}

const char* launch_arg_kind_name(LaunchArg::Kind kind) {
  switch (kind) {
    case LaunchArg::Kind::kU32: return "u32";
    case LaunchArg::Kind::kI32: return "i32";
    case LaunchArg::Kind::kU64: return "u64";
    case LaunchArg::Kind::kF32: return "f32";
    default: return "pointer";
  }
}

namespace kernel_parse {
namespace {

using fields::Where;
using nlohmann::json;

// A C identifier: the name an extern "C" kernel has in PTX.
bool kernel_name(const std::string& s) {
  if (s.empty() || s.size() > 256 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$') return false;
  }
  return true;
}

Expected<std::vector<std::string>> paths(const Where& w, const json& v, const std::string& field) {
  if (!v.is_array()) return w.at(field, "expected an array of paths, found " + std::string(v.type_name()));
  if (v.size() > kMaxKernelFiles) return w.at(field, fmt::format("more than {} paths", kMaxKernelFiles));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || v[i].get<std::string>().empty() || !fields::printable_text(v[i].get<std::string>()))
      return w.at(fmt::format("{}[{}]", field, i), "expected a non-empty path");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

std::vector<std::string> resolve(const std::vector<std::string>& written, const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& p : written) out.push_back((std::filesystem::path(dir) / p).lexically_normal().string());
  return out;
}

Expected<std::array<unsigned, 3>> dims(const Where& w, const json& v, const std::string& field,
                                       const std::array<std::uint64_t, 3>& limit) {
  if (!v.is_array() || v.empty() || v.size() > 3) return w.at(field, "expected [x], [x, y] or [x, y, z]");
  std::array<unsigned, 3> d{1, 1, 1};
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string item = fmt::format("{}[{}]", field, i);
    auto n = fields::unsigned_value(w, v[i], item);
    if (!n) return n.error();
    if (*n == 0 || *n > limit[i]) return w.at(item, fmt::format("{} is outside 1..{}", *n, limit[i]));
    d[i] = static_cast<unsigned>(*n);
  }
  return d;
}

Expected<std::uint64_t> f32_bits(const Where& w, const json& v, const std::string& field) {
  if (!v.is_number()) return w.at(field, "expected a number");
  const double d = v.get<double>();
  const float f = static_cast<float>(d);
  if (!std::isfinite(d) || static_cast<double>(f) != d)
    return w.at(field, fmt::format("{} is not exactly a finite binary32 value", d));
  return std::uint64_t{std::bit_cast<std::uint32_t>(f)};
}

Expected<std::uint64_t> scalar_bits(const Where& w, const json& v, const std::string& key, const std::string& field) {
  if (key == "f32") return f32_bits(w, v, field);
  if (key == "i32") {
    if (!v.is_number_integer()) return w.at(field, "expected an integer");
    const std::int64_t n = v.is_number_unsigned() && v.get<std::uint64_t>() > std::numeric_limits<std::int64_t>::max()
                               ? std::numeric_limits<std::int64_t>::max()
                               : v.get<std::int64_t>();
    if (n < std::numeric_limits<std::int32_t>::min() || n > std::numeric_limits<std::int32_t>::max())
      return w.at(field, fmt::format("{} is outside i32", n));
    return std::uint64_t{static_cast<std::uint32_t>(static_cast<std::int32_t>(n))};
  }
  auto n = fields::unsigned_value(w, v, field);
  if (!n) return n.error();
  if (key == "u32" && *n > 0xFFFFFFFFull) return w.at(field, fmt::format("{} is outside u32", *n));
  return n;
}

Expected<TensorPart> part(const Where& w, const json& v, const std::string& field) {
  if (!v.contains("part")) return TensorPart::kWhole;
  const json& p = v.at("part");
  if (p.is_string() && p.get<std::string>() == "codes") return TensorPart::kCodes;
  if (p.is_string() && p.get<std::string>() == "scales") return TensorPart::kScales;
  return w.at(field + ".part", "expected \"codes\" or \"scales\"");
}

Expected<LaunchArg> arg(const Where& w, const json& v, const std::string& field) {
  if (!v.is_object()) return w.at(field, "expected an object, found " + std::string(v.type_name()));
  LaunchArg a;
  const bool has_part = v.contains("part");
  if (v.size() != (has_part ? 2u : 1u))
    return w.at(field, "expected one of {\"tensor\": n[, \"part\": p]}, {\"joined\": [...][, \"part\": p]}, "
                       "{\"output\": n}, {\"u32\"|\"i32\"|\"u64\"|\"f32\": v}");
  const std::string key = v.begin().key() == "part" ? std::next(v.begin()).key() : v.begin().key();
  const json& value = v.at(key);
  const std::string vf = field + "." + key;
  if (key == "tensor" || key == "output") {
    if (!value.is_string() || !fields::valid_name(value.get<std::string>()))
      return w.at(vf, "expected a name: lower-case letters, digits, '.', '_' or '-'");
    a.kind = key == "tensor" ? LaunchArg::Kind::kTensor : LaunchArg::Kind::kOutput;
    a.tensors = {value.get<std::string>()};
  } else if (key == "joined") {
    if (!value.is_array() || value.size() < 2) return w.at(vf, "expected an array of at least two input names");
    if (value.size() > 8) return w.at(vf, "at most 8 tensors joined");
    a.kind = LaunchArg::Kind::kJoined;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string item = fmt::format("{}[{}]", vf, i);
      if (!value[i].is_string() || !fields::valid_name(value[i].get<std::string>()))
        return w.at(item, "expected a name: lower-case letters, digits, '.', '_' or '-'");
      if (std::find(a.tensors.begin(), a.tensors.end(), value[i].get<std::string>()) != a.tensors.end())
        return w.at(item, fmt::format("\"{}\" joined twice", value[i].get<std::string>()));
      a.tensors.push_back(value[i].get<std::string>());
    }
  } else if (key == "u32" || key == "i32" || key == "u64" || key == "f32") {
    a.kind = key == "u32" ? LaunchArg::Kind::kU32
             : key == "i32" ? LaunchArg::Kind::kI32
             : key == "u64" ? LaunchArg::Kind::kU64
                            : LaunchArg::Kind::kF32;
    auto bits = scalar_bits(w, value, key, vf);
    if (!bits) return bits.error();
    a.bits = *bits;
  } else {
    return w.at(vf, "unknown argument kind (tensor, joined, output, u32, i32, u64, f32)");
  }
  if (has_part && a.kind != LaunchArg::Kind::kTensor && a.kind != LaunchArg::Kind::kJoined)
    return w.at(field + ".part", "only a tensor or joined argument has a part");
  auto p = part(w, v, field);
  if (!p) return p.error();
  a.part = *p;
  return a;
}

}  // namespace

Expected<KernelSources> sources(const Where& w, const json& v, const std::string& spec_dir) {
  if (!v.is_object()) return w.at("kernels", "expected an object, found " + std::string(v.type_name()));
  if (auto ok = fields::only_keys(w, v, "kernels", {"files", "ptx", "include_dirs", "fmad"}); !ok) return ok.error();
  KernelSources k;
  for (auto [key, out] : {std::pair{"files", &k.files}, std::pair{"ptx", &k.ptx},
                          std::pair{"include_dirs", &k.include_dirs_written}}) {
    if (!v.contains(key)) continue;
    auto list = paths(w, v.at(key), fmt::format("kernels.{}", key));
    if (!list) return list.error();
    *out = *list;
  }
  if (k.files.empty() && k.ptx.empty())
    return w.at("kernels", "expected \"files\" (CUDA source) or \"ptx\" (PTX modules), at least one path");
  if (k.files.empty() && !k.include_dirs_written.empty())
    return w.at("kernels.include_dirs", "include directories serve CUDA \"files\"; this spec has none");
  if (v.contains("fmad")) {
    if (!v.at("fmad").is_boolean()) return w.at("kernels.fmad", "expected true or false");
    if (k.files.empty()) return w.at("kernels.fmad", "fmad is an NVRTC option for CUDA \"files\"; this spec has none");
    k.fmad = v.at("fmad").get<bool>();
  }
  k.file_paths = resolve(k.files, spec_dir);
  k.ptx_paths = resolve(k.ptx, spec_dir);
  k.include_dirs = resolve(k.include_dirs_written, spec_dir);
  return k;
}

Expected<KernelLaunch> stage(const Where& w, const json& v, const std::string& field) {
  if (auto ok = fields::only_keys(w, v, field, {"kernel", "grid", "block", "shared_bytes", "args"}); !ok)
    return ok.error();
  KernelLaunch l;
  auto name = fields::string_field(w, v, field, "kernel", true);
  if (!name) return name.error();
  if (!kernel_name(*name)) return w.at(field + ".kernel", "expected a kernel's (extern \"C\") name, a C identifier");
  l.kernel = *name;
  for (auto [key, out, limit] : {std::tuple{"grid", &l.grid, kMaxGridDims}, std::tuple{"block", &l.block, kMaxBlockDims}}) {
    if (!v.contains(key)) return w.at(fields::join(field, key), "missing");
    auto d = dims(w, v.at(key), fields::join(field, key), limit);
    if (!d) return d.error();
    *out = *d;
  }
  const std::uint64_t threads = std::uint64_t{l.block[0]} * l.block[1] * l.block[2];
  if (threads > kMaxBlockThreads)
    return w.at(field + ".block", fmt::format("{} threads a block: at most {}", threads, kMaxBlockThreads));
  if (v.contains("shared_bytes")) {
    auto n = fields::unsigned_value(w, v.at("shared_bytes"), field + ".shared_bytes");
    if (!n) return n.error();
    if (*n > kMaxDynamicShared)
      return w.at(field + ".shared_bytes", fmt::format("{} bytes: at most {} dynamic shared bytes", *n, kMaxDynamicShared));
    l.shared_bytes = static_cast<unsigned>(*n);
  }
  if (!v.contains("args")) return w.at(field + ".args", "missing");
  const json& args = v.at("args");
  if (!args.is_array()) return w.at(field + ".args", "expected an array of arguments");
  if (args.size() > kMaxLaunchArgs) return w.at(field + ".args", fmt::format("more than {} arguments", kMaxLaunchArgs));
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto a = arg(w, args[i], fmt::format("{}.args[{}]", field, i));
    if (!a) return a.error();
    l.args.push_back(std::move(*a));
  }
  return l;
}

Expected<OutputDecl> output_decl(const Where& w, const json& v, const std::string& field) {
  if (auto ok = fields::only_keys(w, v, field, {"name", "dtype", "shape"}); !ok) return ok.error();
  OutputDecl d;
  auto name = fields::string_field(w, v, field, "name", true);
  if (!name) return name.error();
  if (!fields::valid_name(*name))
    return w.at(field + ".name", "expected lower-case letters, digits, '.', '_' or '-'");
  d.name = *name;
  auto dtype = fields::string_field(w, v, field, "dtype", true);
  if (!dtype) return dtype.error();
  if (*dtype != "f16" && *dtype != "bf16")
    return w.at(field + ".dtype", fmt::format("unknown output dtype \"{}\" (f16, bf16)", *dtype));
  d.dtype = *dtype == "f16" ? OutputType::kF16 : OutputType::kBf16;
  if (!v.contains("shape")) return w.at(field + ".shape", "missing");
  const json& s = v.at("shape");
  if (!s.is_array() || s.empty() || s.size() > 2) return w.at(field + ".shape", "expected [cols] or [rows, cols]");
  std::uint64_t dims[2] = {1, 0};
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::string item = fmt::format("{}.shape[{}]", field, i);
    auto n = fields::unsigned_value(w, s[i], item);
    if (!n) return n.error();
    if (*n == 0) return w.at(item, "must be at least 1");
    dims[2 - s.size() + i] = *n;
  }
  d.rows = dims[0];
  d.cols = dims[1];
  if (d.rows > (std::uint64_t{1} << 31) / d.cols)
    return w.at(field + ".shape",
                fmt::format("{} x {} elements: more than the 2^31 bitproof holds per tensor", d.rows, d.cols));
  return d;
}

nlohmann::ordered_json sources_json(const KernelSources& k) {
  nlohmann::ordered_json j;
  if (!k.files.empty()) j["files"] = k.files;
  if (!k.ptx.empty()) j["ptx"] = k.ptx;
  if (!k.include_dirs_written.empty()) j["include_dirs"] = k.include_dirs_written;
  if (!k.files.empty()) j["fmad"] = k.fmad;
  return j;
}

nlohmann::ordered_json stage_json(const KernelLaunch& l) {
  nlohmann::ordered_json j;
  j["kernel"] = l.kernel;
  j["grid"] = l.grid;
  j["block"] = l.block;
  if (l.shared_bytes != 0) j["shared_bytes"] = l.shared_bytes;
  j["args"] = nlohmann::ordered_json::array();
  for (const LaunchArg& a : l.args) {
    nlohmann::ordered_json x;
    switch (a.kind) {
      case LaunchArg::Kind::kTensor: x["tensor"] = a.tensors[0]; break;
      case LaunchArg::Kind::kOutput: x["output"] = a.tensors[0]; break;
      case LaunchArg::Kind::kJoined: x["joined"] = a.tensors; break;
      case LaunchArg::Kind::kU32:
      case LaunchArg::Kind::kU64: x[launch_arg_kind_name(a.kind)] = a.bits; break;
      case LaunchArg::Kind::kI32: x["i32"] = static_cast<std::int32_t>(static_cast<std::uint32_t>(a.bits)); break;
      case LaunchArg::Kind::kF32: x["f32"] = std::bit_cast<float>(static_cast<std::uint32_t>(a.bits)); break;
    }
    if (a.part != TensorPart::kWhole) x["part"] = a.part == TensorPart::kCodes ? "codes" : "scales";
    j["args"].push_back(x);
  }
  return j;
}

nlohmann::ordered_json output_decl_json(const OutputDecl& d) {
  nlohmann::ordered_json j;
  j["name"] = d.name;
  j["dtype"] = d.dtype == OutputType::kF16 ? "f16" : "bf16";
  j["shape"] = {d.rows, d.cols};
  return j;
}

}  // namespace kernel_parse
}  // namespace bitproof::op
