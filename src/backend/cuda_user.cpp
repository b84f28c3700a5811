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
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <mutex>
#include <sstream>

#include "backend/sweep_abi.hpp"
#include "hash/digest.hpp"
#include "report/report.hpp"
#include "version.hpp"
#include "strict_json.hpp"
#include "user/user_code.hpp"
#include "user/build_text.hpp"

namespace bitproof::cuda {
namespace {

namespace fs = std::filesystem;

// ---- NVRTC and nvJitLink, opened at run time ----

#define BITPROOF_NVRTC_FUNCTIONS(X)                                                                             \
  X(nvrtcVersion) X(nvrtcCreateProgram) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) \
  X(nvrtcGetLTOIRSize) X(nvrtcGetLTOIR) X(nvrtcDestroyProgram) X(nvrtcGetErrorString)
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

// `what` names the source in errors ("<spec>: user_recipes").
// `refusal` turns the log of a failed compile into the ABI's error where it is one.
Expected<std::string> compile(const Toolkit& t, const std::string& what, const std::string& source,
                              const std::vector<std::string>& options,
                              const std::function<std::optional<Error>(const std::string&)>& refusal = {}) {
  nvrtcProgram program = nullptr;
  if (t.nvrtcCreateProgram(&program, source.c_str(), kUnitName, 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    return Error{"--backend cuda: nvrtcCreateProgram failed", kExitNoBackend};
  }
  const auto args = c_strings(options);
  const nvrtcResult rc = t.nvrtcCompileProgram(program, static_cast<int>(args.size()), args.data());
  std::size_t log_size = 0;
  t.nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) t.nvrtcGetProgramLog(program, log.data());
  std::string ir;
  std::size_t ir_size = 0;
  if (rc == NVRTC_SUCCESS && t.nvrtcGetLTOIRSize(program, &ir_size) == NVRTC_SUCCESS) {
    ir.resize(ir_size);
    t.nvrtcGetLTOIR(program, ir.data());
  }
  t.nvrtcDestroyProgram(&program);
  if (rc != NVRTC_SUCCESS) {
    if (refusal) {
      if (auto abi = refusal(log)) return *abi;
    }
    return Error{fmt::format("{}: NVRTC: {}", what, first_errors(log))};
  }
  return ir;
}

// Links `ir` (with `lto_image` first when it is not empty) into a cubin.
Expected<std::string> link(const Toolkit& t, const std::string& what, std::string_view lto_image,
                           const std::string& ir, const std::vector<std::string>& options) {
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
  auto ir = compile(t, what, image.source, rtc,
                    [&](const std::string& log) { return user::abi_error(user, log, kUnitName, call_lines); });
  if (!ir) return ir.error();
  auto cubin = link(t, what, lto_image, *ir, jit);
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
                                          bool fmad, int major, int minor, const std::string& what) {
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
  auto ir = compile(t, what, source, out.options);
  if (!ir) return ir.error();
  const std::vector<std::string> jit = {fmt::format("-arch=sm_{}{}", major, minor), "-lto", fmad ? "-fma=1" : "-fma=0"};
  auto cubin = link(t, what, {}, *ir, jit);
  if (!cubin) return cubin.error();
  out.options.insert(out.options.end(), jit.begin(), jit.end());
  out.cubin = std::move(*cubin);
  return out;
}

}  // namespace bitproof::cuda

#endif
