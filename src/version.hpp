// The tool's version and the commit it was built from, as every report, cache
// key and shard check records them (generated at build time from
// src/version.cpp.in by cmake/version.cmake).
#pragma once

#include <string>

namespace bitproof {

[[nodiscard]] std::string tool_version();
[[nodiscard]] std::string tool_git_commit();

}  // namespace bitproof
