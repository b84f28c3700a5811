// The CPU path of user recipes: a generated worker program that includes the
// user's sources after bitproof's CUDA host header, compiled with the host
// compiler, cached by content, and run over a domain's cases.
#include <fmt/format.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "hash/digest.hpp"
#include "version.hpp"
#include "strict_json.hpp"
#include "user/build_text.hpp"
#include "user/process.hpp"
#include "user/user_code.hpp"
#include "user/user_recipes.hpp"

// Where bitproof's own headers for the worker are (CMakeLists.txt defines all three):
// the source tree's directories, the build directory the command was linked in,
// and the installed directory relative to the installed command's directory.
#ifndef BITPROOF_USER_INCLUDE_DIRS
#define BITPROOF_USER_INCLUDE_DIRS ""
#endif
#ifndef BITPROOF_BUILD_DIR
#define BITPROOF_BUILD_DIR ""
#endif
#ifndef BITPROOF_INSTALLED_INCLUDE_DIR
#define BITPROOF_INSTALLED_INCLUDE_DIR "../include/bitproof"
#endif

namespace bitproof::user {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_dirs(const std::string& list) {
  std::vector<std::string> dirs;
  std::stringstream in(list);
  for (std::string d; std::getline(in, d, ':');) {
    if (!d.empty()) dirs.push_back(d);
  }
  return dirs;
}

// bitproof's own headers for the worker, or why there are none. In order:
// $BITPROOF_INCLUDE_DIRS (':'-separated, taken as given); the installed
// directory beside this executable (<prefix>/bin/bitproof ->
// <prefix>/include/bitproof, wherever the tree was installed or unpacked);
// the source tree, only while this executable is the one in the build
// directory it was linked in. A copied or installed command never reads the
// source tree it was built from.
struct IncludeDirs {
  std::vector<std::string> dirs;
  std::string error;  // non-empty when no directory holds the header
};

// The first of bitproof's headers the worker reads (CMakeLists.txt: BITPROOF_HOST_HEADERS and
// BITPROOF_HOST_SRC_HEADERS, named as the worker includes them) that no directory of `dirs`
// holds; empty when they hold every one.
std::string missing_header(const std::vector<std::string>& dirs) {
  for (const std::string& name : split_dirs(BITPROOF_HOST_HEADER_NAMES)) {
    std::error_code ec;
    if (std::none_of(dirs.begin(), dirs.end(),
                     [&](const std::string& d) { return fs::is_regular_file(fs::path(d) / name, ec); })) {
      return name;
    }
  }
  return "";
}

// $BITPROOF_INCLUDE_DIRS as given, when its directories hold every header the worker
// reads; else which one they lack and the directories that hold them all.
IncludeDirs given_include_dirs(const std::string& env) {
  std::vector<std::string> dirs = split_dirs(env);
  const std::string missing = missing_header(dirs);
  if (missing.empty()) return {std::move(dirs), ""};
  return {{},
          fmt::format("BITPROOF_INCLUDE_DIRS={}: none of its directories holds {}, which the worker includes: give "
                      "the installed header directory alone (include/bitproof under the install prefix holds every "
                      "one), or in a source tree both src/user/include and src (this build's: {})",
                      printable(env), missing, BITPROOF_USER_INCLUDE_DIRS)};
}

IncludeDirs find_include_dirs() {
  if (const char* env = std::getenv("BITPROOF_INCLUDE_DIRS"); env != nullptr && *env != '\0')
    return given_include_dirs(env);
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  if (ec) return {{}, fmt::format("cannot find bitproof's headers: /proc/self/exe: {} (set BITPROOF_INCLUDE_DIRS)", ec.message())};
  const fs::path installed = (self.parent_path() / BITPROOF_INSTALLED_INCLUDE_DIR).lexically_normal();
  if (fs::is_regular_file(installed / "bitproof_cuda_host.h", ec)) {
    // The installed directory is self-contained: one that lacks a header is a broken install.
    if (const std::string missing = missing_header({installed.string()}); !missing.empty()) {
      return {{},
              fmt::format("bitproof's installed header directory {} lacks {}: install bitproof again (cmake --install) "
                          "or unpack its release tarball whole",
                          installed.string(), missing)};
    }
    return {{installed.string()}, ""};
  }
  const std::string build_dir = BITPROOF_BUILD_DIR;
  if (!build_dir.empty() && fs::equivalent(self.parent_path(), build_dir, ec)) return {split_dirs(BITPROOF_USER_INCLUDE_DIRS), ""};
  return {{},
          fmt::format("bitproof's CUDA host header is not installed beside {}: no {} (install bitproof with cmake "
                      "--install or unpack its release tarball whole, or set BITPROOF_INCLUDE_DIRS)",
                      self.string(), (installed / "bitproof_cuda_host.h").string())};
}

const IncludeDirs& bitproof_include_dirs() {
  static const IncludeDirs found = find_include_dirs();
  return found;
}

std::string compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx != nullptr && *cxx != '\0' ? cxx : "c++";
}

fs::path cache_root() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') return fs::path(xdg) / "bitproof";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return fs::path(home) / ".cache" / "bitproof";
  return fs::temp_directory_path() / "bitproof-cache";
}

fs::path spec_dir(const UserRecipes& user) {
  const fs::path dir = user.base_dir;
  std::error_code ec;
  return fs::absolute(dir.empty() ? fs::path(".") : dir, ec);
}

// The generated program: each function behind the one ABI, then a driver that
// reads the domain on stdin and writes every function's bits, function-major,
// as u32 little-endian words on stdout. `call_lines` gets each function's
// call's line (the ABI's refusals are found by it).
std::string worker_source(const UserRecipes& user, std::vector<std::pair<long, int>>* call_lines = nullptr) {
  std::string s =
      "// Generated by bitproof: the user recipes of one spec, over the cases of a domain.\n"
      "#include <cuda_fp16.h>  // bitproof's CUDA host header (first on the include path)\n";
  for (const std::string& f : user.files) s += fmt::format("#include \"{}\"\n", (spec_dir(user) / f).lexically_normal().string());
  s += "#include <cstdint>\n#include <cstdio>\n#include <vector>\n";
  s += abi_prelude("", static_cast<int>(user.recipes.size()));
  s += "namespace bitproof_worker {\nusing Fn = std::uint32_t (*)(const std::uint32_t*);\nconst Fn kFunctions[] = {\n";
  for (std::size_t slot = 0; slot < user.recipes.size(); ++slot) {
    const UserRecipe& r = user.recipes[slot];
    if (r.function.empty()) continue;  // an output table: read by the engine, not run
    std::string args;
    for (int i = 0; i < r.card.arity; ++i) args += fmt::format("{}c[{}]", i ? ", " : "", i);
    if (call_lines != nullptr) call_lines->emplace_back(std::count(s.begin(), s.end(), '\n') + 1, static_cast<int>(slot));
    s += fmt::format("  [](const std::uint32_t* c) -> std::uint32_t {{ return {}; }},\n",
                     abi_call(static_cast<int>(slot), r.card.arity, r.function, args));
  }
  s += R"(};
struct Input { bool range; std::uint64_t lo, count; std::vector<std::uint32_t> list; };
}  // namespace bitproof_worker
int main() {
  using namespace bitproof_worker;
  unsigned inputs = 0;
  if (std::scanf("%u", &inputs) != 1 || inputs > 3) return 3;
  std::vector<Input> in(inputs);
  std::uint64_t cases = 1;
  for (Input& i : in) {
    char kind = 0;
    if (std::scanf(" %c %llu %llu", &kind, reinterpret_cast<unsigned long long*>(&i.lo),
                   reinterpret_cast<unsigned long long*>(&i.count)) != 3) return 3;
    i.range = kind == 'r';
    for (std::uint64_t k = 0; !i.range && k < i.count; ++k) {
      unsigned code = 0;
      if (std::scanf("%u", &code) != 1) return 3;
      i.list.push_back(code);
    }
    cases *= i.count;
  }
  std::vector<unsigned char> out;
  out.reserve(cases * 4);
  for (const Fn f : kFunctions) {
    for (std::uint64_t n = 0; n < cases; ++n) {
      std::uint32_t c[3] = {0, 0, 0};
      std::uint64_t rest = n;
      for (unsigned k = 0; k < inputs; ++k) {
        const std::uint64_t digit = rest % in[k].count;
        rest /= in[k].count;
        c[k] = in[k].range ? static_cast<std::uint32_t>(in[k].lo + digit) : in[k].list[digit];
      }
      const std::uint32_t bits = f(c);
      for (int b = 0; b < 4; ++b) out.push_back(static_cast<unsigned char>(bits >> (8 * b)));
    }
  }
  return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0 ? 0 : 4;
}
)";
  return s;
}

std::vector<std::string> compile_flags(const UserRecipes& user) {
  // The host path of a user recipe: IEEE arithmetic as written (no contraction
  // into FMA, no fast math), bitproof's header before the user's directories.
  std::vector<std::string> flags = {"-std=c++17", "-O2", "-ffp-contract=off", "-fno-fast-math"};
  for (const std::string& d : bitproof_include_dirs().dirs) flags.push_back("-I" + d);
  for (const std::string& d : user.include_dirs) flags.push_back("-I" + (spec_dir(user) / d).lexically_normal().string());
  return flags;
}

Expected<std::string> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read it", path.string())};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Expected<Ok> write_all(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) return Error{fmt::format("{}: cannot write it", path.string())};
  return Ok{};
}

// The make target of the dependency run (-MT): the rule parse_make_rule reads.
constexpr std::string_view kDepsTarget = "bitproof-worker-deps";

std::string normal(const std::string& path) {
  // Hundreds of system headers a cached run: no path parsing unless the path has a "." or ".." component.
  std::string n = path.find("/.") == std::string::npos ? path : fs::path(path).lexically_normal().string();
  while (n.size() > 1 && n.back() == '/') n.pop_back();
  return n;
}

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && (dir == "/" || path[dir.size()] == '/');
}

// Which files are the user's: anything not under bitproof's own header
// directories nor the compiler's system directories (its `-v` list of
// `#include <...>` directories less the -I directories bitproof passed). A
// user's header wherever it lies (beside the spec, in ../kernels/, in an
// include_dir) is the user's: it goes into the report and is checked by content.
struct Classifier {
  std::vector<std::string> tool, system;
  [[nodiscard]] DepKind kind(const std::string& path) const {
    const std::string n = normal(path);
    for (const std::string& d : tool) {
      if (under(n, d)) return DepKind::kTool;
    }
    for (const std::string& d : system) {
      if (under(n, d)) return DepKind::kSystem;
    }
    return DepKind::kUser;
  }
};

Classifier classifier(const UserRecipes& user, const std::string& verbose) {
  Classifier c;
  for (const std::string& d : bitproof_include_dirs().dirs) c.tool.push_back(normal(fs::path(d).lexically_normal().string()));
  std::vector<std::string> passed = c.tool;
  for (const std::string& d : user.include_dirs) passed.push_back(normal((spec_dir(user) / d).lexically_normal().string()));
  for (const std::string& d : parse_search_dirs(verbose)) {
    const std::string n = normal(fs::path(d).lexically_normal().string());
    if (!n.empty() && n.front() == '/' && std::find(passed.begin(), passed.end(), n) == passed.end()) c.system.push_back(n);
  }
  return c;
}

// One line for a failed compile: the function whose type is not the ABI's, the
// construct bitproof's header does not model, or the compiler's first error,
// with its file and line.
std::string first_error(const std::string& stderr_text, const std::string& preprocessed, const Classifier& files) {
  if (stderr_text.find("Assembler messages") != std::string::npos || stderr_text.find("asm") != std::string::npos) {
    // Inline PTX reaches the host assembler: name where the asm statement is.
    std::string file;
    long line = 0;
    std::stringstream lines(preprocessed);
    // RE2: linear in the line, whatever the user's code looks like.
    static const RE2 marker(R"(^# (\d+) "([^"]+)\".*)"),
        statement(R"((^|[^A-Za-z0-9_])(asm|__asm__|__asm)\s*(volatile|__volatile__)?\s*\()");
    for (std::string text; std::getline(lines, text); ++line) {
      long number = 0;
      if (RE2::FullMatch(text, marker, &number, &file)) {
        line = number - 1;
        continue;
      }
      if (RE2::PartialMatch(text, statement) && file.find("bitproof-worker.cpp") == std::string::npos &&
          files.kind(file) == DepKind::kUser) {
        return fmt::format("{}:{}: inline PTX (asm) is not modelled on the CPU: bitproof's CUDA host header has no "
                           "PTX; express it with the modelled intrinsics or prove it on the GPU",
                           file, line);
      }
    }
  }
  std::stringstream lines(stderr_text);
  for (std::string text; std::getline(lines, text);) {
    if (text.find("error:") == std::string::npos) continue;
    // In the generated driver: the spec names a function its sources do not declare.
    if (text.find("bitproof-worker.cpp") != std::string::npos) {
      const auto open = text.find('\''), close = text.find('\'', open + 1);
      const std::string what = open != std::string::npos && close != std::string::npos
                                   ? text.substr(open, close - open + 1)
                                   : std::string("a user recipe's function");
      return fmt::format("function {}: {} (the sources must declare it as uint32_t f(uint32_t code...))",
                         printable(what), printable(text.substr(text.find("error:") + 7)));
    }
    if (text.find("was not declared in this scope") != std::string::npos ||
        text.find("has not been declared") != std::string::npos) {
      return printable(text) + " (not modelled by bitproof's CUDA host header: docs/user-recipes.md lists what is)";
    }
    return printable(text);
  }
  // No "error:" line (the compiler ran out of memory, was killed, ...): its own
  // words, not the -v banner before them (the last line that is not empty).
  std::string last;
  std::stringstream rest(stderr_text);
  for (std::string text; std::getline(rest, text);) {
    if (text.find("out of memory") != std::string::npos || text.find("fatal") != std::string::npos) {
      return printable(text.substr(0, 300));
    }
    if (text.find_first_not_of(" \t\r") != std::string::npos) last = text;
  }
  return printable(last.substr(0, 300));
}

// The compiler's messages in plain ASCII, whatever the user's locale.
const std::vector<std::string> kCompilerEnv = {"LC_ALL=C"};

// A run of the compiler within the spec's compile limit (UserRecipes::compile_timeout_s):
// at the limit, one line naming the spec's sources and the limit.
Expected<ProcessResult> run_compiler(const UserRecipes& user, const std::vector<std::string>& command) {
  auto r = run_process(command, {}, kCompilerEnv, user.compile_timeout_s);
  if (r && r->timed_out) return Error{compile_timeout_message(user)};
  return r;
}

Expected<std::string> compiler_version(const UserRecipes& user, const std::string& cxx) {
  auto v = run_process({cxx, "--version"}, {}, kCompilerEnv, user.compile_timeout_s);
  if (v && v->timed_out) return Error{compile_timeout_message(user)};
  if (!v) return Error{fmt::format("user recipes need a C++ compiler: {} ($CXX picks another)", v.error().message)};
  if (v->status != 0) return Error{fmt::format("{} --version failed (exit {})", cxx, v->status)};
  return v->out.substr(0, v->out.find('\n'));
}

// The compiler program as a file (PATH searched): its path, size and time
// stand for its version in the manifest key, without running it.
std::string compiler_identity(const std::string& cxx) {
  std::vector<fs::path> candidates;
  if (cxx.find('/') != std::string::npos) {
    candidates.push_back(cxx);
  } else if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::stringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');) candidates.push_back(fs::path(d) / cxx);
  }
  for (const fs::path& c : candidates) {
    if (access(c.c_str(), X_OK) != 0) continue;  // one cheap call per PATH entry; canonical for the hit only
    std::error_code ec;
    const fs::path real = fs::canonical(c, ec);
    if (ec || !fs::is_regular_file(real, ec)) continue;
    const auto time = fs::last_write_time(real, ec).time_since_epoch().count();
    return fmt::format("{} {} {}", real.string(), fs::file_size(real, ec), time);
  }
  return cxx;
}

// The system's and bitproof's headers (hundreds, which only a package upgrade
// changes) are checked by their size, time and inode, so a cached run reads
// no header of theirs; the user's files by content.
std::string stat_signature(const std::string& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) return "";
  return sha256_hex(fmt::format("{} {} {} {}", s.st_size, s.st_mtim.tv_sec, s.st_mtim.tv_nsec, s.st_ino));
}

// The check value of a dependency now: empty when it cannot be read.
std::string check_value(const std::string& path, DepKind kind) {
  if (kind != DepKind::kUser) return stat_signature(path);
  auto text = read_all(path);
  return text ? sha256_hex(*text) : "";
}

// A cache entry bitproof may use: a regular file (or, `directory`, a
// directory) that this user owns and no one else can write. Absent: Ok. Else
// why not, naming it: another user (a shared or planted cache) could have
// written it.
Expected<bool> usable_entry(const fs::path& path, bool directory = false) {
  struct stat s {};
  if (::lstat(path.c_str(), &s) != 0) return false;
  const bool kind_ok = directory ? S_ISDIR(s.st_mode) : S_ISREG(s.st_mode);
  std::string why;
  if (!kind_ok) why = directory ? "is not a directory" : "is not a regular file";
  else if (s.st_uid != geteuid()) why = fmt::format("belongs to uid {}, not to this user ({})", s.st_uid, geteuid());
  else if ((s.st_mode & 022) != 0) why = "can be written by other users";
  if (why.empty()) return true;
  return Error{fmt::format("{}: a cache entry that {}: bitproof uses only entries its user owns and no one else can "
                           "write (remove it, or set XDG_CACHE_HOME to a directory of your own)",
                           path.string(), why)};
}

// Direct mode, as ccache's: a manifest keyed by what is known without the
// compiler (bitproof, the compiler's file, the flags, the generated source)
// records the files the last build read (each by content, or by stat for the
// system's and bitproof's headers), the compiler's version and the SHA-256 of
// the worker it made. While every file checks the same, that worker is used
// without running the compiler at all, once its bytes hash as recorded.
//
// The manifest at `path` if it is usable and every file it lists still checks
// as recorded (nullopt: build again); an error (exit 2, naming the entry)
// where the entry is not what bitproof writes.
Expected<std::optional<Manifest>> valid_manifest(const fs::path& path) {
  auto usable = usable_entry(path);
  if (!usable) return usable.error();
  if (!*usable) return std::optional<Manifest>{};
  auto text = read_all(path);
  if (!text) return std::optional<Manifest>{};
  auto m = parse_manifest(*text);
  if (!m) {
    return Error{fmt::format("{}: not a manifest bitproof wrote ({}): remove the cache directory {} (or run with "
                             "--no-cache)",
                             path.string(), m.error().message, path.parent_path().string())};
  }
  for (const ManifestDep& d : m->deps) {
    if (check_value(d.path, d.kind) != d.check) return std::optional<Manifest>{};
  }
  return std::optional<Manifest>{std::move(*m)};
}

fs::path worker_path(const Manifest& m) { return cache_root() / "user" / m.key / ("worker-" + m.worker); }

// The cached worker of `m` if its bytes are the ones bitproof built (nullopt:
// none there, build again); an error naming the entry where they are not.
Expected<bool> worker_intact(const Manifest& m) {
  const fs::path path = worker_path(m);
  auto usable = usable_entry(path);
  if (!usable || !*usable) return usable;
  auto bytes = read_all(path);
  if (!bytes) return false;
  if (const std::string now = sha256_hex(*bytes); now != m.worker) {
    return Error{fmt::format("{}: the cached worker is not the one bitproof built (SHA-256 {}, its manifest records "
                             "{}): something else wrote it; remove the cache directory {} (or run with --no-cache)",
                             path.string(), now, m.worker, path.parent_path().string())};
  }
  return true;
}

// Writes `text` to `path` through a temporary and a rename: readers see the old file or the new one.
void store(const fs::path& path, const std::string& text) {
  const fs::path staged = path.string() + fmt::format(".{}", getpid());
  if (write_all(staged, text) && std::rename(staged.c_str(), path.c_str()) == 0) return;
  std::error_code ec;
  fs::remove(staged, ec);
}

// A private scratch directory (mkdtemp: mode 0700) in the cache, removed with this object.
struct Scratch {
  fs::path dir;
  ~Scratch() {
    std::error_code e;
    if (!dir.empty()) fs::remove_all(dir, e);
  }
};

Expected<std::shared_ptr<Scratch>> make_scratch() {
  std::error_code ec;
  fs::create_directories(cache_root() / "user", ec);
  std::string scratch_template = (cache_root() / "user" / "tmp-XXXXXX").string();
  if (mkdtemp(scratch_template.data()) == nullptr) {
    return Error{fmt::format("{}: cannot make a directory in the cache: {}", scratch_template, std::strerror(errno))};
  }
  auto scratch = std::make_shared<Scratch>();
  scratch->dir = scratch_template;
  return scratch;
}

// What the compiler says the worker source reads: -M (every file, the rule's
// escapes undone) with -v (its system directories), each file classified.
struct Listed {
  std::vector<ManifestDep> deps;  // check values not yet computed
  Classifier files;
};

Expected<Listed> list_dependencies(const UserRecipes& user, const std::vector<std::string>& base,
                                   const fs::path& worker_cpp) {
  std::vector<std::string> command = base;
  command.insert(command.end(), {"-M", "-MT", std::string(kDepsTarget), "-v", worker_cpp.string()});
  auto run = run_compiler(user, command);
  if (!run) return run.error();
  Listed out;
  out.files = classifier(user, run->err);
  if (run->status != 0) {
    return Error{fmt::format("{}: user_recipes: {}", user.spec_path, first_error(run->err, "", out.files))};
  }
  auto deps = parse_make_rule(run->out, kDepsTarget);
  if (!deps) return Error{fmt::format("{}: user_recipes: the compiler's -M output: {}", user.spec_path, deps.error().message)};
  for (const std::string& dep : *deps) {
    if (dep == worker_cpp.string()) continue;  // the generated source: in the key already
    out.deps.push_back({out.files.kind(dep), "", dep});
  }
  return out;
}

// The slow path: the compiler's --version, the files the worker source reads,
// the full key, and a compile into `scratch` (the worker this run uses); the
// worker is then stored in the cache under its SHA-256.
// The worker linked from its object with the C++ runtime in it and without its
// symbols (kWorkerLink) where the toolchain can (libstdc++.a and libgcc.a are
// installed), else as the compiler links by default. The dynamic loader then
// resolves libc alone: on the 2-core VM a run took 0.92 ms of CPU against 1.60
// ms, and the worker, hashed before each run, is 109 KB (a fully static one
// starts in 0.47 ms but is 860 KB, whose hashing costs more than that saves:
// bench/RESULTS.md). The link changes how the worker starts, not what it computes.
constexpr std::array<std::string_view, 4> kWorkerLink = {"-static-libstdc++", "-static-libgcc", "-s",
                                                         "-Wl,--gc-sections"};

Expected<ProcessResult> link_worker(const UserRecipes& user, const std::string& cxx, const fs::path& object,
                                    const fs::path& built) {
  std::vector<std::string> command = {cxx, object.string(), "-o", built.string()};
  auto linked = run_compiler(user, [&] {
    std::vector<std::string> c = command;
    c.insert(c.end(), kWorkerLink.begin(), kWorkerLink.end());
    return c;
  }());
  if (!linked || linked->status == 0) return linked;
  return run_compiler(user, command);
}

Expected<Manifest> full_build(const UserRecipes& user, const std::string& cxx, const std::vector<std::string>& flags,
                              const Scratch& scratch) {
  auto version = compiler_version(user, cxx);
  if (!version) return Error{fmt::format("{}: user_recipes: {}", user.spec_path, version.error().message)};
  std::vector<std::pair<long, int>> call_lines;
  const std::string source = worker_source(user, &call_lines);
  const fs::path worker_cpp = scratch.dir / "bitproof-worker.cpp";
  if (auto ok = write_all(worker_cpp, source); !ok) return ok.error();
  std::vector<std::string> base = {cxx};
  base.insert(base.end(), flags.begin(), flags.end());
  auto listed = list_dependencies(user, base, worker_cpp);
  if (!listed) {
    if (auto abi = abi_error(user, listed.error().message, worker_cpp.string(), call_lines)) return *abi;
    return listed.error();
  }
  Manifest m;
  m.compiler = *version;
  std::string key_text = fmt::format("bitproof-user-worker-v3 (linked with the C++ runtime where it can)\n{} {}\n{}\n",
                                     tool_version(), tool_git_commit(), m.compiler);
  for (const std::string& f : flags) key_text += f + "\n";
  key_text += source;
  for (ManifestDep& d : listed->deps) {
    auto text = read_all(d.path);
    if (!text) return Error{fmt::format("{}: user_recipes: {}", user.spec_path, text.error().message)};
    const std::string content = sha256_hex(*text);
    d.check = d.kind == DepKind::kUser ? content : stat_signature(d.path);
    key_text += d.path + " " + content + "\n";  // the full key: every file by content
  }
  m.deps = std::move(listed->deps);
  m.key = sha256_hex(key_text);
  const fs::path built = scratch.dir / "worker";
  const fs::path object = scratch.dir / "bitproof-worker.o";
  std::vector<std::string> compile = base;
  compile.insert(compile.end(), {"-c", worker_cpp.string(), "-o", object.string()});
  auto compiled = run_compiler(user, compile);
  if (!compiled) return compiled.error();
  if (compiled->status == 0) {
    auto linked = link_worker(user, cxx, object, built);
    if (!linked) return linked.error();
    compiled = std::move(linked);
  }
  if (compiled->status != 0) {
    if (auto abi = abi_error(user, compiled->err, worker_cpp.string(), call_lines)) return *abi;
    std::vector<std::string> preprocess = base;
    preprocess.insert(preprocess.end(), {"-E", worker_cpp.string()});
    auto pre = run_compiler(user, preprocess);
    return Error{fmt::format("{}: user_recipes: {}", user.spec_path,
                             first_error(compiled->err, pre ? pre->out : "", listed->files))};
  }
  auto bytes = read_all(built);
  if (!bytes) return bytes.error();
  m.worker = sha256_hex(*bytes);
  // Into the cache by rename, under its own digest: a concurrent run (another
  // shard) sees that worker whole or not at all, and never another's.
  std::error_code ec;
  fs::create_directories(worker_path(m).parent_path(), ec);
  const fs::path staged = worker_path(m).string() + fmt::format(".{}", getpid());
  fs::copy_file(built, staged, fs::copy_options::overwrite_existing, ec);
  if (ec || std::rename(staged.c_str(), worker_path(m).c_str()) != 0) fs::remove(staged, ec);  // costs time, not bits
  return m;
}

}  // namespace

std::optional<Error> abi_error(const UserRecipes& user, const std::string& log, const std::string& source,
                               const std::vector<std::pair<long, int>>& call_lines) {
  const auto refusal = abi_refusal(log, source, call_lines);
  if (!refusal || refusal->slot < 0 || static_cast<std::size_t>(refusal->slot) >= user.recipes.size()) return std::nullopt;
  const UserRecipe& r = user.recipes[static_cast<std::size_t>(refusal->slot)];
  std::string abi = "std::uint32_t(";
  for (int i = 0; i < r.card.arity; ++i) abi += i ? ", std::uint32_t" : "std::uint32_t";
  abi += ")";
  const std::string rule = fmt::format(
      "a user recipe's function takes its {} code{} as std::uint32_t and returns the output's bits as std::uint32_t",
      r.card.arity, r.card.arity == 1 ? "" : "s");
  if (refusal->type.empty()) {
    return Error{fmt::format("{}: user_recipes[{}].function: no overload of {} has the type {}: {}", user.spec_path,
                             refusal->slot, r.function, abi, rule)};
  }
  return Error{fmt::format("{}: user_recipes[{}].function: {} has the type {}, not {}: {} (a value converted to an "
                           "integer is not its bits)",
                           user.spec_path, refusal->slot, r.function, printable(refusal->type), abi, rule)};
}

// The spec's source files exist (one line naming the first that does not).
Expected<Ok> source_files_exist(const UserRecipes& user) {
  for (const std::string& f : user.files) {
    std::error_code ec;
    if (!fs::is_regular_file(spec_dir(user) / f, ec)) {
      return Error{fmt::format("{}: sources.files: {}: no such file (paths are relative to the spec's directory)",
                               user.spec_path, f)};
    }
  }
  return Ok{};
}

Expected<BuildInfo> build_worker(const UserRecipes& user) {
  const auto start = std::chrono::steady_clock::now();
  if (auto ok = source_files_exist(user); !ok) return ok.error();
  if (const IncludeDirs& headers = bitproof_include_dirs(); !headers.error.empty()) {
    return Error{fmt::format("{}: user_recipes: {}", user.spec_path, headers.error)};
  }
  const std::string cxx = compiler();
  BuildInfo b;
  b.flags = compile_flags(user);
  const std::string source = worker_source(user);
  std::string manifest_key = fmt::format("bitproof-user-manifest-v2 (worker linked with the C++ runtime where it can)\n{} {}\n{}\n",
                                         tool_version(), tool_git_commit(), compiler_identity(cxx));
  for (const std::string& f : b.flags) manifest_key += f + "\n";
  const fs::path manifest_path = cache_root() / "user" / ("manifest-" + sha256_hex(manifest_key + source));
  std::optional<Manifest> manifest;
  if (!user.no_cache) {
    auto found = valid_manifest(manifest_path);
    if (!found) return Error{fmt::format("{}: user_recipes: {}", user.spec_path, found.error().message)};
    manifest = std::move(*found);
  }
  if (manifest) {
    auto intact = worker_intact(*manifest);
    if (!intact) return Error{fmt::format("{}: user_recipes: {}", user.spec_path, intact.error().message)};
    if (!*intact) manifest.reset();
  }
  if (manifest) {
    b.worker = worker_path(*manifest).string();
    b.cached = true;
  } else {
    auto scratch = make_scratch();
    if (!scratch) return scratch.error();
    auto built = full_build(user, cxx, b.flags, **scratch);
    if (!built) return built.error();
    manifest = std::move(*built);
    store(manifest_path, manifest_text(*manifest));
    b.worker = ((*scratch)->dir / "worker").string();  // this run's own build, not the cache's copy
    b.scratch = std::move(*scratch);
  }
  b.compiler = manifest->compiler;
  b.key = manifest->key;
  for (const ManifestDep& d : manifest->deps) {
    b.read.push_back(d.path);
    if (d.kind == DepKind::kUser) {
      b.sources.push_back({fs::path(normal(d.path)).lexically_relative(spec_dir(user)).generic_string(), d.check});
    }
  }
  std::sort(b.sources.begin(), b.sources.end(), [](const SourceDigest& x, const SourceDigest& y) { return x.path < y.path; });
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return b;
}

namespace {

std::string domain_request(std::span<const InputDomain> domain) {
  std::string request = fmt::format("{}\n", domain.size());
  for (const InputDomain& in : domain) {
    if (in.range) {
      request += fmt::format("r {} {}\n", in.range->lo, in.count());
    } else {
      request += fmt::format("l 0 {}", in.count());
      for (std::uint32_t c : in.codes) request += fmt::format(" {}", c);
      request += "\n";
    }
  }
  return request;
}

}  // namespace

// The worker's output for a domain, as u32 LE words, function-major. Always
// run here: no output is kept in the cache (a stored output was a verdict taken
// on the cache's word; running the worker costs milliseconds, bench/RESULTS.md).
Expected<std::vector<std::vector<std::uint32_t>>> run_worker(const BuildInfo& build, const UserRecipes& user,
                                                            std::span<const InputDomain> domain) {
  const std::string request = domain_request(domain);
  const std::uint64_t cases = case_count(domain);
  const std::uint64_t bytes = cases * 4 * user.function_count();
  const double limit = user.worker_time_limit(cases);
  auto ran = run_process({build.worker}, request, {}, limit);
  if (!ran) return ran.error();
  if (ran->timed_out) return Error{worker_timeout_message(user, cases, limit)};
  if (ran->status != 0 || ran->out.size() != bytes) {
    return Error{fmt::format("{}: user_recipes: the worker {} failed (exit {}, {} of {} bytes){}", user.spec_path,
                             build.worker, ran->status, ran->out.size(), bytes,
                             ran->err.empty() ? "" : ": " + printable(ran->err.substr(0, 200)))};
  }
  const std::string& out = ran->out;
  std::vector<std::vector<std::uint32_t>> tables(user.function_count(), std::vector<std::uint32_t>(cases));
  const auto* data = reinterpret_cast<const unsigned char*>(out.data());
  for (std::size_t r = 0; r < tables.size(); ++r) {
    for (std::uint64_t n = 0; n < cases; ++n) {
      const unsigned char* w = data + 4 * (r * cases + n);
      tables[r][n] = std::uint32_t{w[0]} | (std::uint32_t{w[1]} << 8) | (std::uint32_t{w[2]} << 16) |
                     (std::uint32_t{w[3]} << 24);
    }
  }
  return tables;
}

Expected<std::vector<std::string>> include_dirs() {
  const IncludeDirs& found = bitproof_include_dirs();
  if (!found.error.empty()) return Error{found.error};
  return found.dirs;
}

std::string cache_directory() { return cache_root().string(); }

namespace {
constexpr std::string_view kCachedMagic = "bitproof-cached-v1 sha256 ";
}  // namespace

bool store_cached(const std::string& path, const std::string& bytes) {
  store(path, fmt::format("{}{}\n", kCachedMagic, sha256_hex(bytes)) + bytes);
  std::error_code ec;
  return fs::exists(path, ec);
}

Expected<std::optional<std::string>> read_cached(const std::string& path) {
  auto usable = usable_entry(path);
  if (!usable) return usable.error();
  if (!*usable) return std::optional<std::string>{};
  auto text = read_all(path);
  if (!text) return std::optional<std::string>{};
  const std::size_t head = kCachedMagic.size() + 65;
  const bool framed = text->size() >= head && text->compare(0, kCachedMagic.size(), kCachedMagic) == 0 &&
                      (*text)[head - 1] == '\n' && sha256_hex_text(std::string_view(*text).substr(kCachedMagic.size(), 64));
  const std::string recorded = framed ? text->substr(kCachedMagic.size(), 64) : "";
  std::string bytes = framed ? text->substr(head) : "";
  if (!framed || sha256_hex(bytes) != recorded) {
    return Error{fmt::format("{}: a cache entry that is not what bitproof stored ({}): something else wrote it; remove "
                             "it (or run with --no-cache)",
                             path, framed ? "its bytes do not hash as recorded" : "no bitproof header")};
  }
  return std::optional<std::string>{std::move(bytes)};
}

Expected<Dependencies> preprocessed_dependencies(const UserRecipes& user) {
  if (auto refused = refuse_user_code(user)) return *refused;  // the preprocessor runs on the user's sources too
  if (auto ok = source_files_exist(user); !ok) return ok.error();
  if (const IncludeDirs& headers = bitproof_include_dirs(); !headers.error.empty()) {
    return Error{fmt::format("{}: user_recipes: {}", user.spec_path, headers.error)};
  }
  auto scratch = make_scratch();
  if (!scratch) return scratch.error();
  const fs::path worker_cpp = (*scratch)->dir / "bitproof-worker.cpp";
  if (auto ok = write_all(worker_cpp, worker_source(user)); !ok) return ok.error();
  std::vector<std::string> base = {compiler()};
  for (const std::string& f : compile_flags(user)) base.push_back(f);
  auto listed = list_dependencies(user, base, worker_cpp);
  if (!listed) return listed.error();
  Dependencies out;
  for (const ManifestDep& d : listed->deps) {
    out.read.push_back(d.path);
    if (d.kind != DepKind::kUser) continue;
    auto text = read_all(d.path);
    if (!text) return Error{fmt::format("{}: user_recipes: {}", user.spec_path, text.error().message)};
    out.sources.push_back({fs::path(normal(d.path)).lexically_relative(spec_dir(user)).generic_string(), sha256_hex(*text)});
  }
  std::sort(out.sources.begin(), out.sources.end(), [](const SourceDigest& x, const SourceDigest& y) { return x.path < y.path; });
  return out;
}

Expected<std::vector<std::string>> kernel_file_reads(const std::string& file,
                                                     const std::vector<std::string>& include_dirs, double timeout_s,
                                                     const std::string& what) {
  if (const IncludeDirs& headers = bitproof_include_dirs(); !headers.error.empty()) {
    return Error{fmt::format("{}: {}", what, headers.error)};
  }
  std::error_code ec;
  const std::string path = fs::absolute(file, ec).lexically_normal().string();
  // NVRTC's include path (src/backend/cuda_user.cpp, compile_kernel_file) less the toolkit's.
  // NVRTC compiles device code only, so __CUDA_ARCH__ is always defined there: a header included
  // under `#if defined(__CUDA_ARCH__)` is one NVRTC reads (the review found one left out, and an
  // output flag could then write over it). 900: compute_90, what kernel modules are built for.
  std::vector<std::string> command = {compiler(), "-std=c++17", "-x", "c++", "-D__CUDACC__", "-D__CUDACC_RTC__",
                                      "-D__CUDA_ARCH__=900"};
  for (const std::string& d : bitproof_include_dirs().dirs) {
    if (fs::exists(fs::path(d) / "nvrtc" / "cstdint", ec)) command.push_back("-I" + (fs::path(d) / "nvrtc").string());
  }
  for (const std::string& d : include_dirs) command.push_back("-I" + d);
  command.push_back("-I" + fs::path(path).parent_path().string());
  command.insert(command.end(), {"-M", "-MG", "-MT", std::string(kDepsTarget), path});
  auto run = run_process(command, {}, kCompilerEnv, timeout_s);
  if (!run) return run.error();
  if (run->timed_out) {
    return Error{
        fmt::format("{}: listing the headers of {} took longer than the {:g} s limit (--compile-timeout "
                    "SECONDS sets it)",
                    what, printable(file), timeout_s)};
  }
  if (run->status != 0) {
    return Error{fmt::format("{}: the preprocessor, listing the headers of {}: {}", what, printable(file),
                             first_error(run->err, "", Classifier{}))};
  }
  auto deps = parse_make_rule(run->out, kDepsTarget);
  if (!deps) return Error{fmt::format("{}: the preprocessor's -M output: {}", what, deps.error().message)};
  std::vector<std::string> out;
  for (const std::string& dep : *deps) {
    if (dep.find('/') == std::string::npos) continue;  // not found (-MG): the toolkit's, NVRTC's alone
    out.push_back(dep);
  }
  return out;
}

}  // namespace bitproof::user
