// dynamic_symbols.h -- the CUDA driver, opened with dlopen at run time and
// resolved through cuGetProcAddress. No link-time dependency on libcuda.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "symbols.h"

namespace xal::cuda {

// The resolved driver functions of one loaded libcuda. Not copyable; the
// library stays open until the object is destroyed. Loading is done once,
// before other threads use the object; afterwards it is read-only and safe
// to share between threads.
class DriverSymbols {
 public:
  DriverSymbols() = default;
  ~DriverSymbols();
  DriverSymbols(const DriverSymbols&) = delete;
  DriverSymbols& operator=(const DriverSymbols&) = delete;

  // Opens `path` (the versioned soname "libcuda.so.1" unless XAL_CUDA_DRIVER
  // names another file) and resolves every symbol: the legacy-stream
  // variants (never the per-thread default stream ones), of the CUDA
  // version each call site is written for, or of an older version with the
  // same signature when the driver is older (XAL_CUDA_SYMBOL_FALLBACKS). On
  // failure returns false and sets *out_reason: the dlerror text, or
  // "libcuda.so.1 is too old: missing cuXxx (the driver is CUDA 10.2; this
  // call needs CUDA 11.0)" when a REQUIRED function is absent (the needed
  // version is its `since`; "(CUDA 11.0 or newer needed)" when the driver's
  // version is unknown).
  bool load(const std::string& path, std::string* out_reason);

  // The file that was opened ("libcuda.so.1" or the override).
  const std::string& path() const { return path_; }
  // True when the library is xal's simulated driver (it exports
  // xalsim_is_simulated).
  bool simulated() const { return simulated_; }
  // True when cuGetProcAddress_v2 (CUDA 12+) was used.
  bool proc_address_v2() const { return proc_v2_ != nullptr; }
  // The driver's CUDA version (cuDriverGetVersion, e.g. 12040), read while
  // loading; 0 when it could not be read.
  int driver_version() const { return driver_version_; }

#define XAL_CUDA_DECLARE_MEMBER(kind, name, since) \
  PFN_##name##_v##since name = nullptr;
  XAL_CUDA_SYMBOLS(XAL_CUDA_DECLARE_MEMBER)
#undef XAL_CUDA_DECLARE_MEMBER

 private:
  // One cuGetProcAddress query; null when the driver has no such variant.
  void* query(const char* name, int version) const;
  // Resolves one symbol at `version`, or at its older same-signature
  // variant when the driver is older; null when the driver lacks both.
  void* resolve(const char* name, int version) const;

  void* library_ = nullptr;
  std::string path_;
  bool simulated_ = false;
  int driver_version_ = 0;
  PFN_cuGetProcAddress_v12000 proc_v2_ = nullptr;
  PFN_cuGetProcAddress_v11030 proc_v1_ = nullptr;
};

}  // namespace xal::cuda
