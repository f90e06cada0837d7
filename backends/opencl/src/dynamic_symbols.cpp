#include "dynamic_symbols.h"

#include <dlfcn.h>

#include "xalsupport/symbol_table.h"

namespace xal::opencl {

DynamicSymbols::~DynamicSymbols() {
  if (handle_ != nullptr) dlclose(handle_);
}

bool DynamicSymbols::load(const std::string& path, std::string& error) {
  dlerror();  // clear a stale message
  // NODELETE: ICD loaders and drivers keep process-wide state and threads
  // that must outlive a backend instance; reloading them would leak it.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    error = "cannot load " + path + ": " + (why != nullptr ? why : "dlopen failed");
    return false;
  }
  ClApi api{};
  support::SymbolResolver resolver(support::dlsym_lookup(handle));
#define XAL_CL_RESOLVE(kind, name, since) \
  resolver.resolve(support::SymbolKind::kind, #name, since, api.name);
  XAL_CL_SYMBOLS(XAL_CL_RESOLVE)
#undef XAL_CL_RESOLVE
  if (!resolver.complete()) {
    dlclose(handle);
    error = resolver.reason(path, opencl_version_text, kOpenClFirstRelease);
    return false;
  }
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = handle;
  api_ = api;
  path_ = path;
  return true;
}

}  // namespace xal::opencl
