#include "cli/cli.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "report/render.hpp"
#include "user/user_code.hpp"

namespace bitproof::cli {

int fail(const Error& e) {
  std::fprintf(stderr, "bitproof: error: %s\n", e.message.c_str());
  return e.exit_code;
}

void abandon(const Error& e) {
  // fail's line, written without stdio (another thread may hold its lock), then
  // an exit that runs no destructor and no atexit handler: the driver's would
  // wait for the kernel that did not return.
  const std::string line = fmt::format("bitproof: error: {}\n", e.message);
  [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, line.data(), line.size());
  remove_reserved_outputs();  // no output written, not even its temporary
  _exit(e.exit_code);
}

CLI::Validator whole_number(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& value) {
        std::uint64_t n = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, n);
        if (value.empty() || ptr != end || ec != std::errc{} || n < lo || n > hi) {
          return fmt::format("expected a whole number from {} to {}, got \"{}\"", lo, hi, value);
        }
        return std::string();
      },
      fmt::format("{}..{}", lo, hi));
}

namespace {

// Seconds as a limit: a decimal number from 0.1 to a week.
CLI::Validator seconds() {
  return CLI::Validator(
      [](std::string& value) {
        double s = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, s);
        if (value.empty() || ptr != end || ec != std::errc{} || !(s >= 0.1 && s <= 604800)) {
          return fmt::format("expected a number of seconds from 0.1 to 604800, got \"{}\"", value);
        }
        return std::string();
      },
      "SECONDS");
}

}  // namespace

void UserLimits::add_flags(CLI::App& sub) {
  sub.add_option("--user-timeout", user_timeout,
                 "user recipes: seconds each run of their compiled code may take (default: 60 plus 10 µs per case "
                 "and function)")
      ->check(seconds());
  sub.add_option("--compile-timeout", compile_timeout,
                 fmt::format("user recipes: seconds each run of the compiler may take (default {:g})",
                             user::kDefaultCompileTimeout))
      ->check(seconds());
}

void add_kernel_limit_flags(CLI::App& sub, double& wait_timeout, double& compile_timeout) {
  sub.add_option("--user-timeout", wait_timeout,
                 fmt::format("seconds each wait for an arm's work on the GPU may take: a kernel that does not return "
                             "by then ends the run (default {:g})",
                             wait_timeout))
      ->check(seconds());
  sub.add_option(
         "--compile-timeout", compile_timeout,
         fmt::format("seconds each NVRTC compile and link of a kernel file may take (default {:g})", compile_timeout))
      ->check(seconds());
}

void UserLimits::apply(Spec& spec) const {
  if (!spec.user) return;
  spec.user->user_timeout_s = user_timeout;
  spec.user->compile_timeout_s = compile_timeout;
}

CLI::Option* add_path_option(CLI::App& sub, const std::string& name, std::string& path, const std::string& help) {
  return sub.add_option(name, path, help)->check(CLI::Validator(
      [](std::string& value) { return value.empty() ? std::string("empty path") : std::string(); }, "PATH"));
}

CLI::Option* add_threads_option(CLI::App& sub, unsigned& threads) {
  return sub.add_option("--threads", threads, "CPU worker threads (default 0: one per hardware thread)")
      ->check(whole_number(0, kMaxThreads));
}

CLI::Option* add_keep_option(CLI::App& sub, std::size_t& keep) {
  return sub
      .add_option("--keep", keep,
                  fmt::format("examples kept of each failure: counterexamples per claim, disagreements between "
                              "implementations (default {})",
                              kDefaultKeep))
      ->check(whole_number(0, 1000000));
}

CLI::Option* add_show_option(CLI::App& sub, std::size_t& show) {
  return sub
      .add_option("--show", show,
                  fmt::format("counterexamples printed per claim (default {}); the report has all --keep of them",
                              kDefaultShow))
      ->check(whole_number(0, 1000000));
}

CLI::Option* add_report_option(CLI::App& sub, std::string& path, const std::string& help) {
  return add_path_option(sub, "-o,--report", path, help);
}

CLI::Option* add_no_user_code_flag(CLI::App& sub) {
  const std::string help =
      "refuse (exit 2) a spec with code of its own to compile and run (user recipes' functions, timing kernels; "
      "output tables are data), before anything is compiled; BITPROOF_NO_USER_CODE=1 does the same";
  return sub.add_flag("--no-user-code", help);
}

std::optional<Error> apply_user_code_policy(const CLI::App& sub) {
  const CLI::Option* flag = sub.get_option_no_throw("--no-user-code");
  if (flag == nullptr) return std::nullopt;  // a command that runs no spec's code
  const char* env = std::getenv("BITPROOF_NO_USER_CODE");
  const std::string value = env == nullptr ? "" : env;
  if (value != "" && value != "0" && value != "1") {
    return Error{fmt::format("BITPROOF_NO_USER_CODE: expected 1 (refuse user code) or 0, got \"{}\"", value)};
  }
  if (flag->count() > 0) {
    user::set_user_code_refusal("--no-user-code");
  } else if (value == "1") {
    user::set_user_code_refusal("BITPROOF_NO_USER_CODE=1");
  }
  return std::nullopt;
}

void Outputs::add_flags(CLI::App& sub, const OutputFlags& which) {
  if (which.report) add_report_option(sub, report, "write the JSON report here");
  add_path_option(sub, "--markdown", markdown, "write a Markdown rendering here (for a PR comment)");
  add_path_option(sub, "--junit", junit, "write JUnit XML here: " + which.junit);
  if (!which.svg) return;
  add_path_option(sub, "--svg", svg,
                  "write the SVG case map here: a proof's own domain, or every code a domain report swept");
}

Expected<OutputFiles> Outputs::open(const std::vector<std::string>& inputs) const {
  OutputFiles files;
  for (const std::string& input : inputs) files.add_input(input);
  const std::pair<const std::string&, const char*> paths[] = {
      {report, "--report"}, {markdown, "--markdown"}, {junit, "--junit"}, {svg, "--svg"}};
  for (const auto& [path, flag] : paths) {
    if (path.empty()) continue;
    if (auto ok = files.add(flag, path); !ok) return ok.error();
  }
  return files;
}

std::optional<Error> Outputs::write(OutputFiles& files, const Json& json) const {
  if (!report.empty()) files.set(report, json.dump(2) + "\n");
  if (!markdown.empty()) files.set(markdown, render_markdown(json));
  if (!junit.empty()) files.set(junit, render_junit(json));
  if (!svg.empty()) {
    auto picture = render_svg(json, "--svg");
    if (!picture) return picture.error();
    files.set(svg, *picture);
  }
  if (auto ok = files.commit(); !ok) return ok.error();
  return std::nullopt;
}

namespace {

std::optional<std::pair<std::uint64_t, std::uint64_t>> parse_fraction(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return std::nullopt;
  std::uint64_t h = 0, n = 0;
  const char* end = text.data() + text.size();
  if (std::from_chars(text.data(), text.data() + slash, h).ptr != text.data() + slash) return std::nullopt;
  if (std::from_chars(text.data() + slash + 1, end, n).ptr != end || h > n) return std::nullopt;
  return std::pair{h, n};
}

}  // namespace

void Gate::add_flags(CLI::App& sub) {
  sub.add_option(
         "--expect", expect,
         "fail (exit 1) unless each claim's holding/total is exactly H/N, e.g. 208/208 (repeat it: one per claim); "
         "counts only: a refuted claim still fails (an expected refutation is the spec's \"expect\")")
      ->allow_extra_args(false);
  sub.add_flag("--quiet,-q", quiet, "print nothing but the claims that do not pass, disagreements and errors");
}

std::optional<Error> Gate::check_syntax(std::size_t claims) const {
  for (const std::string& e : expect) {
    if (!parse_fraction(e)) return Error{fmt::format("--expect: expected H/N with H <= N, got \"{}\"", e)};
  }
  if (expect.size() > 1 && expect.size() != claims) {
    return Error{fmt::format("--expect: {} values for {} claims (give one for all, or one per claim)", expect.size(), claims)};
  }
  return std::nullopt;
}

std::vector<std::string> Gate::mismatches(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& counts) const {
  std::vector<std::string> lines;
  if (expect.empty()) return lines;
  for (std::size_t c = 0; c < counts.size(); ++c) {
    const auto want = *parse_fraction(expect.size() == 1 ? expect[0] : expect[c]);
    if (want != counts[c]) {
      lines.push_back(fmt::format("EXPECTATION FAILED: claim {}: expected {}/{}, got {}/{}", c, want.first, want.second,
                                  counts[c].first, counts[c].second));
    }
  }
  return lines;
}

std::vector<std::string> Gate::counted_but_failing(const std::vector<Claim>& claims,
                                                   const std::vector<ClaimResult>& results,
                                                   const std::vector<bool>& passes) const {
  std::vector<std::string> lines;
  if (expect.empty()) return lines;
  for (std::size_t c = 0; c < results.size(); ++c) {
    const ClaimResult& r = results[c];
    if (passes[c] || *parse_fraction(expect.size() == 1 ? expect[0] : expect[c]) != std::pair{r.holding, r.cases}) {
      continue;
    }
    std::string line = fmt::format(
        "claim {}: {}/{} as --expect says, but --expect checks counts, not verdicts: the "
        "claim does not pass (exit 1)",
        c, r.holding, r.cases);
    if (!claims[c].expect) {
      std::string kinds;
      for (const auto& [kind, n] : r.by_kind) kinds += fmt::format("{}\"{}\": {}", kinds.empty() ? "" : ", ", kind, n);
      line += fmt::format("; a refutation you expect belongs in the spec's claim: \"expect\": {{\"refuted\": {}{}}}",
                          r.cases - r.holding, kinds.empty() ? "" : fmt::format(", \"kinds\": {{{}}}", kinds));
    }
    lines.push_back(line);
  }
  return lines;
}

std::string painted(const std::string& line, bool good) {
  // no-color.org: a present, non-empty NO_COLOR turns colour off.
  static const bool colour = [] {
    const char* no_color = std::getenv("NO_COLOR");
    return isatty(STDOUT_FILENO) != 0 && (no_color == nullptr || *no_color == '\0');
  }();
  if (!colour) return line;
  return (good ? "\033[32m" : "\033[1;31m") + line + "\033[0m";
}

void print_lines(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
}

void print_witness(const Spec& spec, std::uint64_t count, const std::vector<WitnessDisagreement>& first) {
  if (count == 0) return;
  std::printf("WITNESS DISAGREEMENT: soft and oracle arithmetic differ on %llu recipe evaluations\n",
              static_cast<unsigned long long>(count));
  for (const auto& w : first) print_lines(witness_lines(spec, w));
}

}  // namespace bitproof::cli
