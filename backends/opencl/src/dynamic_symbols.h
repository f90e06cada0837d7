// Loads the OpenCL ICD loader with dlopen and resolves every function of
// symbols.h. Nothing in the backend links libOpenCL.
#pragma once

#include "cl_headers.h"
#include "symbols.h"

#include <string>

namespace xal::opencl {

// The resolved entry points; a field is NULL only for a missing OPTIONAL one.
struct ClApi {
#define XAL_CL_FIELD(kind, name, since) decltype(&::name) name = nullptr;
  XAL_CL_SYMBOLS(XAL_CL_FIELD)
#undef XAL_CL_FIELD
};

// A dlopen'ed library with its resolved table. Move-only; dlclose on
// destruction. Not thread-safe to load; the loaded table is read-only.
class DynamicSymbols {
 public:
  DynamicSymbols() = default;
  ~DynamicSymbols();
  DynamicSymbols(const DynamicSymbols&) = delete;
  DynamicSymbols& operator=(const DynamicSymbols&) = delete;

  // Opens `path` (a soname or a file) and resolves the table. On failure
  // returns false and sets `error`: the dlerror text, or "<path> is too
  // old: missing clXxx (OpenCL 1.2 or newer needed)" for a missing REQUIRED
  // function (no version for one of OpenCL 1.0).
  bool load(const std::string& path, std::string& error);

  const ClApi& api() const { return api_; }
  const std::string& path() const { return path_; }

 private:
  void* handle_ = nullptr;
  ClApi api_{};
  std::string path_;
};

}  // namespace xal::opencl
