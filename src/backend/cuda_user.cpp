#include "backend/cuda_user.hpp"

#if defined(BITPROOF_HAVE_CUDA)

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <link.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>

#include "backend/backend.hpp"
#include "backend/sweep_abi.hpp"
#include "hash/digest.hpp"
#include "report/report.hpp"
#include "version.hpp"
#include "strict_json.hpp"
#include "user/build_text.hpp"
#include "user/process.hpp"
#include "user/user_code.hpp"

namespace bitproof::cuda {
namespace {

namespace fs = std::filesystem;

// ---- NVRTC and nvJitLink, opened at run time ----

#define BITPROOF_NVRTC_FUNCTIONS(X)                                                                             \
  X(nvrtcVersion) X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) \
  X(nvrtcGetLTOIRSize) X(nvrtcGetLTOIR) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcDestroyProgram)       \
  X(nvrtcGetErrorString)
#define BITPROOF_JITLINK_FUNCTIONS(X)                                                                 \
  X(nvJitLinkVersion) X(nvJitLinkCreate) X(nvJitLinkAddData) X(nvJitLinkComplete)                      \
  X(nvJitLinkGetLinkedCubinSize) X(nvJitLinkGetLinkedCubin) X(nvJitLinkGetErrorLogSize) X(nvJitLinkGetErrorLog) \
  X(nvJitLinkDestroy)

struct Toolkit {
#define BITPROOF_TOOLKIT_MEMBER(f) decltype(&::f) f = nullptr;
  BITPROOF_NVRTC_FUNCTIONS(BITPROOF_TOOLKIT_MEMBER)
  BITPROOF_JITLINK_FUNCTIONS(BITPROOF_TOOLKIT_MEMBER)
#undef BITPROOF_TOOLKIT_MEMBER
  std::string include_dir;  // the toolkit's include/ (cuda_fp16.h, cccl/)
  std::string version;
};

std::vector<std::string> library_dirs() {
  std::vector<std::string> dirs;
  for (const char* env : {"BITPROOF_CUDA_LIB_DIR", "CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(env);
    if (v == nullptr || *v == '\0') continue;
    dirs.push_back(std::string(env) == "BITPROOF_CUDA_LIB_DIR" ? std::string(v) : std::string(v) + "/lib64");
  }
  dirs.emplace_back("/usr/local/cuda/lib64");
  dirs.emplace_back("");  // the loader's own search path
  return dirs;
}

void* open_library(const char* name, std::string& found_in) {
  for (const std::string& dir : library_dirs()) {
    const std::string path = dir.empty() ? std::string(name) : dir + "/" + name;
    if (void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      char origin[PATH_MAX] = {};
      found_in = dlinfo(lib, RTLD_DI_ORIGIN, origin) == 0 ? origin : dir;
      return lib;
    }
  }
  return nullptr;
}

Expected<const Toolkit*> load_toolkit() {
  static Toolkit t;
  std::string dir, jit_dir;
  void* rtc = open_library("libnvrtc.so.13", dir);
  void* jit = open_library("libnvJitLink.so.13", jit_dir);
  if (rtc == nullptr || jit == nullptr) {
    return Error{fmt::format("--backend cuda: user recipes need NVRTC and nvJitLink from the CUDA 13 toolkit ({} not "
                             "found; $BITPROOF_CUDA_LIB_DIR or $CUDA_HOME name where it is)",
                             rtc == nullptr ? "libnvrtc.so.13" : "libnvJitLink.so.13"),
                 kExitNoBackend};
  }
#define BITPROOF_TOOLKIT_RESOLVE(f, lib)                                                                     \
  t.f = reinterpret_cast<decltype(t.f)>(dlsym(lib, #f));                                                    \
  if (t.f == nullptr) return Error{fmt::format("--backend cuda: {} lacks {}", #lib, #f), kExitNoBackend};
#define BITPROOF_RESOLVE_RTC(f) BITPROOF_TOOLKIT_RESOLVE(f, rtc)
#define BITPROOF_RESOLVE_JIT(f) BITPROOF_TOOLKIT_RESOLVE(f, jit)
  BITPROOF_NVRTC_FUNCTIONS(BITPROOF_RESOLVE_RTC)
  BITPROOF_JITLINK_FUNCTIONS(BITPROOF_RESOLVE_JIT)
#undef BITPROOF_RESOLVE_JIT
#undef BITPROOF_RESOLVE_RTC
#undef BITPROOF_TOOLKIT_RESOLVE
  int rtc_major = 0, rtc_minor = 0;
  unsigned jit_major = 0, jit_minor = 0;
  t.nvrtcVersion(&rtc_major, &rtc_minor);
  t.nvJitLinkVersion(&jit_major, &jit_minor);
  t.version = fmt::format("nvrtc {}.{}, nvJitLink {}.{}", rtc_major, rtc_minor, jit_major, jit_minor);
  t.include_dir = (fs::path(dir).parent_path() / "include").string();
  std::error_code ec;
  if (!fs::exists(fs::path(t.include_dir) / "cuda_fp16.h", ec)) {
    return Error{fmt::format("--backend cuda: user recipes need the CUDA toolkit's headers: no cuda_fp16.h in {}",
                             t.include_dir),
                 kExitNoBackend};
  }
  return static_cast<const Toolkit*>(&t);
}

Expected<const Toolkit*> toolkit() {
  static std::once_flag once;
  static Expected<const Toolkit*> loaded = Error{"unreachable"};
  std::call_once(once, [] { loaded = load_toolkit(); });
  return loaded;
}

// ---- the program ----

fs::path spec_dir(const user::UserRecipes& user) {
  std::error_code ec;
  return fs::absolute(user.base_dir.empty() ? fs::path(".") : fs::path(user.base_dir), ec);
}

// The directory of bitproof's stand-ins for the C++ headers NVRTC lacks
// (src/user/include/nvrtc: <cstdint>), first on the include path, or why
// there is none: without it every kernel fails to compile.
Expected<std::string> shim_dir() {
  auto dirs = user::include_dirs();
  if (!dirs) return Error{"NVRTC: " + dirs.error().message};
  for (const std::string& d : *dirs) {
    std::error_code ec;
    if (fs::exists(fs::path(d) / "nvrtc" / "cstdint", ec)) return (fs::path(d) / "nvrtc").string();
  }
  return Error{fmt::format("NVRTC: no nvrtc/cstdint in bitproof's header directories ({}; set BITPROOF_INCLUDE_DIRS)",
                           fmt::join(*dirs, ":"))};
}

// The unit's name in NVRTC's log ("bitproof-user.cu(LINE): error: ...").
constexpr const char* kUnitName = "bitproof-user.cu";

// `call_lines` gets each function's call's line (the ABI's refusals are found by it).
std::string gpu_source(const user::UserRecipes& user, const std::vector<int>& slot_recipes,
                       std::vector<std::pair<long, int>>* call_lines = nullptr) {
  std::string s = "// Generated by bitproof: one spec's user recipes for the sweep kernels (NVRTC, LTO).\n#include <cstdint>\n";
  for (const std::string& f : user.files) {
    s += fmt::format("#include \"{}\"\n", (spec_dir(user) / f).lexically_normal().string());
  }
  s += user::abi_prelude("__device__ ", static_cast<int>(user.recipes.size()));
  s += "extern \"C\" __device__ const int bp_spec_recipes[" + std::to_string(abi::kMaxSlots) + "] = {";
  for (std::size_t j = 0; j < slot_recipes.size(); ++j) s += fmt::format("{}{}", j ? ", " : "", slot_recipes[j]);
  s += "};\nextern \"C\" __device__ std::uint32_t bp_user_eval(int slot, std::uint32_t c0, std::uint32_t c1, "
       "std::uint32_t c2) {\n  (void)c1;\n  (void)c2;\n  switch (slot) {\n";
  int slot = 0;
  for (const user::UserRecipe& r : user.recipes) {
    const char* args[] = {"c0", "c0, c1", "c0, c1, c2"};
    if (r.table.empty()) {  // an output table is data: the cuda backend refuses specs with one
      if (call_lines != nullptr) call_lines->emplace_back(std::count(s.begin(), s.end(), '\n') + 1, slot);
      s += fmt::format("    case {}: return {};\n", slot,
                       user::abi_call(slot, r.card.arity, r.function, args[r.card.arity - 1]));
    }
    ++slot;
  }
  s += "    default: return 0;\n  }\n}\n";
  return s;
}

std::vector<std::string> nvrtc_options(const user::UserRecipes& user, const Toolkit& t, const std::string& shim, int major,
                                       int minor) {
  std::vector<std::string> o = {fmt::format("--gpu-architecture=compute_{}{}", major, minor), "-dlto", "-rdc=true",
                                "-std=c++17", user.fmad ? "--fmad=true" : "--fmad=false"};
  o.push_back("-I" + shim);
  o.push_back("-I" + t.include_dir);
  o.push_back("-I" + (fs::path(t.include_dir) / "cccl").string());
  for (const std::string& d : user.include_dirs) o.push_back("-I" + (spec_dir(user) / d).lexically_normal().string());
  o.push_back("-I" + spec_dir(user).lexically_normal().string());
  return o;
}

std::vector<std::string> link_options(const user::UserRecipes& user, int major, int minor) {
  // -fma: with -lto the code is generated here, so the link decides contraction
  // (NVRTC's --fmad=false alone still gave FMAs on an H200). Not -split-compile:
  // on this link it multiplied the work (24 s became over 96 s of CPU).
  return {fmt::format("-arch=sm_{}{}", major, minor), "-lto", user.fmad ? "-fma=1" : "-fma=0"};
}

// The line at the NVRTC compile's limit: the spec, its sources and the limit.
std::string nvrtc_timeout_message(const user::UserRecipes& user) {
  std::string files;
  for (const std::string& f : user.files) files += (files.empty() ? "" : ", ") + printable(f);
  return fmt::format(
      "{}: sources: NVRTC compiling {} took longer than the {:g} s limit (--compile-timeout SECONDS "
      "sets it)",
      user.spec_path, files.empty() ? std::string("the sweep kernels") : files, user.compile_timeout_s);
}

// The first lines of a compiler log that say "error", with the line after each.
std::string first_errors(const std::string& log) {
  std::stringstream lines(log);
  std::string out;
  int kept = 0;
  for (std::string line; std::getline(lines, line) && kept < 3;) {
    if (line.find("error") == std::string::npos) continue;
    out += (out.empty() ? "" : " | ") + printable(line);
    ++kept;
  }
  return out.empty() ? printable(log.substr(0, 300)) : out;
}

std::vector<const char*> c_strings(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
}

// What NVRTC made of a source: its LTO IR, or (failed) its log.
struct Compiled {
  bool ok = false;
  std::string ir;
  std::string log;
};

// `ptx`: the program's PTX text (options without -dlto) instead of its LTO IR.
Expected<Compiled> compile(const Toolkit& t, const std::string& source, const std::vector<std::string>& options,
                           bool ptx = false) {
  nvrtcProgram program = nullptr;
  if (t.nvrtcCreateProgram(&program, source.c_str(), kUnitName, 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    return Error{"--backend cuda: nvrtcCreateProgram failed", kExitNoBackend};
  }
  const auto args = c_strings(options);
  const nvrtcResult rc = t.nvrtcCompileProgram(program, static_cast<int>(args.size()), args.data());
  Compiled out;
  std::size_t log_size = 0;
  t.nvrtcGetProgramLogSize(program, &log_size);
  out.log.assign(log_size, '\0');
  if (log_size > 0) t.nvrtcGetProgramLog(program, out.log.data());
  std::size_t ir_size = 0;
  if (ptx && rc == NVRTC_SUCCESS && t.nvrtcGetPTXSize(program, &ir_size) == NVRTC_SUCCESS) {
    out.ir.resize(ir_size);
    t.nvrtcGetPTX(program, out.ir.data());
    while (!out.ir.empty() && out.ir.back() == '\0') out.ir.pop_back();  // the size counts the terminator
  } else if (!ptx && rc == NVRTC_SUCCESS && t.nvrtcGetLTOIRSize(program, &ir_size) == NVRTC_SUCCESS) {
    out.ir.resize(ir_size);
    t.nvrtcGetLTOIR(program, out.ir.data());
  }
  t.nvrtcDestroyProgram(&program);
  out.ok = rc == NVRTC_SUCCESS;
  return out;
}

// Links `ir` (with `lto_image` first when it is not empty) into a cubin.
Expected<std::string> link(const Toolkit& t, const std::string& what, std::string_view lto_image, std::string_view ir,
                           const std::vector<std::string>& options) {
  nvJitLinkHandle handle = nullptr;
  auto args = c_strings(options);
  if (t.nvJitLinkCreate(&handle, static_cast<std::uint32_t>(args.size()), const_cast<const char**>(args.data())) !=
      NVJITLINK_SUCCESS) {
    return Error{"--backend cuda: nvJitLinkCreate failed", kExitNoBackend};
  }
  nvJitLinkResult rc = lto_image.empty() ? NVJITLINK_SUCCESS
                                         : t.nvJitLinkAddData(handle, NVJITLINK_INPUT_FATBIN, lto_image.data(),
                                                              lto_image.size(), "sweep");
  if (rc == NVJITLINK_SUCCESS) rc = t.nvJitLinkAddData(handle, NVJITLINK_INPUT_LTOIR, ir.data(), ir.size(), "user");
  if (rc == NVJITLINK_SUCCESS) rc = t.nvJitLinkComplete(handle);
  std::string cubin;
  if (rc == NVJITLINK_SUCCESS) {
    std::size_t size = 0;
    t.nvJitLinkGetLinkedCubinSize(handle, &size);
    cubin.resize(size);
    t.nvJitLinkGetLinkedCubin(handle, cubin.data());
  } else {
    std::size_t size = 0;
    t.nvJitLinkGetErrorLogSize(handle, &size);
    std::string log(size, '\0');
    if (size > 0) t.nvJitLinkGetErrorLog(handle, log.data());
    t.nvJitLinkDestroy(&handle);
    return Error{fmt::format("{}: nvJitLink ({}): {}", what, static_cast<int>(rc), first_errors(log))};
  }
  t.nvJitLinkDestroy(&handle);
  return cubin;
}

// ---- the compile child ----
//
// NVRTC and nvJitLink run in a child process, so that a compile that never
// ends (`#include "/dev/zero"`, a template that recurses for ever, an LTO link
// that does not finish) is bounded by wall clock: at the limit the child's
// process group is killed (run_process) and the parent says so. The child is
// this program again (/proc/self/exe with kCompileChildFlag, see
// run_backend_child), started by posix_spawn: in the child nothing of the
// parent runs between the fork and the exec (glibc's posix_spawn uses
// CLONE_VM|CLONE_VFORK and only async-signal-safe calls), so starting it
// after cuInit is safe, where a fork() that went on running the parent's code
// would inherit the CUDA driver's state (its threads gone, its locks perhaps
// held) and could use no part of it. The child makes no driver call: NVRTC and
// nvJitLink need none. A thread in this process could not be stopped at the
// limit; a child can.
//
// The request (stdin) and the answer (stdout) are fields (user/build_text.hpp:
// each a 64-bit little-endian length and its bytes). Request: "bitproof-nvrtc-v1",
// the source, the NVRTC option count and options, the nvJitLink option count
// and options, the LTO image to link first (may be empty). Answer: "cubin" and
// the cubin; "nvrtc" and NVRTC's log (the compile failed); or "error", the exit
// code and a message (a link or toolkit error). A request tagged "bitproof-nvrtc-ptx-v1" (no
// nvJitLink options, no image) is compiled to PTX and answered "ptx" and the PTX text.

constexpr std::string_view kRequestTag = "bitproof-nvrtc-v1";
constexpr std::string_view kPtxRequestTag = "bitproof-nvrtc-ptx-v1";

// Reads a count field and that many fields after it from `fields` at `at`.
std::optional<std::vector<std::string>> field_list(const std::vector<std::string_view>& fields, std::size_t& at) {
  if (at >= fields.size() || fields[at].empty() || fields[at].size() > 4) return std::nullopt;
  std::size_t n = 0;
  for (const char c : fields[at]) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  ++at;
  if (n > fields.size() - at) return std::nullopt;
  std::vector<std::string> out(fields.begin() + static_cast<long>(at), fields.begin() + static_cast<long>(at + n));
  at += n;
  return out;
}

std::string request_text(const std::string& source, const std::vector<std::string>& rtc,
                         const std::vector<std::string>& jit, std::string_view lto_image,
                         std::string_view tag = kRequestTag) {
  const std::string rtc_count = std::to_string(rtc.size()), jit_count = std::to_string(jit.size());
  std::vector<std::string_view> fields = {tag, source, rtc_count};
  fields.insert(fields.end(), rtc.begin(), rtc.end());
  fields.push_back(jit_count);
  fields.insert(fields.end(), jit.begin(), jit.end());
  fields.push_back(lto_image);
  return user::fields_text(fields);
}

// The child's work: the answer to one request.
std::string answer(std::string_view request) {
  const auto error = [](int code, const std::string& message) {
    return user::fields_text({"error", std::to_string(code), message});
  };
  const auto fields = user::parse_fields(request);
  std::size_t at = 2;
  const auto rtc = fields && fields->size() > 2 ? field_list(*fields, at) : std::nullopt;
  const auto jit = rtc ? field_list(*fields, at) : std::nullopt;
  const bool ptx = jit && (*fields)[0] == kPtxRequestTag;
  if (!jit || ((*fields)[0] != kRequestTag && !ptx) || at + 1 != fields->size()) {
    return error(kExitBadInput, "the NVRTC child: a request it cannot read");
  }
  const std::string_view lto_image = (*fields)[at];
  auto loaded = toolkit();
  if (!loaded) return error(loaded.error().exit_code, loaded.error().message);
  auto compiled = compile(**loaded, std::string((*fields)[1]), *rtc, ptx);
  if (!compiled) return error(compiled.error().exit_code, compiled.error().message);
  if (!compiled->ok) return user::fields_text({"nvrtc", compiled->log});
  if (ptx) return user::fields_text({"ptx", compiled->ir});
  auto cubin = link(**loaded, "", lto_image, compiled->ir, *jit);
  if (!cubin) return error(cubin.error().exit_code, cubin.error().message);
  return user::fields_text({"cubin", *cubin});
}

// Compiles `source` with NVRTC (`rtc`) and links it (`jit`, `lto_image` first)
// in the compile child, within `timeout_s`. `what` names the source in errors;
// `timeout_message` is the error at the limit; `refusal` turns the log of a
// failed compile into the ABI's error where it is one.
Expected<std::string> compile_and_link(const std::string& what, const std::string& source,
                                       const std::vector<std::string>& rtc, const std::vector<std::string>& jit,
                                       std::string_view lto_image, double timeout_s, const std::string& timeout_message,
                                       const std::function<std::optional<Error>(const std::string&)>& refusal = {},
                                       bool ptx = false) {
  auto ran = user::run_process({"/proc/self/exe", std::string(kCompileChildFlag)},
                               request_text(source, rtc, jit, lto_image, ptx ? kPtxRequestTag : kRequestTag), {},
                               timeout_s);
  if (!ran) return Error{fmt::format("{}: NVRTC: {}", what, ran.error().message), kExitNoBackend};
  if (ran->timed_out) return Error{timeout_message};
  const auto fields = user::parse_fields(ran->out);
  if (ran->status != 0 || !fields || fields->empty()) {
    return Error{fmt::format("{}: the NVRTC child ended with status {} and no answer: {}", what, ran->status,
                             first_errors(ran->err)),
                 kExitNoBackend};
  }
  const std::string_view tag = fields->front();
  if (tag == (ptx ? "ptx" : "cubin") && fields->size() == 2) return std::string((*fields)[1]);
  if (tag == "nvrtc" && fields->size() == 2) {
    const std::string log((*fields)[1]);
    if (refusal) {
      if (auto abi = refusal(log)) return *abi;
    }
    return Error{fmt::format("{}: NVRTC: {}", what, first_errors(log))};
  }
  if (tag == "error" && fields->size() == 3) {
    // A link error comes as ": nvJitLink (...)" (the child knows no `what`); a toolkit error whole.
    const std::string message((*fields)[2]);
    return Error{message.starts_with(':') ? what + message : message,
                 (*fields)[1] == "3" ? kExitNoBackend : kExitBadInput};
  }
  return Error{fmt::format("{}: the NVRTC child's answer cannot be read", what), kExitNoBackend};
}

}  // namespace

Expected<UserImage> build_user_image(const user::UserRecipes& user, const std::vector<int>& slot_recipes, int major,
                                     int minor, std::string_view lto_image) {
  if (auto refused = user::refuse_user_code(user)) return *refused;  // --no-user-code: nothing reaches NVRTC
  const auto start = std::chrono::steady_clock::now();
  auto loaded = toolkit();
  if (!loaded) return loaded.error();
  const Toolkit& t = **loaded;
  UserImage image;
  image.toolkit = t.version;
  std::vector<std::pair<long, int>> call_lines;
  image.source = gpu_source(user, slot_recipes, &call_lines);
  const auto shim = shim_dir();
  if (!shim) return shim.error();
  const std::vector<std::string> rtc = nvrtc_options(user, t, *shim, major, minor);
  const std::vector<std::string> jit = link_options(user, major, minor);
  image.options = rtc;
  image.options.insert(image.options.end(), jit.begin(), jit.end());
  // The key: bitproof, the toolkit, the options, the generated source, the
  // sweep kernels' image and every user file by content. Include directories
  // are left out: where they lie says nothing of what they hold (bitproof's
  // own headers go with its version, the toolkit's with its version, the
  // user's files are listed by content below), so an image linked in another
  // directory or on another machine with the same toolkit is found.
  std::string key_text = fmt::format("bitproof-cuda-user-v3\n{} {}\n{}\n", tool_version(), tool_git_commit(), t.version);
  for (const std::string& o : image.options) {
    if (!o.starts_with("-I")) key_text += o + "\n";
  }
  key_text += image.source + sha256_hex(std::string(lto_image)) + "\n";
  // No user files (catalogue recipes specialized for a spec): nothing to list.
  auto sources = user.files.empty() ? Expected<std::vector<user::SourceDigest>>(std::vector<user::SourceDigest>{})
                                    : user.source_digests();
  bool cacheable = sources.ok();
  if (sources) {
    for (const user::SourceDigest& d : *sources) key_text += d.path + " " + d.sha256 + "\n";
    image.sources_note = "the user's files as the host preprocessor lists them, by SHA-256";
  } else {
    image.sources_note = "not cached: the user's files could not be listed (" + sources.error().message + ")";
  }
  image.key = sha256_hex(key_text);
  const fs::path cached = fs::path(user::cache_directory()) / "cuda" / (image.key + ".cubin");
  if (cacheable && !user.no_cache) {
    auto kept = user::read_cached(cached.string());  // checked against the SHA-256 it was stored with
    if (!kept) return Error{fmt::format("{}: user_recipes: {}", user.spec_path, kept.error().message)};
    if (*kept) image.cubin = std::move(**kept);
    if (!image.cubin.empty()) {
      image.cached = true;
      image.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return image;
    }
  }
  const std::string what = user.spec_path + ": user_recipes";
  auto cubin =
      compile_and_link(what, image.source, rtc, jit, lto_image, user.compile_timeout_s, nvrtc_timeout_message(user),
                       [&](const std::string& log) { return user::abi_error(user, log, kUnitName, call_lines); });
  if (!cubin) return cubin.error();
  image.cubin = std::move(*cubin);
  if (cacheable) {
    std::error_code ec;
    fs::create_directories(cached.parent_path(), ec);
    user::store_cached(cached.string(), image.cubin);  // a cache that cannot be written costs time, not bits
  }
  image.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return image;
}

Expected<KernelCubin> compile_kernel_file(const std::string& file, const std::vector<std::string>& include_dirs,
                                          bool fmad, int major, int minor, const std::string& what, double timeout_s) {
  if (auto refused = user::refuse_user_code(what, fmt::format("the kernel file {}", file))) return *refused;
  auto loaded = toolkit();
  if (!loaded) return loaded.error();
  const Toolkit& t = **loaded;
  KernelCubin out;
  out.toolkit = t.version;
  std::error_code ec;
  const std::string path = fs::absolute(file, ec).lexically_normal().string();
  const std::string source = fmt::format("// Generated by bitproof: a timing arm's kernel.\n#include \"{}\"\n", path);
  out.options = {fmt::format("--gpu-architecture=compute_{}{}", major, minor), "-dlto", "-std=c++17",
                 fmad ? "--fmad=true" : "--fmad=false"};
  const auto shim = shim_dir();
  if (!shim) return shim.error();
  out.options.push_back("-I" + *shim);
  out.options.push_back("-I" + t.include_dir);
  out.options.push_back("-I" + (fs::path(t.include_dir) / "cccl").string());
  for (const std::string& d : include_dirs) out.options.push_back("-I" + d);
  out.options.push_back("-I" + fs::path(path).parent_path().string());
  const std::vector<std::string> jit = {fmt::format("-arch=sm_{}{}", major, minor), "-lto", fmad ? "-fma=1" : "-fma=0"};
  const std::string limit = fmt::format(
      "{}: NVRTC compiling {} took longer than the {:g} s limit (--compile-timeout "
      "SECONDS sets it)",
      what, printable(file), timeout_s);
  auto cubin = compile_and_link(what, source, out.options, jit, {}, timeout_s, limit);
  if (!cubin) return cubin.error();
  out.options.insert(out.options.end(), jit.begin(), jit.end());
  out.cubin = std::move(*cubin);
  return out;
}

Expected<KernelPtx> compile_kernel_ptx(const std::string& file, const std::vector<std::string>& include_dirs, bool fmad,
                                       int major, int minor, const std::string& what, double timeout_s) {
  if (auto refused = user::refuse_user_code(what, fmt::format("the kernel file {}", file))) return *refused;
  auto loaded = toolkit();
  if (!loaded) return loaded.error();
  KernelPtx out;
  out.toolkit = (*loaded)->version;
  std::error_code ec;
  const std::string path = fs::absolute(file, ec).lexically_normal().string();
  const std::string source = fmt::format("// Generated by bitproof: a kernel arm's source.\n#include \"{}\"\n", path);
  out.options = {fmt::format("--gpu-architecture=compute_{}{}", major, minor), "-std=c++17",
                 fmad ? "--fmad=true" : "--fmad=false"};
  const auto shim = shim_dir();
  if (!shim) return shim.error();
  std::vector<std::string> rtc = out.options;
  rtc.push_back("-I" + *shim);
  rtc.push_back("-I" + (*loaded)->include_dir);
  rtc.push_back("-I" + (fs::path((*loaded)->include_dir) / "cccl").string());
  for (const std::string& d : include_dirs) rtc.push_back("-I" + d);
  rtc.push_back("-I" + fs::path(path).parent_path().string());
  const std::string limit = fmt::format(
      "{}: NVRTC compiling {} took longer than the {:g} s limit (--compile-timeout SECONDS sets it)", what,
      printable(file), timeout_s);
  auto ptx = compile_and_link(what, source, rtc, {}, {}, timeout_s, limit, {}, true);
  if (!ptx) return ptx.error();
  out.ptx = std::move(*ptx);
  return out;
}

}  // namespace bitproof::cuda

namespace bitproof {

std::optional<int> run_backend_child(int argc, char** argv) {
  if (argc != 2 || std::string_view(argv[1]) != kCompileChildFlag) return std::nullopt;
  std::string request;
  char buffer[1 << 16];
  for (std::size_t got = 0; (got = std::fread(buffer, 1, sizeof buffer, stdin)) > 0;) request.append(buffer, got);
  const std::string out = cuda::answer(request);
  return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0 ? 0 : 4;
}

}  // namespace bitproof

#else

#include "backend/backend.hpp"

namespace bitproof {

std::optional<int> run_backend_child(int, char**) { return std::nullopt; }

}  // namespace bitproof

#endif
