#include "dynamic_symbols.h"

#include <dlfcn.h>
#include <link.h>

#include "xalsupport/symbol_table.h"

namespace xal::levelzero {
namespace {
// Symbol a simulated driver exports so that xal labels what it runs on.
constexpr const char* kSimulatedMarker = "xal_simulated_driver";
constexpr const char* kSoname = "libze_loader.so.1";
}  // namespace

ZeLibrary::~ZeLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

bool ZeLibrary::load(const std::string& path, std::string* error) {
  const std::string name = path.empty() ? kSoname : path;
  dlerror();
  handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* text = dlerror();
    *error = (path.empty() ? "no Level Zero loader found: "
                           : "cannot load the Level Zero loader named by "
                             "XAL_LEVELZERO_LIBRARY: ") +
             std::string(text != nullptr ? text : name + ": unknown error");
    return false;
  }
  path_ = name;
  link_map* map = nullptr;
  if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr &&
      map->l_name != nullptr && map->l_name[0] != '\0') {
    path_ = map->l_name;
  }

  support::SymbolResolver resolver(support::dlsym_lookup(handle_));
#define XAL_ZE_RESOLVE(kind, name, since) \
  resolver.resolve(support::SymbolKind::kind, #name, since, api_.name);
  XAL_ZE_SYMBOLS(XAL_ZE_RESOLVE)
#undef XAL_ZE_RESOLVE
  if (!resolver.complete()) {
    *error = resolver.reason("the Level Zero loader " + path_, ze_version_text,
                             kZeFirstRelease);
    return false;
  }

  if (void* marker = dlsym(handle_, kSimulatedMarker); marker != nullptr) {
    simulated_ = true;
    const char* const* text = static_cast<const char* const*>(marker);
    simulated_note_ = (text != nullptr && *text != nullptr) ? *text : "";
  }
  return true;
}

}  // namespace xal::levelzero
