#include "backend/kernel_modules.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "hash/digest.hpp"
#include "operator/kernel_cpu.hpp"
#include "strict_json.hpp"
#include "user/user_recipes.hpp"
#if defined(BITPROOF_HAVE_CUDA)
#include "backend/cuda_user.hpp"
#endif

namespace bitproof {
namespace {

namespace fs = std::filesystem;

std::string spec_dir(const op::AbSpec& spec) {
  std::error_code ec;
  return fs::absolute(fs::path(spec.path).parent_path(), ec).lexically_normal().string();
}

// `path` as the report records it: relative to the spec's directory.
std::string recorded_path(const op::AbSpec& spec, const std::string& path) {
  std::error_code ec;
  return fs::absolute(path, ec).lexically_normal().lexically_relative(spec_dir(spec)).generic_string();
}

Expected<std::pair<std::string, std::string>> read_digest(const op::AbSpec& spec, const std::string& path,
                                                          const std::string& field) {
  auto text = read_input_file(path, "a kernel file", kMaxPtxBytes);
  if (!text) return Error{fmt::format("{}: {}: {}", spec.path, field, text.error().message)};
  return std::make_pair(recorded_path(spec, path), sha256_hex(*text));
}

Expected<op::KernelModule> ptx_module(const op::AbSpec& spec, std::size_t i) {
  const op::KernelSources& k = *spec.kernels;
  const std::string field = fmt::format("kernels.ptx[{}]", i);
  auto text = read_input_file(k.ptx_paths[i], "a PTX module", kMaxPtxBytes);
  if (!text) return Error{fmt::format("{}: {}: {}", spec.path, field, text.error().message)};
  op::KernelModule m;
  m.file = k.ptx[i];
  m.ptx = *text;
  m.read_files.emplace_back(recorded_path(spec, k.ptx_paths[i]), sha256_hex(*text));
  return m;
}

Expected<op::KernelModule> cuda_module(const op::AbSpec& spec, std::size_t i, double timeout_s) {
  const op::KernelSources& k = *spec.kernels;
  const std::string field = fmt::format("{}: kernels.files[{}]", spec.path, i);
#if defined(BITPROOF_HAVE_CUDA)
  if (auto exists = read_input_file(k.file_paths[i], "a CUDA kernel file", kMaxPtxBytes); !exists)
    return Error{fmt::format("{}: {}", field, exists.error().message)};
  auto ptx = cuda::compile_kernel_ptx(k.file_paths[i], k.include_dirs, k.fmad, kKernelArchMajor, kKernelArchMinor,
                                      field, timeout_s);
  if (!ptx) return ptx.error();
  auto reads = user::kernel_file_reads(k.file_paths[i], k.include_dirs, timeout_s, field);
  if (!reads) return reads.error();
  op::KernelModule m;
  m.file = k.files[i];
  m.ptx = std::move(ptx->ptx);
  m.options = ptx->options;
  for (const std::string& d : k.include_dirs_written) m.options.push_back("-I" + d);  // as written: no host paths
  for (const std::string& path : *reads) {
    auto digest = read_digest(spec, path, fmt::format("kernels.files[{}]", i));
    if (!digest) return digest.error();
    m.read_files.push_back(std::move(*digest));
  }
  return m;
#else
  (void)k;
  (void)timeout_s;
  return Error{fmt::format("{}: CUDA source needs NVRTC: this bitproof was built without the CUDA backend (give "
                           "the kernels as PTX: \"kernels\": {{\"ptx\": [...]}})",
                           field),
               kExitNoBackend};
#endif
}

}  // namespace

Expected<std::vector<op::KernelModule>> build_kernel_modules(const op::AbSpec& spec, double compile_timeout_s) {
  std::vector<op::KernelModule> modules;
  if (!spec.kernels) return modules;
  for (std::size_t i = 0; i < spec.kernels->files.size(); ++i) {
    auto m = cuda_module(spec, i, compile_timeout_s);
    if (!m) return m.error();
    modules.push_back(std::move(*m));
  }
  for (std::size_t i = 0; i < spec.kernels->ptx.size(); ++i) {
    auto m = ptx_module(spec, i);
    if (!m) return m.error();
    modules.push_back(std::move(*m));
  }
  if (auto set = op::parse_kernel_modules(spec, modules); !set) return set.error();
  return modules;
}

std::vector<std::string> kernel_module_paths(const op::AbSpec& spec, const std::vector<op::KernelModule>& modules) {
  std::vector<std::string> out;
  for (const op::KernelModule& m : modules) {
    for (const auto& [path, digest] : m.read_files) out.push_back((fs::path(spec_dir(spec)) / path).lexically_normal().string());
  }
  return out;
}

}  // namespace bitproof
