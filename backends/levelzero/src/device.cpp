// Devices: count, properties, synchronize, reset and health.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "entries.h"
#include "errors.h"
#include "status_map.h"
#include "xal_common/strings.hpp"

namespace xal::levelzero {

xal_status_t device_count(xal_backend_t* backend, uint32_t* out_count) {
  return guarded("levelzero device_count", [&]() -> xal_status_t {
    *out_count = static_cast<uint32_t>(backend->devices.size());
    return XAL_SUCCESS;
  });
}

xal_status_t device_get(xal_backend_t* backend, uint32_t index,
                        xal_bdevice_t** out_device) {
  return guarded("levelzero device_get", [&]() -> xal_status_t {
    if (index >= backend->devices.size()) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "Level Zero device index " + std::to_string(index) +
                        " out of range");
    }
    *out_device = backend->devices[index].get();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_properties(xal_bdevice_t* device,
                                   xal_device_properties_t* out) {
  return guarded("levelzero device_get_properties", [&]() -> xal_status_t {
    const ze_device_properties_t& p = device->properties;
    const ZeApi& api = device->backend->api();
    common::copy_string(out->name, p.name);
    if (p.vendorId == 0x8086) {
      common::copy_string(out->vendor, "Intel");
    } else {
      char vendor[32];
      std::snprintf(vendor, sizeof vendor, "PCI vendor 0x%04x", p.vendorId);
      common::copy_string(out->vendor, vendor);
    }
    switch (p.type) {
      case ZE_DEVICE_TYPE_GPU: out->kind = XAL_DEVICE_KIND_GPU; break;
      case ZE_DEVICE_TYPE_CPU: out->kind = XAL_DEVICE_KIND_CPU; break;
      case ZE_DEVICE_TYPE_FPGA:
      case ZE_DEVICE_TYPE_MCA:
      case ZE_DEVICE_TYPE_VPU: out->kind = XAL_DEVICE_KIND_ACCELERATOR; break;
      default: out->kind = XAL_DEVICE_KIND_OTHER; break;
    }
    static_assert(sizeof(p.uuid.id) == sizeof(out->uuid));
    std::memcpy(out->uuid, p.uuid.id, sizeof out->uuid);
    if (api.zeDevicePciGetPropertiesExt != nullptr) {
      ze_pci_ext_properties_t pci{ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES};
      if (api.zeDevicePciGetPropertiesExt(device->root, &pci) == ZE_RESULT_SUCCESS) {
        char text[32];
        std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci.address.domain,
                      pci.address.bus, pci.address.device, pci.address.function);
        common::copy_string(out->pci_bus_id, text);
      }
    }
    out->memory_bytes = device->memory_bytes;
    out->max_allocation_bytes = p.maxMemAllocSize;
    out->compute_units = p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice;
    out->core_clock_mhz = p.coreClockRate;
    out->memory_clock_mhz = device->memory_clock_mhz;
    out->memory_bus_width_bits = device->memory_bus_width_bits;
    // Level Zero reports the effective memory clock: one transfer per clock.
    out->peak_memory_bandwidth_gbps =
        device->memory_clock_mhz * 1e6 * (device->memory_bus_width_bits / 8.0) / 1e9;
    uint64_t caps = XAL_DEVICE_CAP_EVENT_TIMING | XAL_DEVICE_CAP_RESET |
                    XAL_DEVICE_CAP_HOST_MEMORY;
    if (device->backend->devices.size() > 1) caps |= XAL_DEVICE_CAP_PEER_COPY;
    if (api.zeModuleCreate != nullptr && api.zeKernelCreate != nullptr &&
        api.zeCommandListAppendLaunchKernel != nullptr) {
      caps |= XAL_DEVICE_CAP_KERNELS;
    }
    if (api.zesDeviceGetState != nullptr) caps |= XAL_DEVICE_CAP_METRICS;
    if (p.flags & ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE) caps |= XAL_DEVICE_CAP_PARTITION;
    if (device->backend->library.simulated()) caps |= XAL_DEVICE_CAP_SIMULATED;
    // Interop, where the loader has the calls (interop.cpp).
    if (api.zeMemGetAllocProperties != nullptr && api.zeMemGetAddressRange != nullptr) {
      caps |= XAL_DEVICE_CAP_MEM_IMPORT;
    }
    if (api.zeCommandListIsImmediate != nullptr && api.zeCommandListGetDeviceHandle != nullptr &&
        api.zeCommandListGetContextHandle != nullptr) {
      caps |= XAL_DEVICE_CAP_STREAM_IMPORT;
    }
    if (api.zeMemGetIpcHandle != nullptr && api.zeMemOpenIpcHandle != nullptr &&
        api.zeMemCloseIpcHandle != nullptr) {
      caps |= XAL_DEVICE_CAP_IPC;
    }
    out->capabilities = caps;
    return XAL_SUCCESS;
  });
}

xal_status_t device_synchronize(xal_bdevice_t* device) {
  return guarded("levelzero device_synchronize", [&]() -> xal_status_t {
    if (xal_status_t s = sticky_check(device); s != XAL_SUCCESS) return s;
    // References: a stream destroyed meanwhile stays alive until fenced.
    std::vector<std::shared_ptr<xal_bstream_s>> streams;
    std::vector<std::shared_ptr<xal_bstream_s>> orphans;
    {
      std::lock_guard lock(device->mutex);
      for (const auto& [key, stream] : device->streams) {
        if (stream->generation != device->generation) continue;
        streams.push_back(stream);
        if (stream->orphan) orphans.push_back(stream);
      }
    }
    for (const auto& stream : streams) {
      if (xal_status_t s = stream_fence(stream.get(), true); s != XAL_SUCCESS) return s;
    }
    // Fenced: temporary streams whose destroy was refused go now (a
    // refusal again leaves them for the next synchronize).
    for (const auto& orphan : orphans) (void)stream_destroy(orphan.get());
    reap_retired_events(device);
    return XAL_SUCCESS;
  });
}

xal_status_t device_reset(xal_bdevice_t* device) {
  return guarded("levelzero device_reset", [&]() -> xal_status_t {
    bool lost = false;
    {
      std::lock_guard lock(device->mutex);
      lost = !device->sticky.healthy();
    }
    if (!lost) {
      release_device_objects(device);
      std::lock_guard host_lock(device->backend->host_mutex);
      retry_host_leftovers(device->backend, nullptr);
      return XAL_SUCCESS;
    }
    // The context is lost: rebuild it for every device of the driver.
    DriverState* driver = device->driver;
    const ZeApi& api = device->backend->api();
    for (xal_bdevice_s* other : driver->devices) release_device_objects(other);
    std::lock_guard host_lock(device->backend->host_mutex);
    std::lock_guard lock(driver->mutex);
    // Frees refused earlier: the old context takes what is left of its own.
    retry_host_leftovers(device->backend, driver->context);
    // Host allocations stay usable: their context is retired, not destroyed,
    // until the last of them is freed.
    const bool hosts = std::any_of(
        device->backend->host_allocations.begin(), device->backend->host_allocations.end(),
        [&](const auto& entry) { return entry.second.context == driver->context; });
    if (hosts) {
      driver->retired.push_back(driver->context);
    } else {
      (void)api.zeContextDestroy(driver->context);
    }
    driver->context = nullptr;
    ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    if (ze_result_t r = api.zeContextCreate(driver->handle, &desc, &driver->context);
        r != ZE_RESULT_SUCCESS) {
      const StatusMapping mapping = map_status(r);
      return report(mapping.status == XAL_SUCCESS ? XAL_ERROR_BACKEND : mapping.status,
                    r, mapping.name,
                    std::string("device reset: zeContextCreate failed: ") +
                        mapping.name);
    }
    for (xal_bdevice_s* other : driver->devices) {
      std::lock_guard device_lock(other->mutex);
      other->sticky.clear();
    }
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_health(xal_bdevice_t* device,
                               xal_device_health_t* out) {
  return guarded("levelzero device_get_health", [&]() -> xal_status_t {
    std::lock_guard lock(device->mutex);
    device->sticky.describe(out);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::levelzero
