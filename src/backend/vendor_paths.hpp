// Which code path CUDA's own conversion functions take on the GPU that ran a proof.
// cuda_fp8.hpp / cuda_fp4.hpp choose at compile time, per target architecture: the FP8
// conversions use the hardware cvt from __CUDA_ARCH__ 890 on, the E2M1 and E8M0 ones only
// on family-specific targets from sm_100 on (sm_100a, sm_120f, ...); everything else runs
// the header's software emulation, the same C code as the host. A report names the path
// each cuda_vendor recipe exercised, so "proven on the GPU" is never read as "the hardware
// instruction was tested" when it was not.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "proof/spec.hpp"

namespace bitproof {

// The entry of CMAKE_CUDA_ARCHITECTURES ("80;90", "90a", "100f-real") whose code a device of
// compute capability major.minor runs: the highest one not above it (the driver's choice
// among an image's SASS and PTX), "" when none fits.
[[nodiscard]] std::string target_for_device(std::string_view architectures, int major, int minor);

// For every cuda_vendor recipe of the spec: {"recipe": "hardware cvt ... (sm_90)" or
// "software emulation ..."}; an empty object when the spec has none.
[[nodiscard]] nlohmann::ordered_json vendor_conversion_paths(const Spec& spec, std::string_view architectures,
                                                             int major, int minor);

}  // namespace bitproof
