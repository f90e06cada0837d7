// Device memory (zeMemAllocDevice) and host memory (zeMemAllocHost) in
// the driver's context. Level Zero has no host-registration call, so
// host_register is left to the core.
#include "entries.h"
#include "errors.h"

namespace xal::levelzero {

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes,
                       xal_devptr_t* out_ptr) {
  return guarded("levelzero mem_alloc", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
                                    nullptr, 0, 0};
    void* pointer = nullptr;
    if (xal_status_t s = check(device,
                               device->backend->api().zeMemAllocDevice(
                                   device->context(), &desc, bytes, 256,
                                   device->handle, &pointer),
                               "zeMemAllocDevice");
        s != XAL_SUCCESS) {
      return s;
    }
    const auto address = reinterpret_cast<xal_devptr_t>(pointer);
    std::lock_guard lock(device->mutex);
    device->allocations[address] = {device->generation, bytes};
    device->allocated_bytes += bytes;
    *out_ptr = address;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  return guarded("levelzero mem_free", [&]() -> xal_status_t {
    {
      std::lock_guard lock(device->mutex);
      auto found = device->allocations.find(ptr);
      if (found == device->allocations.end()) {
        return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                      "mem_free: not an allocation of Level Zero device " +
                          std::to_string(device->index));
      }
      const bool live = found->second.generation == device->generation;
      const size_t bytes = found->second.bytes;
      device->allocations.erase(found);
      if (!live) return XAL_SUCCESS;  // a device reset released it already
      device->allocated_bytes -= bytes;
    }
    return check(device,
                 device->backend->api().zeMemFree(device->context(),
                                                  reinterpret_cast<void*>(ptr)),
                 "zeMemFree");
  });
}

xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free,
                          uint64_t* out_total) {
  return guarded("levelzero mem_get_info", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    // Core Level Zero has no free-memory query: the card's size less what
    // this process allocated (Sysman's view is in the metrics).
    std::lock_guard lock(device->mutex);
    *out_total = device->memory_bytes;
    *out_free = device->memory_bytes > device->allocated_bytes
                    ? device->memory_bytes - device->allocated_bytes
                    : 0;
    return XAL_SUCCESS;
  });
}

xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags,
                        void** out_ptr) {
  return guarded("levelzero host_alloc", [&]() -> xal_status_t {
    DriverState* driver = backend->drivers.front().get();
    ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    if ((flags & XAL_HOST_ALLOC_WRITE_COMBINED) != 0) {
      desc.flags |= ZE_HOST_MEM_ALLOC_FLAG_BIAS_WRITE_COMBINED;
    }
    void* pointer = nullptr;
    ze_context_handle_t context = nullptr;
    {
      std::lock_guard lock(driver->mutex);
      context = driver->context;
    }
    if (xal_status_t s = check(nullptr,
                               backend->api().zeMemAllocHost(context, &desc, bytes,
                                                             64, &pointer),
                               "zeMemAllocHost");
        s != XAL_SUCCESS) {
      return s;
    }
    std::lock_guard lock(backend->host_mutex);
    backend->host_allocations[pointer] = driver;
    *out_ptr = pointer;
    return XAL_SUCCESS;
  });
}

xal_status_t host_free(xal_backend_t* backend, void* ptr) {
  return guarded("levelzero host_free", [&]() -> xal_status_t {
    DriverState* driver = nullptr;
    {
      std::lock_guard lock(backend->host_mutex);
      auto found = backend->host_allocations.find(ptr);
      if (found == backend->host_allocations.end()) {
        return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                      "host_free: not a live Level Zero host allocation");
      }
      driver = found->second;
      backend->host_allocations.erase(found);
    }
    std::lock_guard lock(driver->mutex);
    return check(nullptr, backend->api().zeMemFree(driver->context, ptr),
                 "zeMemFree");
  });
}

}  // namespace xal::levelzero
