// The PTX of an A/B spec's kernel arms (issue 47, design47.md): what both backends run. CUDA
// files are compiled by NVRTC to PTX for compute_90 in the compile child (cuda_user.hpp, within
// `compile_timeout_s`; NVRTC needs no GPU, so CI proves CUDA source too); PTX files are read as
// they are. Each module records its options and every file read (the source and each header
// it includes that is not the toolkit's, as the host preprocessor lists them) with its SHA-256,
// paths relative to the spec's directory. Then every kernel stage is checked against the
// modules (op::parse_kernel_modules: the kernel in exactly one module, parameters matching
// the stage's args), so a mismatch is exit 2 before anything runs.
//
// Errors: a file that cannot be read or does not compile: exit 2 naming the spec's field;
// CUDA files in a build without the CUDA backend, or without NVRTC: exit 3 (PTX files work).
#pragma once

#include <string>
#include <vector>

#include "error.hpp"
#include "operator/ab_spec.hpp"
#include "operator/kernel_spec.hpp"

namespace bitproof {

inline constexpr int kKernelArchMajor = 9, kKernelArchMinor = 0;  // NVRTC's --gpu-architecture=compute_90
inline constexpr std::uint64_t kMaxPtxBytes = std::uint64_t{64} << 20;

[[nodiscard]] Expected<std::vector<op::KernelModule>> build_kernel_modules(const op::AbSpec& spec,
                                                                           double compile_timeout_s);

// Every file the modules read, resolved (what a command must never write over).
[[nodiscard]] std::vector<std::string> kernel_module_paths(const op::AbSpec& spec,
                                                           const std::vector<op::KernelModule>& modules);

}  // namespace bitproof
