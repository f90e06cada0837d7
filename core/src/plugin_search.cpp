// Where plugins are looked for and which ones xal_init loads:
// XAL_BACKENDS, XAL_BACKEND_PATH, the plugin folder beside libxal.so and the
// fault environment.
#include <dirent.h>
#include <dlfcn.h>

#include <climits>
#include <cstdlib>

#include <algorithm>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "loader.hpp"
#include "runtime.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

namespace {

using xal::common::split;
using xal::common::trim;

// Every libxal_backend_*.so in `dir`, sorted by name.
std::vector<std::string> list_plugins(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 17 && n.rfind("libxal_backend_", 0) == 0 &&
        n.compare(n.size() - 3, 3, ".so") == 0)
      out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The "target" field of the XAL_FAULT_PLAN JSON (inline text or a file);
// empty when there is none. A plan that does not parse is left to the fault
// backend, which reports its errors.
std::string plan_target() {
  auto plan = xal::common::env("XAL_FAULT_PLAN");
  if (!plan || xal::common::trim(*plan).empty()) return {};
  try {
    nlohmann::json doc;
    const std::string_view text = xal::common::trim(*plan);
    if (text.front() == '{') {
      doc = nlohmann::json::parse(text);
    } else {
      std::ifstream in{std::string(text)};
      if (!in) return {};
      doc = nlohmann::json::parse(in);
    }
    if (doc.is_object()) {
      auto it = doc.find("target");
      if (it != doc.end() && it->is_string()) return it->get<std::string>();
    }
  } catch (...) {
  }
  return {};
}

// The `target=NAME` setting of XAL_FAULTS (docs/FAULTS.md, the compact
// syntax: items separated by ';' or newlines, blanks around them and
// around '=' ignored; the last one counts); empty when there is none. The
// rest of the string is the fault backend's to parse.
std::string compact_target() {
  const auto faults = xal::common::env("XAL_FAULTS");
  if (!faults) return {};
  std::string target;
  for (const auto& raw : split(*faults, ";\n")) {
    const std::string_view item = trim(raw);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos && trim(item.substr(0, eq)) == "target")
      target = std::string(trim(item.substr(eq + 1)));
  }
  return target;
}

// The backend the fault backend wraps when XAL_BACKENDS does not say: the
// plan's target, else XAL_FAULTS' target=, else the mock (the fault
// backend's own order, faultinject/src/backend.cpp).
std::string fault_target() {
  if (std::string t = plan_target(); !t.empty()) return t;
  if (std::string t = compact_target(); !t.empty()) return t;
  return "mock";
}

}  // namespace

std::string plugin_name_of_file(const std::string& file) {
  // libxal_backend_<name>.so -> <name>
  const std::string base = file.substr(file.find_last_of('/') + 1);
  if (base.rfind("libxal_backend_", 0) == 0 && base.size() > 18)
    return base.substr(15, base.size() - 18);
  return base;
}

std::string plugin_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&xal_abi_version), &info) == 0 ||
      !info.dli_fname)
    return {};
  std::string lib = info.dli_fname;
  if (char* real = realpath(info.dli_fname, nullptr)) {  // "bin/../lib" -> "lib"
    lib = real;
    std::free(real);
  }
  const auto slash = lib.find_last_of('/');
  if (slash == std::string::npos) return {};
  return lib.substr(0, slash) + "/xal";
}

std::vector<std::string> search_dirs(const std::string& backend_path) {
  std::vector<std::string> dirs;
  const std::string own = plugin_dir();
  if (!own.empty()) dirs.push_back(own);
  for (const auto& d : split(backend_path, ":")) {
    std::string dir(trim(d));
    if (dir.empty()) continue;
    if (dir[0] != '/') {  // never relative folders: they depend on the working directory
      log_message(XAL_LOG_WARNING, cat("backend path folder '", dir,
                                       "' is ignored: only absolute folders are searched").c_str());
      continue;
    }
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
      dirs.push_back(dir);
  }
  return dirs;
}

std::vector<LoadRequest> plan_backends(const std::string& backends,
                                       const std::vector<std::string>& dirs) {
  std::vector<LoadRequest> out;
  bool fault_named = false;
  for (const auto& piece : split(backends, ",")) {
    std::string entry(trim(piece));
    if (entry.empty()) continue;
    LoadRequest r;
    const auto colon = entry.find(':');
    if (colon != std::string::npos && entry.find('/') > colon) {
      r.plugin = entry.substr(0, colon);
      r.argument = entry.substr(colon + 1);
    } else {
      r.plugin = entry;
    }
    if (plugin_name_of_file(r.plugin) == "fault" || r.plugin == "fault")
      fault_named = true;
    out.push_back(std::move(r));
  }
  // A wrapped target is not loaded standalone as well.
  std::set<std::string> wrapped;
  for (const auto& r : out)
    if (!r.argument.empty()) wrapped.insert(r.argument);
  std::erase_if(out, [&](const LoadRequest& r) {
    return r.argument.empty() && wrapped.count(r.plugin) != 0;
  });
  const bool from_env = !out.empty() || !trim(backends).empty();
  if (!from_env) {
    std::set<std::string> seen;
    for (const auto& dir : dirs)
      for (const auto& file : list_plugins(dir)) {
        const std::string name = plugin_name_of_file(file);
        if (!seen.insert(name).second) continue;
        out.push_back(LoadRequest{dir + "/" + file, ""});
      }
  }
  const bool want_fault = xal::common::env("XAL_FAULT_PLAN").has_value() ||
                          xal::common::env("XAL_FAULTS").has_value();
  if (want_fault && !fault_named) {
    const std::string target = fault_target();
    bool replaced = false;
    for (auto& r : out) {
      if (plugin_name_of_file(r.plugin) == target && r.argument.empty()) {
        r = LoadRequest{"fault", r.plugin};  // keeps a path a path
        replaced = true;
        break;
      }
    }
    if (!replaced) {
      std::erase_if(out, [](const LoadRequest& r) {
        return plugin_name_of_file(r.plugin) == "fault";
      });
      out.push_back(LoadRequest{"fault", target});
    } else {
      std::erase_if(out, [](const LoadRequest& r) {
        return r.argument.empty() && plugin_name_of_file(r.plugin) == "fault";
      });
    }
  } else if (!from_env) {
    // Found by scanning: the fault backend only runs when asked for.
    std::erase_if(out, [](const LoadRequest& r) {
      return plugin_name_of_file(r.plugin) == "fault";
    });
  }
  return out;
}

}  // namespace xal::core
