// Device memory (cl_mem buffers at synthetic addresses) and host memory.
#include "backend.h"
#include "entries.h"
#include "xal_common/strings.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace xal::opencl {
namespace {

std::string hex(uint64_t v) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, v);
  return text;
}

}  // namespace

xal_status_t resolve_or_report(const xal_backend_s& backend, cl_context context,
                               xal_devptr_t ptr, uint64_t bytes, const char* op,
                               Resolved& out) {
  const xal_bdevice_s* owner = backend.device_of(ptr);
  std::optional<Resolved> r = owner != nullptr ? owner->memory->resolve(ptr, bytes)
                                               : std::nullopt;
  if (!r) {
    return report(backend.services, XAL_ERROR_OUT_OF_BOUNDS,
                  std::string(op) + ": [" + hex(ptr) + ", +" + std::to_string(bytes) +
                      ") is not inside a live OpenCL allocation");
  }
  if (owner->context != context) {
    return report(backend.services, XAL_ERROR_INVALID_ARGUMENT,
                  std::string(op) + ": " + hex(ptr) + " belongs to device '" +
                      owner->info.name + "' of another OpenCL platform");
  }
  out = *r;
  return XAL_SUCCESS;
}

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes, xal_devptr_t* out_ptr) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(Entry{s}, "mem_alloc", [&]() -> xal_status_t {
    if (bytes == 0) return report(s, XAL_ERROR_INVALID_ARGUMENT, "mem_alloc: 0 bytes");
    const ClApi& api = device->backend->api();
    cl_int rc = CL_SUCCESS;
    cl_mem mem = api.clCreateBuffer(device->context, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    if (rc != CL_SUCCESS) {
      const std::string detail = std::to_string(bytes) + " bytes on '" + device->info.name +
                                 "' (largest allocation " +
                                 common::format_bytes(device->info.max_alloc_bytes) + ")";
      // A size the driver refuses is a device-memory failure to the caller.
      const xal_status_t st = (rc == CL_INVALID_BUFFER_SIZE) ? XAL_ERROR_OUT_OF_MEMORY
                                                             : cl_to_status(rc);
      return report_cl(s, st, rc, "clCreateBuffer", detail);
    }
    bool over = false;
    const auto ptr = device->memory->insert(mem, bytes, device->info.global_mem_bytes, &over);
    if (!ptr) {
      api.clReleaseMemObject(mem);
      return report(s, XAL_ERROR_OUT_OF_MEMORY,
                    "mem_alloc: " + std::to_string(bytes) + " bytes on '" + device->info.name +
                        "': " +
                        (over ? common::format_bytes(device->memory->allocated_bytes()) +
                                    " of " + common::format_bytes(device->info.global_mem_bytes) +
                                    " already allocated"
                              : std::string("device address range exhausted")));
    }
    *out_ptr = *ptr;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(Entry{s}, "mem_free", [&]() -> xal_status_t {
    // OpenCL keeps the buffer until queued commands that use it finish. The
    // address stays live when the release fails: the core retries the free.
    xal_backend_s& b = *device->backend;
    const std::optional<cl_int> rc = device->memory->release(
        ptr, [&b](cl_mem mem) { return b.releases().release(b.api(), mem); });
    if (!rc) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    "mem_free: " + hex(ptr) + " is not a live allocation of '" +
                        device->info.name + "'");
    }
    if (*rc != CL_SUCCESS) return report_cl(s, *rc, "clReleaseMemObject");
    return XAL_SUCCESS;
  });
}

xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free, uint64_t* out_total) {
  const uint64_t total = device->info.global_mem_bytes;
  const uint64_t used = device->memory->allocated_bytes();
  *out_total = total;
  *out_free = used < total ? total - used : 0;
  return XAL_SUCCESS;
}

xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags, void** out_ptr) {
  const xal_backend_services_t* s = backend->services;
  return guarded(Entry{s}, "host_alloc", [&]() -> xal_status_t {
    (void)flags;  // write-combining has no OpenCL equivalent; ignored
    if (bytes == 0) return report(s, XAL_ERROR_INVALID_ARGUMENT, "host_alloc: 0 bytes");
    const ClApi& api = backend->api();
    const xal_bdevice_s& dev = *backend->devices.front();
    HostAllocation h;
    h.bytes = bytes;
    void* ptr = nullptr;
    if (bytes <= dev.info.max_alloc_bytes) {
      // A host-visible buffer, mapped for its lifetime: the driver's own
      // pinned memory where it has one.
      cl_int rc = CL_SUCCESS;
      h.mem = api.clCreateBuffer(dev.context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                 bytes, nullptr, &rc);
      if (rc == CL_SUCCESS) {
        h.queue = dev.internal_queue;
        ptr = api.clEnqueueMapBuffer(h.queue, h.mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                     bytes, 0, nullptr, nullptr, &rc);
        if (rc != CL_SUCCESS) {
          api.clReleaseMemObject(h.mem);
          return report_cl(s, rc, "clEnqueueMapBuffer", std::to_string(bytes) + " bytes");
        }
      } else if (rc != CL_INVALID_BUFFER_SIZE) {
        return report_cl(s, rc, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)",
                         std::to_string(bytes) + " bytes");
      } else {
        h.mem = nullptr;
      }
    }
    if (ptr == nullptr) {
      const size_t rounded = (bytes + 4095) / 4096 * 4096;
      h.plain = std::aligned_alloc(4096, rounded);
      if (h.plain == nullptr) {
        return report(s, XAL_ERROR_OUT_OF_HOST_MEMORY,
                      "host_alloc: " + std::to_string(bytes) + " bytes");
      }
      ptr = h.plain;
    }
    std::lock_guard lock(backend->host_mutex);
    backend->host_allocations.emplace(ptr, h);
    *out_ptr = ptr;
    return XAL_SUCCESS;
  });
}

xal_status_t host_free(xal_backend_t* backend, void* ptr) {
  const xal_backend_services_t* s = backend->services;
  return guarded(Entry{s}, "host_free", [&]() -> xal_status_t {
    HostAllocation h;
    {
      std::lock_guard lock(backend->host_mutex);
      auto it = backend->host_allocations.find(ptr);
      if (it == backend->host_allocations.end()) {
        return report(s, XAL_ERROR_INVALID_ARGUMENT,
                      "host_free: pointer was not allocated by this OpenCL backend");
      }
      h = it->second;
      backend->host_allocations.erase(it);
    }
    if (h.mem == nullptr) {
      std::free(h.plain);
      return XAL_SUCCESS;
    }
    const ClApi& api = backend->api();
    cl_int rc = api.clEnqueueUnmapMemObject(h.queue, h.mem, ptr, 0, nullptr, nullptr);
    if (rc == CL_SUCCESS) rc = api.clFinish(h.queue);
    backend->releases().release(api, h.mem);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clEnqueueUnmapMemObject");
    return XAL_SUCCESS;
  });
}

}  // namespace xal::opencl
