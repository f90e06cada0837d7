// xal-info --locate (see locate.hpp).
#include "locate.hpp"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>
#include <system_error>

namespace xal::info {
namespace {

// The file the dynamic loader picks for `soname` (its cache, RPATH,
// LD_LIBRARY_PATH), opened without running anything of it and closed.
std::optional<std::string> loader_path(const std::string& soname) {
  void* handle = ::dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return std::nullopt;
  std::optional<std::string> path;
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] == '/') {
    path = map->l_name;
  }
  ::dlclose(handle);
  return path;
}

std::optional<std::string> search(const std::filesystem::path& root, const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == name && it->is_regular_file(ec)) return it->path().string();
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> locate_folders() { return {"/usr/lib", "/usr/local", "/opt"}; }

std::optional<std::string> locate_library(const std::string& soname) {
  if (auto path = loader_path(soname)) return path;
  for (const auto& folder : locate_folders()) {
    if (auto path = search(folder, soname)) return path;
  }
  return std::nullopt;
}

}  // namespace xal::info
