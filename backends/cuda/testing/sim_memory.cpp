// sim_memory.cpp -- simulated device memory (host memory with UVA-style
// addresses; shared mappings with XALSIM_CUDA_IPC=1), pointer attributes,
// page-locked host memory, copies and memset. SIMULATION ONLY.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "sim_state.h"

namespace xalsim {

#define XALSIM_INJECT(name) \
  if (CUresult injected_ = injected(name); injected_ != CUDA_SUCCESS) \
    return injected_;
#define XALSIM_CONTEXT()                 \
  CUresult ctx_error_ = CUDA_SUCCESS;    \
  Context* ctx = context_for_call(&ctx_error_); \
  if (ctx == nullptr) return ctx_error_;

bool device_range_ok(CUdeviceptr ptr, size_t bytes) {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  auto it = d.allocations.upper_bound(static_cast<uintptr_t>(ptr));
  if (it == d.allocations.begin()) return false;
  --it;
  const uintptr_t begin = it->first;
  const uintptr_t end = begin + it->second.size;
  return ptr >= begin && ptr <= end && bytes <= end - ptr;
}

void release_allocation(Driver& d, uintptr_t base, const Allocation& a) {
  void* p = reinterpret_cast<void*>(base);
  if (a.opened) {
    munmap(p, a.mapped);
    return;
  }
  d.used[static_cast<size_t>(a.device)] -= a.size;
  if (a.fd >= 0) {
    munmap(p, a.mapped);
    close(a.fd);
    return;
  }
  d.free_blocks[a.size].push_back(base);
}

namespace {

// The live device allocation holding `ptr` (d.mutex held), or null.
const std::pair<const uintptr_t, Allocation>* allocation_at(Driver& d, CUdeviceptr ptr) {
  auto it = d.allocations.upper_bound(static_cast<uintptr_t>(ptr));
  if (it == d.allocations.begin()) return nullptr;
  --it;
  return ptr < it->first + it->second.size ? &*it : nullptr;
}

// Device memory shared with other processes: a memory file mapped here,
// kept open so that they can map it too (sim_ipc.cpp).
void* map_shared(Allocation* a) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  a->mapped = (a->size + page - 1) / page * page;
  const int fd = memfd_create("xalsim-cuda-memory", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* p = ftruncate(fd, static_cast<off_t>(a->mapped)) == 0
                ? mmap(nullptr, a->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                : MAP_FAILED;
  if (p == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  a->fd = fd;
  return p;
}

bool host_range_known(const std::map<uintptr_t, size_t>& ranges,
                      const void* p) {
  const auto ptr = reinterpret_cast<uintptr_t>(p);
  auto it = ranges.upper_bound(ptr);
  if (it == ranges.begin()) return false;
  --it;
  return ptr < it->first + it->second;
}

CUresult sim_cuMemGetInfo(size_t* free_bytes, size_t* total) {
  XALSIM_INJECT("cuMemGetInfo");
  XALSIM_CONTEXT();
  if (free_bytes == nullptr || total == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  *total = d.memory_per_device;
  *free_bytes = d.memory_per_device - d.used[static_cast<size_t>(ctx->device)];
  return CUDA_SUCCESS;
}

CUresult sim_cuMemAlloc(CUdeviceptr* out, size_t bytes) {
  XALSIM_INJECT("cuMemAlloc");
  XALSIM_CONTEXT();
  if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const size_t rounded = (bytes + 255) / 256 * 256;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  size_t& used = d.used[static_cast<size_t>(ctx->device)];
  if (rounded > d.memory_per_device - used) return CUDA_ERROR_OUT_OF_MEMORY;
  Allocation a;
  a.size = rounded;
  a.device = ctx->device;
  void* p = nullptr;
  if (ipc_enabled()) {
    p = map_shared(&a);
  } else if (auto reuse = d.free_blocks.find(rounded);
             reuse != d.free_blocks.end() && !reuse->second.empty()) {
    p = reinterpret_cast<void*>(reuse->second.back());
    reuse->second.pop_back();
  } else {
    p = std::aligned_alloc(256, rounded);
  }
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  used += rounded;
  d.allocations[reinterpret_cast<uintptr_t>(p)] = a;
  *out = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult sim_cuMemFree(CUdeviceptr ptr) {
  XALSIM_INJECT("cuMemFree");
  XALSIM_CONTEXT();
  // Like the real driver, a free waits for the work that may still use it.
  // Shared ownership keeps a stream alive if another thread destroys it.
  std::vector<std::shared_ptr<Stream>> streams;
  Driver& d = driver();
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    for (auto& [raw, stream] : d.streams) streams.push_back(stream);
  }
  for (const auto& s : streams) {
    std::unique_lock<std::mutex> lock(s->mutex);
    s->cv.wait(lock, [&s] { return s->queue.empty() && !s->busy; });
  }
  streams.clear();
  std::lock_guard<std::mutex> lock(d.mutex);
  auto it = d.allocations.find(static_cast<uintptr_t>(ptr));
  // Another process's memory is closed with cuIpcCloseMemHandle.
  if (it == d.allocations.end() || it->second.opened) return CUDA_ERROR_INVALID_VALUE;
  release_allocation(d, it->first, it->second);
  d.allocations.erase(it);
  return CUDA_SUCCESS;
}

// Device memory (this process's, or mapped from another's) and page-locked
// host memory, found from any address inside it, as the real driver's; an
// address the driver does not know is CUDA_ERROR_INVALID_VALUE.
CUresult sim_cuPointerGetAttribute(void* data, CUpointer_attribute attribute,
                                   CUdeviceptr ptr) {
  XALSIM_INJECT("cuPointerGetAttribute");
  if (data == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  uintptr_t base = 0;
  size_t size = 0;
  Context* owner = nullptr;
  CUmemorytype type = CU_MEMORYTYPE_DEVICE;
  if (const auto* a = allocation_at(d, ptr)) {
    base = a->first;
    size = a->second.size;
    owner = d.contexts[static_cast<size_t>(a->second.device)].get();
  } else {
    for (const auto* ranges : {&d.host_registered, &d.host_allocations}) {
      auto it = ranges->upper_bound(static_cast<uintptr_t>(ptr));
      if (it == ranges->begin()) continue;
      --it;
      if (ptr >= it->first + it->second) continue;
      base = it->first;
      size = it->second;
      owner = d.host_owner.at(it->first);
      type = CU_MEMORYTYPE_HOST;
    }
  }
  if (owner == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext*>(data) = reinterpret_cast<CUcontext>(owner);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned int*>(data) = type;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int*>(data) = owner->device;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr*>(data) = base;
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t*>(data) = size;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult sim_cuMemGetAddressRange(CUdeviceptr* out_base, size_t* out_size, CUdeviceptr ptr) {
  XALSIM_INJECT("cuMemGetAddressRange");
  XALSIM_CONTEXT();
  (void)ctx;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  const auto* a = allocation_at(d, ptr);
  if (a == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (out_base != nullptr) *out_base = a->first;
  if (out_size != nullptr) *out_size = a->second.size;
  return CUDA_SUCCESS;
}

CUresult sim_cuMemHostAlloc(void** out, size_t bytes, unsigned int flags) {
  XALSIM_INJECT("cuMemHostAlloc");
  XALSIM_CONTEXT();
  (void)flags;
  if (out == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (p == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> lock(driver().mutex);
  driver().host_allocations[reinterpret_cast<uintptr_t>(p)] = bytes;
  driver().host_owner[reinterpret_cast<uintptr_t>(p)] = ctx;
  *out = p;
  return CUDA_SUCCESS;
}

CUresult sim_cuMemFreeHost(void* p) {
  XALSIM_INJECT("cuMemFreeHost");
  XALSIM_CONTEXT();
  std::lock_guard<std::mutex> lock(driver().mutex);
  auto it = driver().host_allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == driver().host_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  driver().host_allocations.erase(it);
  driver().host_owner.erase(reinterpret_cast<uintptr_t>(p));
  std::free(p);  // last: the address was a key above (GCC -Wuse-after-free)
  return CUDA_SUCCESS;
}

CUresult sim_cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {
  XALSIM_INJECT("cuMemHostRegister");
  XALSIM_CONTEXT();
  (void)flags;
  if (p == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(driver().mutex);
  if (host_range_known(driver().host_registered, p) ||
      host_range_known(driver().host_allocations, p)) {
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  driver().host_registered[reinterpret_cast<uintptr_t>(p)] = bytes;
  driver().host_owner[reinterpret_cast<uintptr_t>(p)] = ctx;
  return CUDA_SUCCESS;
}

CUresult sim_cuMemHostUnregister(void* p) {
  XALSIM_INJECT("cuMemHostUnregister");
  XALSIM_CONTEXT();
  std::lock_guard<std::mutex> lock(driver().mutex);
  auto it = driver().host_registered.find(reinterpret_cast<uintptr_t>(p));
  if (it == driver().host_registered.end()) {
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  driver().host_registered.erase(it);
  driver().host_owner.erase(reinterpret_cast<uintptr_t>(p));
  return CUDA_SUCCESS;
}

// Page-locked memory is mapped at the same address on the device (UVA).
CUresult sim_cuMemHostGetDevicePointer(CUdeviceptr* out, void* p,
                                       unsigned int flags) {
  XALSIM_INJECT("cuMemHostGetDevicePointer");
  XALSIM_CONTEXT();
  if (out == nullptr || p == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(driver().mutex);
  if (!host_range_known(driver().host_registered, p) &&
      !host_range_known(driver().host_allocations, p)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *out = reinterpret_cast<CUdeviceptr>(p);
  return CUDA_SUCCESS;
}

CUresult copy(CUstream stream, void* dst, const void* src, size_t bytes) {
  return submit(stream, [dst, src, bytes] {
    std::memmove(dst, src, bytes);
    return CUDA_SUCCESS;
  });
}

CUresult sim_cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t bytes,
                               CUstream stream) {
  XALSIM_INJECT("cuMemcpyHtoDAsync");
  XALSIM_CONTEXT();
  if (src == nullptr || !device_range_ok(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return copy(stream, reinterpret_cast<void*>(dst), src, bytes);
}

CUresult sim_cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t bytes,
                               CUstream stream) {
  XALSIM_INJECT("cuMemcpyDtoHAsync");
  XALSIM_CONTEXT();
  if (dst == nullptr || !device_range_ok(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  return copy(stream, dst, reinterpret_cast<const void*>(src), bytes);
}

CUresult sim_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                               CUstream stream) {
  XALSIM_INJECT("cuMemcpyDtoDAsync");
  XALSIM_CONTEXT();
  if (!device_range_ok(dst, bytes) || !device_range_ok(src, bytes)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return copy(stream, reinterpret_cast<void*>(dst),
              reinterpret_cast<const void*>(src), bytes);
}

// The synchronous copies run at once: the simulation's streams are not
// waited for (the real driver's wait for the legacy default stream).
CUresult sim_cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes) {
  XALSIM_INJECT("cuMemcpyHtoD");
  XALSIM_CONTEXT();
  if (src == nullptr || !device_range_ok(dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void*>(dst), src, bytes);
  return CUDA_SUCCESS;
}

CUresult sim_cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t bytes) {
  XALSIM_INJECT("cuMemcpyDtoH");
  XALSIM_CONTEXT();
  if (dst == nullptr || !device_range_ok(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(dst, reinterpret_cast<const void*>(src), bytes);
  return CUDA_SUCCESS;
}

CUresult sim_cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx,
                               CUdeviceptr src, CUcontext src_ctx, size_t bytes,
                               CUstream stream) {
  XALSIM_INJECT("cuMemcpyPeerAsync");
  XALSIM_CONTEXT();
  if (dst_ctx == nullptr || src_ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (!device_range_ok(dst, bytes) || !device_range_ok(src, bytes)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return copy(stream, reinterpret_cast<void*>(dst),
              reinterpret_cast<const void*>(src), bytes);
}

CUresult sim_cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                             CUstream stream) {
  XALSIM_INJECT("cuMemsetD8Async");
  XALSIM_CONTEXT();
  if (!device_range_ok(dst, n)) return CUDA_ERROR_INVALID_VALUE;
  return submit(stream, [dst, value, n] {
    std::memset(reinterpret_cast<void*>(dst), value, n);
    return CUDA_SUCCESS;
  });
}

}  // namespace

const std::vector<Symbol>& memory_symbols() {
  static const std::vector<Symbol> symbols = {
#define S(name) {#name, reinterpret_cast<void*>(&sim_##name)}
      S(cuMemGetInfo), S(cuMemAlloc), S(cuMemFree), S(cuPointerGetAttribute),
      S(cuMemGetAddressRange), S(cuMemHostAlloc),
      S(cuMemFreeHost), S(cuMemHostRegister), S(cuMemHostUnregister),
      S(cuMemHostGetDevicePointer),
      S(cuMemcpyHtoD), S(cuMemcpyDtoH),
      S(cuMemcpyHtoDAsync), S(cuMemcpyDtoHAsync), S(cuMemcpyDtoDAsync),
      S(cuMemcpyPeerAsync), S(cuMemsetD8Async),
#undef S
  };
  return symbols;
}

}  // namespace xalsim

// 1 when `p` lies in page-locked memory the driver knows (allocated or
// registered), else 0. For tests.
extern "C" __attribute__((visibility("default"))) int xalsim_host_pinned(const void* p) {
  std::lock_guard<std::mutex> lock(xalsim::driver().mutex);
  return xalsim::host_range_known(xalsim::driver().host_registered, p) ||
                 xalsim::host_range_known(xalsim::driver().host_allocations, p)
             ? 1
             : 0;
}
