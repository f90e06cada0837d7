#include "dynamic_symbols.h"

#include <dlfcn.h>
#include <link.h>

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

#define XAL_ZE_SYMBOL(req, name, ret, params)                                  \
  {                                                                            \
    void* symbol = dlsym(handle_, #name);                                      \
    if (symbol == nullptr && std::string(#req) == "REQUIRED") {                \
      *error = "the Level Zero loader " + path_ +                              \
               " lacks the required function " #name " (too old?)";           \
      return false;                                                            \
    }                                                                          \
    api_.name = reinterpret_cast<ret(*) params>(symbol);                       \
  }
#include "symbols.h"
#undef XAL_ZE_SYMBOL

  if (void* marker = dlsym(handle_, kSimulatedMarker); marker != nullptr) {
    simulated_ = true;
    const char* const* text = static_cast<const char* const*>(marker);
    simulated_note_ = (text != nullptr && *text != nullptr) ? *text : "";
  }
  return true;
}

}  // namespace xal::levelzero
