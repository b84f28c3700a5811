// Reading the kernel-arm parts of an A/B spec (kernel_spec.hpp): the syntax of "kernels",
// a kernel stage and an output declaration, and their canonical JSON. Names are checked
// against the spec's tensors by ab_spec.cpp (ArmChecker); errors "<file>: <field>: <what>".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "error.hpp"
#include "json_fields.hpp"
#include "operator/kernel_spec.hpp"

namespace bitproof::op::kernel_parse {

// "kernels": {"files": [...], "ptx": [...], "include_dirs": [...], "fmad": bool}; paths resolved
// against `spec_dir`; at least one file or PTX module.
[[nodiscard]] Expected<KernelSources> sources(const fields::Where& w, const nlohmann::json& v,
                                              const std::string& spec_dir);
// A stage {"kernel", "grid", "block", "shared_bytes", "args"}: syntax and launch limits.
[[nodiscard]] Expected<KernelLaunch> stage(const fields::Where& w, const nlohmann::json& v, const std::string& field);
// {"name", "dtype": "f16"|"bf16", "shape": [cols] | [rows, cols]}.
[[nodiscard]] Expected<OutputDecl> output_decl(const fields::Where& w, const nlohmann::json& v,
                                               const std::string& field);

[[nodiscard]] nlohmann::ordered_json sources_json(const KernelSources& k);
[[nodiscard]] nlohmann::ordered_json stage_json(const KernelLaunch& l);
[[nodiscard]] nlohmann::ordered_json output_decl_json(const OutputDecl& d);

}  // namespace bitproof::op::kernel_parse
