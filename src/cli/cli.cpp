#include "cli/cli.hpp"

#include <cstdio>

namespace bitproof::cli {

int fail(const Error& e) {
  std::fprintf(stderr, "bitproof: error: %s\n", e.message.c_str());
  return e.exit_code;
}

void Outputs::add_flags(CLI::App& sub) {
  sub.add_option("--report", report, "write the JSON report here");
  sub.add_option("--markdown", markdown, "write a Markdown rendering here");
}

std::optional<Error> Outputs::check() const {
  for (const auto& [path, flag] : {std::pair{report, "--report"}, std::pair{markdown, "--markdown"}}) {
    if (path.empty()) continue;
    if (auto ok = check_writable(path, flag); !ok) return ok.error();
  }
  return std::nullopt;
}

std::optional<Error> Outputs::write(const Json& json) const {
  if (!report.empty()) {
    if (auto ok = write_file(report, json.dump(2) + "\n"); !ok) return ok.error();
  }
  if (!markdown.empty()) {
    if (auto ok = write_file(markdown, render_markdown(json)); !ok) return ok.error();
  }
  return std::nullopt;
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
