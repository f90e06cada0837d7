// Where a vendor library lies on this machine (xal-info --locate): the
// file the dynamic loader opens for its soname, else the first one found
// under the folders vendor packages and Python wheels install into.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace xal::info {

// The folders searched after the dynamic loader.
std::vector<std::string> locate_folders();

// The path of `soname` ("libnccl.so.2"), or nothing.
std::optional<std::string> locate_library(const std::string& soname);

}  // namespace xal::info
