// Outputs as one transaction: refused up front when they are inputs, other
// outputs, directories or unwritable; written whole and all together, or not at all.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "output_files.hpp"
#include "support.hpp"

using namespace bitproof;
namespace fs = std::filesystem;

namespace {

// A fresh directory, removed with everything in it at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string name = (fs::temp_directory_path() / "bitproof-outputs-XXXXXX").string();
    path = ::mkdtemp(name.data());
  }
  ~TempDir() { fs::remove_all(path); }
  [[nodiscard]] std::string file(const std::string& name) const { return (path / name).string(); }
};

void put(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_SUITE("report") {
  TEST_CASE("outputs: every output written on commit, none before") {
    TempDir dir;
    OutputFiles files;
    REQUIRE(files.add("--report", dir.file("r.json")).ok());
    REQUIRE(files.add("--markdown", dir.file("r.md")).ok());
    files.set(dir.file("r.json"), "{}\n");
    files.set(dir.file("r.md"), "# r\n");
    CHECK_FALSE(fs::exists(dir.file("r.json")));
    REQUIRE(files.commit().ok());
    CHECK(test::read_text(dir.file("r.json")) == "{}\n");
    CHECK(test::read_text(dir.file("r.md")) == "# r\n");
    CHECK(entries(dir.path) == 2);  // no temporary left behind
  }

  TEST_CASE("outputs: an output never set fails the commit and nothing is written or replaced") {
    TempDir dir;
    put(dir.file("old.json"), "old");
    {
      OutputFiles files;
      REQUIRE(files.add("--report", dir.file("old.json")).ok());
      REQUIRE(files.add("--junit", dir.file("j.xml")).ok());
      files.set(dir.file("old.json"), "new");
      const auto ok = files.commit();
      REQUIRE_FALSE(ok.ok());
      CHECK(ok.error().message.find("--junit") != std::string::npos);
    }
    CHECK(test::read_text(dir.file("old.json")) == "old");
    CHECK(entries(dir.path) == 1);
  }

  TEST_CASE("outputs: an exit that unwinds nothing removes the reserved temporaries first") {
    const TempDir dir;
    OutputFiles kept;
    REQUIRE(kept.add("--report", dir.file("kept.json")));
    kept.set(dir.file("kept.json"), "kept\n");
    REQUIRE(kept.commit());  // committed: no longer reserved, left alone
    OutputFiles files;
    REQUIRE(files.add("--report", dir.file("r.json")));
    REQUIRE(files.add("--markdown", dir.file("r.md")));
    CHECK(entries(dir.path) == 3);  // kept.json and two temporaries
    remove_reserved_outputs();      // what cli::abandon does before _exit
    CHECK(entries(dir.path) == 1);
    CHECK(test::read_text(dir.file("kept.json")) == "kept\n");
  }

  TEST_CASE("outputs: an OutputFiles dropped without commit leaves nothing") {
    TempDir dir;
    {
      OutputFiles files;
      REQUIRE(files.add("--report", dir.file("r.json")).ok());
      files.set(dir.file("r.json"), "{}");
    }
    CHECK(entries(dir.path) == 0);
  }

  TEST_CASE("outputs: an input is refused by name, through a symlink, through '..' and by inode") {
    TempDir dir;
    const std::string spec = dir.file("spec.json");
    put(spec, "{}");
    fs::create_symlink(spec, dir.file("link.json"));
    fs::create_hard_link(spec, dir.file("hard.json"));
    fs::create_directory(dir.file("sub"));
    for (const std::string& path :
         {spec, dir.file("link.json"), dir.file("hard.json"), dir.file("sub/../spec.json")}) {
      CAPTURE(path);
      OutputFiles files;
      files.add_input(spec);
      const auto ok = files.add("--report", path);
      REQUIRE_FALSE(ok.ok());
      CHECK(ok.error().message.find("is an input of this command") != std::string::npos);
      CHECK(ok.error().exit_code == 2);
    }
    OutputFiles control;  // negative control: another name is fine
    control.add_input(spec);
    CHECK(control.add("--report", dir.file("other.json")).ok());
    CHECK(test::read_text(spec) == "{}");
  }

  TEST_CASE("outputs: a file inside an input directory (a checkpoint's shard) is an input") {
    TempDir dir;
    put(dir.file("model.safetensors"), "x");
    OutputFiles files;
    files.add_input(dir.path.string());
    CHECK_FALSE(files.add("--report", dir.file("model.safetensors")).ok());
    CHECK(files.add("--report", dir.file("audit.json")).ok());
  }

  TEST_CASE("outputs: two outputs on one file are refused") {
    TempDir dir;
    OutputFiles files;
    REQUIRE(files.add("--report", dir.file("x")).ok());
    const auto ok = files.add("--markdown", dir.file("./x"));
    REQUIRE_FALSE(ok.ok());
    CHECK(ok.error().message == "--markdown: " + dir.file("./x") + ": is also the output of --report");
  }

  TEST_CASE("outputs: empty, directory, missing directory, over-long name, not a regular file") {
    TempDir dir;
    OutputFiles files;
    CHECK(files.add("--report", "").error().message == "--report: empty output path");
    CHECK(files.add("--report", dir.path.string()).error().message == "--report: " + dir.path.string() + ": is a directory");
    CHECK(files.add("--report", "/nonexistent-dir/r.json").error().message ==
          "--report: /nonexistent-dir/r.json: directory /nonexistent-dir does not exist");
    const std::string long_name = dir.file(std::string(253, 'a') + ".md");
    const auto too_long = files.add("--markdown", long_name);
    REQUIRE_FALSE(too_long.ok());
    CHECK(too_long.error().message.find("longer than the 255") != std::string::npos);
    CHECK_FALSE(files.add("--report", "/dev/null").ok());
    CHECK(files.empty());
    CHECK(entries(dir.path) == 0);
    // A 250-byte name plus ".md" fits: the temporary's own name is short.
    const std::string fits = dir.file(std::string(250, 'a') + ".md");
    REQUIRE(files.add("--markdown", fits).ok());
    files.set(fits, "ok");
    REQUIRE(files.commit().ok());
    CHECK(test::read_text(fits) == "ok");
  }
}
