// interop.cpp -- ABI 1.1 interop: device memory and streams the caller made
// through the driver itself (a framework's cuMemAlloc and CUstream), used
// in place and never released by the backend, and device memory shared
// with the other processes of the host (cuIpc*). Host memory is registered
// by host_register (memory.cpp).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "backend.h"
#include "entries.h"
#include "xal_common/strings.hpp"
#include "status_map.h"

namespace xal::cuda {

static_assert(sizeof(CUipcMemHandle) == XAL_IPC_VENDOR_BYTES,
              "a CUipcMemHandle fills the vendor part of an xal IPC handle");

namespace {

using common::hex;

std::string device_name(const xal_bdevice_s* device) {
  return "device " + std::to_string(device->index) + " (CUDA device " +
         std::to_string(device->device) + ")";
}

// The device is healthy and its primary context current.
xal_status_t enter(xal_bdevice_s* device) {
  if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
  const CUresult r = device->make_current();
  return r == CUDA_SUCCESS ? XAL_SUCCESS
                           : device->backend->fail(r, "cuCtxSetCurrent", device);
}

// A driver call that refused the caller's value: INVALID_ARGUMENT saying
// `what`, with the CUDA code as the vendor code. A sticky error stays the
// device's error.
xal_status_t refuse(xal_bdevice_s* device, CUresult r, const char* call,
                    const std::string& what) {
  xal_backend_s* backend = device->backend;
  if (is_sticky(r)) return backend->fail(r, call, device);
  xal_backend_s::Failure failure =
      backend->describe_failure(r, call, device, XAL_ERROR_INVALID_ARGUMENT);
  failure.message = "cuda: " + what + " (" + failure.message.substr(std::strlen("cuda: ")) + ")";
  return backend->report(failure);
}

xal_status_t invalid(const xal_bdevice_s* device, const std::string& message) {
  return device->backend->error(XAL_ERROR_INVALID_ARGUMENT, "cuda: " + message);
}

// Checks that [ptr, ptr+bytes) is device memory of `device` that the
// driver knows: of its CUDA device, in its primary context (or in none:
// memory mapped with cuMemMap or taken from a memory pool belongs to the
// device), inside one allocation.
xal_status_t check_device_memory(xal_bdevice_s* device, CUdeviceptr ptr, size_t bytes) {
  const DriverSymbols& d = device->backend->driver;
  const std::string range = "[" + hex(ptr) + ", +" + std::to_string(bytes) + ")";
  const std::string where = "mem_import: " + range;
  unsigned int type = 0;
  CUresult r = d.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
  if (r != CUDA_SUCCESS) {
    return refuse(device, r, "cuPointerGetAttribute",
                  where + " is not memory the driver knows (never allocated, freed, or "
                          "pageable host memory)");
  }
  if (type != CU_MEMORYTYPE_DEVICE) {
    return invalid(device, where + " is " +
                               (type == CU_MEMORYTYPE_HOST ? "page-locked host memory"
                                                           : "not device memory") +
                               ", not device memory of " + device_name(device) +
                               " (register host memory with xal_host_register)");
  }
  int ordinal = -1;
  r = d.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
  if (r != CUDA_SUCCESS) return refuse(device, r, "cuPointerGetAttribute", where);
  if (ordinal != device->device) {
    return invalid(device, where + " is memory of CUDA device " + std::to_string(ordinal) +
                               ", not of " + device_name(device));
  }
  CUcontext context = nullptr;
  r = d.cuPointerGetAttribute(&context, CU_POINTER_ATTRIBUTE_CONTEXT, ptr);
  if (r != CUDA_SUCCESS) return refuse(device, r, "cuPointerGetAttribute", where);
  if (context != nullptr && context != device->context) {
    return invalid(device, where + " was allocated in a context of " + device_name(device) +
                               " other than its primary context, the one xal (and the "
                               "CUDA runtime) uses");
  }
  CUdeviceptr base = 0;
  size_t size = 0;
  r = d.cuMemGetAddressRange(&base, &size, ptr);
  if (r != CUDA_SUCCESS) return refuse(device, r, "cuMemGetAddressRange", where);
  if (ptr < base || bytes > size - (ptr - base)) {
    return invalid(device, where + " runs past the end of its allocation [" + hex(base) +
                               ", +" + std::to_string(size) + ")");
  }
  return XAL_SUCCESS;
}

}  // namespace

bool driver_can_import_memory(const xal_backend_s* backend) {
  return backend->driver.cuPointerGetAttribute != nullptr &&
         backend->driver.cuMemGetAddressRange != nullptr;
}

bool driver_can_import_streams(const xal_backend_s* backend) {
  return backend->driver.cuStreamGetCtx != nullptr;
}

bool driver_can_share_memory(const xal_backend_s* backend) {
  const DriverSymbols& d = backend->driver;
  return d.cuIpcGetMemHandle != nullptr && d.cuIpcOpenMemHandle != nullptr &&
         d.cuIpcCloseMemHandle != nullptr;
}

xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes,
                        uint32_t flags, xal_devptr_t* out_ptr) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if ((flags & XAL_MEM_IMPORT_HOST) != 0) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: mem_import of host memory (XAL_MEM_IMPORT_HOST) is not "
                            "supported: register host memory with xal_host_register");
    }
    if (!driver_can_import_memory(backend)) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuPointerGetAttribute or "
                            "cuMemGetAddressRange: memory cannot be imported");
    }
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    const auto ptr = static_cast<CUdeviceptr>(native);
    if (xal_status_t s = check_device_memory(device, ptr, bytes); s != XAL_SUCCESS) return s;
    {
      // (Memory of this backend's own mem_alloc may be imported too: its
      // allocation stays the allocator's, as any caller's.)
      std::lock_guard<std::mutex> lock(device->objects_mutex);
      if (!device->imports.emplace(ptr, bytes).second) {
        return invalid(device, "mem_import: " + hex(ptr) + " is already imported on " +
                                   device_name(device));
      }
    }
    *out_ptr = static_cast<xal_devptr_t>(ptr);
    return XAL_SUCCESS;
  });
}

// Forgets the import; the memory stays the caller's (no driver call).
xal_status_t mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr) {
  return guarded(Entry{device->backend}, __func__, [&]() -> xal_status_t {
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    if (device->imports.erase(static_cast<CUdeviceptr>(ptr)) == 0) {
      return invalid(device, "mem_import_release: " + hex(ptr) + " is not imported memory of " +
                                 device_name(device));
    }
    return XAL_SUCCESS;
  });
}

// The wrapper is the backend's stream object, marked not owned: everything
// queued on it works as on a stream of stream_create, and stream_destroy
// waits for it but leaves the CUstream to its owner (stream.cpp). `native`
// may also be one of the device's own stream objects (what the table's
// stream_create returns, and xal_handle_get_native of an xal stream, as on
// the mock): its CUstream is adopted.
xal_status_t stream_import(xal_bdevice_t* device, uint64_t native, uint32_t flags,
                           xal_bstream_t** out_stream) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (flags != 0) return invalid(device, "stream_import: unknown flags " + hex(flags));
    auto stream = reinterpret_cast<CUstream>(static_cast<uintptr_t>(native));
    // A stream object of this backend is looked up by address (never
    // handed to the driver as a CUstream, which could crash it).
    for (const auto& d : backend->devices) {
      std::lock_guard<std::mutex> lock(d->objects_mutex);
      auto own = d->streams.find(reinterpret_cast<void*>(static_cast<uintptr_t>(native)));
      if (own == d->streams.end()) continue;
      if (d.get() != device) {
        return invalid(device, "stream_import: " + hex(native) + " is a stream of " +
                                   device_name(d.get()) + ", not of " + device_name(device));
      }
      if (own->second->generation != device->generation.load()) {
        return stale_object(backend, "stream to import");
      }
      stream = own->second->stream;
    }
    // Work on these lands on a stream that depends on the calling thread or
    // synchronizes with every blocking stream of the context.
    if (stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
      return invalid(device, "stream_import: the default streams (CU_STREAM_LEGACY, "
                             "CU_STREAM_PER_THREAD) cannot be imported: import a stream "
                             "made with cuStreamCreate");
    }
    if (!driver_can_import_streams(backend)) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuStreamGetCtx: streams cannot be "
                            "imported");
    }
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    CUcontext context = nullptr;
    const CUresult r = backend->driver.cuStreamGetCtx(stream, &context);
    if (r != CUDA_SUCCESS) {
      return refuse(device, r, "cuStreamGetCtx",
                    "stream_import: " + hex(native) + " is not a live CUstream");
    }
    if (context != device->context) {
      std::string owner = "a context other than the primary context of " + device_name(device);
      for (const auto& other : backend->devices) {
        if (other->context == context) owner = "the primary context of " + device_name(other.get());
      }
      return invalid(device, "stream_import: CUstream " + hex(native) + " belongs to " + owner +
                                 ", not to the primary context of " + device_name(device));
    }
    auto wrapper = std::make_unique<xal_bstream_s>();
    wrapper->device = device;
    wrapper->stream = stream;
    wrapper->owned = false;
    xal_bstream_s* raw = wrapper.get();
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    wrapper->generation = device->generation.load();
    device->streams.emplace(raw, std::move(wrapper));
    *out_stream = raw;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes,
                         uint8_t* out_vendor) {
  xal_backend_s* backend = device->backend;
  (void)bytes;  // the handle names the whole allocation
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (!driver_can_share_memory(backend)) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuIpcGetMemHandle, cuIpcOpenMemHandle "
                            "or cuIpcCloseMemHandle: no IPC handles");
    }
    {
      std::lock_guard<std::mutex> lock(device->objects_mutex);
      if (device->allocations.count(static_cast<CUdeviceptr>(ptr)) == 0) {
        return invalid(device, "mem_ipc_get: " + hex(ptr) +
                                   " is not the start of an allocation mem_alloc made on " +
                                   device_name(device));
      }
    }
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    CUipcMemHandle handle{};
    const CUresult r = backend->driver.cuIpcGetMemHandle(&handle, static_cast<CUdeviceptr>(ptr));
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuIpcGetMemHandle", device);
    std::memcpy(out_vendor, &handle, sizeof handle);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor, size_t bytes,
                          int32_t owner_pid, xal_devptr_t* out_ptr) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (!driver_can_share_memory(backend)) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: the driver has no cuIpcOpenMemHandle: no IPC handles");
    }
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    const DriverSymbols& d = backend->driver;
    const std::string what = "mem_ipc_open: the handle of process " + std::to_string(owner_pid) +
                             " (" + std::to_string(bytes) + " bytes) does not open on " +
                             device_name(device);
    CUipcMemHandle handle{};
    std::memcpy(&handle, vendor, sizeof handle);
    CUdeviceptr ptr = 0;
    CUresult r = d.cuIpcOpenMemHandle(&ptr, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (r != CUDA_SUCCESS) {
      // Short of memory or of peer mappings the driver says so; anything
      // else means the handle names nothing this process can map.
      const xal_status_t mapped = map_result(r);
      if (mapped == XAL_ERROR_OUT_OF_MEMORY || mapped == XAL_ERROR_NOT_SUPPORTED) {
        return backend->fail(r, "cuIpcOpenMemHandle", device);
      }
      return refuse(device, r, "cuIpcOpenMemHandle", what);
    }
    // The core bounds the mapping by the size the handle's header claims:
    // the driver's own size of it must not be smaller.
    CUdeviceptr base = 0;
    size_t size = 0;
    if (d.cuMemGetAddressRange != nullptr &&
        d.cuMemGetAddressRange(&base, &size, ptr) == CUDA_SUCCESS &&
        (base != ptr || size < bytes)) {
      d.cuIpcCloseMemHandle(ptr);
      return invalid(device, what + ": the driver maps " + std::to_string(size) + " bytes");
    }
    try {
      std::lock_guard<std::mutex> lock(device->objects_mutex);
      device->ipc_opened[ptr] = {device->generation.load(), bytes, owner_pid};
      device->ipc_owners.add(ptr, bytes, owner_pid);
    } catch (...) {
      device->ipc_opened.erase(ptr);
      d.cuIpcCloseMemHandle(ptr);
      throw;
    }
    *out_ptr = static_cast<xal_devptr_t>(ptr);
    return XAL_SUCCESS;
  });
}

// Unmaps, as mem_free frees: a mapping of an earlier generation went with
// the reset context, and a refused unmap stays recorded for a retry.
xal_status_t mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const auto p = static_cast<CUdeviceptr>(ptr);
    xal_bdevice_s::IpcMapping mapping;
    {
      std::lock_guard<std::mutex> lock(device->objects_mutex);
      auto it = device->ipc_opened.find(p);
      if (it == device->ipc_opened.end()) {
        return invalid(device, "mem_ipc_close: " + hex(ptr) +
                                   " is not memory mem_ipc_open mapped on " + device_name(device));
      }
      mapping = it->second;
      device->ipc_opened.erase(it);
      device->ipc_owners.remove(p);
    }
    if (mapping.generation != device->generation.load() || device->unhealthy.load()) {
      return XAL_SUCCESS;
    }
    CUresult r = device->make_current();
    if (r == CUDA_SUCCESS) r = backend->driver.cuIpcCloseMemHandle(p);
    if (r == CUDA_SUCCESS) return XAL_SUCCESS;
    const xal_status_t failed = backend->fail(r, "cuIpcCloseMemHandle", device);
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    device->ipc_opened.emplace(p, mapping);
    device->ipc_owners.add(p, mapping.bytes, mapping.owner_pid);
    return failed;
  });
}

}  // namespace xal::cuda
