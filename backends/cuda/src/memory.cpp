// memory.cpp -- device memory, page-locked host memory, registration.
#include <cstdlib>
#include <string>

#include "backend.h"
#include "entries.h"

namespace xal::cuda {

namespace {

constexpr size_t kPage = 4096;
constexpr unsigned int kRegisterFlags =
    CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP;

// Host memory calls need a current context; any healthy device's primary
// context serves, since the memory is allocated portable.
xal_status_t host_context(xal_backend_t* backend) {
  xal_bdevice_s* device = nullptr;
  for (auto& d : backend->devices) {
    if (!d->unhealthy.load()) {
      device = d.get();
      break;
    }
  }
  if (device == nullptr) {
    if (backend->devices.empty()) {
      return backend->error(XAL_ERROR_BACKEND_UNAVAILABLE,
                            "cuda: no device to allocate host memory with");
    }
    return backend->devices.front()->check_health();
  }
  const CUresult r = device->make_current();
  return r == CUDA_SUCCESS ? XAL_SUCCESS
                           : backend->fail(r, "cuCtxSetCurrent", device);
}

}  // namespace

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes,
                       xal_devptr_t* out_ptr) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    CUresult r = device->make_current();
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuCtxSetCurrent", device);
    CUdeviceptr ptr = 0;
    if ((r = backend->driver.cuMemAlloc(&ptr, bytes)) != CUDA_SUCCESS) {
      return backend->fail(r, "cuMemAlloc", device);
    }
    try {
      std::lock_guard<std::mutex> lock(device->objects_mutex);
      device->allocations[ptr] = device->generation.load();
    } catch (...) {
      backend->driver.cuMemFree(ptr);
      throw;
    }
    *out_ptr = static_cast<xal_devptr_t>(ptr);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    uint64_t generation = 0;
    {
      std::lock_guard<std::mutex> lock(device->objects_mutex);
      // Memory of an earlier generation went with the reset context. An
      // address both stale and live is freed for real on its second free.
      if (auto stale = device->stale_allocations.find(static_cast<CUdeviceptr>(ptr));
          stale != device->stale_allocations.end()) {
        if (--stale->second == 0) device->stale_allocations.erase(stale);
        return XAL_SUCCESS;
      }
      auto it = device->allocations.find(static_cast<CUdeviceptr>(ptr));
      if (it == device->allocations.end()) {
        return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                              "cuda: pointer is not a live allocation of "
                              "device " + std::to_string(device->index));
      }
      generation = it->second;
      device->allocations.erase(it);
    }
    if (generation != device->generation.load()) return XAL_SUCCESS;
    // After a sticky error the context is gone; the memory goes with it.
    if (device->unhealthy.load()) return XAL_SUCCESS;
    CUresult r = device->make_current();
    if (r == CUDA_SUCCESS) r = backend->driver.cuMemFree(ptr);
    if (r == CUDA_SUCCESS) return XAL_SUCCESS;
    // Not freed: the record stays for a retry (xal_backend.h, Releases),
    // which a sticky error turns into a success (the context is gone).
    const xal_status_t failed = backend->fail(r, "cuMemFree", device);
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    device->allocations.emplace(static_cast<CUdeviceptr>(ptr), generation);
    return failed;
  });
}

xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free,
                          uint64_t* out_total) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    CUresult r = device->make_current();
    size_t free_bytes = 0, total = 0;
    if (r == CUDA_SUCCESS) r = backend->driver.cuMemGetInfo(&free_bytes, &total);
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuMemGetInfo", device);
    *out_free = free_bytes;
    *out_total = total;
    return XAL_SUCCESS;
  });
}

// Page-locked memory is xal's own pages registered with the driver rather
// than cuMemHostAlloc's: a primary context reset (xal_device_reset) frees the
// context's cuMemHostAlloc memory under the caller, while it only drops
// registrations, which reregister_host_memory() makes again.
xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags,
                        void** out_ptr) {
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (bytes == 0) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT, "cuda: host_alloc of 0 bytes");
    }
    if (xal_status_t s = host_context(backend); s != XAL_SUCCESS) return s;
    const DriverSymbols& d = backend->driver;
    if (d.cuMemHostRegister == nullptr || d.cuMemHostUnregister == nullptr) {
      // Write-combined memory only exists this way.
      unsigned int cu_flags = CU_MEMHOSTALLOC_PORTABLE;
      if ((flags & XAL_HOST_ALLOC_WRITE_COMBINED) != 0) {
        cu_flags |= CU_MEMHOSTALLOC_WRITECOMBINED;
      }
      void* ptr = nullptr;
      const CUresult r = d.cuMemHostAlloc(&ptr, bytes, cu_flags);
      if (r != CUDA_SUCCESS) {
        return backend->fail(r, "cuMemHostAlloc", nullptr,
                             r == CUDA_ERROR_OUT_OF_MEMORY ? XAL_ERROR_OUT_OF_HOST_MEMORY
                                                           : XAL_SUCCESS);
      }
      std::lock_guard<std::mutex> lock(backend->host_mutex);
      backend->host_blocks[ptr] = {bytes, xal_backend_s::HostBlock::kDriverAllocated};
      *out_ptr = ptr;
      return XAL_SUCCESS;
    }
    const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
    void* ptr = std::aligned_alloc(kPage, rounded);
    if (ptr == nullptr) {
      return backend->error(XAL_ERROR_OUT_OF_HOST_MEMORY,
                            "cuda: out of host memory (" + std::to_string(bytes) +
                                " bytes)");
    }
    const CUresult r = d.cuMemHostRegister(ptr, rounded, kRegisterFlags);
    if (r != CUDA_SUCCESS) {
      std::free(ptr);
      return backend->fail(r, "cuMemHostRegister", nullptr,
                           r == CUDA_ERROR_OUT_OF_MEMORY ? XAL_ERROR_OUT_OF_HOST_MEMORY
                                                         : XAL_SUCCESS);
    }
    std::lock_guard<std::mutex> lock(backend->host_mutex);
    backend->host_blocks[ptr] = {rounded, xal_backend_s::HostBlock::kOwnPages};
    *out_ptr = ptr;
    return XAL_SUCCESS;
  });
}

xal_status_t host_free(xal_backend_t* backend, void* ptr) {
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    xal_backend_s::HostBlock block;
    {
      std::lock_guard<std::mutex> lock(backend->host_mutex);
      auto it = backend->host_blocks.find(ptr);
      if (it == backend->host_blocks.end() ||
          it->second.kind == xal_backend_s::HostBlock::kCallerPages) {
        return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                              "cuda: host_free of memory this backend did not allocate");
      }
      block = it->second;
      backend->host_blocks.erase(it);
    }
    const xal_status_t ctx = host_context(backend);
    if (block.kind == xal_backend_s::HostBlock::kDriverAllocated) {
      if (ctx != XAL_SUCCESS) return ctx;
      const CUresult r = backend->driver.cuMemFreeHost(ptr);
      return r == CUDA_SUCCESS ? XAL_SUCCESS
                               : backend->fail(r, "cuMemFreeHost", nullptr);
    }
    // The memory is ours: freed even when the driver cannot unregister it
    // (every device failed, or a reset dropped the registration already).
    if (ctx == XAL_SUCCESS) backend->driver.cuMemHostUnregister(ptr);
    std::free(ptr);
    return XAL_SUCCESS;
  });
}

void reregister_host_memory(xal_backend_s* backend) {
  if (host_context(backend) != XAL_SUCCESS) return;
  std::lock_guard<std::mutex> lock(backend->host_mutex);
  for (const auto& [ptr, block] : backend->host_blocks) {
    if (block.kind == xal_backend_s::HostBlock::kDriverAllocated) continue;
    const CUresult r = backend->driver.cuMemHostRegister(ptr, block.bytes, kRegisterFlags);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
      backend->log(XAL_LOG_WARNING,
                   "cuda: host memory at " + std::to_string(reinterpret_cast<uintptr_t>(ptr)) +
                       " could not be page-locked again after a reset (" +
                       std::to_string(r) + "); copies with it are staged");
    }
  }
}

xal_status_t host_register(xal_backend_t* backend, void* ptr, size_t bytes) {
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (backend->driver.cuMemHostRegister == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuMemHostRegister");
    }
    if (xal_status_t s = host_context(backend); s != XAL_SUCCESS) return s;
    const CUresult r = backend->driver.cuMemHostRegister(ptr, bytes, kRegisterFlags);
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuMemHostRegister", nullptr);
    std::lock_guard<std::mutex> lock(backend->host_mutex);
    backend->host_blocks[ptr] = {bytes, xal_backend_s::HostBlock::kCallerPages};
    return XAL_SUCCESS;
  });
}

xal_status_t host_unregister(xal_backend_t* backend, void* ptr) {
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (backend->driver.cuMemHostUnregister == nullptr) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuMemHostUnregister");
    }
    if (xal_status_t s = host_context(backend); s != XAL_SUCCESS) return s;
    {
      std::lock_guard<std::mutex> lock(backend->host_mutex);
      auto it = backend->host_blocks.find(ptr);
      if (it == backend->host_blocks.end() ||
          it->second.kind != xal_backend_s::HostBlock::kCallerPages) {
        return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                              "cuda: host_unregister of memory host_register did not register");
      }
      backend->host_blocks.erase(it);
    }
    const CUresult r = backend->driver.cuMemHostUnregister(ptr);
    // After a reset that could not register it again: nothing to undo.
    return r == CUDA_SUCCESS || r == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
               ? XAL_SUCCESS
               : backend->fail(r, "cuMemHostUnregister", nullptr);
  });
}

}  // namespace xal::cuda
