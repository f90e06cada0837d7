// dynamic_symbols.cpp -- dlopen of libcuda and symbol resolution.
#include "dynamic_symbols.h"

#include <dlfcn.h>

#include <string_view>
#include <type_traits>

#include "xalsupport/symbol_table.h"

namespace xal::cuda {

namespace {

// An older variant is only asked for when it takes the same arguments.
#define XAL_CUDA_CHECK_FALLBACK(name, since, older)                      \
  static_assert(std::is_same_v<PFN_##name##_v##since, PFN_##name##_v##older>, \
                #name ": the fallback variant has another signature");
XAL_CUDA_SYMBOL_FALLBACKS(XAL_CUDA_CHECK_FALLBACK)
#undef XAL_CUDA_CHECK_FALLBACK

// The older same-signature version of `name`, or 0.
int older_variant(std::string_view name) {
#define XAL_CUDA_FALLBACK_CASE(symbol, since, older) \
  if (name == #symbol) return older;
  XAL_CUDA_SYMBOL_FALLBACKS(XAL_CUDA_FALLBACK_CASE)
#undef XAL_CUDA_FALLBACK_CASE
  return 0;
}

// Legacy default-stream semantics for every function, whatever the
// compilation flags of the caller (CU_GET_PROC_ADDRESS_DEFAULT would follow
// them): xal never uses the per-thread default stream variants (_ptsz).
constexpr cuuint64_t kProcFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
}  // namespace

// The driver keeps threads and atexit handlers of its own; unloading it
// while they may run is unsafe, so the library stays mapped until the
// process ends, as the CUDA runtime does (a later init opens it again and
// gets the same mapping).
DriverSymbols::~DriverSymbols() = default;

void* DriverSymbols::query(const char* name, int version) const {
  void* fn = nullptr;
  if (proc_v2_ != nullptr) {
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (proc_v2_(name, &fn, version, kProcFlags, &found) != CUDA_SUCCESS ||
        found != CU_GET_PROC_ADDRESS_SUCCESS) {
      return nullptr;
    }
    return fn;
  }
  if (proc_v1_ != nullptr) {
    if (proc_v1_(name, &fn, version, kProcFlags) != CUDA_SUCCESS) {
      return nullptr;
    }
    return fn;
  }
  return nullptr;
}

void* DriverSymbols::resolve(const char* name, int version) const {
  const int older = older_variant(name);
  // The driver answers CUDA_ERROR_INVALID_VALUE for a version newer than
  // itself: ask an older driver for the older variant straight away.
  if (driver_version_ > 0 && version > driver_version_) {
    return older != 0 && older <= driver_version_ ? query(name, older)
                                                  : nullptr;
  }
  void* fn = query(name, version);
  if (fn == nullptr && older != 0) fn = query(name, older);
  return fn;
}

bool DriverSymbols::load(const std::string& path, std::string* out_reason) {
  path_ = path;
  dlerror();
  library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    const char* err = dlerror();
    *out_reason = err != nullptr ? err : (path + ": cannot be opened");
    if (path == "libcuda.so.1") {
      *out_reason += " (no NVIDIA driver installed? XAL_CUDA_DRIVER names the file)";
    }
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
  // The driver's version first (valid before cuInit), so that each function
  // is asked for at a version the driver knows.
  driver_version_ = 0;
  if (auto get_version = reinterpret_cast<PFN_cuDriverGetVersion_v2020>(
          query("cuDriverGetVersion", 2020));
      get_version == nullptr || get_version(&driver_version_) != CUDA_SUCCESS) {
    driver_version_ = 0;
  }

  support::SymbolResolver resolver([this](const char* name, int64_t since) {
    return resolve(name, static_cast<int>(since));
  });
#define XAL_CUDA_RESOLVE(kind, name, since) \
  resolver.resolve(support::SymbolKind::kind, #name, since, name);
  XAL_CUDA_SYMBOLS(XAL_CUDA_RESOLVE)
#undef XAL_CUDA_RESOLVE
  if (!resolver.complete()) {
    // The driver's version says whether it is too old for the variant asked
    // for or merely lacks the function.
    const int64_t needed = resolver.missing_since();
    if (driver_version_ > 0) {
      *out_reason = std::string("libcuda.so.1 is too old: missing ") +
                    resolver.missing() + " (the driver is " +
                    cuda_version_text(driver_version_);
      if (needed > driver_version_) {
        *out_reason += "; this call needs " + cuda_version_text(needed);
      }
      *out_reason += ")";
    } else {
      *out_reason = resolver.reason("libcuda.so.1", cuda_version_text);
    }
    if (path != "libcuda.so.1") *out_reason += " (loaded from " + path + ")";
    return false;
  }
  return true;
}

}  // namespace xal::cuda
