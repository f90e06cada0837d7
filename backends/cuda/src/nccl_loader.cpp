// nccl_loader.cpp -- opening libnccl.so.2 (or XAL_CUDA_NCCL) and resolving
// the functions of nccl_symbols.h (xalsupport/symbol_table.h).
#include "nccl_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "xalsupport/symbol_table.h"

namespace xal::cuda {
namespace {

// "NCCL 2.7" for 20700 (nccl_symbols.h's encoding).
std::string nccl_version_text(int64_t since) {
  return "NCCL " + std::to_string(since / 10000) + "." + std::to_string(since / 100 % 100);
}

}  // namespace

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
  support::SymbolResolver resolver(support::dlsym_lookup(nccl->library_));
#define XAL_NCCL_RESOLVE(kind, name, since) \
  resolver.resolve(support::SymbolKind::kind, #name, since, nccl->name);
  XAL_NCCL_SYMBOLS(XAL_NCCL_RESOLVE)
#undef XAL_NCCL_RESOLVE
  if (!resolver.complete()) {
    *out_reason = resolver.reason(path, nccl_version_text);
    return nullptr;
  }
  if (nccl->ncclGetVersion(&nccl->version_) != ncclSuccess) nccl->version_ = 0;
  if (nccl->version_ > 0 && nccl->version_ < 10000) {  // before 2.9: 2708 for 2.7.8
    const int v = nccl->version_;
    nccl->version_ = v / 1000 * 10000 + v % 1000 / 100 * 100 + v % 100;
  }
  nccl->simulated_ = dlsym(nccl->library_, "xalsim_nccl_is_simulated") != nullptr;
  return nccl;
}

std::string nccl_mismatch(const Nccl& nccl, bool driver_simulated) {
  if (nccl.simulated() == driver_simulated) return {};
  return nccl.simulated() ? "the simulated NCCL needs the simulated driver"
                          : "the real NCCL cannot run on the simulated driver";
}

}  // namespace xal::cuda
