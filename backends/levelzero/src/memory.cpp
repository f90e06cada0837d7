// Device memory (zeMemAllocDevice) and host memory (zeMemAllocHost) in
// the driver's context. Level Zero has no host-registration call, so
// host_register is left to the core.
#include <algorithm>

#include "entries.h"
#include "errors.h"

namespace xal::levelzero {

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes,
                       xal_devptr_t* out_ptr) {
  return guarded("levelzero mem_alloc", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
                                    nullptr, 0, 0};
    // Beyond maxMemAllocSize (often 4 GiB on Intel GPUs) the driver needs
    // the relaxed-limits extension.
    ze_relaxed_allocation_limits_exp_desc_t relaxed{
        ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC, nullptr,
        ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE};
    if (bytes > device->properties.maxMemAllocSize) desc.pNext = &relaxed;
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

// Frees an allocation; when the driver refuses, the allocation stays
// recorded and the error is returned, so that the free can be tried again.
// Thread-safe.
xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  return guarded("levelzero mem_free", [&]() -> xal_status_t {
    xal_bdevice_s::Allocation allocation{};
    {
      std::lock_guard lock(device->mutex);
      auto found = device->allocations.find(ptr);
      if (found == device->allocations.end()) {
        return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                      "mem_free: not an allocation of Level Zero device " +
                          std::to_string(device->index));
      }
      const bool live = found->second.generation == device->generation;
      allocation = found->second;
      device->allocations.erase(found);
      if (!live) return XAL_SUCCESS;  // a device reset released it already
      device->allocated_bytes -= allocation.bytes;
    }
    if (xal_status_t s = check(device,
                               device->backend->api().zeMemFree(
                                   device->context(), reinterpret_cast<void*>(ptr)),
                               "zeMemFree");
        s != XAL_SUCCESS) {
      // Still allocated: kept, so that the free can be tried again.
      std::lock_guard lock(device->mutex);
      if (allocation.generation == device->generation) {
        device->allocations.emplace(ptr, allocation);
        device->allocated_bytes += allocation.bytes;
      }
      return s;
    }
    return XAL_SUCCESS;
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

// Host memory in the current context of the first device's driver (a GPU
// driver: init keeps no other). The host lock is held throughout, so that a
// reset cannot retire or destroy the context meanwhile. Thread-safe.
xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags,
                        void** out_ptr) {
  return guarded("levelzero host_alloc", [&]() -> xal_status_t {
    DriverState* driver = backend->devices.front()->driver;
    ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    if ((flags & XAL_HOST_ALLOC_WRITE_COMBINED) != 0) {
      desc.flags |= ZE_HOST_MEM_ALLOC_FLAG_BIAS_WRITE_COMBINED;
    }
    std::lock_guard host_lock(backend->host_mutex);
    ze_context_handle_t context = nullptr;
    {
      std::lock_guard lock(driver->mutex);
      context = driver->context;
    }
    void* pointer = nullptr;
    if (xal_status_t s = check(nullptr,
                               backend->api().zeMemAllocHost(context, &desc, bytes,
                                                             64, &pointer),
                               "zeMemAllocHost");
        s != XAL_SUCCESS) {
      return s;
    }
    backend->host_allocations[pointer] = {driver, context};
    *out_ptr = pointer;
    return XAL_SUCCESS;
  });
}

// Frees host memory. As xal_backend.h says, the memory is released
// whatever zeMemFree says: a refusal is reported (and returned) and the
// memory moves to the host leftovers (tried again at each reset, and at
// shutdown), where it no longer keeps its context retired. The last
// host_free in a context a reset retired destroys that context, which
// takes its memory with it in any case. Thread-safe.
xal_status_t host_free(xal_backend_t* backend, void* ptr) {
  return guarded("levelzero host_free", [&]() -> xal_status_t {
    const ZeApi& api = backend->api();
    std::lock_guard host_lock(backend->host_mutex);
    auto found = backend->host_allocations.find(ptr);
    if (found == backend->host_allocations.end()) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "host_free: not a live Level Zero host allocation");
    }
    const HostAllocation allocation = found->second;
    DriverState* driver = allocation.driver;
    std::lock_guard lock(driver->mutex);
    auto retired = std::find(driver->retired.begin(), driver->retired.end(),
                             allocation.context);
    const bool in_retired = retired != driver->retired.end();
    backend->host_allocations.erase(found);
    xal_status_t status = XAL_SUCCESS;
    if (const ze_result_t r = api.zeMemFree(allocation.context, ptr);
        r != ZE_RESULT_SUCCESS) {
      status = check(nullptr, r, "zeMemFree");
      if (!in_retired) backend->host_leftovers.emplace_back(ptr, allocation);
    }
    const bool last = std::none_of(
        backend->host_allocations.begin(), backend->host_allocations.end(),
        [&](const auto& entry) { return entry.second.context == allocation.context; });
    if (in_retired && last) {
      (void)api.zeContextDestroy(allocation.context);
      driver->retired.erase(retired);
    }
    return status;
  });
}

void retry_host_leftovers(xal_backend_s* backend, ze_context_handle_t ending) {
  const ZeApi& api = backend->api();
  std::erase_if(backend->host_leftovers, [&](const auto& leftover) {
    const auto& [pointer, allocation] = leftover;
    return api.zeMemFree(allocation.context, pointer) == ZE_RESULT_SUCCESS ||
           allocation.context == ending;
  });
}

}  // namespace xal::levelzero
