// User recipes on the GPU. The spec's sources are compiled at run time by
// NVRTC into LTO IR for the device's own architecture, together with a
// generated dispatch (bp_user_eval: slot k calls user recipe k) and the spec's
// recipe per kernel slot (bp_spec_recipes); nvJitLink links that with the
// sweep kernels' LTO image (kernels/sweep.cu built with
// BITPROOF_KERNELS_USER_SLOTS, one image per kernel slot count) into one cubin, so every kernel holds just the
// spec's recipes, the user's code inlined. The cubin is cached by content
// under $XDG_CACHE_HOME/bitproof/cuda: a second run compiles nothing.
//
// NVRTC and nvJitLink come with the CUDA toolkit and are opened with dlopen
// (libnvrtc.so.13, libnvJitLink.so.13: $BITPROOF_CUDA_LIB_DIR, $CUDA_HOME/lib64,
// /usr/local/cuda/lib64, then the loader's path), so a machine without the
// toolkit still runs the catalogue on its GPU; user recipes then exit 3.
#pragma once

#if defined(BITPROOF_HAVE_CUDA)

#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "user/user_recipes.hpp"

namespace bitproof::cuda {

struct UserImage {
  std::string cubin;                 // what cuModuleLoadData loads
  std::string key;                   // SHA-256 of everything it was built from
  std::string source;                // the generated NVRTC source
  std::vector<std::string> options;  // NVRTC's, then nvJitLink's
  std::string toolkit;               // "nvrtc 13.0, nvJitLink 13.0"
  std::string sources_note;          // how the cache key covers the user's files
  bool cached = false;
  double seconds = 0;
};

// `slot_recipes`: per kernel slot (abi::kMaxSlots), the recipe index the slot
// runs (catalogue index, or catalogue size + user slot; -1 for none).
// Errors: exit 3 when NVRTC or nvJitLink is missing; exit 2, with the spec's
// path and NVRTC's first error lines, when the sources do not compile; exit 2
// naming the sources and the limit when the compile and link take longer than
// user.compile_timeout_s (they run in a child process: run_backend_child).
[[nodiscard]] Expected<UserImage> build_user_image(const user::UserRecipes& user, const std::vector<int>& slot_recipes,
                                                   int major, int minor, std::string_view lto_image);

// A timing arm's kernel source compiled for the device (NVRTC to LTO IR, nvJitLink to
// a cubin: user recipes' toolchain and contraction flags). Not cached: timing
// specs are small. Errors as build_user_image's, `what` naming the spec's field;
// a compile and link longer than `timeout_s` is exit 2 naming the file and the limit.
struct KernelCubin {
  std::string cubin;
  std::vector<std::string> options;
  std::string toolkit;
};
[[nodiscard]] Expected<KernelCubin> compile_kernel_file(const std::string& file,
                                                        const std::vector<std::string>& include_dirs, bool fmad,
                                                        int major, int minor, const std::string& what,
                                                        double timeout_s);

// A kernel arm's CUDA source compiled by NVRTC to PTX for compute_<major><minor> (no GPU
// needed: the CPU executor and the GPU both run this PTX), in the compile child within
// `timeout_s`. `options`: the architecture, -std and --fmad (include directories are
// recorded apart, by the caller). Errors as compile_kernel_file's.
struct KernelPtx {
  std::string ptx;
  std::vector<std::string> options;
  std::string toolkit;
};
[[nodiscard]] Expected<KernelPtx> compile_kernel_ptx(const std::string& file, const std::vector<std::string>& include_dirs,
                                                     bool fmad, int major, int minor, const std::string& what,
                                                     double timeout_s);

}  // namespace bitproof::cuda

#endif
