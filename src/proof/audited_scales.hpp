// An audit report as the A/B trace proof reads it: the lowest and highest code
// of each scale tensor the audit read. The audit room reads and checks the
// report (audit/admission.hpp: read_audited_scales); the command hands that
// reader down, so the proof never includes a room above it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "error.hpp"
#include "format/domain.hpp"

namespace bitproof {

struct AuditedScales {
  // By tensor name: its codes' range; nullopt when the tensor holds no code.
  std::map<std::string, std::optional<CodeRange>> range_by_tensor;
};

// Reads the audit report at `path` (errors name it, exit 2).
using AuditReader = std::function<Expected<AuditedScales>(const std::string& path)>;

}  // namespace bitproof
