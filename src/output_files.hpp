// The files one command writes, as one transaction. Every output is checked,
// and a temporary file reserved beside it, before the command does any work;
// the contents are written to the temporaries and renamed into place only
// when the command succeeded, all of them; a command that fails (or an
// OutputFiles destroyed without commit) leaves no output written or replaced.
//
// An output may never be one of the command's inputs nor another output: the
// same path after resolving `.`, `..` and symbolic links, or the same file by
// device and inode (a hard link), is refused before anything is read.
#pragma once

#include <string>
#include <vector>

#include "error.hpp"

namespace bitproof {

class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  OutputFiles(OutputFiles&& other) noexcept;
  OutputFiles& operator=(OutputFiles&& other) noexcept;
  ~OutputFiles();  // removes every temporary not committed

  // A file (or directory) the command reads; a directory's own files count too.
  // Call before add() for every input.
  void add_input(const std::string& path);
  // Checks `path` for flag `flag` ("--report") and reserves its temporary:
  // refuses (exit 2) an empty path, a directory, a directory that does not exist
  // or cannot be written, a name longer than the file system allows, and a path
  // that is an input or an output already added.
  [[nodiscard]] Expected<Ok> add(const std::string& flag, const std::string& path);
  // The content of an added output (replaces any set before).
  void set(const std::string& path, std::string content);
  // Writes every temporary, then renames each over its path. Fails (exit 2)
  // on an output added but never set, or on a write error; then every
  // temporary is removed and no output is replaced.
  [[nodiscard]] Expected<Ok> commit();
  [[nodiscard]] bool empty() const { return outputs_.empty(); }

 private:
  struct Identity {
    std::string resolved;  // absolute, `.`/`..` and symbolic links resolved where they exist
    bool exists = false;
    unsigned long long device = 0, inode = 0;
  };
  struct Output {
    std::string flag;
    std::string path;
    Identity id;
    std::string temporary;
    int fd = -1;
    bool has_content = false;
    std::string content;
  };
  static Identity identify(const std::string& path);
  static bool same(const Identity& a, const Identity& b);
  void discard();

  // Inputs are identified (resolved, stat'ed) on the first add(): a command
  // asked for no output (a cached user-recipe run lists ~100 headers the
  // compiler read) resolves none of them.
  void identify_inputs();
  std::vector<std::string> pending_inputs_;
  std::vector<std::pair<std::string, Identity>> inputs_;
  std::vector<Output> outputs_;
};

// For an exit that unwinds nothing (a GPU kernel past its limit ends the
// process from a watchdog thread: user::Deadline, cli::abandon): removes every
// temporary an OutputFiles of this process reserved and has neither committed
// nor discarded, so that such an exit leaves no `.bitproof-out-*` behind.
void remove_reserved_outputs();

}  // namespace bitproof
