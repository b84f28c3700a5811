// User recipes: functions of a kernel team's own CUDA source, named by a spec,
// that take part in claims like catalogue recipes. One ABI:
//   __device__ (or __host__ __device__) uint32_t f(uint32_t code0[, code1[, code2]])
// returning the output's bits. In a spec:
//   "sources": {"files": ["adapters.cuh"], "include_dirs": ["../csrc"]},
//   "user_recipes": [{"name": "mykernel.e2m1_fp16.folded", "function": "bp_folded",
//                     "inputs": ["e2m1", "ue8m0"], "output": "fp16", "intent": "product"}]
// Paths are relative to the spec's directory.
//
// Or an output table (user/table.hpp): "table": "out.npy" instead of
// "function", the bits the team's own kernel (Triton, PyTorch) wrote for every
// case of the spec's own domain in case order; a spec whose user recipes are
// all tables needs no "sources". A table covers that domain only: a sweep over
// another domain reads the cases it shares with it and refuses the first code
// it lacks (and --scales is refused: proof/spec.hpp, override_range).
//
// On the CPU (this module) the sources are compiled with the host compiler
// against bitproof's CUDA host header (src/user/include: the types and
// intrinsics dequant code uses, their arithmetic the soft model) into a worker
// program, cached by content, which writes every function's bits over the
// domain being swept; the engine reads them as a table (the witness cannot run
// a user's code under the oracle arithmetic: the claims and, on a GPU machine,
// the other backend are its checks). docs/user-recipes.md says more.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "error.hpp"
#include "format/domain.hpp"
#include "recipes/registry.hpp"
#include "user/table.hpp"

namespace bitproof::user {

struct UserRecipe {
  std::string name;
  std::string label;
  std::string function;  // empty for a table
  std::string table;     // the table's path, relative to the spec's directory; empty for a function
  TableFormat table_format = TableFormat::kNpy;
  bool table_format_given = false;  // "table_format" was written (spec_to_json writes it back only then)
  std::string source;  // the card's source line: "FILES: FUNCTION" or "table PATH (FORMAT)"
  std::string intent_name;  // empty: no "intent" given (then only equal claims may name it)
  RecipeCard card;
  RecipeEntry entry;
};

// A source file the worker was built from (the spec's files and every file
// they include outside the system's and bitproof's own headers).
struct SourceDigest {
  std::string path;  // relative to the spec's directory
  std::string sha256;
};

// A table read for a report: which recipe, which file, how it was laid out, its SHA-256.
struct TableDigest {
  std::string recipe;
  std::string path;  // as the spec names it, relative to the spec's directory
  std::string layout;
  std::uint64_t bytes = 0;
  std::string sha256;
};

// The files the compiler read for a spec's sources: `read` every one of them
// (absolute, the system's included: no output may be written over one),
// `sources` the user's (every file not under the compiler's system
// directories nor bitproof's own headers), by content.
struct Dependencies {
  std::vector<SourceDigest> sources;
  std::vector<std::string> read;
};

struct BuildInfo {
  std::string compiler;  // the --version line of the compiler used
  std::vector<std::string> flags;
  std::string key;     // the cache key: SHA-256 of everything the worker is built from
  // The executable: the cache's copy (its bytes checked against the SHA-256 its
  // manifest records) or, when this run compiled it, the run's own private copy.
  std::string worker;
  bool cached = false;
  double seconds = 0;
  std::vector<SourceDigest> sources;
  std::vector<std::string> read;     // every file the compiler read (Dependencies::read)
  std::shared_ptr<void> scratch;     // keeps this run's own worker's directory while the build is used
};

// Wall-clock limits on user code (docs/user-recipes.md, "Time limits"): every
// run of the host compiler, and every run of the worker, which gets a base plus
// an allowance per case and function (a function runs on the soft model, well
// under a microsecond a case when it returns at all).
inline constexpr double kDefaultCompileTimeout = 120;
inline constexpr double kWorkerBaseSeconds = 60;
inline constexpr double kWorkerSecondsPerEvaluation = 10e-6;

class UserRecipes {
 public:
  std::string spec_path;  // for messages
  std::string base_dir;   // the sources resolve against it: the spec's directory (report verify --spec-dir)
  std::vector<std::string> files;
  std::vector<std::string> include_dirs;
  std::deque<UserRecipe> recipes;  // stable addresses: claims point at their entries
  bool no_cache = false;           // --no-cache: compile even when the cache has the worker
  double compile_timeout_s = kDefaultCompileTimeout;  // --compile-timeout: each compiler run
  double user_timeout_s = 0;  // --user-timeout: each worker run (0: worker_time_limit's default)
  // sources.fmad: whether the GPU compile (NVRTC --fmad) may contract a*b+c into
  // one FMA, as nvcc does by default. The CPU path never contracts
  // (-ffp-contract=off), so a difference between the two is reported as such.
  bool fmad = true;
  // Set by a GPU backend before it sweeps: a CPU witness that cannot be made
  // (a construct the host header does not model, a domain beyond the tables)
  // is then recorded for the domain, not an error; the GPU runs the recipes alone.
  bool gpu_runs = false;

  std::vector<InputDomain> own_domain;  // the spec's domain as written: what its tables cover

  [[nodiscard]] const RecipeEntry* find(std::string_view name) const;
  // Whether `e` has an intent: a catalogue recipe always does, a user recipe when its
  // "intent" was given (it is optional where only equal claims name the recipe).
  [[nodiscard]] bool has_intent(const RecipeEntry* e) const;
  [[nodiscard]] bool has_tables() const;
  [[nodiscard]] std::size_t function_count() const;
  // Seconds a worker run over `cases` cases may take: user_timeout_s when set,
  // else kWorkerBaseSeconds + kWorkerSecondsPerEvaluation × cases × functions.
  [[nodiscard]] double worker_time_limit(std::uint64_t cases) const;
  // The files a run reads: every table and source file, resolved against base_dir
  // (outputs may not be written over them).
  [[nodiscard]] std::vector<std::string> input_paths() const;
  // Builds the worker (once) and runs it over every case of `domain`'s inputs,
  // keeping the bits as tables; reads every output table (once) and takes the
  // cases of `domain` from it. Fails (exit 2) on a compile error (the
  // compiler's first error line, or the construct the host header does not
  // model, with its file and line), a worker that fails, a bad table (one
  // line naming the spec, the field and the file), a domain with a code the
  // spec's own domain lacks (for tables), or a domain too large for tables
  // (more than 2^26 cases times recipes).
  [[nodiscard]] Expected<Ok> evaluate(std::span<const InputDomain> domain);
  // The bits of user recipe `slot` on every case of `domain` (evaluate ran for it).
  [[nodiscard]] const std::vector<std::uint32_t>* table(std::span<const InputDomain> domain, int slot) const;
  [[nodiscard]] const BuildInfo* build() const { return build_ ? &*build_ : nullptr; }
  // Why `domain` has no CPU tables (gpu_runs only); empty when it has them.
  [[nodiscard]] std::string cpu_witness_missing(std::span<const InputDomain> domain) const;
  // The user's files the sources read, by content (SHA-256), as the host
  // preprocessor lists them: the worker build's list when it was made, else a
  // preprocessing run. Keys the GPU path's cache.
  [[nodiscard]] Expected<std::vector<SourceDigest>> source_digests() const;
  // Every file a run reads, for the outputs' check: input_paths(), then every
  // file the sources' compile reads (Dependencies::read): the worker build's
  // list when `build_host` (the worker is built now, as the CPU path will need
  // it; a build that fails is kept as the CPU path's error and the preprocessor
  // lists them instead), else the preprocessor's; none without function recipes.
  [[nodiscard]] Expected<std::vector<std::string>> read_paths(bool build_host);
  // Every check short of running the user's code (spec check): the source files
  // exist, the tables read whole over the spec's own domain, and, when
  // `compile`, the worker compiles (the functions exist, with the ABI's type).
  [[nodiscard]] Expected<Ok> check_inputs(bool compile);
  // The tables read so far (evaluate reads them all), in user_recipes order.
  [[nodiscard]] std::vector<TableDigest> table_digests() const;

 private:
  Expected<Ok> make_tables(std::span<const InputDomain> domain, const std::string& key);
  Expected<Ok> read_tables();
  Expected<std::vector<std::uint32_t>> table_over(const UserRecipe& r, std::span<const InputDomain> domain) const;
  std::optional<BuildInfo> build_;
  std::optional<Error> build_error_;             // the worker build that failed (read_paths)
  mutable std::optional<Dependencies> listed_;   // the preprocessor's list, once made
  std::map<int, TableFile> read_;  // by slot: the tables as read, over own_domain
  std::map<std::string, std::string> cpu_missing_;  // by domain fingerprint
  std::map<std::string, std::vector<std::vector<std::uint32_t>>> tables_;  // by domain fingerprint
};

// Parses a spec's "sources" and "user_recipes" (either may be absent; both or
// neither). Errors name the spec file and the field.
[[nodiscard]] Expected<std::shared_ptr<UserRecipes>> parse_user_recipes(const nlohmann::json& root,
                                                                        const std::string& spec_path);
// The two fields as the spec wrote them, canonical (spec_to_json).
void user_recipes_json(const UserRecipes& user, nlohmann::ordered_json& spec);

// Building and running the worker (build.cpp).
// Each of sources.files is a regular file (relative to the spec's directory), or the error naming it.
[[nodiscard]] Expected<Ok> source_files_exist(const UserRecipes& user);
[[nodiscard]] Expected<BuildInfo> build_worker(const UserRecipes& user);
// The function recipes' bits (table recipes are skipped), in recipe order.
[[nodiscard]] Expected<std::vector<std::vector<std::uint32_t>>> run_worker(const BuildInfo& build,
                                                                            const UserRecipes& user,
                                                                            std::span<const InputDomain> domain);

inline constexpr std::uint64_t kMaxTableWords = std::uint64_t{1} << 26;

// The one-line errors of a compiler run or a worker run stopped at its limit:
// the spec, its sources or its function recipes, the limit and the flag that sets it.
// "give the user recipe an "intent", one of ...": the end of the error where a claim needs one.
[[nodiscard]] std::string missing_intent_text();
[[nodiscard]] std::string compile_timeout_message(const UserRecipes& user);
// `where` follows "did not return" (" on the GPU (--backend cuda)"; empty: the CPU worker).
[[nodiscard]] std::string worker_timeout_message(const UserRecipes& user, std::uint64_t cases, double limit,
                                                 std::string_view where = {});

// Shared with the GPU path (src/backend/cuda_user.cpp):
// bitproof's own header directories ($BITPROOF_INCLUDE_DIRS, the installed
// ones beside the command, or the build's), or why none were found.
[[nodiscard]] Expected<std::vector<std::string>> include_dirs();
// $XDG_CACHE_HOME/bitproof (default ~/.cache/bitproof).
[[nodiscard]] std::string cache_directory();
// A cache file (the GPU path's linked images): `bytes` stored after a line
// with their SHA-256, through a temporary and a rename (readers see the old
// file or the new one); false when it could not.
bool store_cached(const std::string& path, const std::string& bytes);
// The bytes store_cached kept at `path`; nullopt where there is no such file;
// an error naming it (exit 2) where it is not what store_cached wrote (another
// header, bytes that do not hash as recorded) or not this user's alone.
[[nodiscard]] Expected<std::optional<std::string>> read_cached(const std::string& path);
// The files the worker source reads ($CXX -M -v): every one, and the user's by content.
[[nodiscard]] Expected<Dependencies> preprocessed_dependencies(const UserRecipes& user);
// The files a CUDA kernel file compiled by NVRTC reads (bitproof time's arms):
// `file` and each header it includes that is not one of the toolkit's, as the
// host preprocessor lists them ($CXX -M -MG, NVRTC's macros __CUDACC__ and
// __CUDACC_RTC__, the include path NVRTC gets less the toolkit's: a header not
// found there is the toolkit's, and -MG names it bare; those are left out).
// What the command reading the kernel must never write over. `what` names the
// spec's field in errors; the preprocessor runs within `timeout_s`.
[[nodiscard]] Expected<std::vector<std::string>> kernel_file_reads(const std::string& file,
                                                                   const std::vector<std::string>& include_dirs,
                                                                   double timeout_s, const std::string& what);
// The spec's error (exit 2) where a compiler `log` of the generated `source`
// (its name as the log spells it) says a function has not the ABI's type:
// "user_recipes[i].function: F has the type T, not std::uint32_t(...)" (or no
// overload of F has it); nothing where it says something else. `call_lines`:
// each recipe's call's line in that source (user/build_text.hpp).
[[nodiscard]] std::optional<Error> abi_error(const UserRecipes& user, const std::string& log,
                                             const std::string& source,
                                             const std::vector<std::pair<long, int>>& call_lines);

}  // namespace bitproof::user
