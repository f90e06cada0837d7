// sim_ipc.cpp -- simulated IPC handles (cuIpc*), served only with
// XALSIM_CUDA_IPC=1. Device memory is then a shared mapping of a memory
// file (memfd, sim_memory.cpp); a handle names the exporting process and
// the file's descriptor there, and the importing process maps the same
// pages through /proc/<pid>/fd/<fd>. So it works between processes of one
// host that may read each other's /proc/<pid>/fd (the same user), as the
// real driver's works between processes of one host. SIMULATION ONLY.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "sim_state.h"

namespace xalsim {

bool ipc_enabled() {
  const char* v = std::getenv("XALSIM_CUDA_IPC");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

namespace {

#define XALSIM_INJECT(name) \
  if (CUresult injected_ = injected(name); injected_ != CUDA_SUCCESS) \
    return injected_;
#define XALSIM_CONTEXT()                          \
  CUresult ctx_error_ = CUDA_SUCCESS;             \
  Context* ctx = context_for_call(&ctx_error_);   \
  if (ctx == nullptr) return ctx_error_;

// What a simulated CUipcMemHandle holds.
struct Handle {
  char magic[8];    // "xalsim1"
  int32_t pid;      // the exporting process
  int32_t fd;       // its memory file there
  uint64_t bytes;   // of the allocation
};
static_assert(sizeof(Handle) <= sizeof(CUipcMemHandle));
constexpr char kMagic[8] = "xalsim1";

// A handle for the allocation holding `ptr` (any address inside it, as the
// real driver's); memory mapped from another process cannot be exported
// again.
CUresult sim_cuIpcGetMemHandle(CUipcMemHandle* out, CUdeviceptr ptr) {
  XALSIM_INJECT("cuIpcGetMemHandle");
  XALSIM_CONTEXT();
  (void)ctx;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  auto it = d.allocations.upper_bound(static_cast<uintptr_t>(ptr));
  if (it == d.allocations.begin()) return CUDA_ERROR_INVALID_VALUE;
  --it;
  const Allocation& a = it->second;
  if (ptr >= it->first + a.size || a.opened || a.fd < 0) return CUDA_ERROR_INVALID_VALUE;
  Handle h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.pid = static_cast<int32_t>(getpid());
  h.fd = a.fd;
  h.bytes = a.size;
  std::memset(out, 0, sizeof *out);
  std::memcpy(out->reserved, &h, sizeof h);
  return CUDA_SUCCESS;
}

// Maps another process's allocation in the current context. Its own handle
// is refused with CUDA_ERROR_INVALID_CONTEXT, as the real driver refuses
// it; a handle whose memory is gone (the exporter freed it or ended) with
// CUDA_ERROR_INVALID_HANDLE.
CUresult sim_cuIpcOpenMemHandle(CUdeviceptr* out, CUipcMemHandle handle, unsigned int flags) {
  XALSIM_INJECT("cuIpcOpenMemHandle");
  XALSIM_CONTEXT();
  if (out == nullptr || (flags & ~CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Handle h{};
  std::memcpy(&h, handle.reserved, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof h.magic) != 0 || h.pid <= 0 || h.fd < 0 ||
      h.bytes == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (h.pid == static_cast<int32_t>(getpid())) return CUDA_ERROR_INVALID_CONTEXT;
  const std::string path = "/proc/" + std::to_string(h.pid) + "/fd/" + std::to_string(h.fd);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || static_cast<uint64_t>(st.st_size) < h.bytes) {
    close(fd);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  Allocation a;
  a.size = h.bytes;
  a.device = ctx->device;
  a.mapped = static_cast<size_t>(st.st_size);
  a.opened = true;
  void* p = mmap(nullptr, a.mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);  // the mapping keeps the pages
  if (p == MAP_FAILED) return CUDA_ERROR_MAP_FAILED;
  std::lock_guard<std::mutex> lock(driver().mutex);
  driver().allocations[reinterpret_cast<uintptr_t>(p)] = a;
  *out = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult sim_cuIpcCloseMemHandle(CUdeviceptr ptr) {
  XALSIM_INJECT("cuIpcCloseMemHandle");
  XALSIM_CONTEXT();
  (void)ctx;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  auto it = d.allocations.find(static_cast<uintptr_t>(ptr));
  if (it == d.allocations.end() || !it->second.opened) return CUDA_ERROR_INVALID_VALUE;
  release_allocation(d, it->first, it->second);
  d.allocations.erase(it);
  return CUDA_SUCCESS;
}

}  // namespace

const std::vector<Symbol>& ipc_symbols() {
  static const std::vector<Symbol> symbols = {
#define S(name) {#name, reinterpret_cast<void*>(&sim_##name)}
      S(cuIpcGetMemHandle), S(cuIpcOpenMemHandle), S(cuIpcCloseMemHandle),
#undef S
  };
  return symbols;
}

}  // namespace xalsim
