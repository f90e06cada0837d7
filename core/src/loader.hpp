// Finding, opening and starting backend plugins.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "objects.hpp"

namespace xal::core {

struct LoadRequest {
  std::string plugin;    // name ("mock") or path (contains '/')
  std::string argument;  // init argument ("fault:mock" gives "mock")
};

// libxal_backend_<name>.so (or a path to it) -> <name>.
std::string plugin_name_of_file(const std::string& file);

// The plugin folder beside libxal.so: <dir of libxal.so>/xal.
std::string plugin_dir();

// Folders searched for plugins: the plugin folder, then `backend_path`
// (':'-separated).
std::vector<std::string> search_dirs(const std::string& backend_path);

// What to load: from `backends` (comma-separated names or paths, may be
// empty for "every plugin found"), the fault environment
// (XAL_FAULT_PLAN/XAL_FAULTS) and the search folders.
std::vector<LoadRequest> plan_backends(const std::string& backends,
                                       const std::vector<std::string>& dirs);

// Opens the plugin file and checks its table (ABI in both directions).
// Fills `b` (path, table, abi_version; on failure state/status/reason).
bool open_plugin(const std::string& plugin,
                 const std::vector<std::string>& dirs, Backend& b);

// Runs the plugin's init (with the request's argument), describes it and
// counts its devices. On failure fills state/status/reason.
bool start_backend(Backend& b);

// Shuts the instance down (if started) and closes the library.
void close_backend(Backend& b) noexcept;

}  // namespace xal::core
