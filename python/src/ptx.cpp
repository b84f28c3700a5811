// bitproof.ptx: a compiled Triton kernel as a kernel arm's stage (docs/operators.md, "kernel
// arms"): its PTX (`compiled.asm["ptx"]`) written as a file, and beside it the stage that
// launches it: {"kernels": {"ptx": [FILE]}, "stage": {"kernel", "grid", "block", "shared_bytes",
// "args"}}, block = num_warps × 32 threads, shared_bytes = the dynamic shared memory Triton
// launches it with, and the args the user binds followed by the trailing pointer parameters
// Triton adds (3.6: the global and the profile scratch), passed as null ({"u64": 0}): only a
// kernel that needs no scratch memory (both sizes 0) can be an arm, others are refused.
//
// The entry's parameter list is read from the PTX and every argument's size checked against its
// parameter (a pointer or u64 8 bytes, u32/i32/f32 4), as the kernel arm's build checks it later,
// so a wrong binding is named here, by its index and the PTX parameter's name.
#include "ptx/ptx.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "operator/kernel_spec.hpp"
#include "output_files.hpp"

namespace bitproof::python {
namespace {

using nlohmann::ordered_json;

Error bad(const std::string& field, const std::string& what) { return {"bitproof.ptx: " + field + ": " + what}; }

struct PtxParam {
  std::string name;
  unsigned bytes = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The bytes of a PTX type token (".u64" 8, ".b32" 4, ".f16" 2, ".u8" 1); 0 for anything else.
unsigned type_bytes(const std::string& t) {
  if (t.size() < 3 || t[0] != '.' || std::string("busf").find(t[1]) == std::string::npos) return 0;
  const std::string bits = t.substr(2);
  return bits == "8" ? 1 : bits == "16" ? 2 : bits == "32" ? 4 : bits == "64" ? 8 : 0;
}

// The parameters of `.entry <kernel>(...)`, each `.param .<type> [qualifiers] name`.
std::vector<PtxParam> entry_params(const std::string& ptx, const std::string& kernel) {
  std::size_t open = std::string::npos;
  for (std::size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 6)) {
    std::size_t i = at + 6;
    while (i < ptx.size() && is_space(ptx[i])) ++i;
    if (ptx.compare(i, kernel.size(), kernel) != 0) continue;
    i += kernel.size();
    while (i < ptx.size() && is_space(ptx[i])) ++i;
    if (i < ptx.size() && ptx[i] == '(') {
      open = i + 1;
      break;
    }
  }
  if (open == std::string::npos)
    raise(bad("kernel", "\"" + kernel + "\": no .entry of that name in the PTX (metadata.name names it)"));
  const std::size_t close = ptx.find(')', open);
  if (close == std::string::npos) raise(bad("kernel", "\"" + kernel + "\": its parameter list does not end"));
  std::vector<PtxParam> params;
  std::string list = ptx.substr(open, close - open);
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::vector<std::string> tokens;
    std::string token;
    for (std::size_t i = start; i <= end; ++i) {
      if (i == end || is_space(list[i])) {
        if (!token.empty()) tokens.push_back(token);
        token.clear();
      } else {
        token += list[i];
      }
    }
    if (!tokens.empty()) {
      unsigned bytes = 0;
      for (const std::string& t : tokens)
        if (bytes == 0 && t != ".param") bytes = type_bytes(t);
      if (tokens.front() != ".param" || bytes == 0 || tokens.size() < 3 || tokens.back().find('[') != std::string::npos)
        raise(bad("kernel", fmt::format("\"{}\": a parameter the PTX declares as \"{}\" is not read (a scalar or "
                                        "pointer .param; structures passed by value are not)",
                                        kernel, fmt::join(tokens, " "))));
      params.push_back({tokens.back(), bytes});
    }
    start = end + 1;
  }
  return params;
}

std::array<unsigned, 3> grid_of(const ordered_json& g) {
  if (!g.is_array() || g.empty() || g.size() > 3) raise(bad("grid", "expected 1 to 3 whole numbers"));
  std::array<unsigned, 3> out{1, 1, 1};
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!g[i].is_number_unsigned() || g[i].get<std::uint64_t>() == 0 || g[i].get<std::uint64_t>() > op::kMaxGridDims[i])
      raise(bad(fmt::format("grid[{}]", i), fmt::format("expected 1 to {}", op::kMaxGridDims[i])));
    out[i] = g[i].get<unsigned>();
  }
  return out;
}

// The bytes the parameter bound to `arg` takes (8 for a buffer or u64, 4 for a u32/i32/f32 scalar).
unsigned arg_bytes(const ordered_json& arg, std::size_t i) {
  const std::string field = fmt::format("args[{}]", i);
  if (!arg.is_object() || arg.empty()) raise(bad(field, "expected {\"tensor\"|\"joined\"|\"output\"|\"u32\"|...: v}"));
  for (const auto& [key, value] : arg.items()) {
    if (key == "tensor" || key == "joined" || key == "output" || key == "part") continue;
    if (key == "u32" || key == "i32" || key == "f32") return 4;
    if (key == "u64") return 8;
    raise(bad(field + "." + key, "unknown key (tensor, joined, output, part, u32, i32, u64, f32)"));
  }
  return 8;
}

}  // namespace

std::string ptx_stage(const std::string& ptx, const std::string& launch_json, const std::string& ptx_path,
                      const std::string& stage_path) {
  const ordered_json l = ordered_json::parse(launch_json, nullptr, false);
  if (l.is_discarded() || !l.is_object()) raise(bad("launch", "not a JSON object"));
  for (const char* key : {"kernel", "grid", "num_warps", "shared", "args", "trailing", "scratch_bytes", "ptx_file"})
    if (!l.contains(key)) raise(bad(key, "missing"));
  if (ptx.find(".entry") == std::string::npos) raise(bad("kernel.asm[\"ptx\"]", "no PTX (.entry) in it"));
  const std::string kernel = l.at("kernel").get<std::string>();
  const std::array<unsigned, 3> grid = grid_of(l.at("grid"));
  const ordered_json& warps = l.at("num_warps");
  if (!warps.is_number_unsigned() || warps.get<unsigned>() == 0 || warps.get<unsigned>() * 32 > op::kMaxBlockThreads)
    raise(bad("num_warps", fmt::format("expected 1 to {}", op::kMaxBlockThreads / 32)));
  const ordered_json& shared = l.at("shared");
  if (!shared.is_number_unsigned()) raise(bad("shared", "expected a whole number of bytes"));
  if (shared.get<std::uint64_t>() > op::kMaxDynamicShared)
    raise(bad("shared", fmt::format("{} bytes of dynamic shared memory: a kernel arm launches with at most {} (no "
                                    "opt-in attribute); a smaller num_stages or block size uses less",
                                    shared.get<std::uint64_t>(), op::kMaxDynamicShared)));
  for (const ordered_json& s : l.at("scratch_bytes")) {
    if (!s.is_number_unsigned() || s.get<std::uint64_t>() != 0)
      raise(bad("metadata", fmt::format("the kernel needs {} bytes of scratch memory (global_scratch_size, "
                                        "profile_scratch_size): a kernel arm passes null scratch pointers only",
                                        s.dump())));
  }
  const ordered_json& args = l.at("args");
  if (!args.is_array()) raise(bad("args", "expected a list of kernel-arm arguments"));
  const std::size_t trailing = l.at("trailing").get<std::size_t>();
  const std::vector<PtxParam> params = entry_params(ptx, kernel);
  if (params.size() != args.size() + trailing)
    raise(bad("args", fmt::format("{} given + {} trailing scratch pointer(s) Triton adds, but the PTX entry {} has {} "
                                  "parameters ({}): bind one argument per parameter Triton kept (constexpr "
                                  "arguments and integers specialised to 1 are not parameters)",
                                  args.size(), trailing, kernel, params.size(),
                                  fmt::join(
                                      [&] {
                                        std::vector<std::string> n;
                                        for (const PtxParam& p : params) n.push_back(p.name);
                                        return n;
                                      }(),
                                      ", "))));
  ordered_json stage_args = ordered_json::array();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const bool scratch = i >= args.size();
    const unsigned want = scratch ? 8 : arg_bytes(args[i], i);
    if (params[i].bytes != want)
      raise(bad(scratch ? fmt::format("trailing parameter {}", params[i].name) : fmt::format("args[{}]", i),
                fmt::format("takes {} bytes; the PTX parameter {} has {}", want, params[i].name, params[i].bytes)));
    stage_args.push_back(scratch ? ordered_json{{"u64", 0}} : args[i]);
  }
  ordered_json grid_json = ordered_json::array();
  for (std::size_t i = 0; i < l.at("grid").size(); ++i) grid_json.push_back(grid[i]);
  ordered_json fragment{{"kernels", {{"ptx", {l.at("ptx_file")}}}},
                        {"stage",
                         {{"kernel", kernel},
                          {"grid", grid_json},
                          {"block", {warps.get<unsigned>() * 32}},
                          {"shared_bytes", shared},
                          {"args", stage_args}}}};
  // Whether bitproof's PTX executor (the CPU backend of kernel arms) reads it: said, not required.
  const auto parsed = ptx::parse_module(ptx, l.at("ptx_file").get<std::string>());
  ordered_json result{{"fragment", fragment},
                      {"executor", parsed ? std::string("reads it") : parsed.error().message},
                      {"parameters", params.size()}};
  OutputFiles files;
  take(files.add("path", ptx_path));
  take(files.add("stage", stage_path));
  files.set(ptx_path, ptx);
  files.set(stage_path, fragment.dump(1) + "\n");
  take(files.commit());
  return result.dump();
}

}  // namespace bitproof::python
