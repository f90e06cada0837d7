// dynamic_symbols.cpp -- dlopen of libcuda and symbol resolution.
#include "dynamic_symbols.h"

#include <dlfcn.h>

namespace xal::cuda {

namespace {
constexpr bool kRequired_REQUIRED = true;
constexpr bool kRequired_OPTIONAL = false;
}  // namespace

// The driver keeps threads and atexit handlers of its own; unloading it
// while they may run is unsafe, so the library stays mapped until the
// process ends, as the CUDA runtime does (a later init opens it again and
// gets the same mapping).
DriverSymbols::~DriverSymbols() = default;

void* DriverSymbols::resolve(const char* name, int version) {
  void* fn = nullptr;
  if (proc_v2_ != nullptr) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (proc_v2_(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=
            CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS) {
      return nullptr;
    }
    return fn;
  }
  if (proc_v1_ != nullptr) {
    if (proc_v1_(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT) !=
        CUDA_SUCCESS) {
      return nullptr;
    }
    return fn;
  }
  return nullptr;
}

bool DriverSymbols::load(const std::string& path, std::string* out_reason) {
  path_ = path;
  dlerror();
  library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* err = dlerror();
    *out_reason = err != nullptr ? err : (path + ": cannot be opened");
    return false;
  }
  simulated_ = dlsym(library_, "xalsim_is_simulated") != nullptr;
  proc_v2_ = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
      dlsym(library_, "cuGetProcAddress_v2"));
  if (proc_v2_ == nullptr) {
    proc_v1_ = reinterpret_cast<PFN_cuGetProcAddress_v11030>(
        dlsym(library_, "cuGetProcAddress"));
  }
  if (proc_v2_ == nullptr && proc_v1_ == nullptr) {
    *out_reason = path +
                  " is too old: missing cuGetProcAddress (CUDA 11.3 or newer "
                  "is needed)";
    return false;
  }

#define XAL_CUDA_RESOLVE(kind, name, version)                                 \
  name = reinterpret_cast<PFN_##name##_v##version>(resolve(#name, version));  \
  if (name == nullptr && kRequired_##kind) {                                  \
    *out_reason = "libcuda.so.1 is too old: missing " #name;                  \
    if (path != "libcuda.so.1") *out_reason += " (loaded from " + path + ")"; \
    return false;                                                             \
  }
  XAL_CUDA_SYMBOLS(XAL_CUDA_RESOLVE)
#undef XAL_CUDA_RESOLVE
  return true;
}

}  // namespace xal::cuda
