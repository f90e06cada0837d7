// nccl_loader.cpp -- opening libnccl.so.2 (or XAL_CUDA_NCCL) and resolving
// the functions of nccl_symbols.h.
#include "nccl_loader.h"

#include <dlfcn.h>

#include <cstdlib>

namespace xal::cuda {

Nccl::~Nccl() {
  if (library_ != nullptr) dlclose(library_);
}

std::string Nccl::library_path() {
  const char* value = std::getenv("XAL_CUDA_NCCL");
  if (value == nullptr || *value == '\0') return "libnccl.so.2";
  const std::string text(value);
  if (text == "off" || text == "0") return {};
  return text;
}

bool Nccl::named() {
  const char* value = std::getenv("XAL_CUDA_NCCL");
  return value != nullptr && *value != '\0' && !library_path().empty();
}

std::unique_ptr<Nccl> Nccl::open(const std::string& path,
                                 std::string* out_reason) {
  std::unique_ptr<Nccl> nccl(new Nccl());
  dlerror();
  // Never unloaded (RTLD_NODELETE): NCCL carries its own CUDA runtime,
  // with exit handlers and per-thread state that must outlive its use, as
  // libcuda is never unloaded either.
  nccl->library_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (nccl->library_ == nullptr) {
    const char* err = dlerror();
    *out_reason = err != nullptr ? err : path + ": cannot be opened";
    return nullptr;
  }
#define XAL_NCCL_RESOLVE(name, ret, params)                                \
  nccl->name = reinterpret_cast<ret(*) params>(dlsym(nccl->library_, #name)); \
  if (nccl->name == nullptr) {                                             \
    *out_reason = path + " is too old: missing " #name;                    \
    return nullptr;                                                        \
  }
  XAL_NCCL_SYMBOLS(XAL_NCCL_RESOLVE)
#undef XAL_NCCL_RESOLVE
  if (nccl->ncclGetVersion(&nccl->version_) != ncclSuccess) nccl->version_ = 0;
  nccl->simulated_ = dlsym(nccl->library_, "xalsim_nccl_is_simulated") != nullptr;
  return nccl;
}

std::string nccl_mismatch(const Nccl& nccl, bool driver_simulated) {
  if (nccl.simulated() == driver_simulated) return {};
  return nccl.simulated() ? "the simulated NCCL needs the simulated driver"
                          : "the real NCCL cannot run on the simulated driver";
}

}  // namespace xal::cuda
