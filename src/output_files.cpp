#include "output_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

namespace bitproof {
namespace fs = std::filesystem;

namespace {

std::string parent_of(const std::string& path) {
  const fs::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

// Every temporary reserved and not yet renamed or removed, in this process
// (remove_reserved_outputs). Never destroyed: it may be read at _exit.
std::mutex reserved_mutex;
std::set<std::string>& reserved() {
  static auto* const set = new std::set<std::string>;  // NOLINT: leaked on purpose (above)
  return *set;
}
void reserve(const std::string& temporary) {
  const std::lock_guard lock(reserved_mutex);
  reserved().insert(temporary);
}
void release(const std::string& temporary) {
  const std::lock_guard lock(reserved_mutex);
  reserved().erase(temporary);
}

// The mode a new file gets under the process's umask (mkstemp makes 0600).
mode_t new_file_mode() {
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

Expected<Ok> write_all(int fd, const std::string& content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{std::strerror(n < 0 ? errno : EIO)};
    done += static_cast<std::size_t>(n);
  }
  return Ok{};
}

}  // namespace

OutputFiles::OutputFiles(OutputFiles&& other) noexcept
    : pending_inputs_(std::move(other.pending_inputs_)),
      inputs_(std::move(other.inputs_)),
      outputs_(std::move(other.outputs_)) {
  other.outputs_.clear();
}

OutputFiles& OutputFiles::operator=(OutputFiles&& other) noexcept {
  if (this != &other) {
    discard();
    pending_inputs_ = std::move(other.pending_inputs_);
    inputs_ = std::move(other.inputs_);
    outputs_ = std::move(other.outputs_);
    other.outputs_.clear();
  }
  return *this;
}

OutputFiles::~OutputFiles() { discard(); }

void OutputFiles::discard() {
  for (Output& o : outputs_) {
    if (o.fd >= 0) ::close(o.fd);
    if (!o.temporary.empty()) {
      ::unlink(o.temporary.c_str());
      release(o.temporary);
    }
    o.fd = -1;
    o.temporary.clear();
  }
  outputs_.clear();
}

OutputFiles::Identity OutputFiles::identify(const std::string& path) {
  Identity id;
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
  id.resolved = ec ? fs::absolute(path, ec).lexically_normal().string() : resolved.string();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  return id;
}

bool OutputFiles::same(const Identity& a, const Identity& b) {
  if (a.resolved == b.resolved) return true;
  return a.exists && b.exists && a.device == b.device && a.inode == b.inode;
}

void OutputFiles::add_input(const std::string& path) {
  if (!path.empty()) pending_inputs_.push_back(path);
}

void OutputFiles::identify_inputs() {
  for (const std::string& path : pending_inputs_) {
    inputs_.emplace_back(path, identify(path));
    std::error_code ec;
    if (!fs::is_directory(path, ec)) continue;
    // A checkpoint directory: its files are inputs too (not its subdirectories).
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) inputs_.emplace_back(it->path().string(), identify(it->path().string()));
    }
  }
  pending_inputs_.clear();
}

Expected<Ok> OutputFiles::add(const std::string& flag, const std::string& path) {
  const auto bad = [&](const std::string& what) { return Error{fmt::format("{}: {}: {}", flag, path, what)}; };
  if (path.empty()) return Error{fmt::format("{}: empty output path", flag)};
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (fs::is_directory(status)) return bad("is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status)) return bad("exists and is not a regular file");
  const std::string dir = parent_of(path);
  if (!fs::is_directory(dir, ec)) return bad(fmt::format("directory {} does not exist", dir));
  if (::access(dir.c_str(), W_OK) != 0) return bad(fmt::format("directory {} is not writable", dir));
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::string name = fs::path(path).filename().string();
  if (name_max > 0 && name.size() > static_cast<std::size_t>(name_max)) {
    return bad(fmt::format("file name is {} bytes, longer than the {} this file system allows", name.size(), name_max));
  }
  const Identity id = identify(path);
  identify_inputs();
  for (const auto& [input, input_id] : inputs_) {
    if (same(id, input_id)) return bad(fmt::format("is an input of this command ({}): it would be overwritten", input));
  }
  for (const Output& o : outputs_) {
    if (same(id, o.id)) return bad(fmt::format("is also the output of {}", o.flag));
  }
  std::string temporary = (fs::path(dir) / ".bitproof-out-XXXXXX").string();
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) return bad(fmt::format("cannot create a file in {}: {}", dir, std::strerror(errno)));
  ::fchmod(fd, new_file_mode());
  reserve(temporary);
  outputs_.push_back({flag, path, id, temporary, fd, false, {}});
  return Ok{};
}

void OutputFiles::set(const std::string& path, std::string content) {
  for (Output& o : outputs_) {
    if (o.path == path) {
      o.content = std::move(content);
      o.has_content = true;
      return;
    }
  }
}

Expected<Ok> OutputFiles::commit() {
  for (Output& o : outputs_) {
    if (!o.has_content) {
      const Error e{fmt::format("{}: {}: nothing was produced for it", o.flag, o.path)};
      discard();
      return e;
    }
    auto written = write_all(o.fd, o.content);
    const int closed = ::close(o.fd);
    o.fd = -1;
    if (!written || closed != 0) {
      const Error e{fmt::format("{}: {}: cannot write: {}", o.flag, o.path,
                                written ? std::strerror(errno) : written.error().message)};
      discard();
      return e;
    }
  }
  for (Output& o : outputs_) {
    if (::rename(o.temporary.c_str(), o.path.c_str()) != 0) {
      const Error e{fmt::format("{}: {}: cannot write: {}", o.flag, o.path, std::strerror(errno))};
      discard();
      return e;
    }
    release(o.temporary);
    o.temporary.clear();
  }
  outputs_.clear();
  return Ok{};
}

void remove_reserved_outputs() {
  // try_lock: the thread that ends the process must not wait for one that may never run again.
  if (!reserved_mutex.try_lock()) return;
  for (const std::string& temporary : reserved()) ::unlink(temporary.c_str());
  reserved().clear();
  reserved_mutex.unlock();
}

}  // namespace bitproof
