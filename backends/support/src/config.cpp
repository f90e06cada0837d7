#include "xalsupport/config.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>

namespace xal::support {

const char* config_value(const xal_backend_services_t* services, const char* key) {
  if (services != nullptr &&
      services->struct_size >=
          offsetof(xal_backend_services_t, get_config) + sizeof(void*) &&
      services->get_config != nullptr) {
    return services->get_config(key);
  }
  return std::getenv(key);
}

std::string config(const xal_backend_services_t* services, const char* key) {
  const char* value = config_value(services, key);
  return value != nullptr ? value : "";
}

bool named_library_exports(const char* variable, const char* marker) {
  const char* path = std::getenv(variable);
  if (path == nullptr || *path == '\0') return false;
  void* handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  return handle != nullptr && dlsym(handle, marker) != nullptr;
}

}  // namespace xal::support
