// rccl_loader.cpp -- opening librccl.so.1 (or XAL_RCCL_LIBRARY) and
// resolving the functions of rccl_symbols.h (xalsupport/symbol_table.h).
#include "rccl_loader.h"

#include <dlfcn.h>

#include "xalsupport/symbol_table.h"

namespace xal::hip {
namespace {

// "RCCL with NCCL API 2.7" for 20700 (rccl_symbols.h's encoding).
std::string rccl_version_text(int64_t since) {
  return "RCCL with NCCL API " + std::to_string(since / 10000) + "." +
         std::to_string(since / 100 % 100);
}

}  // namespace

Rccl::~Rccl() {
  if (handle_ != nullptr) dlclose(handle_);
}

bool Rccl::load(const std::string& path, bool runtime_simulated,
                std::string* reason) {
  if (path.empty() && runtime_simulated) {
    *reason = "the simulated runtime takes only a simulated RCCL named by "
              "XAL_RCCL_LIBRARY";
    return false;
  }
  const std::string name = path.empty() ? "librccl.so.1" : path;
  dlerror();
  // Never unloaded (RTLD_NODELETE), as NCCL in the CUDA plugin: its exit
  // handlers and per-thread state must outlive its use.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* text = dlerror();
    *reason = name + ": " + (text != nullptr ? text : "not found");
    return false;
  }
  support::SymbolResolver resolver(support::dlsym_lookup(handle));
#define XAL_RCCL_RESOLVE(kind, symbol, since) \
  resolver.resolve(support::SymbolKind::kind, #symbol, since, symbol);
  XAL_RCCL_SYMBOLS(XAL_RCCL_RESOLVE)
#undef XAL_RCCL_RESOLVE
  bool complete = resolver.complete();
  if (!complete) *reason = resolver.reason(name, rccl_version_text);
  const bool simulated = dlsym(handle, "xalsim_nccl_is_simulated") != nullptr;
  if (complete && simulated != runtime_simulated) {
    complete = false;
    *reason = name + (simulated ? ": the simulated RCCL needs the simulated runtime"
                                : ": the real RCCL cannot run on the simulated runtime");
  }
  if (!complete) {
    dlclose(handle);
    return false;
  }
  handle_ = handle;
  simulated_ = simulated;
  return true;
}

}  // namespace xal::hip
