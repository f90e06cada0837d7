// Devices: count, get, properties. Synchronize, reset, health and metrics
// are in device_state.cpp.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "entries.h"
#include "errors.h"
#include "status_map.h"
#include "xal_common/strings.hpp"
#include "xalsupport/config.h"

namespace xal::hip {

// An attribute of the device, 0 when it cannot be read.
int attribute(xal_bdevice_s* device, hipDeviceAttribute_t which) {
  int value = 0;
  if (device->backend->api().hipDeviceGetAttribute(&value, which,
                                                   device->ordinal) !=
      hipSuccess) {
    return 0;
  }
  return value;
}

// Its PCI address ("0000:65:00.0"), "" when it cannot be read.
std::string pci_bus_id(xal_bdevice_s* device) {
  const HipApi& api = device->backend->api();
  if (api.hipDeviceGetPCIBusId == nullptr) return "";
  char text[64] = {};
  if (api.hipDeviceGetPCIBusId(text, sizeof text, device->ordinal) !=
      hipSuccess) {
    return "";
  }
  return text;
}

xal_status_t device_count(xal_backend_t* backend, uint32_t* out_count) {
  return guarded(Entry{}, "hip device_count", [&]() -> xal_status_t {
    *out_count = static_cast<uint32_t>(backend->devices.size());
    return XAL_SUCCESS;
  });
}

xal_status_t device_get(xal_backend_t* backend, uint32_t index,
                        xal_bdevice_t** out_device) {
  return guarded(Entry{}, "hip device_get", [&]() -> xal_status_t {
    if (index >= backend->devices.size()) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "HIP device index " + std::to_string(index) +
                        " out of range");
    }
    *out_device = backend->devices[index].get();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_properties(xal_bdevice_t* device,
                                   xal_device_properties_t* out) {
  return guarded(Entry{}, "hip device_get_properties", [&]() -> xal_status_t {
    xal_backend_s* backend = device->backend;
    const HipApi& api = backend->api();
    char name[256] = {};
    if (xal_status_t s = check(device, api.hipDeviceGetName(
                                           name, sizeof name, device->ordinal),
                               "hipDeviceGetName");
        s != XAL_SUCCESS) {
      return s;
    }
    common::copy_string(out->name, name);
    common::copy_string(out->vendor, "AMD");
    out->kind = XAL_DEVICE_KIND_GPU;
    if (api.hipDeviceGetUuid != nullptr) {
      hipUUID uuid{};
      if (api.hipDeviceGetUuid(&uuid, device->ordinal) == hipSuccess) {
        static_assert(sizeof(uuid.bytes) == sizeof(out->uuid));
        std::memcpy(out->uuid, uuid.bytes, sizeof out->uuid);
      }
    }
    common::copy_string(out->pci_bus_id, pci_bus_id(device));
    size_t total = 0;
    if (xal_status_t s = check(device,
                               api.hipDeviceTotalMem(&total, device->ordinal),
                               "hipDeviceTotalMem");
        s != XAL_SUCCESS) {
      return s;
    }
    out->memory_bytes = total;
    out->max_allocation_bytes = total;
    out->compute_units = static_cast<uint32_t>(
        attribute(device, hipDeviceAttributeMultiprocessorCount));
    out->core_clock_mhz = static_cast<uint32_t>(
        attribute(device, hipDeviceAttributeClockRate) / 1000);
    const int memory_khz = attribute(device, hipDeviceAttributeMemoryClockRate);
    const int bus_bits = attribute(device, hipDeviceAttributeMemoryBusWidth);
    out->memory_clock_mhz = static_cast<uint32_t>(memory_khz / 1000);
    out->memory_bus_width_bits = static_cast<uint32_t>(bus_bits);
    // Double data rate: two transfers per memory clock.
    out->peak_memory_bandwidth_gbps =
        2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    uint64_t caps = XAL_DEVICE_CAP_EVENT_TIMING | XAL_DEVICE_CAP_RESET;
    if (backend->devices.size() > 1) caps |= XAL_DEVICE_CAP_PEER_COPY;
    if (api.hipHostMalloc != nullptr) caps |= XAL_DEVICE_CAP_HOST_MEMORY;
    if (api.hipModuleLoadData != nullptr &&
        api.hipModuleLaunchKernel != nullptr) {
      caps |= XAL_DEVICE_CAP_KERNELS;
    }
    if (backend->rccl.available()) caps |= XAL_DEVICE_CAP_COLLECTIVES;
    if (backend->smi.available()) caps |= XAL_DEVICE_CAP_METRICS;
    if (backend->library.simulated()) caps |= XAL_DEVICE_CAP_SIMULATED;
    // Interop, where the runtime has the calls (interop.cpp).
    if (api.hipPointerGetAttributes != nullptr && api.hipMemGetAddressRange != nullptr) {
      caps |= XAL_DEVICE_CAP_MEM_IMPORT;
    }
    if (api.hipStreamGetFlags != nullptr) caps |= XAL_DEVICE_CAP_STREAM_IMPORT;
    if (api.hipIpcGetMemHandle != nullptr && api.hipIpcOpenMemHandle != nullptr &&
        api.hipIpcCloseMemHandle != nullptr) {
      caps |= XAL_DEVICE_CAP_IPC;
    }
    out->capabilities = caps;
    return XAL_SUCCESS;
  });
}

}  // namespace xal::hip
