// nccl_loader.h -- native collectives through NCCL when libnccl.so.2 is present.
//
// The plugin table is static, so whether the collective entries are filled
// is decided when the core asks for the table (xal_backend_get): if
// libnccl.so.2 (or XAL_CUDA_NCCL) can be opened then, the table with the
// NCCL entries is returned; otherwise the entries are NULL and the core runs
// collectives on its own path. XAL_CUDA_NCCL=off forces the core's path.
#pragma once

#include <memory>
#include <string>

#include "nccl_symbols.h"
#include "xal/xal_backend.h"

namespace xal::cuda {

// An open libnccl. Read-only after open(); thread-safe as NCCL is.
class Nccl {
 public:
  ~Nccl();
  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;

  // The library path to use: XAL_CUDA_NCCL or "libnccl.so.2"; empty when
  // XAL_CUDA_NCCL is "off" or "0".
  static std::string library_path();
  // True when XAL_CUDA_NCCL names a library. With the simulated driver only
  // a named one is opened: the default libnccl.so.2 would be a real NCCL,
  // which is never loaded there.
  static bool named();
  // Opens NCCL; null with *out_reason on failure (a REQUIRED function
  // missing: "<path> is too old: missing <name> (NCCL <since> or newer
  // needed)").
  static std::unique_ptr<Nccl> open(const std::string& path,
                                    std::string* out_reason);
  // major * 10000 + minor * 100 + patch (also for NCCL before 2.9).
  int version() const { return version_; }
  // True for the tests' simulated NCCL (backends/cuda/testing), which runs
  // on the simulated driver only, as the real NCCL runs on a real one only.
  bool simulated() const { return simulated_; }

  // nccl_symbols.h's functions; an OPTIONAL one may be null.
#define XAL_NCCL_MEMBER(kind, name, since) decltype(&::name) name = nullptr;
  XAL_NCCL_SYMBOLS(XAL_NCCL_MEMBER)
#undef XAL_NCCL_MEMBER

 private:
  Nccl() = default;
  void* library_ = nullptr;
  int version_ = 0;
  bool simulated_ = false;
};

// Why `nccl` cannot serve a driver that is (or is not) simulated; empty
// when it can.
std::string nccl_mismatch(const Nccl& nccl, bool driver_simulated);

}  // namespace xal::cuda
