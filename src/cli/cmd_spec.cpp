// bitproof spec cases SPEC: the inputs of every case of a spec's domain, in
// case order, for a team's harness to run its own kernel on (output tables,
// src/user/table.hpp). Case n's codes: with the inputs i = 0..k-1 of counts
// c_0..c_{k-1} (first input fastest), input i's code is the d_i-th code of its
// set, d_i = floor(n / (c_0 * ... * c_{i-1})) mod c_i; the d-th code of a
// range [lo, hi] (or "all") is lo + d, of a list its d-th entry as written.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "cli/cli.hpp"
#include "proof/engine.hpp"
#include "proof/spec.hpp"
#include "report/report.hpp"
#include "strict_json.hpp"
#include "user/npy.hpp"
#include "user/table.hpp"
#include "user/user_code.hpp"
#include "user/user_recipes.hpp"

namespace bitproof::cli {
namespace {

struct CasesArgs {
  std::string spec;
  std::string out;
  std::string format = "npy";
  std::size_t head = 0;
};

// The codes of case `n` (the order above).
std::vector<std::uint32_t> codes_of(const Spec& spec, std::uint64_t n) {
  std::vector<std::uint32_t> codes;
  for (const InputDomain& in : spec.inputs) {
    codes.push_back(in.code(n % in.count()));
    n /= in.count();
  }
  return codes;
}

// One word width for every column: the widest input format's storage.
int word_bytes(const Spec& spec) {
  int bytes = 1;
  for (const InputDomain& in : spec.inputs) bytes = std::max(bytes, user::storage_bytes(in.format));
  return bytes;
}

std::string cases_bytes(const Spec& spec, int width) {
  const std::uint64_t cases = spec.case_count();
  std::string out;
  out.reserve(cases * spec.inputs.size() * static_cast<std::size_t>(width));
  std::vector<std::uint64_t> digit(spec.inputs.size(), 0);  // the case's position in each input, counted up
  for (std::uint64_t n = 0; n < cases; ++n) {
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
      const std::uint32_t code = spec.inputs[i].code(digit[i]);
      for (int b = 0; b < width; ++b) out += static_cast<char>((code >> (8 * b)) & 0xFF);
    }
    for (std::size_t i = 0; i < digit.size() && ++digit[i] == spec.inputs[i].count(); ++i) digit[i] = 0;
  }
  return out;
}

void print_head(const Spec& spec, std::size_t head) {
  std::string line = fmt::format("{:>10}", "case");
  for (const InputDomain& in : spec.inputs)
    line += fmt::format("  {:<40}", fmt::format("{} ({})", in.name, spec_of(in.format).name));
  line.erase(line.find_last_not_of(' ') + 1);
  std::printf("%s\n", line.c_str());
  for (std::uint64_t n = 0; n < spec.case_count() && n < head; ++n) {
    line = fmt::format("{:>10}", n);
    const auto codes = codes_of(spec, n);
    for (std::size_t i = 0; i < codes.size(); ++i) {
      line += fmt::format("  {:<40}", describe_code(spec.inputs[i].format, codes[i]));
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::printf("%s\n", line.c_str());
  }
}

int run_cases(const CasesArgs& a) {
  if (a.out.empty() && a.head == 0) return fail({"spec cases: nothing to do: give --out FILE or --head N"});
  auto spec = load_spec(a.spec);
  if (!spec) return fail(spec.error());
  const std::uint64_t cases = spec->case_count();
  if (!a.out.empty() && cases > user::kMaxTableWords) {
    return fail(
        {fmt::format("{}: inputs: {} cases; an output table holds at most 2^26, so spec cases writes at "
                     "most that many",
                     a.spec, cases)});
  }
  std::vector<std::string> inputs = {a.spec};
  if (spec->user && !a.out.empty()) {
    auto deps = spec->user->read_paths(false);  // the headers the sources include: the preprocessor's list
    if (!deps) return fail(deps.error());
    inputs.insert(inputs.end(), deps->begin(), deps->end());
  }
  OutputFiles files;
  for (const std::string& in : inputs) files.add_input(in);
  if (!a.out.empty()) {
    if (auto ok = files.add("--out", a.out); !ok) return fail(ok.error());
  }
  if (a.head > 0) print_head(*spec, a.head);
  if (a.out.empty()) return kExitHolds;
  const int width = word_bytes(*spec);
  const std::uint64_t k = spec->inputs.size();
  const std::string descr = width == 1 ? "|u1" : fmt::format("<u{}", width);
  std::string content = a.format == "npy" ? npy::make_header(descr, {cases, k}) : std::string();
  content += cases_bytes(*spec, width);
  files.set(a.out, std::move(content));
  if (auto ok = files.commit(); !ok) return fail(ok.error());
  std::string names;
  for (const InputDomain& in : spec->inputs)
    names += fmt::format("{}{} {}", names.empty() ? "" : ", ", in.name, spec_of(in.format).name);
  std::printf(
      "wrote %s: %s x %s (%s), uint%d %s, row n = case n, column i = input i's code; "
      "first input fastest\n",
      a.out.c_str(), fmt::format("{} case{}", cases, cases == 1 ? "" : "s").c_str(),
      fmt::format("{} input{}", k, k == 1 ? "" : "s").c_str(), names.c_str(), width * 8,
      a.format == "npy" ? fmt::format("npy shape ({}, {})", cases, k).c_str()
                        : fmt::format("raw little-endian, {} words", cases * k).c_str());
  return kExitHolds;
}

struct CheckArgs {
  std::string spec;
  bool no_compile = false;
};

// bitproof spec check SPEC: every check prove makes short of sweeping (the
// claims' domain limits; the user recipes' files, tables and, unless
// --no-compile, their compile with the ABI's types); one line of what it would prove.
int run_check(const CheckArgs& a) {
  const std::string& path = a.spec;
  auto spec = load_spec(path);
  if (!spec) return fail(spec.error());
  if (spec->user) {
    if (auto e = user::refuse_user_code(*spec->user)) return fail(*e);
  }
  if (auto ok = check_claims_sweepable(*spec); !ok) return fail(ok.error());
  if (spec->user) {
    if (auto ok = spec->user->check_inputs(!a.no_compile); !ok) return fail(ok.error());
  }
  std::printf("%s: valid: %s, %llu cases, %zu claim%s\n", path.c_str(), domain_label(*spec).c_str(),
              static_cast<unsigned long long>(spec->case_count()), spec->claims.size(),
              spec->claims.size() == 1 ? "" : "s");
  for (std::size_t c = 0; c < spec->claims.size(); ++c) {
    std::string recipes;
    for (const RecipeEntry* r : spec->claims[c].recipes) recipes += (recipes.empty() ? "" : ", ") + std::string(r->card->name);
    std::printf("  claims[%zu]: %s: %s\n", c, std::string(claim_name(spec->claims[c].kind)).c_str(), recipes.c_str());
  }
  return kExitHolds;
}

struct NewArgs {
  std::string claim = "equal";
  std::vector<std::string> recipes;
  std::vector<std::string> users;   // --user FILE:FUNCTION
  std::vector<std::string> tables;  // --table FILE
  std::string out;
};

// `file` as the spec names it: relative to the directory of --out (stdout: as given).
std::string spec_relative(const std::string& file, const std::string& out) {
  if (out.empty()) return file;
  std::error_code ec;
  const auto dir = std::filesystem::absolute(std::filesystem::path(out), ec).parent_path();
  const auto rel = std::filesystem::absolute(file, ec).lexically_relative(dir);
  return ec || rel.empty() ? file : rel.generic_string();
}

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The parameter count of FUNCTION's definition (or declaration) in `text`, or nullopt
// when the file has none: the name as a whole word after a type (a word, '&', '*' or '>'
// then white space), '(' and the parameters up to ')' with no '(' inside, then '{', ';'
// or "noexcept". A plain scan (no std::regex: its recursion grows with the text matched).
std::optional<int> parameter_count(const std::string& text, const std::string& function) {
  const auto space = [&](std::size_t i) {
    return i < text.size() && std::isspace(static_cast<unsigned char>(text[i]));
  };
  for (std::size_t at = text.find(function); at != std::string::npos; at = text.find(function, at + 1)) {
    std::size_t before = at, after = at + function.size();
    if ((before > 0 && identifier_char(text[before - 1])) || (after < text.size() && identifier_char(text[after]))) {
      continue;
    }
    if (before == 0 || !space(before - 1)) continue;
    while (before > 0 && space(before - 1)) --before;
    if (before == 0 || !(identifier_char(text[before - 1]) ||
                         std::string_view("&*>").find(text[before - 1]) != std::string_view::npos)) {
      continue;
    }
    while (space(after)) ++after;
    if (after >= text.size() || text[after] != '(') continue;
    const std::size_t close = text.find_first_of("()", after + 1);
    if (close == std::string::npos || text[close] != ')') continue;
    std::size_t next = close + 1;
    while (space(next)) ++next;
    if (text.compare(next, 8, "noexcept") == 0) next += 8;
    while (space(next)) ++next;
    if (next >= text.size() || (text[next] != '{' && text[next] != ';')) continue;
    const std::string params = text.substr(after + 1, close - after - 1);
    const auto first = params.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || params.substr(first, params.find_last_not_of(" \t\r\n") + 1 - first) == "void") {
      return 0;
    }
    return static_cast<int>(std::count(params.begin(), params.end(), ',')) + 1;
  }
  return std::nullopt;
}

// --user FILE:FUNCTION: the file read, the function found in it, 1 to 3 parameters.
Expected<UserStart> user_start(const std::string& arg, const std::string& out) {
  const auto colon = arg.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size()) {
    return Error{
        fmt::format("--user {}: expected FILE:FUNCTION (the source file and the function in it)", printable(arg))};
  }
  const std::string file = arg.substr(0, colon), function = arg.substr(colon + 1);
  if (std::isdigit(static_cast<unsigned char>(function[0])) != 0 ||
      !std::all_of(function.begin(), function.end(), identifier_char)) {
    return Error{fmt::format("--user {}: \"{}\" is not a function name", printable(arg), printable(function))};
  }
  auto text = read_input_file(file, "the --user source", std::uint64_t{16} << 20);
  if (!text) return text.error();
  const auto n = parameter_count(*text, function);
  if (!n) return Error{fmt::format("--user {}: {} defines no function {}", printable(arg), printable(file), function)};
  if (*n < 1 || *n > 3) {
    return Error{fmt::format("--user {}: {} takes {} parameters; a user recipe takes 1 to 3 codes (uint32_t)",
                             printable(arg), function, *n)};
  }
  return UserStart{spec_relative(file, out), function, *n, "", 0, 0};
}

// --table FILE: a .npy table's dtype and word count from its header; any other file is raw words.
Expected<UserStart> table_start(const std::string& file, const std::string& out) {
  auto data = read_input_file(file, "the --table file", std::uint64_t{1} << 34);
  if (!data) return data.error();
  UserStart u{spec_relative(file, out), "", 0, "", 0, 0};
  if (!data->starts_with("\x93NUMPY")) return u;
  auto header = npy::parse_file(*data);
  if (!header) return Error{fmt::format("{}: --table: {}", printable(file), header.error().message)};
  u.descr = header->descr;
  u.cases = header->elements();
  u.item_bytes = header->item_bytes;
  return u;
}

// bitproof spec new: a commented template on stdout, or written to --out.
int run_new(const NewArgs& a) {
  std::vector<UserStart> users;
  for (const std::string& arg : a.users) {
    auto u = user_start(arg, a.out);
    if (!u) return fail(u.error());
    users.push_back(*u);
  }
  for (const std::string& file : a.tables) {
    auto u = table_start(file, a.out);
    if (!u) return fail(u.error());
    users.push_back(*u);
  }
  auto text = spec_template(a.claim, a.recipes, users, "--recipes");
  if (!text) return fail(text.error());
  if (a.out.empty()) {
    std::printf("%s", text->c_str());
    return kExitHolds;
  }
  std::error_code ec;
  if (const auto status = std::filesystem::symlink_status(a.out, ec); std::filesystem::exists(status)) {
    return fail({fmt::format("--out: {}: exists: spec new writes a new file only (give another name, or remove it)",
                             a.out)});
  }
  OutputFiles files;
  if (auto ok = files.add("--out", a.out); !ok) return fail(ok.error());
  files.set(a.out, *text);
  if (auto ok = files.commit(); !ok) return fail(ok.error());
  std::printf("wrote %s: edit it, then bitproof spec check %s\n", a.out.c_str(), a.out.c_str());
  return kExitHolds;
}

}  // namespace

void add_spec_commands(CLI::App& app, Commands& commands) {
  auto* spec = app.add_subcommand("spec", "work with a proof spec: check, new, cases");
  spec->require_subcommand(1);
  auto args = std::make_shared<CasesArgs>();
  auto* c = spec->add_subcommand(
      "cases", "write the input codes of every case in case order (for a harness that makes an output table)");
  c->add_option("spec", args->spec, "proof spec (JSON)")->required();
  add_path_option(*c, "--out", args->out,
                  "write the cases here: shape (N, inputs), unsigned, as wide as the widest input");
  c->add_option("--format", args->format, "npy (default) or raw (little-endian words, row-major, no header)")
      ->check(CLI::IsMember({"npy", "raw"}));
  c->add_option("--head", args->head, "print the first N cases, decoded")->check(whole_number(0, 1000000));
  commands.push_back({c, [args] { return run_cases(*args); }});

  auto check = std::make_shared<CheckArgs>();
  auto* k = spec->add_subcommand(
      "check", "validate a spec without proving it: every check short of sweeping, its user code compiled (exit 2 "
               "naming the file and field)");
  k->add_option("spec", check->spec, "proof spec (JSON)")->required();
  k->add_flag("--no-compile", check->no_compile,
              "do not compile the user recipes' sources (their files and tables are still checked)");
  add_no_user_code_flag(*k);
  commands.push_back({k, [check] { return run_check(*check); }});

  auto fresh = std::make_shared<NewArgs>();
  auto* n = spec->add_subcommand(
      "new", "print a commented spec to start from (a claim over catalogue recipes, user functions or output tables)");
  n->add_option("--claim", fresh->claim, "equal (default), correctly_rounded or exact");
  n->add_option("--recipes", fresh->recipes, "the claim's recipes, comma-separated (see bitproof recipes)")
      ->delimiter(',')
      ->allow_extra_args(false);
  n->add_option("--user", fresh->users,
                "FILE:FUNCTION: start a user recipe from a function in a source file (repeatable; its parameter "
                "count is read, the formats and intent left to fill in)")
      ->allow_extra_args(false);
  n->add_option("--table", fresh->tables,
                "FILE: start a user recipe from an output table (repeatable; a .npy's dtype and size are read)")
      ->allow_extra_args(false);
  add_path_option(*n, "--out", fresh->out, "write the template here instead of stdout");
  commands.push_back({n, [fresh] { return run_new(*fresh); }});
}

}  // namespace bitproof::cli
