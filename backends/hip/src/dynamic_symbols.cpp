#include "dynamic_symbols.h"

#include <dlfcn.h>

#include <link.h>

#include "xalsupport/symbol_table.h"

namespace xal::hip {
namespace {

std::string dl_error_text() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

// Path the library was actually loaded from (the soname resolves through
// the linker's search path).
std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
      map->l_name != nullptr && map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

HipLibrary::~HipLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::vector<std::string> HipLibrary::candidate_sonames() {
  return {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
          "libamdhip64.so.4"};
}

bool HipLibrary::load(const std::string& explicit_path, std::string* error) {
  if (explicit_path.empty()) return load_first(candidate_sonames(), false, error);
  return load_first({explicit_path}, true, error);
}

bool HipLibrary::load_first(const std::vector<std::string>& candidates,
                            bool named_by_user, std::string* error) {
  std::vector<std::string> tried;
  for (const std::string& name : candidates) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      handle_ = handle;
      path_ = loaded_path(handle, name);
      break;
    }
    tried.push_back(name + ": " + dl_error_text());
  }
  if (handle_ == nullptr) {
    std::string text = named_by_user
                           ? "cannot load the HIP runtime named by "
                             "XAL_HIP_LIBRARY: "
                           : "no HIP runtime found; tried ";
    for (size_t i = 0; i < tried.size(); ++i) {
      text += (i == 0 ? "" : "; ") + tried[i];
    }
    *error = text;
    return false;
  }

  support::SymbolResolver resolver(support::dlsym_lookup(handle_));
#define XAL_HIP_RESOLVE(kind, name, since) \
  resolver.resolve(support::SymbolKind::kind, #name, since, api_.name);
  XAL_HIP_SYMBOLS(XAL_HIP_RESOLVE)
#undef XAL_HIP_RESOLVE
  if (!resolver.complete()) {
    *error = resolver.reason("the HIP runtime " + path_, hip_version_text);
    return false;
  }

  void* marker = dlsym(handle_, kSimulatedMarker);
  if (marker != nullptr) {
    simulated_ = true;
    const char* const* text = static_cast<const char* const*>(marker);
    simulated_note_ = (text != nullptr && *text != nullptr) ? *text : "";
  }
  return true;
}

}  // namespace xal::hip
